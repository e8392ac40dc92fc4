#!/usr/bin/env bash
# The Python environment the integration tests use: a venv in build/python-venv holding, from
# the Python package registry, pytest and tqdm (the Python package's tests, python/tests), the
# official `openai` client, `jsonschema` (which validates structured outputs), `selenium` (which drives Debian's chromium for the playground test)
# and Hugging Face `tokenizers` (which makes and checks a real tokenizer.json). Tests that need
# it skip, saying so, when it could not be made (for instance with no network).
set -uo pipefail
cd "$(dirname "$0")/.."

venv=build/python-venv
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    python3 python3-venv
fi
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || { echo "python-test-env: cannot create $venv"; exit 0; }
fi
if ! "$venv/bin/python" -c 'import pytest, tqdm' 2>/dev/null; then
  "$venv/bin/pip" install -q 'pytest>=7' 'tqdm>=4.60' ||
    echo "python-test-env: could not install pytest and tqdm; the Python package's tests will skip"
fi
if ! "$venv/bin/python" -c 'import openai' 2>/dev/null; then
  "$venv/bin/pip" install -q 'openai>=1.0,<3' ||
    echo "python-test-env: could not install openai; the openai client test will skip"
fi
if ! "$venv/bin/python" -c 'import jsonschema' 2>/dev/null; then
  "$venv/bin/pip" install -q 'jsonschema>=4.18,<5' ||
    echo "python-test-env: could not install jsonschema; the structured outputs test will skip"
fi
if ! "$venv/bin/python" -c 'import selenium' 2>/dev/null; then
  "$venv/bin/pip" install -q 'selenium>=4.11,<5' ||
    echo "python-test-env: could not install selenium; the playground browser test will skip"
fi
if ! "$venv/bin/python" -c 'import tokenizers' 2>/dev/null; then
  "$venv/bin/pip" install -q 'tokenizers>=0.15,<1' ||
    echo "python-test-env: could not install tokenizers; the tokenizer.json test will skip"
fi
