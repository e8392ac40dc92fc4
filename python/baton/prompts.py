"""The prompt forms vLLM accepts, and chat messages, turned into Baton's requests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _baton

# A text, or a dict with "prompt" (text) or "prompt_token_ids" (used as given, BOS included).
PromptType = Union[str, Dict[str, Any]]


@dataclass
class Prompt:
    """One prompt: its text when it has one, or its token ids."""

    text: Optional[str] = None
    token_ids: Optional[List[int]] = None


def prompts_of(prompts: Union[PromptType, Sequence[PromptType]]) -> List[Prompt]:
    items = [prompts] if isinstance(prompts, (str, dict)) else list(prompts)
    result = []
    for item in items:
        if isinstance(item, dict) and not set(item) <= {"prompt", "prompt_token_ids"}:
            unknown = sorted(set(item) - {"prompt", "prompt_token_ids"})
            raise ValueError(f"prompt fields {unknown} are not supported by Baton")
        if isinstance(item, str):
            result.append(Prompt(text=item))
        elif isinstance(item, dict) and "prompt_token_ids" in item:
            ids = item["prompt_token_ids"]
            if not all(isinstance(t, int) and not isinstance(t, bool) for t in ids) or not ids:
                raise ValueError("prompt_token_ids must be a non-empty list of token ids")
            result.append(Prompt(text=item.get("prompt"), token_ids=list(ids)))
        elif isinstance(item, dict) and isinstance(item.get("prompt"), str):
            result.append(Prompt(text=item["prompt"]))
        elif isinstance(item, int):
            raise ValueError(
                "a prompt of token ids is given as {'prompt_token_ids': [...]}, not a bare list"
            )
        else:
            raise ValueError(
                f"a prompt is a string or a dict with 'prompt' or 'prompt_token_ids', got {item!r}"
            )
    return result


def one_per_prompt(name: str, value: Any, count: int, is_single: Callable[[Any], bool]) -> list:
    """``value`` repeated for every prompt, or its items when it gives one per prompt."""
    if is_single(value):
        return [value] * count
    values = list(value)
    if len(values) != count:
        raise ValueError(f"{name}: {len(values)} given for {count} prompts")
    return values


def message_text(message: Dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    parts = []
    for part in content:
        if part.get("type") != "text":
            raise ValueError(
                f"chat: content parts of type {part.get('type')!r} are not supported; "
                "Baton's models take text"
            )
        parts.append(part["text"])
    return "".join(parts)


def chat_messages(conversation: Sequence[Dict[str, Any]]) -> List["_baton.ChatMessage"]:
    messages = []
    for message in conversation:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise ValueError(f"chat: a message is a dict with a 'role', got {message!r}")
        messages.append(_baton.ChatMessage(message["role"], message_text(message)))
    return messages


def conversations_of(messages: Sequence[Any]) -> List[Sequence[Dict[str, Any]]]:
    """One conversation (a list of messages) or several (a list of such lists)."""
    if messages and isinstance(messages[0], (list, tuple)):
        return list(messages)
    return [messages]
