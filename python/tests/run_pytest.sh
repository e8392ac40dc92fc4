#!/usr/bin/env bash
# Runs one pytest file with the Python of the test venv (scripts/python-test-env.sh), or exits
# 77, ctest's skip, saying why when that venv has no pytest.
set -uo pipefail
python="$BATON_BUILD_DIR/python-venv/bin/python"
if ! "$python" -c 'import pytest' 2>/dev/null; then
  echo "skipped: $python has no pytest (scripts/python-test-env.sh installs it)"
  exit 77
fi
exec "$python" -m pytest -q -p no:cacheprovider "$1"
