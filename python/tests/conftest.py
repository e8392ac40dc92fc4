"""Shared fixtures: the bundled demo model, its f32 copy and the baton command of the build."""

import os
import pathlib
import subprocess

import pytest

SOURCE_DIR = pathlib.Path(
    os.environ.get("BATON_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2])
)
BUILD_DIR = pathlib.Path(os.environ.get("BATON_BUILD_DIR", SOURCE_DIR / "build"))
DEMO_MODEL = SOURCE_DIR / "assets" / "models" / "kjv-7m-f16.gguf"
DEMO_LORA = SOURCE_DIR / "assets" / "lora" / "kjv-7m-devil-lora.gguf"
DEVIL_HELDOUT = SOURCE_DIR / "assets" / "lora" / "devil-heldout.txt"
BATON = BUILD_DIR / "bin" / "baton"

# Prompts of 2 to 29 tokens in the style of the demo model's training text.
PROMPTS = [
    "In the beginning",
    "And God said",
    "And the LORD spake unto Moses, saying, Speak unto the children of Israel",
    "Jesus wept",
    "Blessed are the poor in spirit: for theirs is the kingdom of heaven",
    "The LORD is my shepherd",
    "And Abraham said",
    "For God so loved the world, that he gave his only begotten Son",
    "Amen",
    "Behold",
    "And the king answered",
    "Thus saith the LORD of hosts, Consider your ways",
    "Let there be light",
    "And it came to pass in those days, that there went out a decree from Caesar Augustus",
    "Praise ye the LORD",
    "Now the serpent was more subtil than any beast of the field",
]


@pytest.fixture(scope="session")
def demo_model() -> pathlib.Path:
    return DEMO_MODEL


@pytest.fixture(scope="session")
def demo_model_f32(tmp_path_factory) -> pathlib.Path:
    """The demo model with f32 weights, for comparing a request's tokens across batches: f32
    takes the same kernel at every batch size, where f16 switches to a bf16 GEMM on AVX-512
    hosts, which can flip a near-tie between two tokens."""
    path = tmp_path_factory.mktemp("models") / "demo-f32.gguf"
    subprocess.run(
        [str(BATON), "quantize", str(DEMO_MODEL), str(path), "--type", "f32", "--pure"],
        check=True,
        capture_output=True,
    )
    return path


def baton_run(model: pathlib.Path, prompt: str, max_tokens: int) -> str:
    """What `baton run` prints for a greedy continuation: the prompt, then the new text."""
    result = subprocess.run(
        [str(BATON), "run", "-m", str(model), "-p", prompt, "-n", str(max_tokens)]
        + ["--temp", "0", "-t", "2", "-q"],
        check=True,
        capture_output=True,
        text=True,
    )
    return result.stdout
