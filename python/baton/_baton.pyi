"""Type stub of the extension module: Baton's C++ API (include/baton) as bound by pybind11."""

import enum
from typing import Any, Callable, Dict, List, Optional

class LoraOptions:
    name: str
    path: str
    scale: float
    def __init__(self) -> None: ...

# LLMOptions' table (include/baton/llm_options.h), one dict per option: name, type, default,
# flag, help, all_ranks, min, min_exclusive.
ENGINE_OPTIONS: List[Dict[str, Any]]

class LLMOptions:
    model: str
    backend: str
    threads: int
    context_size: int
    kv_block_size: int
    kv_cache_mib: float
    max_batch_tokens: int
    max_seqs: int
    long_prefill_token_threshold: int
    scheduling_policy: str
    sjf_aging: float
    sjf_overtake: float
    sjf_max_wait_s: float
    kv_reservation: str
    length_head: str
    prefix_caching: bool
    kv_cache_dtype: str
    repack_weights: bool
    grammar_masks: str
    max_loras: int
    max_lora_rank: int
    lora_dtype: str
    max_cpu_loras: int
    def __init__(self) -> None: ...

class SamplingParams:
    temperature: float
    top_k: int
    top_p: float
    min_p: float
    repetition_penalty: float
    repeat_last_n: int
    presence_penalty: float
    frequency_penalty: float
    seed: int
    def __init__(self) -> None: ...

class GenerationParams:
    sampling: SamplingParams
    max_tokens: int
    ignore_eos: bool
    stop: List[str]
    stop_token_ids: List[int]
    n: int
    best_of: int
    logprobs: int
    use_beam_search: bool
    beam_width: int
    length_penalty: float
    lora: str
    def __init__(self) -> None: ...

class Request:
    prompt: str
    params: GenerationParams
    prompt_tokens: List[int]
    priority: int
    def __init__(self) -> None: ...

class ChatMessage:
    role: str
    content: str
    def __init__(self, role: str, content: str) -> None: ...

class PerplexityParams:
    context: int
    batch_tokens: int
    lora: str
    def __init__(self) -> None: ...

class FinishReason(enum.Enum):
    STOP = ...
    LENGTH = ...
    ABORTED = ...

class TokenLogprob:
    token: int
    logprob: float

class TokenLogprobs:
    chosen: TokenLogprob
    top: List[TokenLogprob]

class Completion:
    text: str
    tokens: List[int]
    finish_reason: FinishReason
    cumulative_logprob: float
    logprobs: List[TokenLogprobs]

class RequestMetrics:
    queue_seconds: float
    ttft_seconds: float
    tpot_seconds: float
    e2e_seconds: float
    prompt_tokens: int
    output_tokens: int
    cached_prompt_tokens: int

class GenerationOutput:
    text: str
    tokens: List[int]
    finish_reason: FinishReason
    completions: List[Completion]
    prompt_tokens: List[int]
    metrics: RequestMetrics

class StreamEvent:
    request_id: int
    index: int
    text: str
    tokens: List[int]
    logprobs: List[TokenLogprobs]
    finished: bool
    finish_reason: FinishReason
    output: Optional[GenerationOutput]
    error: str
    unavailable: bool

class ChatPrompt:
    text: str
    tokens: List[int]

class PerplexityReport:
    """Perplexity of a text, measured as llama.cpp's perplexity tool measures it."""

    context: int
    tokens: int
    chunks: int
    scored: int
    perplexity: float
    standard_error: float

class EngineStats:
    """The engine's counters since loading, and its KV cache gauges now."""

    steps: int
    computed_tokens: int
    prompt_tokens: int
    generated_tokens: int
    preemptions: int
    recomputed_tokens: int
    suspensions: int
    length_predictions: int
    length_prediction_error: float
    length_prediction_tau: float
    length_predictions_trusted: bool
    length_head_predictions: int
    length_head_error: float
    length_head_tau: float
    prefix_query_tokens: int
    prefix_hit_tokens: int
    prefix_cache_hit_rate: float
    grammar_seconds: float
    grammar_engine_seconds: float
    kv_blocks_total: int
    kv_blocks_free: int
    kv_blocks_used: int
    running: int
    waiting: int
    finished_stop: int
    finished_length: int
    finished_aborted: int
    failed: int

class ModelSummary:
    """The loaded model's shape and the engine's memory."""

    architecture: str
    backend: str
    n_vocab: int
    n_ctx_train: int
    context_size: int
    n_embd: int
    n_layer: int
    n_head: int
    n_head_kv: int
    n_ff: int
    kv_cache_dtype: str
    kv_cache_tokens: int
    lora_slots: int

class LLM:
    def __init__(self, options: LLMOptions) -> None: ...
    def generate(
        self,
        requests: List[Request],
        on_finished: Optional[Callable[[List[int]], None]] = None,
    ) -> List[GenerationOutput]: ...
    def tokenize(self, text: str, add_special: bool, parse_special: bool) -> List[int]: ...
    def detokenize(self, tokens: List[int]) -> str: ...
    def token_text(self, token: int) -> str: ...
    def chat_prompt(
        self, messages: List[ChatMessage], add_generation_prompt: bool
    ) -> ChatPrompt: ...
    def summary(self) -> ModelSummary: ...
    def stats(self) -> EngineStats: ...
    def perplexity(self, text: str, params: PerplexityParams) -> PerplexityReport: ...
    def load_lora_adapter(self, adapter: LoraOptions) -> None: ...

class AsyncLLM:
    def __init__(self, options: LLMOptions) -> None: ...
    def shutdown(self) -> None: ...
    def add_request(self, request: Request, on_event: Callable[[StreamEvent], None]) -> int: ...
    def abort(self, id: int) -> None: ...
    def stats(self) -> EngineStats: ...
    def summary(self) -> ModelSummary: ...
    def tokenize(self, text: str, add_special: bool, parse_special: bool) -> List[int]: ...
    def detokenize(self, tokens: List[int]) -> str: ...
    def token_text(self, token: int) -> str: ...
    def load_lora_adapter(self, adapter: LoraOptions) -> None: ...
