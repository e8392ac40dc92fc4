#!/usr/bin/env bash
# The main job in one command: installs what building needs, builds the `baton` command (not the
# tests or GPU plugins), and generates text.
# With no arguments it continues "In the beginning" with the bundled demo model; otherwise the
# arguments are `baton run` flags, e.g. scripts/run.sh -m model.gguf -p "Once upon a time".
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --cli >&2
if [ $# -eq 0 ]; then
  set -- -p "In the beginning" -n 64
fi
exec build/bin/baton run "$@"
