"""The model's own tokenizer, as ``LLM.get_tokenizer()`` returns it."""

from __future__ import annotations

from typing import Callable, List, Sequence


class Tokenizer:
    """Encodes and decodes with the tokenizer stored in the model file."""

    def __init__(
        self,
        encode: Callable[[str, bool, bool], List[int]],
        decode: Callable[[List[int]], str],
    ) -> None:
        self._encode = encode
        self._decode = decode

    def encode(self, text: str, add_special_tokens: bool = True) -> List[int]:
        """Token ids of ``text``; BOS first when the model adds one and add_special_tokens."""
        return self._encode(text, add_special_tokens, False)

    def decode(self, token_ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        """The text of ``token_ids``; control tokens (BOS, EOS) give no text."""
        if not skip_special_tokens:
            raise ValueError(
                "Tokenizer.decode: skip_special_tokens=False is not supported by Baton, whose "
                "decoding leaves control tokens out"
            )
        return self._decode(list(token_ids))

    def __call__(self, text: str, add_special_tokens: bool = True) -> List[int]:
        return self.encode(text, add_special_tokens)
