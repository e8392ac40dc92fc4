"""Baton from Python: vLLM's offline and streaming inference API on Baton's C++ engine.

    from baton import LLM, SamplingParams
    llm = LLM(model="model.gguf", backend="cpu")
    outputs = llm.generate(["The capital of France is"], SamplingParams(temperature=0))

docs/python.md maps each vLLM name to Baton's and lists what Baton does not support.
"""

from .async_llm import AsyncLLM
from .engine_args import EngineArgs
from .errors import (
    BackendError,
    BatonError,
    BatonIOError,
    BatonMemoryError,
    InternalError,
    InvalidArgumentError,
    InvalidModelError,
    UnsupportedError,
)
from .llm import LLM
from .lora import LoRARequest
from .outputs import (
    BeamSearchOutput,
    BeamSearchSequence,
    CompletionOutput,
    Logprob,
    RequestMetrics,
    RequestOutput,
)
from .sampling_params import BeamSearchParams, SamplingParams
from .tokenizer import Tokenizer

__all__ = [
    "AsyncLLM",
    "BackendError",
    "BatonError",
    "BatonIOError",
    "BatonMemoryError",
    "BeamSearchOutput",
    "BeamSearchParams",
    "BeamSearchSequence",
    "CompletionOutput",
    "EngineArgs",
    "InternalError",
    "InvalidArgumentError",
    "InvalidModelError",
    "LLM",
    "LoRARequest",
    "Logprob",
    "RequestMetrics",
    "RequestOutput",
    "SamplingParams",
    "Tokenizer",
    "UnsupportedError",
]
