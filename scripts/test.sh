#!/usr/bin/env bash
# The whole test suite in one command: installs what is missing, builds, runs ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/python-test-env.sh
set +e
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600 2>&1 | tee build/ctest.log
status=${PIPESTATUS[0]}
set -e
# ctest lists the skipped tests (GPU tests on a host without a GPU) after its summary line;
# repeat that line so the output ends with it.
grep -E "tests passed|tests failed" build/ctest.log | tail -1
exit "$status"
