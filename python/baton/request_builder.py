"""Baton requests from vLLM-style prompts, sampling parameters and LoRA requests: what ``LLM``
and ``AsyncLLM`` share."""

from __future__ import annotations

import random
import os
from typing import Any, Callable, Dict, Optional, Tuple, Type, TypeVar, Union

from . import _baton
from .engine_args import engine_args, llm_options
from .lora import LoRARequest
from .prompts import Prompt
from .sampling_params import SamplingParams


class RequestBuilder:
    """Makes each request's Baton parameters: a seed drawn from the engine's own seed when the
    request gives none, and adapters read through ``load_adapter`` the first time one is named."""

    def __init__(
        self,
        context_size: int,
        seed: int,
        lora_enabled: bool,
        load_adapter: Callable[["_baton.LoraOptions"], None],
    ) -> None:
        self._context_size = context_size
        self._seeds = random.Random(seed)
        self._lora_enabled = lora_enabled
        self._load_adapter = load_adapter
        self._adapters: Dict[str, LoRARequest] = {}

    def request(
        self,
        prompt: Prompt,
        sampling: SamplingParams,
        lora: Optional[LoRARequest],
        priority: int,
    ) -> "_baton.Request":
        request = _baton.Request()
        if prompt.token_ids is not None:
            request.prompt_tokens = prompt.token_ids
        else:
            request.prompt = prompt.text
        request.params = sampling._to_baton(self._seeds.getrandbits(63), self._context_size)
        if lora is not None:
            request.params.lora = self.adapter_name(lora)
        # vLLM handles lower priority values first; Baton's scheduler takes higher ones first.
        request.priority = -priority
        return request

    def adapter_name(self, lora: LoRARequest) -> str:
        """The adapter's name, reading it on first use."""
        known = self._adapters.get(lora.lora_name)
        if known is not None:
            if (known.lora_path, known.scale) != (lora.lora_path, lora.scale):
                raise ValueError(
                    f"LoRARequest: the name '{lora.lora_name}' is taken by {known.lora_path!r}"
                )
            return lora.lora_name
        if not self._lora_enabled:
            raise ValueError("LoRARequest: the engine was made without enable_lora=True")
        adapter = _baton.LoraOptions()
        adapter.name = lora.lora_name
        adapter.path = lora.lora_path
        adapter.scale = lora.scale
        self._load_adapter(adapter)
        self._adapters[lora.lora_name] = lora
        return lora.lora_name


Engine = TypeVar("Engine", "_baton.LLM", "_baton.AsyncLLM")


def load_engine(
    owner: str,
    engine_type: Type[Engine],
    model: Union[str, "os.PathLike[str]"],
    backend: Optional[str],
    kwargs: Dict[str, Any],
) -> Tuple[Engine, "_baton.ModelSummary", RequestBuilder]:
    """The engine loaded as the constructor arguments of ``owner`` say, its model's summary, and
    the builder of its requests."""
    args = engine_args(owner, {"backend": backend, **kwargs})
    engine = engine_type(llm_options(owner, model, args))
    summary = engine.summary()
    builder = RequestBuilder(
        summary.context_size, args.seed, args.enable_lora, engine.load_lora_adapter
    )
    return engine, summary, builder
