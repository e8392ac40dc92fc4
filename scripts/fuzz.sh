#!/usr/bin/env bash
# Fuzzes one target for a while: scripts/fuzz.sh TARGET SECONDS [more libFuzzer flags]
# TARGET: fuzz_gguf, fuzz_safetensors, fuzz_hf_checkpoint, fuzz_lora, fuzz_grammar,
# fuzz_structured_output, fuzz_tokenizer, fuzz_jinja,
# fuzz_request_json or fuzz_sse (tests/fuzz).
# Builds the target with clang under AddressSanitizer and UndefinedBehaviorSanitizer in
# build-asan/ (the directory of scripts/sanitize.sh address,undefined; clang and libFuzzer are
# installed from Debian's packages when missing), then runs TARGET on a working corpus,
# build-asan/corpus/TARGET, seeded from tests/fuzz/corpus/TARGET and, for fuzz_gguf, the GGUF
# files of ../shared. A finding leaves its input in build-asan/findings/TARGET/; once fixed, copy
# it to tests/fuzz/regressions/TARGET/ so that the test suite replays it. Ends with libFuzzer's
# final statistics (executions per second, coverage).
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

# The same configuration as scripts/sanitize.sh address,undefined, so the two share one build.
CC=clang CXX=clang++ cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DBATON_PYTHON=OFF -DBATON_BUILD_CUDA=OFF -DBATON_BUILD_ROCM=OFF -DBATON_BUILD_GPUSIM=OFF \
  -DBATON_FUZZ=ON >/dev/null
cmake --build build-asan -j"$(nproc)" --target "$target" >&2

corpus="build-asan/corpus/$target"
findings="build-asan/findings/$target"
mkdir -p "$corpus" "$findings"
cp -n "tests/fuzz/corpus/$target"/* "$corpus"/
if [ "$target" = fuzz_gguf ] && [ -d ../shared/models ]; then
  find ../shared/models -name '*.gguf' -size -2M -exec cp -n {} "$corpus"/ \;
fi
exec "build-asan/bin/$target" "$corpus" -max_total_time="$seconds" -print_final_stats=1 \
  -timeout=10 -rss_limit_mb=4096 -artifact_prefix="$findings/" "$@"
