#!/usr/bin/env bash
# Fine-tunes the bundled LoRA adapter of the demo model and replaces assets/lora/.
# Usage: tools/train_demo/train_lora.sh [work folder, default build/train_lora] [train_lora.py flags]
# Installs what it needs from Debian (and the gguf package from PyPI into a virtualenv that sees
# Debian's PyTorch), builds Baton, trains (about 15 minutes on 2 cores), exports the adapter as a
# PEFT directory and as GGUF, and measures held-out perplexity with and without it in Baton.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-build/train_lora}
shift || true

packages=(dict-devil bible-kjv python3-torch python3-sentencepiece python3-protobuf python3-numpy
          python3-venv libopenblas0-pthread)
source tools/train_demo/debian_packages.sh
install_debian_packages "${packages[@]}"
scripts/setup.sh >&2

# Debian's interpreter, where python3-torch lives, whatever python3 is first on PATH.
venv=build/train-venv
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
"$venv/bin/pip" install -q gguf==0.19.0

mkdir -p "$work"
"$venv/bin/python" tools/train_demo/train_lora.py --base assets/models/kjv-7m-f16.gguf \
  --out "$work" "$@" | tee "$work.log"

lora=assets/lora
mkdir -p "$lora"
cp "$work/adapter.gguf" "$lora/kjv-7m-devil-lora.gguf"
rm -rf "$lora/kjv-7m-devil-lora-peft"
cp -r "$work/peft" "$lora/kjv-7m-devil-lora-peft"
cp "$work/devil-heldout.txt" "$lora/devil-heldout.txt"
cp "$work/kjv-heldout-sample.txt" "$lora/kjv-heldout-sample.txt"
cp "$work/summary.json" "$lora/kjv-7m-devil-lora-training.json"
for text in devil-heldout kjv-heldout; do
  for adapter in none "$lora/kjv-7m-devil-lora.gguf" "$lora/kjv-7m-devil-lora-peft"; do
    flags=()
    [ "$adapter" = none ] || flags=(--lora "$adapter")
    echo "== $text, adapter $adapter"
    build/bin/baton perplexity -m assets/models/kjv-7m-f16.gguf -f "$work/$text.txt" --ctx 256 \
      "${flags[@]}" 2>/dev/null
  done
done
