"""The constructor arguments of ``LLM`` and ``AsyncLLM``: vLLM's engine argument names mapped onto
Baton's ``LLMOptions``, with Baton's own settings beside them."""

from __future__ import annotations

import os
from dataclasses import dataclass, fields
from typing import Any, Dict, Optional, Union

from . import _baton
from .unsupported import refuse_unsupported

# vLLM engine arguments Baton does not implement, with the value that asks for nothing.
_UNSUPPORTED_DEFAULTS = {
    "tokenizer": None,
    "tokenizer_mode": "auto",
    "skip_tokenizer_init": False,
    "tensor_parallel_size": 1,
    "pipeline_parallel_size": 1,
    "data_parallel_size": 1,
    "dtype": "auto",
    "quantization": None,
    "revision": None,
    "tokenizer_revision": None,
    "gpu_memory_utilization": 0.9,
    "swap_space": 4,
    "cpu_offload_gb": 0,
    "max_seq_len_to_capture": 8192,
    "disable_custom_all_reduce": False,
    "hf_overrides": None,
    "mm_processor_kwargs": None,
    "task": "auto",
    "compilation_config": None,
    "speculative_config": None,
    "download_dir": None,
    "load_format": "auto",
}

_WHERE_INSTEAD = {
    "tensor_parallel_size": "run `mpirun -np N baton serve --tensor-parallel N` (docs/distributed.md)",
    "pipeline_parallel_size": "run `mpirun baton serve --pipeline-parallel N` (docs/distributed.md)",
    "data_parallel_size": "run `mpirun baton serve --data-parallel N` (docs/distributed.md)",
    "dtype": "weights keep the GGUF file's types; `baton quantize` converts them",
    "quantization": "weights keep the GGUF file's types; `baton quantize` converts them",
    "gpu_memory_utilization": "kv_cache_size sets the KV cache in MiB",
}

# vLLM's KV cache type names and the Baton type each means.
_KV_CACHE_DTYPES = {"auto": "f32", "fp8": "fp8_e4m3"}


@dataclass
class EngineArgs:
    """The settings ``LLM`` and ``AsyncLLM`` take as keyword arguments: vLLM's names where
    Baton has the setting, Baton's own beside them.

    ``backend``: "cpu", "cuda", "rocm", ... (default $BATON_BACKEND or "cpu"); ``threads``: CPU
    threads (0 = all cores); ``kv_cache_size``: the KV cache in MiB (0 = room for four full
    contexts); ``seed``: where requests without their own seed draw theirs from;
    ``sjf_aging`` (tokens per token generated), ``sjf_overtake`` (a ratio, default 4; 0 =
    off), ``sjf_max_wait`` (seconds), ``kv_reservation`` ("none", "predicted", "max") and
    ``length_head`` (a file of ``baton length-head -o``): length-aware scheduling
    (docs/scheduling.md).
    ``trust_remote_code`` and ``enforce_eager`` are accepted because Baton already behaves as
    either value asks: it runs no code from model files and captures no CUDA graphs.
    """

    backend: Optional[str] = None
    threads: int = 0
    kv_cache_size: float = 0
    max_num_seqs: Optional[int] = None
    max_num_batched_tokens: Optional[int] = None
    max_model_len: Optional[int] = None
    block_size: Optional[int] = None
    enable_prefix_caching: bool = True
    kv_cache_dtype: str = "auto"
    scheduling_policy: str = "fcfs"
    sjf_aging: float = 1.0
    sjf_overtake: float = 4.0
    sjf_max_wait: float = 60.0
    kv_reservation: str = "none"
    length_head: str = ""
    enable_lora: bool = False
    max_loras: Optional[int] = None
    max_lora_rank: int = 16
    max_cpu_loras: Optional[int] = None
    lora_dtype: str = "auto"
    repack_weights: bool = True
    grammar_masks: str = "auto"
    seed: int = 0
    trust_remote_code: bool = False
    enforce_eager: bool = False


def engine_args(owner: str, arguments: Dict[str, Any]) -> EngineArgs:
    """The arguments as EngineArgs; refuses unknown ones and unsupported vLLM ones."""
    known = {f.name for f in fields(EngineArgs)}
    unknown = {k: v for k, v in arguments.items() if k not in known}
    refuse_unsupported(owner, unknown, _UNSUPPORTED_DEFAULTS, "argument", _WHERE_INSTEAD)
    return EngineArgs(**{k: v for k, v in arguments.items() if k in known})


def llm_options(
    owner: str, model: Union[str, "os.PathLike[str]"], args: EngineArgs
) -> "_baton.LLMOptions":
    """Baton's options for the model; raises FileNotFoundError for a missing model."""
    path = os.fspath(model)
    if not os.path.exists(path):
        raise FileNotFoundError(2, f"{owner}: no model file or checkpoint directory", path)
    options = _baton.LLMOptions()
    options.model = path
    options.backend = args.backend or ""
    options.threads = args.threads
    options.kv_cache_mib = float(args.kv_cache_size)
    if args.max_num_seqs is not None:
        options.max_seqs = args.max_num_seqs
    if args.max_num_batched_tokens is not None:
        options.max_batch_tokens = args.max_num_batched_tokens
    if args.max_model_len is not None:
        options.context_size = args.max_model_len
    if args.block_size is not None:
        options.kv_block_size = args.block_size
    options.prefix_caching = bool(args.enable_prefix_caching)
    options.kv_cache_dtype = _KV_CACHE_DTYPES.get(args.kv_cache_dtype, args.kv_cache_dtype)
    options.scheduling_policy = args.scheduling_policy
    options.sjf_aging = float(args.sjf_aging)
    options.sjf_overtake = float(args.sjf_overtake)
    options.sjf_max_wait_s = float(args.sjf_max_wait)
    options.kv_reservation = args.kv_reservation
    options.length_head = args.length_head
    if args.max_loras is not None and not args.enable_lora:
        raise ValueError(f"{owner}: max_loras needs enable_lora=True")
    if args.enable_lora:
        options.max_loras = 1 if args.max_loras is None else args.max_loras
        options.max_lora_rank = args.max_lora_rank
        if args.max_cpu_loras is not None:
            options.max_cpu_loras = args.max_cpu_loras
        options.lora_dtype = "f16" if args.lora_dtype == "auto" else args.lora_dtype
    options.repack_weights = bool(args.repack_weights)
    options.grammar_masks = args.grammar_masks
    return options
