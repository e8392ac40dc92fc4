"""vLLM's ``LoRARequest``: which adapter a request generates with."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoRARequest:
    """An adapter by name, read from ``lora_path`` (a llama.cpp GGUF adapter or a PEFT
    directory) the first time a request names it. ``lora_int_id`` is accepted for vLLM
    compatibility; Baton tells adapters apart by name."""

    lora_name: str
    lora_int_id: int
    lora_path: str = ""
    scale: float = 1.0

    @property
    def name(self) -> str:
        return self.lora_name

    @property
    def path(self) -> str:
        return self.lora_path
