#!/usr/bin/env bash
# The whole test suite in one command: installs what is missing, builds, runs ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/python-test-env.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600
