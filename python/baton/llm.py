"""``LLM``: vLLM's offline inference API on Baton's engine."""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _baton
from .lora import LoRARequest
from .outputs import (
    BeamSearchOutput,
    BeamSearchSequence,
    RequestOutput,
    request_output,
)
from .prompts import (
    Prompt,
    PromptType,
    chat_messages,
    conversations_of,
    one_per_prompt,
    prompts_of,
)
from .request_builder import load_engine
from .sampling_params import BeamSearchParams, SamplingParams
from .tokenizer import Tokenizer

LoRAArgument = Optional[Union[LoRARequest, Sequence[Optional[LoRARequest]]]]


def _progress_bar(total: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="Processed prompts", dynamic_ncols=True)


class LLM:
    """A model loaded on one backend, generating for batches of prompts in one continuous batch.

    Keyword arguments are vLLM's engine argument names where Baton has the setting
    (``max_num_seqs``, ``max_model_len``, ``enable_prefix_caching``, ``enable_lora`` ...) and
    every engine option of Baton's by its own name (``threads``, ``sjf_overtake``, ...;
    docs/engine-options.md); ``None`` asks for the default. A vLLM
    argument Baton does not implement raises ``ValueError`` unless left at its default. The GIL
    is released while the engine computes; calls from several threads take turns (``AsyncLLM``
    serves requests from several tasks or threads at once). Ctrl-C stops a ``generate`` between
    two engine steps.
    """

    def __init__(
        self,
        model: Union[str, "os.PathLike[str]"],
        backend: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        self._engine, self._summary, self._requests = load_engine(
            "LLM", _baton.LLM, model, backend, kwargs
        )
        self._next_request_id = 0

    def generate(
        self,
        prompts: Union[PromptType, Sequence[PromptType]],
        sampling_params: Optional[Union[SamplingParams, Sequence[SamplingParams]]] = None,
        use_tqdm: bool = True,
        lora_request: LoRAArgument = None,
        priority: Optional[List[int]] = None,
    ) -> List[RequestOutput]:
        """Completions of every prompt, in the order given, computed together."""
        return self._run(prompts_of(prompts), sampling_params, use_tqdm, lora_request, priority)

    def chat(
        self,
        messages: Sequence[Any],
        sampling_params: Optional[Union[SamplingParams, Sequence[SamplingParams]]] = None,
        use_tqdm: bool = True,
        lora_request: LoRAArgument = None,
        chat_template: Optional[str] = None,
        add_generation_prompt: bool = True,
        continue_final_message: bool = False,
        tools: Optional[List[Dict[str, Any]]] = None,
    ) -> List[RequestOutput]:
        """Replies to one conversation (a list of {"role", "content"} messages) or to several
        (a list of such lists), each rendered by the model's own chat template."""
        if chat_template is not None:
            raise ValueError("chat: chat_template is not supported; the model's own is used")
        if continue_final_message:
            raise ValueError("chat: continue_final_message is not supported by Baton")
        if tools is not None:
            raise ValueError("chat: tools are not supported by Baton yet")
        prompts = []
        for conversation in conversations_of(messages):
            rendered = self._engine.chat_prompt(
                chat_messages(conversation), add_generation_prompt
            )
            prompts.append(Prompt(text=rendered.text, token_ids=list(rendered.tokens)))
        return self._run(prompts, sampling_params, use_tqdm, lora_request, None)

    def beam_search(
        self, prompts: Union[PromptType, Sequence[PromptType]], params: BeamSearchParams
    ) -> List[BeamSearchOutput]:
        """The ``beam_width`` best beams of each prompt, best first."""
        outputs = self._run(prompts_of(prompts), params._sampling_params(), False, None, None)
        return [
            BeamSearchOutput(
                [
                    BeamSearchSequence(c.token_ids, c.text, c.cumulative_logprob, c.finish_reason)
                    for c in output.outputs
                ]
            )
            for output in outputs
        ]

    def get_tokenizer(self) -> Tokenizer:
        return Tokenizer(self._engine.tokenize, self._engine.detokenize)

    def perplexity(
        self,
        text: str,
        context: int = 256,
        batch_tokens: int = 512,
        lora_request: Optional[LoRARequest] = None,
    ) -> "_baton.PerplexityReport":
        """Perplexity of ``text`` as llama.cpp's perplexity tool measures it: non-overlapping
        chunks of ``context`` tokens, the second half of each scored."""
        params = _baton.PerplexityParams()
        params.context = context
        params.batch_tokens = batch_tokens
        if lora_request is not None:
            params.lora = self._requests.adapter_name(lora_request)
        return self._engine.perplexity(text, params)

    def stats(self) -> "_baton.EngineStats":
        """The engine's counters since loading, and its KV cache gauges now."""
        return self._engine.stats()

    def summary(self) -> "_baton.ModelSummary":
        return self._summary

    def _run(
        self,
        prompts: List[Prompt],
        sampling_params: Optional[Union[SamplingParams, Sequence[SamplingParams]]],
        use_tqdm: bool,
        lora_request: LoRAArgument,
        priority: Optional[List[int]],
    ) -> List[RequestOutput]:
        count = len(prompts)
        params = one_per_prompt(
            "sampling_params",
            sampling_params or SamplingParams(),
            count,
            lambda v: isinstance(v, SamplingParams),
        )
        loras = one_per_prompt(
            "lora_request", lora_request, count, lambda v: v is None or isinstance(v, LoRARequest)
        )
        priorities = [0] * count if priority is None else list(priority)
        if len(priorities) != count:
            raise ValueError(f"priority: {len(priorities)} given for {count} prompts")
        requests = [
            self._requests.request(p, s, lora, rank)
            for p, s, lora, rank in zip(prompts, params, loras, priorities)
        ]
        bar = _progress_bar(count, use_tqdm)
        try:
            results = self._engine.generate(
                requests, (lambda finished: bar.update(len(finished))) if bar else None
            )
        finally:
            if bar is not None:
                bar.close()
        outputs = []
        for prompt, sampling, lora, result in zip(prompts, params, loras, results):
            outputs.append(
                request_output(
                    str(self._next_request_id),
                    prompt.text,
                    result,
                    sampling.logprobs,
                    self._engine.token_text,
                    lora,
                )
            )
            self._next_request_id += 1
        return outputs
