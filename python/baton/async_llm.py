"""``AsyncLLM``: streaming generation for asyncio programs, on Baton's C++ AsyncLLM."""

from __future__ import annotations

import asyncio
import itertools
import os
import weakref
from typing import Any, AsyncIterator, Dict, List, Optional, Union

from . import _baton
from .errors import BackendError, InvalidArgumentError
from .lora import LoRARequest
from .outputs import (
    CompletionOutput,
    RequestOutput,
    request_output,
    sample_logprobs,
)
from .prompts import Prompt, PromptType, prompts_of
from .request_builder import load_engine
from .sampling_params import SamplingParams
from .tokenizer import Tokenizer


class _Partial:
    """One completion's text and tokens as they stream in."""

    def __init__(self) -> None:
        self.text = ""
        self.token_ids: List[int] = []
        self.logprobs: List["_baton.TokenLogprobs"] = []


class AsyncLLM:
    """A model serving many requests at once; ``generate`` streams each one's output.

    Takes the arguments of ``LLM``. Requests from any number of
    tasks, or threads each with its own event loop, share one continuous batch; the engine
    computes on its own threads, so the event loop never waits on it. ``shutdown()`` (or a
    ``with`` block) stops the engine at a chosen time; otherwise it stops when the object is
    collected or at exit.
    """

    def __init__(
        self,
        model: Union[str, "os.PathLike[str]"],
        backend: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        self._engine, self._summary, self._requests = load_engine(
            "AsyncLLM", _baton.AsyncLLM, model, backend, kwargs
        )
        self._request_ids = itertools.count()
        self._live: Dict[str, int] = {}  # request id -> the engine's id
        self._finalizer = weakref.finalize(self, self._engine.shutdown)

    def __enter__(self) -> "AsyncLLM":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.shutdown()

    def shutdown(self) -> None:
        """Aborts every request in flight and stops the engine."""
        self._finalizer()

    async def generate(
        self,
        prompt: PromptType,
        sampling_params: Optional[SamplingParams] = None,
        request_id: Optional[str] = None,
        lora_request: Optional[LoRARequest] = None,
        priority: int = 0,
    ) -> AsyncIterator[RequestOutput]:
        """Yields the request's output so far (cumulative, as vLLM's default) each time new
        text arrives, and last the finished output. Closing the iterator early aborts the
        request."""
        prompts = prompts_of(prompt)
        if len(prompts) != 1:
            raise ValueError(f"AsyncLLM.generate takes one prompt, got {len(prompts)}")
        sampling = sampling_params or SamplingParams()
        if request_id is None:
            request_id = f"baton-{next(self._request_ids)}"
        if request_id in self._live:
            raise ValueError(f"AsyncLLM.generate: request id '{request_id}' is already running")
        tokenized = prompts[0]
        if tokenized.token_ids is None:
            # Tokenized here rather than on the engine's text thread, so that every output
            # carries the prompt's ids; the GIL is released meanwhile.
            tokenized = Prompt(tokenized.text, self._engine.tokenize(tokenized.text, True, False))
        request = self._requests.request(tokenized, sampling, lora_request, priority)

        loop = asyncio.get_running_loop()
        events: asyncio.Queue = asyncio.Queue()

        def on_event(event: "_baton.StreamEvent") -> None:
            try:
                loop.call_soon_threadsafe(events.put_nowait, event)
            except RuntimeError:
                pass  # the loop has closed: nobody is waiting for this request any more

        engine_id = self._engine.add_request(request, on_event)
        self._live[request_id] = engine_id
        partials: Dict[int, _Partial] = {}
        finished = False
        try:
            while True:
                event = await events.get()
                if event.error:
                    finished = True
                    error = BackendError if event.unavailable else InvalidArgumentError
                    raise error(event.error)
                if event.finished and event.output is not None:
                    finished = True
                    yield request_output(
                        request_id,
                        prompts[0].text,
                        event.output,
                        sampling.logprobs,
                        self._engine.token_text,
                        lora_request,
                    )
                    return
                partial = partials.setdefault(event.index, _Partial())
                partial.text += event.text
                partial.token_ids.extend(event.tokens)
                partial.logprobs.extend(event.logprobs)
                yield self._snapshot(request_id, tokenized, partials, sampling, lora_request)
        finally:
            self._live.pop(request_id, None)
            if not finished:
                self._engine.abort(engine_id)

    generate_stream = generate

    async def abort(self, request_id: str) -> None:
        """Ends the request; its stream yields a last output with finish_reason "abort"."""
        engine_id = self._live.get(request_id)
        if engine_id is not None:
            self._engine.abort(engine_id)

    async def get_tokenizer(self) -> Tokenizer:
        return Tokenizer(self._engine.tokenize, self._engine.detokenize)

    def stats(self) -> "_baton.EngineStats":
        """The engine's counters since loading, and its KV cache gauges now."""
        return self._engine.stats()

    def summary(self) -> "_baton.ModelSummary":
        return self._summary

    def _snapshot(
        self,
        request_id: str,
        prompt: Prompt,
        partials: Dict[int, _Partial],
        sampling: SamplingParams,
        lora: Optional[LoRARequest],
    ) -> RequestOutput:
        """The output so far; unfinished, so without finish reasons or cumulative logprobs."""
        outputs = [
            CompletionOutput(
                index=index,
                text=p.text,
                token_ids=list(p.token_ids),
                cumulative_logprob=None,
                logprobs=(
                    None
                    if sampling.logprobs is None
                    else sample_logprobs(p.logprobs, sampling.logprobs, self._engine.token_text)
                ),
                lora_request=lora,
            )
            for index, p in sorted(partials.items())
        ]
        return RequestOutput(
            request_id=request_id,
            prompt=prompt.text,
            prompt_token_ids=list(prompt.token_ids),
            outputs=outputs,
            finished=False,
            lora_request=lora,
        )
