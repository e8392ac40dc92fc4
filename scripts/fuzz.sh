#!/usr/bin/env bash
# Fuzzes one target for a while: scripts/fuzz.sh TARGET SECONDS [more libFuzzer flags]
# TARGET: fuzz_gguf, fuzz_tokenizer, fuzz_jinja, fuzz_request_json or fuzz_sse (tests/fuzz).
# Builds the targets with clang under AddressSanitizer and UndefinedBehaviorSanitizer into
# build-fuzz/ (installing clang and libFuzzer from Debian's packages when missing), then runs
# TARGET on a working corpus, build-fuzz/corpus/TARGET, seeded from tests/fuzz/corpus/TARGET and,
# for fuzz_gguf, the GGUF files of ../shared. A finding leaves its input in
# build-fuzz/findings/TARGET/; once fixed, copy it to tests/fuzz/regressions/TARGET/ so that the
# test suite replays it. Ends with libFuzzer's final statistics (executions per second, coverage).
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/fuzz.sh TARGET SECONDS [libFuzzer flags]"
target=${1:?$usage}
seconds=${2:?$usage}
shift 2
if [ ! -d "tests/fuzz/corpus/$target" ]; then
  echo "fuzz: no target '$target'; the targets: $(ls tests/fuzz/corpus | tr '\n' ' ')" >&2
  exit 2
fi

scripts/setup.sh --fuzz-deps >&2

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBATON_FUZZ=ON -DBATON_BUILD_TESTS=OFF -DBATON_PYTHON=OFF \
  -DBATON_BUILD_CUDA=OFF -DBATON_BUILD_ROCM=OFF -DBATON_BUILD_GPUSIM=OFF >/dev/null
cmake --build build-fuzz -j"$(nproc)" --target "$target" >&2

corpus="build-fuzz/corpus/$target"
findings="build-fuzz/findings/$target"
mkdir -p "$corpus" "$findings"
cp -n "tests/fuzz/corpus/$target"/* "$corpus"/
if [ "$target" = fuzz_gguf ] && [ -d ../shared/models ]; then
  find ../shared/models -name '*.gguf' -size -2M -exec cp -n {} "$corpus"/ \;
fi
exec "build-fuzz/bin/$target" "$corpus" -max_total_time="$seconds" -print_final_stats=1 \
  -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$findings/" "$@"
