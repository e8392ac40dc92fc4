"""LLM, vLLM's offline API: the vLLM example, batches, chat, tokenizer, perplexity, logprobs,
parallel sampling, beam search and LoRA on the bundled demo model."""

import json
import math
import subprocess

import pytest

from baton import LLM, BeamSearchParams, LoRARequest, SamplingParams
from conftest import BATON, DEMO_LORA, DEVIL_HELDOUT, PROMPTS, baton_run


@pytest.fixture(scope="module")
def llm(demo_model):
    return LLM(model=str(demo_model), backend="cpu", threads=2)


@pytest.fixture(scope="module")
def llm_f32(demo_model_f32):
    return LLM(model=str(demo_model_f32), backend="cpu", threads=2)


def test_the_vllm_example_runs_unchanged_but_for_the_import_and_the_model(demo_model, capsys):
    prompts = ["Funniest joke ever:", "The capital of France is", "The future of AI is"]
    sampling_params = SamplingParams(temperature=0.95, top_p=0.95, max_tokens=200)
    llm = LLM(model=str(demo_model), backend="cpu")
    outputs = llm.generate(prompts, sampling_params)
    for output in outputs:
        print(f"Prompt: {output.prompt!r}, Generated text: {output.outputs[0].text!r}")
    assert [o.prompt for o in outputs] == prompts
    for output in outputs:
        completion = output.outputs[0]
        assert output.finished
        assert completion.finish_reason in ("stop", "length")
        assert 0 < len(completion.token_ids) <= 200
        assert completion.text
        assert output.prompt_token_ids == llm.get_tokenizer().encode(output.prompt)
        assert output.metrics.output_tokens == len(completion.token_ids)
        assert output.metrics.e2e_seconds >= output.metrics.ttft_seconds > 0
    assert "Processed prompts" in capsys.readouterr().err  # the tqdm bar


def test_the_examples_prompts_give_baton_runs_greedy_text(llm, demo_model):
    # One prompt a call, as `baton run` has: the f16 model's kernels change with the batch size
    # on AVX-512 hosts (conftest.demo_model_f32), which can flip a near-tie.
    for prompt in ["Funniest joke ever:", "The capital of France is", "The future of AI is"]:
        output = llm.generate(prompt, SamplingParams(temperature=0, max_tokens=48))[0]
        assert prompt + output.outputs[0].text + "\n" == baton_run(demo_model, prompt, 48)


def test_greedy_text_equals_baton_run(llm_f32, demo_model_f32):
    prompts = PROMPTS[:3]
    outputs = llm_f32.generate(prompts, SamplingParams(temperature=0, max_tokens=24))
    for prompt, output in zip(prompts, outputs):
        assert prompt + output.outputs[0].text + "\n" == baton_run(demo_model_f32, prompt, 24)


def test_a_mixed_batch_gives_each_prompt_what_it_gets_alone(llm_f32):
    params = []
    for i, _ in enumerate(PROMPTS):
        if i % 4 == 0:
            params.append(SamplingParams(temperature=0, max_tokens=8 + i))
        elif i % 4 == 1:
            params.append(SamplingParams(temperature=0.8, top_k=40, seed=100 + i, max_tokens=20))
        elif i % 4 == 2:
            params.append(SamplingParams(temperature=0, max_tokens=30, stop=[","]))
        else:
            params.append(SamplingParams(temperature=1.0, top_p=0.9, seed=7, n=2, max_tokens=12))
    batched = llm_f32.generate(PROMPTS, params, use_tqdm=False)
    for prompt, p, out in zip(PROMPTS, params, batched):
        alone = llm_f32.generate(prompt, p, use_tqdm=False)[0]
        assert [c.token_ids for c in out.outputs] == [c.token_ids for c in alone.outputs]
        assert [c.text for c in out.outputs] == [c.text for c in alone.outputs]
    assert all("," not in o.outputs[0].text for o in batched[2::4])
    assert all(len(o.outputs) == 2 for o in batched[3::4])
    assert llm_f32.stats().kv_blocks_used == 0


