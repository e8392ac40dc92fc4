#!/usr/bin/env bash
# The whole test suite in one command: installs what is missing, builds, runs ctest, then the
# hardening stage: the AddressSanitizer + UndefinedBehaviorSanitizer and ThreadSanitizer subsets
# (scripts/sanitize.sh --ci) and every fuzz target for a short while (scripts/fuzz.sh).
#   scripts/test.sh                       all of it (what CI runs)
#   scripts/test.sh --quick               the main build's tests only
#   scripts/test.sh --sanitize LIST [--ci]  only a sanitizer build's tests (address,undefined or
#                                         thread; see scripts/sanitize.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--sanitize" ]; then
  shift
  exec scripts/sanitize.sh "$@"
fi
quick=${1:-}
# Seconds each fuzz target runs in the hardening stage.
fuzz_seconds=20

scripts/setup.sh
scripts/python-test-env.sh
set +e
ctest --test-dir build --output-on-failure -j"$(nproc)" --timeout 600 \
  --output-junit "$PWD/build/ctest-junit.xml" 2>&1 | tee build/ctest.log
status=${PIPESTATUS[0]}
set -e

hardening=()
if [ "$quick" != "--quick" ]; then
  for sanitizers in address,undefined thread; do
    if scripts/sanitize.sh "$sanitizers" --ci > "build/sanitize-$sanitizers.log" 2>&1; then
      result=passed
    else
      result=FAILED
      status=1
      tail -n 60 "build/sanitize-$sanitizers.log"
    fi
    summary=$(grep -E "tests passed|tests failed" "build/sanitize-$sanitizers.log" | tail -1) ||
      summary="no ctest summary"
    hardening+=("sanitizers $sanitizers: $result ($summary, log: build/sanitize-$sanitizers.log)")
  done
  for target in $(ls tests/fuzz/corpus); do
    log="build/fuzz-$target.log"
    if scripts/fuzz.sh "$target" "$fuzz_seconds" > "$log" 2>&1; then
      result=passed
    else
      result=FAILED
      status=1
      tail -n 40 "$log"
    fi
    hardening+=("fuzz $target ${fuzz_seconds}s: $result ($(grep -o 'Done [0-9]* runs' "$log" ||
      echo 'no run'), log: $log)")
  done
fi

# ctest lists the skipped tests (GPU tests on a host without a GPU, llama2.c and llama.cpp
# reference checks without ../shared) after its summary line: say how many skipped and why from
# the messages the junit file records, then repeat the summary line so the output ends with it.
python3 scripts/summarize_skips.py build/ctest-junit.xml ||
  echo "skipped: see the list above (build/ctest-junit.xml could not be read)"
for line in "${hardening[@]}"; do echo "hardening: $line"; done
grep -E "tests passed|tests failed" build/ctest.log | tail -1
exit "$status"
