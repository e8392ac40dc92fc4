#!/usr/bin/env bash
# The test suite under sanitizers, each set in its own build directory:
#   scripts/sanitize.sh address,undefined [--ci]   clang, AddressSanitizer + UndefinedBehavior-
#       Sanitizer, in build-asan/ (shared with scripts/fuzz.sh, whose targets it also builds):
#       the unit suite, or with --ci the test programs CI builds (parsers, tokenizers, chat
#       templates, CPU kernels, the engine, LoRA and the server).
#   scripts/sanitize.sh thread [--ci]              gcc, ThreadSanitizer, in build-tsan/: the
#       AsyncLLM, engine-loop, live-request, server and concurrent-client tests (the same with
#       or without --ci).
# An error report from a sanitizer fails the test that made it. docs/testing.md, "Sanitizers".
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/sanitize.sh address,undefined|thread [--ci]"
sanitizers=${1:?$usage}
ci=${2:-}
# Counted before OMP_THREAD_LIMIT is set below: nproc honours it.
jobs=$(nproc)

# Tests that cannot run under a sanitizer, and why:
# - Isa.SameBinaryRunsOnCpusWithoutAvx512OrAvx runs the binary under qemu-user, which the
#   sanitizers' memory layout does not fit;
# - tests that measure resident memory (BenchNoRepack, Bench*Rss*) see the shadow memory;
# - python_* and Serve.*Python*/Playground* load the module or a browser into an
#   uninstrumented interpreter;
# - the soak test checks the RSS and latencies of a release build, not of a sanitized one;
# - the export and install checks inspect the release library (the sanitizers add symbols);
# - gpusim/GPU tests are not built here (BATON_BUILD_GPUSIM=OFF) and skip anyway.
never='Isa\.SameBinaryRuns|BenchNoRepack|Rss|python|Python|Playground|Soak|Exports|Install'

common=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
  "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1" -DBATON_PYTHON=OFF -DBATON_BUILD_CUDA=OFF
  -DBATON_BUILD_ROCM=OFF -DBATON_BUILD_GPUSIM=OFF)

case "$sanitizers" in
  address,undefined)
    scripts/setup.sh --fuzz-deps >&2
    dir=build-asan
    CC=clang CXX=clang++ cmake -S . -B "$dir" "${common[@]}" -DBATON_FUZZ=ON >/dev/null
    # One ASan+UBSan build serves the unit tests and the fuzz targets (BATON_FUZZ adds only the
    # fuzzer's coverage hooks to the objects). CI builds the programs of the parsers,
    # tokenizers, chat templates, CPU kernels, engine, LoRA and server tests, and the fuzzers.
    targets=(all)
    if [ "$ci" = --ci ]; then
      targets=(baton_cli fuzz_gguf fuzz_tokenizer fuzz_jinja fuzz_request_json fuzz_sse
        fuzz_safetensors fuzz_hf_checkpoint fuzz_lora fuzz_grammar fuzz_structured_output gguf_test tokenizer_test test_chat_template test_hf_import cpu_backend_test
        cpu_quantized_matmul_test test_sampler test_engine_core test_kv_cache test_llama_model
        test_llm test_lora test_serve test_demo_model)
    fi
    # LeakSanitizer is on: a leak fails the test too.
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    ;;
  thread)
    dir=build-tsan
    cmake -S . -B "$dir" "${common[@]}" -DBATON_SANITIZE=thread >/dev/null
    targets=(baton_cli test_llama_model test_llm test_data_parallel test_serve test_demo_model
      test_engine_core)
    only='AsyncLLM|EngineBatching|LiveRequests|Server|Serve|Completions|ChatApi|NativeRoutes|'
    # GrammarGeneration: with one OpenMP thread on a multi-core host its masks go beside the step.
    only+='ConcurrentClients|ShutdownSignal|LoraApi|BearerToken|GrammarGeneration|MaskPreparer'
    # libgomp is not built with ThreadSanitizer, so the barriers of OpenMP regions (ours and
    # oneDNN's) are invisible to it and every region would be reported as a race. One OpenMP
    # thread in all leaves the threads this build is about: the engine loop, AsyncLLM's, the
    # HTTP server's and the clients'.
    export OMP_THREAD_LIMIT=1
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tests/tsan.supp"
    ;;
  *)
    echo "$usage" >&2
    exit 2
    ;;
esac

echo "sanitize: building $dir (-fsanitize=$sanitizers)" >&2
cmake --build "$dir" -j"$jobs" --target "${targets[@]}" >&2
# With --ci, the tests of programs not built: gtest_discover_tests' placeholders, the C API
# program, the MPI runs and the float matmul tests under OMP_THREAD_LIMIT.
[ "$ci" = --ci ] && never+='|NOT_BUILT|CApi|Distributed|cpu_float_matmul_under'
args=(--test-dir "$dir" --output-on-failure -j"$jobs" --timeout 900 -E "$never")
if [ -n "${only:-}" ]; then
  args+=(-R "$only")
fi
ctest "${args[@]}"
