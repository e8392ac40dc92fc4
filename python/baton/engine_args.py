"""The constructor arguments of ``LLM`` and ``AsyncLLM``: vLLM's engine argument names mapped onto
Baton's ``LLMOptions``, with Baton's own settings beside them."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
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

# The names LLM takes for LLMOptions' options where they differ from the options' own: vLLM's,
# and Baton's Python names that carry a unit the option's name does not.
_OPTION_NAMES = {
    "max_num_seqs": "max_seqs",
    "max_num_batched_tokens": "max_batch_tokens",
    "max_model_len": "context_size",
    "block_size": "kv_block_size",
    "enable_prefix_caching": "prefix_caching",
    "kv_cache_size": "kv_cache_mib",
    "sjf_max_wait": "sjf_max_wait_s",
}

# Options settled by the fields of EngineArgs below, with vLLM's meaning, rather than passed on.
_SETTLED_BY_FIELDS = {"backend", "kv_cache_dtype", "max_loras", "max_lora_rank", "max_cpu_loras",
                      "lora_dtype"}

_OPTIONS = {row["name"] for row in _baton.ENGINE_OPTIONS} - _SETTLED_BY_FIELDS


@dataclass
class EngineArgs:
    """The settings ``LLM`` and ``AsyncLLM`` take as keyword arguments: vLLM's names where
    Baton has the setting, and every other engine option of Baton's by its own name
    (``baton._baton.ENGINE_OPTIONS`` lists them; docs/engine-options.md), kept in ``options``.

    ``backend``: "cpu", "cuda", "rocm", ... (default $BATON_BACKEND or "cpu"); ``seed``: where
    requests without their own seed draw theirs from. ``trust_remote_code`` and
    ``enforce_eager`` are accepted because Baton already behaves as either value asks: it runs
    no code from model files and captures no CUDA graphs.
    """

    backend: Optional[str] = None
    kv_cache_dtype: str = "auto"
    enable_lora: bool = False
    max_loras: Optional[int] = None
    max_lora_rank: int = 16
    max_cpu_loras: Optional[int] = None
    lora_dtype: str = "auto"
    seed: int = 0
    trust_remote_code: bool = False
    enforce_eager: bool = False
    options: Dict[str, Any] = field(default_factory=dict)


def engine_args(owner: str, arguments: Dict[str, Any]) -> EngineArgs:
    """The arguments as EngineArgs; refuses unknown ones and unsupported vLLM ones."""
    known = {f.name for f in fields(EngineArgs)} - {"options"}
    options = {}
    unknown = {}
    for key, value in arguments.items():
        name = _OPTION_NAMES.get(key, key)
        if key in known:
            continue
        if name in _OPTIONS:
            options[name] = value
        else:
            unknown[key] = value
    refuse_unsupported(owner, unknown, _UNSUPPORTED_DEFAULTS, "argument", _WHERE_INSTEAD)
    return EngineArgs(**{k: v for k, v in arguments.items() if k in known}, options=options)


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
    options.kv_cache_dtype = _KV_CACHE_DTYPES.get(args.kv_cache_dtype, args.kv_cache_dtype)
    for name, value in args.options.items():
        if value is not None:  # vLLM's way of asking for the default
            setattr(options, name, value)
    if args.max_loras is not None and not args.enable_lora:
        raise ValueError(f"{owner}: max_loras needs enable_lora=True")
    if args.enable_lora:
        options.max_loras = 1 if args.max_loras is None else args.max_loras
        options.max_lora_rank = args.max_lora_rank
        if args.max_cpu_loras is not None:
            options.max_cpu_loras = args.max_cpu_loras
        options.lora_dtype = args.lora_dtype
    return options
