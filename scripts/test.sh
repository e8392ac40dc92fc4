#!/usr/bin/env bash
# The whole test suite in one command: installs what is missing, builds, runs ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/python-test-env.sh
set +e
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600 \
  --output-junit "$PWD/build/ctest-junit.xml" 2>&1 | tee build/ctest.log
status=${PIPESTATUS[0]}
set -e
# ctest lists the skipped tests (GPU tests on a host without a GPU, llama2.c and llama.cpp
# reference checks without ../shared) after its summary line: say how many skipped and why from
# the messages the junit file records, then repeat the summary line so the output ends with it.
python3 scripts/summarize_skips.py build/ctest-junit.xml ||
  echo "skipped: see the list above (build/ctest-junit.xml could not be read)"
grep -E "tests passed|tests failed" build/ctest.log | tail -1
exit "$status"
