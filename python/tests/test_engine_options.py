"""LLMOptions' table as Python sees it: every option settable by its name, enum options by the
names the CLI takes, and the files generated from the table up to date."""

import os
import subprocess
import sys

import pytest

import baton
from baton import LLM, _baton


def test_the_stub_and_the_options_doc_are_what_the_table_makes():
    script = os.path.join(os.environ["BATON_SOURCE_DIR"], "scripts", "generate_engine_options.py")
    result = subprocess.run([sys.executable, script, "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_option_reads_back_its_default_and_a_value_set():
    options = _baton.LLMOptions()
    for row in _baton.ENGINE_OPTIONS:
        assert getattr(options, row["name"]) == row["default"], row["name"]
    options.scheduling_policy = "sjf"
    options.lora_dtype = "float32"  # an alias reads back as the value's own name
    assert (options.scheduling_policy, options.lora_dtype) == ("sjf", "f32")
    options.lora_dtype = "auto"  # vLLM's default
    assert options.lora_dtype == "f16"


def test_an_unknown_enum_value_names_the_option_and_its_values():
    options = _baton.LLMOptions()
    with pytest.raises(baton.InvalidArgumentError, match=r"scheduling_policy 'lifo' \(use fcfs"):
        options.scheduling_policy = "lifo"


def test_none_asks_for_the_default_as_in_vllm(demo_model):
    llm = LLM(str(demo_model), threads=2, max_model_len=None, max_num_seqs=None, block_size=None)
    assert llm.summary().context_size > 0


def test_llm_takes_any_option_by_its_own_name(demo_model):
    # grammar_masks has no vLLM name and no line of its own in engine_args.py.
    with pytest.raises(baton.InvalidArgumentError, match="unknown grammar_masks 'sideways'"):
        LLM(str(demo_model), threads=2, grammar_masks="sideways")
    with pytest.raises(baton.InvalidArgumentError, match="max_seqs must be at least 1"):
        LLM(str(demo_model), threads=2, max_num_seqs=0)
