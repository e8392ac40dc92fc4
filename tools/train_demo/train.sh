#!/usr/bin/env bash
# Retrains the bundled demo model from scratch and replaces assets/models/ and the loss plot.
# Usage: tools/train_demo/train.sh [work folder, default build/train_demo] [train.py flags]
# Installs what it needs from Debian, builds Baton, trains (about 45 minutes on 2 cores), converts
# to GGUF with `baton convert`, and measures held-out perplexity of F16, Q8_0 and Q4_K_M.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=${1:-build/train_demo}
shift || true

# libopenblas0-pthread replaces the reference BLAS Debian's PyTorch would otherwise use (4x).
packages=(bible-kjv python3-torch python3-sentencepiece python3-matplotlib python3-numpy
          libopenblas0-pthread)
source tools/train_demo/debian_packages.sh
install_debian_packages "${packages[@]}"
scripts/setup.sh >&2

# Debian's interpreter, where python3-torch lives, whatever python3 is first on PATH.
/usr/bin/python3 tools/train_demo/train.py --out "$work" "$@" | tee "$work.log"
/usr/bin/python3 tools/train_demo/plot_loss.py "$work" docs/images/demo-model-loss.png

mkdir -p assets/models
build/bin/baton convert "$work/hf" -o assets/models/kjv-7m-f16.gguf --outtype f16 \
  --name "Baton KJV demo 7M"
cp "$work/reference.json" assets/models/kjv-7m-reference.json
for type in q8_0 q4_k_m; do
  build/bin/baton quantize assets/models/kjv-7m-f16.gguf "$work/kjv-7m-$type.gguf" --type "$type"
done
for model in assets/models/kjv-7m-f16.gguf "$work"/kjv-7m-q8_0.gguf "$work"/kjv-7m-q4_k_m.gguf; do
  echo "== $model"
  build/bin/baton perplexity -m "$model" -f "$work/heldout.txt" --ctx 256 | tail -n 3
done
