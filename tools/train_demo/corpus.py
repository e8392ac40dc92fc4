"""The King James Bible from Debian's bible-kjv-text, split into chapters for training.

The `bible` reader (package bible-kjv) prints the compressed text; with -l0 each verse is one
line "  N text" under a "Book N" chapter heading.
"""
import re
import subprocess

VERSE = re.compile(r"^\s+\d+ (.*)$")
CHAPTER = re.compile(r"^\S.* \d+$")


def read_chapters() -> list[str]:
    """Every chapter of the Bible in order, as its verses joined by newlines."""
    text = subprocess.run(["bible", "-l0", "Gen1:1-Rev22:21"], check=True, capture_output=True,
                          text=True).stdout
    chapters, verses = [], []
    for line in text.splitlines():
        if CHAPTER.match(line):
            if verses:
                chapters.append("\n".join(verses))
            verses = []
        elif match := VERSE.match(line):
            verses.append(match.group(1).strip())
    if verses:
        chapters.append("\n".join(verses))
    return chapters


def split_chapters(chapters: list[str], heldout_every: int) -> tuple[list[str], list[str]]:
    """Every `heldout_every`-th chapter is held out, so validation spans the whole book."""
    train = [c for i, c in enumerate(chapters) if i % heldout_every != heldout_every // 2]
    heldout = [c for i, c in enumerate(chapters) if i % heldout_every == heldout_every // 2]
    return train, heldout
