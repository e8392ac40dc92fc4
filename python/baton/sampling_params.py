"""vLLM's ``SamplingParams`` and ``BeamSearchParams``, mapped onto Baton's generation parameters.

Field names and defaults are vLLM's, so that a vLLM program runs unchanged; the docstring of each
class says where Baton's behaviour differs. A vLLM field that Baton does not implement is refused
with a ``ValueError`` when set to anything but vLLM's default, and an unknown field is refused
too: a setting that silently did nothing would give a wrong answer without saying so.
"""

from __future__ import annotations

import copy
from typing import Any, List, Optional, Sequence, Union

from . import _baton
from .unsupported import refuse_unsupported

# vLLM fields Baton does not implement, with the default value that asks for nothing.
_UNSUPPORTED_DEFAULTS = {
    "min_tokens": 0,
    "prompt_logprobs": None,
    "detokenize": True,
    "skip_special_tokens": True,
    "spaces_between_special_tokens": True,
    "logits_processors": None,
    "include_stop_str_in_output": False,
    "truncate_prompt_tokens": None,
    "guided_decoding": None,
    "logit_bias": None,
    "allowed_token_ids": None,
    "bad_words": None,
    "early_stopping": False,
    "output_kind": None,
    "extra_args": None,
}

# Baton reports at most this many alternatives per token (GenerationParams::logprobs).
MAX_LOGPROBS = 20


