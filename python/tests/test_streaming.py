"""AsyncLLM: streaming equals non-streaming, aborting frees the request, and concurrent tasks
share one batch."""

import asyncio

import pytest

import baton
from baton import LLM, AsyncLLM, SamplingParams
from conftest import PROMPTS


@pytest.fixture(scope="module")
def engine(demo_model_f32):
    with AsyncLLM(str(demo_model_f32), threads=2) as llm:
        yield llm


@pytest.fixture(scope="module")
def offline(demo_model_f32):
    return LLM(str(demo_model_f32), threads=2)


async def collect(engine, prompt, params, request_id=None):
    outputs = []
    async for output in engine.generate(prompt, params, request_id):
        outputs.append(output)
    return outputs


def settled(engine, finished_aborted):
    """The engine's stats once it has taken in an abort: the final event of an aborted request
    can reach the caller before the engine thread has let go of the request."""

    async def wait():
        for _ in range(500):
            stats = engine.stats()
            if stats.finished_aborted >= finished_aborted and stats.running == 0:
                return stats
            await asyncio.sleep(0.01)
        return engine.stats()

    return asyncio.run(wait())


def test_streaming_equals_non_streaming(engine, offline):
    params = SamplingParams(temperature=0, max_tokens=32)
    for prompt in PROMPTS[:4]:
        outputs = asyncio.run(collect(engine, prompt, params))
        final = outputs[-1]
        assert final.finished and all(not o.finished for o in outputs[:-1])
        expected = offline.generate(prompt, params, use_tqdm=False)[0]
        assert final.outputs[0].token_ids == expected.outputs[0].token_ids
        assert final.outputs[0].text == expected.outputs[0].text
        assert final.prompt_token_ids == expected.prompt_token_ids
        # Cumulative: each output extends the one before.
        texts = [o.outputs[0].text for o in outputs]
        assert all(b.startswith(a) for a, b in zip(texts, texts[1:]))
        assert all(o.prompt_token_ids == expected.prompt_token_ids for o in outputs)


def test_sampled_streams_with_n_samples_equal_offline(engine, offline):
    params = SamplingParams(n=2, temperature=0.9, seed=11, max_tokens=16)
    final = asyncio.run(collect(engine, "And God said", params))[-1]
    expected = offline.generate("And God said", params, use_tqdm=False)[0]
    assert [c.token_ids for c in final.outputs] == [c.token_ids for c in expected.outputs]


def test_abort_frees_the_request(engine):
    async def abort_after_first_output():
        params = SamplingParams(temperature=0, max_tokens=200, ignore_eos=True)
        outputs = []
        async for output in engine.generate("In the beginning", params, "long"):
            outputs.append(output)
            if len(outputs) == 1:
                await engine.abort("long")
        return outputs

    before = engine.stats().finished_aborted
    outputs = asyncio.run(abort_after_first_output())
    assert outputs[-1].finished
    assert outputs[-1].outputs[0].finish_reason == "abort"
    assert len(outputs[-1].outputs[0].token_ids) < 200
    stats = settled(engine, before + 1)
    assert stats.finished_aborted == before + 1
    assert stats.running == 0 and stats.kv_blocks_used == 0


def test_leaving_the_stream_early_aborts_the_request(engine):
    async def take_two():
        params = SamplingParams(temperature=0, max_tokens=200, ignore_eos=True)
        stream = engine.generate("Behold", params, "left")
        taken = [await stream.__anext__(), await stream.__anext__()]
        await stream.aclose()
        return taken

    before = engine.stats().finished_aborted
    taken = asyncio.run(take_two())
    assert len(taken) == 2 and not taken[-1].finished

    stats = settled(engine, before + 1)
    assert stats.finished_aborted == before + 1
    assert stats.running == 0 and stats.kv_blocks_used == 0


def test_concurrent_tasks_share_the_batch_and_each_gets_its_own_output(engine, offline):
    params = SamplingParams(temperature=0, max_tokens=24)

    async def all_at_once():
        return await asyncio.gather(*(collect(engine, p, params) for p in PROMPTS))

    steps_before = engine.stats().steps
    results = asyncio.run(all_at_once())
    steps = engine.stats().steps - steps_before
    expected = offline.generate(PROMPTS, params, use_tqdm=False)
    for outputs, alone in zip(results, expected):
        assert outputs[-1].outputs[0].token_ids == alone.outputs[0].token_ids
    assert steps < len(PROMPTS) * 24, "the requests must share engine steps"


def test_a_request_id_in_use_is_refused(engine):
    async def twice():
        params = SamplingParams(temperature=0, max_tokens=50, ignore_eos=True)
        first = engine.generate("Amen", params, "same")
        await first.__anext__()
        try:
            with pytest.raises(ValueError, match="already running"):
                await engine.generate("Amen", params, "same").__anext__()
        finally:
            await first.aclose()

    asyncio.run(twice())


def test_a_refused_request_raises_in_its_stream_and_the_others_go_on(engine):
    async def oversized():
        params = SamplingParams(max_tokens=4)
        with pytest.raises(baton.InvalidArgumentError, match="the context holds"):
            await collect(engine, "light " * 400, params)
        return await collect(engine, "Amen", params)

    assert asyncio.run(oversized())[-1].finished


def test_shutdown_ends_live_streams_and_later_aborts_do_nothing(demo_model):
    llm = AsyncLLM(str(demo_model), threads=2)

    async def shut_down_mid_stream():
        params = SamplingParams(temperature=0, max_tokens=200, ignore_eos=True)
        stream = llm.generate("In the beginning", params, "live")
        first = await stream.__anext__()
        llm.shutdown()
        rest = [output async for output in stream]
        await llm.abort("live")
        return first, rest

    first, rest = asyncio.run(shut_down_mid_stream())
    assert not first.finished
    assert rest[-1].finished and rest[-1].outputs[0].finish_reason == "abort"
    with pytest.raises(baton.InvalidArgumentError, match="shut down"):
        llm.stats()
