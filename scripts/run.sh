#!/usr/bin/env bash
# The main job in one command: installs what is missing, builds, and generates text.
# With no arguments it continues "In the beginning" with the bundled demo model; otherwise the
# arguments are `baton run` flags, e.g. scripts/run.sh -m model.gguf -p "Once upon a time".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >&2
if [ $# -eq 0 ]; then
  set -- -p "In the beginning" -n 64
fi
exec build/bin/baton run "$@"
