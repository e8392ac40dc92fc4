"""The GIL is released while Baton computes: Python threads run beside a long generate, and
several threads can each drive their own event loop against one AsyncLLM."""

import asyncio
import os
import signal
import threading

import pytest

from baton import LLM, AsyncLLM, SamplingParams
from conftest import PROMPTS


def test_a_python_thread_makes_progress_during_a_long_generate(demo_model):
    llm = LLM(str(demo_model), threads=1)
    ticks = 0
    stop = threading.Event()

    def count():
        nonlocal ticks
        while not stop.is_set():
            ticks += 1

    params = SamplingParams(temperature=0, max_tokens=200, ignore_eos=True)
    llm.generate(PROMPTS[:2], params, use_tqdm=False)  # warm up outside the measurement
    counter = threading.Thread(target=count)
    counter.start()
    try:
        before = ticks
        llm.generate(PROMPTS, params, use_tqdm=False)
        during = ticks - before
    finally:
        stop.set()
        counter.join()
    # Were the GIL held through the C++ call, the counting thread could not run at all until it
    # returned; running freely it ticks millions of times a second.
    assert during > 100_000, f"the counting thread ticked only {during} times"


def test_threads_with_their_own_event_loops_share_one_async_engine(demo_model_f32):
    params = SamplingParams(temperature=0, max_tokens=16)
    expected = LLM(str(demo_model_f32), threads=2).generate(PROMPTS[:4], params, use_tqdm=False)
    results = {}
    with AsyncLLM(str(demo_model_f32), threads=2) as engine:

        async def one(prompt):
            last = None
            async for output in engine.generate(prompt, params):
                last = output
            return last

        def worker(i):
            results[i] = asyncio.run(one(PROMPTS[i]))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for i in range(4):
        assert results[i].outputs[0].token_ids == expected[i].outputs[0].token_ids


def test_calls_from_two_threads_take_turns_on_one_llm(demo_model_f32):
    llm = LLM(str(demo_model_f32), threads=2)
    params = SamplingParams(temperature=0, max_tokens=16)
    expected = [o.outputs[0].token_ids for o in llm.generate(PROMPTS, params, use_tqdm=False)]
    results = {}

    def worker(half):
        prompts = PROMPTS[half * 8 : half * 8 + 8]
        results[half] = llm.generate(prompts, params, use_tqdm=False)

    threads = [threading.Thread(target=worker, args=(half,)) for half in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = [o.outputs[0].token_ids for half in (0, 1) for o in results[half]]
    assert got == expected
    assert llm.stats().kv_blocks_used == 0


def test_a_signal_during_generate_stops_the_batch_between_steps(demo_model):
    # Ctrl-C's path: the binding runs Python's signal handlers after each engine step, and the
    # exception a handler raises aborts the batch. SIGUSR1 stands in for SIGINT, whose
    # KeyboardInterrupt would stop pytest itself.
    class Interrupted(Exception):
        pass

    def interrupt(signum, frame):
        raise Interrupted

    llm = LLM(str(demo_model), threads=1)
    params = SamplingParams(temperature=0, max_tokens=200, ignore_eos=True)
    previous = signal.signal(signal.SIGUSR1, interrupt)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR1))
    try:
        timer.start()
        with pytest.raises(Interrupted):
            llm.generate(PROMPTS * 4, params, use_tqdm=False)
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)
    assert llm.stats().kv_blocks_used == 0
    assert llm.generate("Amen", SamplingParams(max_tokens=2), use_tqdm=False)[0].outputs