def test_token_id_prompts_and_a_list_of_params(llm_f32):
    ids = llm_f32.get_tokenizer().encode("In the beginning")
    by_ids = llm_f32.generate(
        {"prompt_token_ids": ids}, SamplingParams(temperature=0, max_tokens=8), use_tqdm=False
    )[0]
    by_text = llm_f32.generate(
        "In the beginning", [SamplingParams(temperature=0, max_tokens=8)], use_tqdm=False
    )[0]
    assert by_ids.outputs[0].token_ids == by_text.outputs[0].token_ids
    assert by_ids.prompt_token_ids == ids
    with pytest.raises(ValueError, match="2 given for 1 prompts"):
        llm_f32.generate("In", [SamplingParams(), SamplingParams()], use_tqdm=False)


def test_chat_renders_the_models_template(llm):
    messages = [
        {"role": "system", "content": "Answer in the words of the King James Bible."},
        {"role": "user", "content": [{"type": "text", "text": "Who made the light?"}]},
    ]
    output = llm.chat(messages, SamplingParams(temperature=0, max_tokens=12), use_tqdm=False)[0]
    assert "Who made the light?" in output.prompt
    assert "Answer in the words" in output.prompt
    assert output.outputs[0].token_ids
    both = llm.chat([messages, messages[1:]], SamplingParams(temperature=0, max_tokens=4))
    assert len(both) == 2 and both[0].prompt == output.prompt


def test_the_tokenizer_round_trips(llm):
    tokenizer = llm.get_tokenizer()
    text = "And God said, Let there be light: and there was light."
    ids = tokenizer.encode(text)
    assert ids[0] == tokenizer.encode("", add_special_tokens=True)[0]  # BOS
    assert tokenizer.decode(ids) == text
    assert tokenizer.encode(text, add_special_tokens=False) == ids[1:]


def test_perplexity_equals_the_perplexity_tool(llm, demo_model):
    report = llm.perplexity(DEVIL_HELDOUT.read_text(), context=128)
    tool = subprocess.run(
        [str(BATON), "perplexity", "-m", str(demo_model), "-f", str(DEVIL_HELDOUT)]
        + ["--ctx", "128", "-t", "2", "--json"],
        check=True,
        capture_output=True,
        text=True,
    )
    figures = json.loads(tool.stdout)
    assert report.perplexity == pytest.approx(figures["ppl"], rel=1e-9)
    assert report.chunks == figures["n_chunks"]
    assert report.scored == report.chunks * (128 - 1 - 64)


def test_logprobs_name_the_chosen_token_and_its_alternatives(llm):
    params = SamplingParams(temperature=0, max_tokens=6, logprobs=3)
    completion = llm.generate("And God said", params, use_tqdm=False)[0].outputs[0]
    assert len(completion.logprobs) == len(completion.token_ids)
    total = 0.0
    for token, position in zip(completion.token_ids, completion.logprobs):
        assert token in position
        assert 3 <= len(position) <= 4
        assert position[token].rank == 1  # greedy: the most likely token
        assert all(p.logprob <= 0 for p in position.values())
        assert isinstance(position[token].decoded_token, str)
        total += position[token].logprob
    assert completion.cumulative_logprob == pytest.approx(total, rel=1e-4)
    only_chosen = SamplingParams(temperature=0, max_tokens=3, logprobs=0)
    positions = llm.generate("And", only_chosen, use_tqdm=False)[0].outputs[0].logprobs
    assert all(len(p) == 1 for p in positions)


def test_n_best_of_and_beam_search(llm):
    sampled = llm.generate(
        "Behold", SamplingParams(n=3, best_of=5, temperature=1.0, seed=3, max_tokens=10)
    )[0]
    assert len(sampled.outputs) == 3
    scores = [c.cumulative_logprob for c in sampled.outputs]
    assert scores == sorted(scores, reverse=True)

    beams = llm.beam_search(["Behold", "Amen"], BeamSearchParams(beam_width=3, max_tokens=8))
    assert [len(b.sequences) for b in beams] == [3, 3]
    for beam in beams:
        assert all(math.isfinite(s.cum_logprob) for s in beam.sequences)
    old_style = llm.generate(
        "Behold", SamplingParams(use_beam_search=True, n=3, best_of=3, temperature=0, max_tokens=8)
    )[0]
    assert [c.token_ids for c in old_style.outputs] == [s.tokens for s in beams[0].sequences]


