"""Bad arguments raise the exception a Python caller expects, carrying Baton's message."""

import pytest

import baton
from baton import LLM, BeamSearchParams, LoRARequest, SamplingParams


@pytest.fixture(scope="module")
def llm(demo_model):
    return LLM(str(demo_model), threads=2)


def test_a_missing_model_is_file_not_found(tmp_path):
    missing = tmp_path / "nowhere.gguf"
    with pytest.raises(FileNotFoundError) as error:
        LLM(str(missing))
    assert error.value.filename == str(missing)


def test_a_corrupt_model_is_an_invalid_model_error(tmp_path, demo_model):
    corrupt = tmp_path / "corrupt.gguf"
    corrupt.write_bytes(demo_model.read_bytes()[:5000])
    with pytest.raises(baton.InvalidModelError) as error:
        LLM(str(corrupt))
    assert isinstance(error.value, ValueError)
    assert error.value.category == "invalid model"
    assert "corrupt.gguf" in str(error.value) and "bytes left in the file" in str(error.value)

    not_gguf = tmp_path / "text.gguf"
    not_gguf.write_text("not a model at all")
    with pytest.raises(baton.InvalidModelError, match="GGUF"):
        LLM(str(not_gguf))


def test_an_unknown_backend_is_named(demo_model):
    with pytest.raises(baton.BatonError, match="tpu"):
        LLM(str(demo_model), backend="tpu")


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"temprature": 0.5}, "unknown field 'temprature'"),
        ({"min_tokens": 4}, "'min_tokens' is not supported"),
        ({"logit_bias": {1: 2.0}}, "'logit_bias' is not supported"),
        ({"temperature": -1}, "temperature must be in"),
        ({"top_p": 0}, "top_p must be in"),
        ({"n": 0}, "n must be an integer >= 1"),
        ({"n": 3, "best_of": 2}, "best_of must be an integer >= 3"),
        ({"max_tokens": 0}, "max_tokens must be an integer >= 1"),
        ({"logprobs": 21}, "above Baton's maximum of 20"),
        ({"top_k": -2}, "top_k must be -1"),
    ],
)
def test_bad_sampling_params_are_value_errors(arguments, message):
    with pytest.raises(ValueError, match=message):
        SamplingParams(**arguments)


def test_vllm_defaults_of_unsupported_fields_are_accepted():
    SamplingParams(min_tokens=0, skip_special_tokens=True, logit_bias=None, detokenize=True)
    with pytest.raises(ValueError, match="temperature"):
        BeamSearchParams(beam_width=2, max_tokens=4, temperature=0.7)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"tensor_parallel_size": 2}, "mpirun"),
        ({"gpu_memory_utilization": 0.5}, "kv_cache_size"),
        ({"dtype": "float16"}, "baton quantize"),
        ({"max_num_sequences": 4}, "unknown argument 'max_num_sequences'"),
        ({"max_loras": 2}, "needs enable_lora=True"),
    ],
)
def test_bad_engine_arguments_are_value_errors(demo_model, arguments, message):
    with pytest.raises(ValueError, match=message):
        LLM(str(demo_model), **arguments)


def test_engine_settings_baton_refuses_carry_its_message(demo_model):
    with pytest.raises(baton.InvalidArgumentError) as error:
        LLM(str(demo_model), kv_cache_dtype="int3")
    assert isinstance(error.value, ValueError)
    assert "int3" in str(error.value)
    assert error.value.category == "invalid argument"


def test_an_oversized_prompt_is_refused_and_the_engine_goes_on(llm):
    with pytest.raises(baton.InvalidArgumentError, match="the context holds"):
        llm.generate("light " * 400, SamplingParams(max_tokens=4), use_tqdm=False)
    assert llm.generate("Amen", SamplingParams(max_tokens=2), use_tqdm=False)[0].outputs


def test_bad_prompts_and_lora_requests(llm):
    with pytest.raises(ValueError, match="prompt_token_ids"):
        llm.generate([1, 2, 3], use_tqdm=False)
    with pytest.raises(ValueError, match="enable_lora=True"):
        llm.generate("A", lora_request=LoRARequest("x", 1, "/x.gguf"), use_tqdm=False)
    with pytest.raises(ValueError, match="not supported"):
        llm.chat([{"role": "user", "content": "Hi"}], tools=[{"type": "function"}])
    with pytest.raises(ValueError, match="skip_special_tokens=False"):
        llm.get_tokenizer().decode([1, 2], skip_special_tokens=False)


def test_a_bad_adapter_file_is_named(demo_model, tmp_path):
    llm = LLM(str(demo_model), threads=2, enable_lora=True)
    bad = tmp_path / "bad.gguf"
    bad.write_text("no adapter here")
    with pytest.raises(baton.BatonError, match="bad.gguf"):
        llm.generate("A", lora_request=LoRARequest("bad", 1, str(bad)), use_tqdm=False)


def test_an_exception_in_the_progress_callback_ends_the_batch(llm, monkeypatch):
    import baton.llm

    class Interrupted(Exception):
        pass

    class Exploding:
        def __init__(self, total, **kwargs):
            pass

        def update(self, n):
            raise Interrupted

        def close(self):
            pass

    monkeypatch.setattr(
        baton.llm, "_progress_bar", lambda total, enabled: Exploding(total) if enabled else None
    )
    with pytest.raises(Interrupted):
        llm.generate(["Amen", "Behold"], SamplingParams(max_tokens=4))
    assert llm.stats().kv_blocks_used == 0
    assert llm.generate("Amen", SamplingParams(max_tokens=2), use_tqdm=False)[0].outputs