def _check_int(owner: str, name: str, value: Any, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{owner}: {name} must be an integer >= {minimum}, got {value!r}")


def _check_number(owner: str, name: str, value: Any, minimum: float, maximum: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{owner}: {name} must be a number, got {value!r}")
    if not minimum <= value <= maximum:
        raise ValueError(f"{owner}: {name} must be in [{minimum}, {maximum}], got {value!r}")


class SamplingParams:
    """How to sample one request's completions, with vLLM's names and defaults.

    Differences from vLLM: ``repetition_penalty`` looks at the prompt and every generated token as
    vLLM's does; ``seed=None`` draws the request's seed from the engine's own seed, so a program
    gives the same output on every run; beam search is ``use_beam_search=True`` with
    ``best_of`` (or ``n``) beams, as in vLLM before 0.6.3, or ``LLM.beam_search``. Fields are
    checked again when a request is made, so values changed after construction are too; an
    attribute that is not a field cannot be set.
    """

    __slots__ = (
        "n",
        "best_of",
        "presence_penalty",
        "frequency_penalty",
        "repetition_penalty",
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "seed",
        "stop",
        "stop_token_ids",
        "ignore_eos",
        "max_tokens",
        "logprobs",
        "use_beam_search",
        "length_penalty",
    )

    def __init__(
        self,
        n: int = 1,
        best_of: Optional[int] = None,
        presence_penalty: float = 0.0,
        frequency_penalty: float = 0.0,
        repetition_penalty: float = 1.0,
        temperature: float = 1.0,
        top_p: float = 1.0,
        top_k: int = -1,
        min_p: float = 0.0,
        seed: Optional[int] = None,
        stop: Optional[Union[str, Sequence[str]]] = None,
        stop_token_ids: Optional[Sequence[int]] = None,
        ignore_eos: bool = False,
        max_tokens: Optional[int] = 16,
        logprobs: Optional[int] = None,
        use_beam_search: bool = False,
        length_penalty: float = 1.0,
        **unsupported: Any,
    ) -> None:
        refuse_unsupported("SamplingParams", unsupported, _UNSUPPORTED_DEFAULTS, "field")
        self.n = n
        self.best_of = best_of
        self.presence_penalty = presence_penalty
        self.frequency_penalty = frequency_penalty
        self.repetition_penalty = repetition_penalty
        self.temperature = temperature
        self.top_p = top_p
        self.top_k = top_k
        self.min_p = min_p
        self.seed = seed
        self.stop: List[str] = [stop] if isinstance(stop, str) else list(stop or [])
        self.stop_token_ids: List[int] = list(stop_token_ids or [])
        self.ignore_eos = ignore_eos
        self.max_tokens = max_tokens
        self.logprobs = logprobs
        self.use_beam_search = use_beam_search
        self.length_penalty = length_penalty
        self._verify()

    def _verify(self) -> None:
        owner = "SamplingParams"
        _check_int(owner, "n", self.n, 1)
        if self.best_of is not None:
            _check_int(owner, "best_of", self.best_of, self.n)
        _check_number(owner, "presence_penalty", self.presence_penalty, -2.0, 2.0)
        _check_number(owner, "frequency_penalty", self.frequency_penalty, -2.0, 2.0)
        _check_number(owner, "repetition_penalty", self.repetition_penalty, 1e-6, float("inf"))
        _check_number(owner, "temperature", self.temperature, 0.0, float("inf"))
        _check_number(owner, "top_p", self.top_p, 1e-9, 1.0)
        top_k = self.top_k
        if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < -1:
            raise ValueError(f"{owner}: top_k must be -1 (off) or an integer >= 0, got {top_k!r}")
        _check_number(owner, "min_p", self.min_p, 0.0, 1.0)
        if self.min_p == 1.0:
            raise ValueError(f"{owner}: min_p must be below 1, got {self.min_p!r}")
        if self.seed is not None:
            _check_int(owner, "seed", self.seed, 0)
        if self.max_tokens is not None:
            _check_int(owner, "max_tokens", self.max_tokens, 1)
        if self.logprobs is not None:
            _check_int(owner, "logprobs", self.logprobs, 0)
            if self.logprobs > MAX_LOGPROBS:
                raise ValueError(
                    f"{owner}: logprobs {self.logprobs} is above Baton's maximum of {MAX_LOGPROBS}"
                )
        _check_number(owner, "length_penalty", self.length_penalty, -float("inf"), float("inf"))
        if self.use_beam_search:
            self._verify_beam_search()
        elif self.length_penalty != 1.0:
            raise ValueError(f"{owner}: length_penalty only applies with use_beam_search=True")

    def _verify_beam_search(self) -> None:
        """vLLM's rules for beam search, which is deterministic and takes no sampling settings."""
        sampling_defaults = {
            "temperature": 0.0,
            "top_p": 1.0,
            "top_k": -1,
            "min_p": 0.0,
            "presence_penalty": 0.0,
            "frequency_penalty": 0.0,
            "repetition_penalty": 1.0,
            "seed": None,
        }
        for name, default in sampling_defaults.items():
            value = getattr(self, name)
            if value != default and not (name == "top_k" and value == 0):
                raise ValueError(
                    f"SamplingParams: {name} must be {default!r} with use_beam_search=True, "
                    f"got {value!r}"
                )

    def clone(self) -> "SamplingParams":
        return copy.deepcopy(self)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"SamplingParams({fields})"

    def _to_baton(self, seed: int, context_size: int) -> "_baton.GenerationParams":
        """Baton's parameters for one request; ``seed`` stands in when the user gave none."""
        self._verify()
        params = _baton.GenerationParams()
        sampling = params.sampling
        sampling.temperature = float(self.temperature)
        sampling.top_p = float(self.top_p)
        sampling.top_k = 0 if self.top_k < 0 else int(self.top_k)
        sampling.min_p = float(self.min_p)
        sampling.repetition_penalty = float(self.repetition_penalty)
        sampling.repeat_last_n = -1  # vLLM's penalty sees the whole sequence
        sampling.presence_penalty = float(self.presence_penalty)
        sampling.frequency_penalty = float(self.frequency_penalty)
        sampling.seed = self.seed if self.seed is not None else seed
        params.sampling = sampling
        params.max_tokens = self.max_tokens if self.max_tokens is not None else context_size
        params.ignore_eos = bool(self.ignore_eos)
        params.stop = list(self.stop)
        params.stop_token_ids = list(self.stop_token_ids)
        params.n = self.n
        # vLLM's logprobs=0 still reports the chosen token's; Baton reports it beside at least
        # one alternative, which the output then leaves out.
        params.logprobs = 0 if self.logprobs is None else max(1, self.logprobs)
        if self.use_beam_search:
            params.use_beam_search = True
            params.beam_width = self.best_of or self.n
            params.length_penalty = float(self.length_penalty)
        else:
            params.best_of = self.best_of or 0
        return params


class BeamSearchParams:
    """vLLM's parameters for ``LLM.beam_search``: ``beam_width`` beams, all of them returned."""

    def __init__(
        self,
        beam_width: int,
        max_tokens: int,
        ignore_eos: bool = False,
        temperature: float = 0.0,
        length_penalty: float = 1.0,
        **unsupported: Any,
    ) -> None:
        refuse_unsupported("BeamSearchParams", unsupported, _UNSUPPORTED_DEFAULTS, "field")
        _check_int("BeamSearchParams", "beam_width", beam_width, 1)
        _check_int("BeamSearchParams", "max_tokens", max_tokens, 1)
        if temperature != 0.0:
            raise ValueError(
                "BeamSearchParams: temperature is not supported by Baton, whose beam search is "
                "deterministic (only 0.0 is accepted)"
            )
        self.beam_width = beam_width
        self.max_tokens = max_tokens
        self.ignore_eos = ignore_eos
        self.temperature = temperature
        self.length_penalty = length_penalty

    def _sampling_params(self) -> SamplingParams:
        return SamplingParams(
            n=self.beam_width,
            best_of=self.beam_width,
            temperature=0.0,
            max_tokens=self.max_tokens,
            ignore_eos=self.ignore_eos,
            use_beam_search=True,
            length_penalty=self.length_penalty,
        )