def test_a_lora_request_loads_its_adapter_on_first_use(demo_model):
    llm = LLM(model=str(demo_model), threads=2, enable_lora=True, max_loras=1)
    devil = LoRARequest("devil", 1, str(DEMO_LORA))
    text = DEVIL_HELDOUT.read_text()
    base = llm.perplexity(text).perplexity
    adapted = llm.perplexity(text, lora_request=devil).perplexity
    assert adapted < base / 8
    params = SamplingParams(temperature=0, max_tokens=16)
    with_adapter = llm.generate("LAWYER, n.", params, lora_request=devil, use_tqdm=False)[0]
    without = llm.generate("LAWYER, n.", params, use_tqdm=False)[0]
    assert with_adapter.outputs[0].token_ids != without.outputs[0].token_ids
    assert with_adapter.outputs[0].lora_request == devil
    with pytest.raises(ValueError, match="taken by"):
        llm.generate("A", params, lora_request=LoRARequest("devil", 2, "/elsewhere.gguf"))


def test_each_sampling_setting_reaches_the_engine(llm):
    def tokens(**settings):
        params = SamplingParams(max_tokens=24, **{"temperature": 0, **settings})
        return llm.generate("And God said", params, use_tqdm=False)[0].outputs[0]

    greedy = tokens()
    for setting in (
        {"repetition_penalty": 1.8},
        {"presence_penalty": 2.0},
        {"frequency_penalty": 2.0},
        {"temperature": 1.5, "seed": 1},
        {"temperature": 1.5, "seed": 1, "top_k": 1},
    ):
        changed = tokens(**setting).token_ids != greedy.token_ids
        assert changed == ("top_k" not in setting), setting  # top_k=1 is greedy again
    sampled = tokens(temperature=1.5, seed=1).token_ids
    assert tokens(temperature=1.5, seed=1, min_p=0.5).token_ids != sampled
    assert tokens(temperature=1.5, seed=1, top_p=1e-6).token_ids == greedy.token_ids
    stop_at = greedy.token_ids[5]
    stopped = tokens(stop_token_ids=[stop_at])
    assert stopped.finish_reason == "stop"
    assert stopped.token_ids == greedy.token_ids[: greedy.token_ids.index(stop_at) + 1]
    # Sampled continuations of "Amen" of which some end with EOS; with ignore_eos none does.
    seeds = [SamplingParams(temperature=1.0, seed=s, max_tokens=200) for s in range(32)]
    ended = llm.generate(["Amen"] * 32, seeds, use_tqdm=False)
    assert any(o.outputs[0].finish_reason == "stop" for o in ended)
    for p in seeds:
        p.ignore_eos = True
    kept = llm.generate(["Amen"] * 32, seeds, use_tqdm=False)
    assert all(len(o.outputs[0].token_ids) == 200 for o in kept)


def test_lower_priority_values_run_first_as_in_vllm(demo_model_f32):
    llm = LLM(str(demo_model_f32), threads=2, max_num_seqs=1, scheduling_policy="priority")
    params = SamplingParams(temperature=0, max_tokens=8)
    outputs = llm.generate(PROMPTS[:3], params, priority=[2, 0, 1], use_tqdm=False)
    finish_order = sorted(range(3), key=lambda i: outputs[i].metrics.e2e_seconds)
    assert finish_order == [1, 2, 0]


def test_text_of_byte_tokens_decodes_with_replacement_characters(llm):
    tokenizer = llm.get_tokenizer()
    ids = tokenizer.encode("\u20ac", add_special_tokens=False)  # not in the vocabulary
    byte_tokens = ids[-3:]  # its three UTF-8 bytes, after the word-start token
    assert tokenizer.decode(ids) == "\u20ac"
    assert tokenizer.decode(byte_tokens[:1]) == "\ufffd"
    assert tokenizer.decode(byte_tokens[:2]) == "\ufffd"  # one, for the unfinished character
    params = SamplingParams(temperature=0, max_tokens=4, logprobs=20)
    completion = llm.generate("\u20ac", params, use_tqdm=False)[0].outputs[0]
    assert all(isinstance(p.decoded_token, str) for pos in completion.logprobs for p in pos.values())


def test_stats_carry_every_field_the_stub_declares(llm):
    import ast
    import pathlib

    import baton

    stub = pathlib.Path(baton.__file__).with_name("_baton.pyi")
    tree = ast.parse(stub.read_text())
    declared = next(node for node in tree.body
                    if isinstance(node, ast.ClassDef) and node.name == "EngineStats")
    fields = [item.target.id for item in declared.body if isinstance(item, ast.AnnAssign)]
    stats = llm.stats()
    bound = [name for name in dir(stats) if not name.startswith("_")]
    assert sorted(fields) == sorted(bound)
    assert stats.kv_blocks_total > 0
