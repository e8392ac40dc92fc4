"""The refusal shared by SamplingParams and the engine arguments: a vLLM setting Baton does not
implement is accepted only at vLLM's default, where it asks for nothing, and an unknown name is
refused outright, so that no setting silently does nothing."""

from __future__ import annotations

from typing import Any, Dict, Optional


def refuse_unsupported(
    owner: str,
    given: Dict[str, Any],
    defaults: Dict[str, Any],
    noun: str,
    hints: Optional[Dict[str, str]] = None,
) -> None:
    """Raises ValueError for the first of ``given`` that is not a key of ``defaults`` (an
    unknown ``noun``) or differs from its default there."""
    for name, value in given.items():
        if name not in defaults:
            raise ValueError(f"{owner}: unknown {noun} '{name}'")
        if value != defaults[name]:
            hint = (hints or {}).get(name, "see docs/python.md")
            raise ValueError(
                f"{owner}: '{name}' is not supported by Baton (only its default, "
                f"{defaults[name]!r}, is accepted): {hint}"
            )
