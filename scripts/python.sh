#!/usr/bin/env bash
# For Python users: installs the build's Debian packages, builds and installs the `baton` package
# into the virtualenv .venv (pip install .), then runs vLLM's offline example with the bundled
# demo model. Arguments go to the example (a model path). docs/python.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --deps-only >&2
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# A build directory that persists makes a second install rebuild only what changed.
.venv/bin/pip install -q -Cbuild-dir=build/pip . >&2
exec .venv/bin/python python/examples/offline.py "$@"
