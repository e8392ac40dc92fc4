"""What ``LLM.generate`` and ``AsyncLLM.generate`` return, in vLLM's shapes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from . import _baton
from .lora import LoRARequest

_FINISH_REASONS = {
    _baton.FinishReason.STOP: "stop",
    _baton.FinishReason.LENGTH: "length",
    _baton.FinishReason.ABORTED: "abort",
}


def finish_reason_name(reason: "_baton.FinishReason") -> str:
    return _FINISH_REASONS[reason]


@dataclass
class Logprob:
    """One token's log-probability; ``rank`` is its place among the alternatives Baton
    reported (1 = most likely), None when it was not among them."""

    logprob: float
    rank: Optional[int] = None
    decoded_token: Optional[str] = None


# One generated position: the chosen token and the top alternatives, by token id.
SampleLogprobs = List[Dict[int, Logprob]]


def sample_logprobs(
    entries: List["_baton.TokenLogprobs"], top: int, token_text: Callable[[int], str]
) -> SampleLogprobs:
    """Each position's chosen token and its ``top`` most likely alternatives."""
    positions: SampleLogprobs = []
    for entry in entries:
        position = {
            alt.token: Logprob(alt.logprob, rank, token_text(alt.token))
            for rank, alt in enumerate(entry.top[:top], start=1)
        }
        chosen = entry.chosen
        if chosen.token not in position:
            position[chosen.token] = Logprob(chosen.logprob, None, token_text(chosen.token))
        positions.append(position)
    return positions


@dataclass
class CompletionOutput:
    """One of a request's completions. ``stop_reason`` is always None: Baton reports that a
    stop string or token ended the text (``finish_reason == "stop"``) but not which."""

    index: int
    text: str
    token_ids: List[int]
    cumulative_logprob: Optional[float]
    logprobs: Optional[SampleLogprobs]
    finish_reason: Optional[str] = None
    stop_reason: Optional[str] = None
    lora_request: Optional[LoRARequest] = None

    def finished(self) -> bool:
        return self.finish_reason is not None


@dataclass
class RequestMetrics:
    """Timings in seconds from the request's submission, and token counts."""

    queue_seconds: float = 0.0
    ttft_seconds: float = 0.0
    tpot_seconds: float = 0.0
    e2e_seconds: float = 0.0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cached_prompt_tokens: int = 0

    @classmethod
    def from_baton(cls, m: "_baton.RequestMetrics") -> "RequestMetrics":
        return cls(
            m.queue_seconds,
            m.ttft_seconds,
            m.tpot_seconds,
            m.e2e_seconds,
            m.prompt_tokens,
            m.output_tokens,
            m.cached_prompt_tokens,
        )


@dataclass
class RequestOutput:
    """A request's prompt and its completions, as vLLM's ``RequestOutput``."""

    request_id: str
    prompt: Optional[str]
    prompt_token_ids: List[int]
    outputs: List[CompletionOutput]
    finished: bool
    metrics: Optional[RequestMetrics] = None
    lora_request: Optional[LoRARequest] = None
    prompt_logprobs: None = None
    num_cached_tokens: int = 0


def request_output(
    request_id: str,
    prompt: Optional[str],
    result: "_baton.GenerationOutput",
    logprobs: Optional[int],
    token_text: Callable[[int], str],
    lora_request: Optional[LoRARequest],
) -> RequestOutput:
    """A finished request's output from Baton's."""
    completions = [
        CompletionOutput(
            index=i,
            text=c.text,
            token_ids=list(c.tokens),
            cumulative_logprob=c.cumulative_logprob,
            logprobs=(
                None if logprobs is None else sample_logprobs(c.logprobs, logprobs, token_text)
            ),
            finish_reason=finish_reason_name(c.finish_reason),
            lora_request=lora_request,
        )
        for i, c in enumerate(result.completions)
    ]
    metrics = RequestMetrics.from_baton(result.metrics)
    return RequestOutput(
        request_id=request_id,
        prompt=prompt,
        prompt_token_ids=list(result.prompt_tokens),
        outputs=completions,
        finished=True,
        metrics=metrics,
        lora_request=lora_request,
        num_cached_tokens=metrics.cached_prompt_tokens,
    )


@dataclass
class BeamSearchSequence:
    """One beam of ``LLM.beam_search``: its generated tokens and text, and its score."""

    tokens: List[int]
    text: str
    cum_logprob: float
    finish_reason: Optional[str] = None


@dataclass
class BeamSearchOutput:
    """The beams of one prompt, best first."""

    sequences: List[BeamSearchSequence] = field(default_factory=list)
