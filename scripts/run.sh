#!/usr/bin/env bash
# The main job in one command: installs what is missing, builds, and generates text.
# Usage: scripts/run.sh -m model.gguf -p "Once upon a time" [any `baton run` flag]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >&2
exec build/bin/baton run "$@"
