"""Ambrose Bierce's The Devil's Dictionary (1911, public domain) from Debian's dict-devil.

The dictd database is an index of "headword <tab> offset <tab> length" (numbers in dictd's
base-64 digits) into a gzip-compatible text; each entry, headword line and definition, is one
document for training.
"""
import gzip
from pathlib import Path

DICTD = Path("/usr/share/dictd")
DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def dictd_number(text: str) -> int:
    value = 0
    for digit in text:
        value = value * 64 + DIGITS.index(digit)
    return value


def read_entries() -> list[str]:
    """Every entry of the dictionary in index order, the database's own notes left out. Four
    entries are listed under two spellings (babe/baby, confidant/confidante, laureate/laurel,
    tsetse/tzetze fly); each pair sits in the training split, so no held-out entry was seen."""
    data = gzip.decompress((DICTD / "devil.dict.dz").read_bytes())
    entries = []
    for line in (DICTD / "devil.index").read_text(encoding="utf-8").splitlines():
        headword, offset, length = line.split("\t")
        if headword.startswith("00database"):
            continue
        start = dictd_number(offset)
        text = data[start : start + dictd_number(length)].decode("utf-8", errors="replace")
        entries.append(text.strip())
    return entries


def split_entries(entries: list[str], heldout_every: int) -> tuple[list[str], list[str]]:
    """Every `heldout_every`-th entry is held out, so validation spans the whole alphabet."""
    train = [e for i, e in enumerate(entries) if i % heldout_every != heldout_every // 2]
    heldout = [e for i, e in enumerate(entries) if i % heldout_every == heldout_every // 2]
    return train, heldout
