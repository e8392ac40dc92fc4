#!/usr/bin/env bash
# The CUDA backend's check on a machine with an NVIDIA GPU (a lent H200): the backend conformance
# suite (gpu_backend_test: every op and whole-model test, none may skip), `baton run` greedy on
# cuda against cpu, and `baton bench` prefill and decode on TinyLlama-shape Q4_0 and F16 files
# (written by `baton synth`), and, where mpirun is installed, `mpirun -np 2 baton run
# --tensor-parallel 2` on cuda against one process (NCCL with two GPUs, host-staged with one).
# Building is the slow part: make a bundle where one can.
# Prints PASS/FAIL per step and a summary; exits 0 only when everything passed.
#
# Usage, from the repository root: tests/backends/gpu/run_on_device.sh
#   With .device-bundle/ present (made by tests/backends/gpu/make_device_bundle.sh on a build host
#   and carried along), its prebuilt binaries run: the lent machines have CUDA, CMake and ninja
#   but not Baton's other build dependencies (oneDNN, GoogleTest, CLI11, cpp-httplib).
#   Without it, the script configures and builds Release into build-device/ with every core.
# stories260K.gguf is looked for in $BATON_SHARED_DIR/models, ../shared/models and the bundle.
# Logs go to $OUT when set (the device tool's output folder), else to build-device/logs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
root=$(pwd)

results=()
failed=0
record() {  # record NAME STATUS DETAIL
  results+=("$2  $1${3:+: $3}")
  [ "$2" = PASS ] || [ "$2" = SKIP ] || failed=1
}
log_dir=${OUT:-$root/build-device/logs}
mkdir -p "$log_dir"

echo "== device"
nvidia-smi -L 2>&1 || echo "(nvidia-smi not available)"

bundle=$root/.device-bundle
if [ -d "$bundle" ]; then
  echo "== using the prebuilt bundle in $bundle"
  bin=$bundle/bin
  if [ -f "$bundle/deps.tar.xz" ] && [ ! -d "$bundle/deps" ]; then
    mkdir -p "$bundle/deps" && tar -xJf "$bundle/deps.tar.xz" -C "$bundle/deps"
  fi
  export LD_LIBRARY_PATH="$bundle/lib:$bundle/deps${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  shared=${BATON_SHARED_DIR:-$bundle/shared}
  record build PASS "prebuilt bundle"
else
  echo "== building Release into build-device/"
  start=$(date +%s)
  if cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release >"$log_dir/configure.log" 2>&1 &&
     cmake --build build-device -j"$(nproc)" --target baton_cli baton_backend_cuda \
       gpu_backend_test >"$log_dir/build.log" 2>&1; then
    record build PASS "$(($(date +%s) - start)) s"
  else
    tail -30 "$log_dir/configure.log" "$log_dir/build.log" 2>/dev/null
    record build FAIL "see configure.log / build.log (missing packages? make a bundle instead)"
  fi
  bin=$root/build-device/bin
  shared=${BATON_SHARED_DIR:-$root/../shared}
fi

# The plugin needs libcublas.so.13; add the toolkit's or the pip wheel's folder if the loader
# would not find it on its own.
if ! ldconfig -p 2>/dev/null | grep -q libcublas.so.13; then
  for dir in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib \
    $(python3 -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + "/lib")' \
      2>/dev/null); do
    if [ -e "$dir/libcublas.so.13" ]; then
      export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      break
    fi
  done
fi

model=$shared/models/stories260K.gguf
[ -f "$model" ] || echo "warning: $model not found; the model checks will fail"
export BATON_SHARED_DIR=$shared

if [ -x "$bin/baton" ]; then
  echo "== baton backends"
  "$bin/baton" backends 2>&1 | tee "$log_dir/backends.log"
fi

echo "== gpu_backend_test"
if [ -x "$bin/gpu_backend_test" ]; then
  start=$(date +%s)
  "$bin/gpu_backend_test" --gtest_brief=1 2>&1 | tee "$log_dir/gpu_backend_test.log"
  status=${PIPESTATUS[0]}
  summary=$(grep -E '^\[  (PASSED|FAILED) +\]' "$log_dir/gpu_backend_test.log" | tr '\n' ' ')
  skipped=$(grep -oE '^\[  SKIPPED \] [0-9]+' "$log_dir/gpu_backend_test.log" | grep -oE '[0-9]+$')
  if [ "$status" -ne 0 ]; then
    record gpu_backend_test FAIL "$summary"
  elif [ "${skipped:-0}" -gt 0 ]; then
    record gpu_backend_test FAIL "$skipped tests skipped (backend not usable?) $summary"
  else
    record gpu_backend_test PASS "$summary$(($(date +%s) - start)) s"
  fi
else
  record gpu_backend_test FAIL "no binary"
fi

echo "== baton run: cuda against cpu, greedy, 64 tokens"
run_model() {  # run_model BACKEND TOKENS EXTRA... -> the generated text (and timings unless -q)
  "$bin/baton" run --backend "$1" -m "$model" -n "$2" --temp 0 "${@:3}"
}
if [ -x "$bin/baton" ] && [ -f "$model" ]; then
  for prompt in "" "Once upon a time"; do
    cpu=$(run_model cpu 64 -q -p "$prompt" 2>&1)
    cuda=$(run_model cuda 64 -q -p "$prompt" 2>&1)
    if [ -n "$cuda" ] && [ "$cpu" = "$cuda" ]; then
      record "baton run cuda = cpu (prompt '$prompt')" PASS
    else
      printf 'cpu:\n%s\ncuda:\n%s\n' "$cpu" "$cuda"
      record "baton run cuda = cpu (prompt '$prompt')" FAIL "outputs differ"
    fi
  done
  echo "== timings (cuda, 256 tokens)"
  run_model cuda 256 2>&1 | tail -1 | tee "$log_dir/timing.log"
else
  record "baton run cuda = cpu" FAIL "no baton binary or no model"
fi

echo "== mpirun baton run --tensor-parallel 2 on cuda against one process"
# Two ranks: over NCCL with one GPU each where there are two, else both on the one GPU with
# all-reduces staged through the host (NCCL refuses two ranks of a communicator on one GPU).
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if command -v mpirun >/dev/null && [ -f "$(dirname "$bin")/lib/libbaton-comm-mpi.so" ] &&
   [ -x "$bin/baton" ] && [ -f "$model" ]; then
  path="host-staged"
  staging=(-x BATON_GPU_COLLECTIVES=host)
  if [ "${gpus:-0}" -ge 2 ]; then path="NCCL"; staging=(); fi
  single=$(run_model cuda 64 -q -p "Once upon a time" 2>/dev/null)
  split=$(mpirun --oversubscribe --allow-run-as-root --mca btl self,vader \
            --mca oob_tcp_if_include lo "${staging[@]}" -np 2 \
            "$bin/baton" run --backend cuda -m "$model" -n 64 --temp 0 -q \
            -p "Once upon a time" --tensor-parallel 2 2>"$log_dir/tensor-parallel.log")
  if [ -n "$split" ] && [ "$single" = "$split" ]; then
    record "tensor-parallel 2 on cuda ($path) = one process" PASS
  else
    printf 'one process:\n%s\ntensor-parallel 2:\n%s\n' "$single" "$split"
    record "tensor-parallel 2 on cuda ($path) = one process" FAIL "see tensor-parallel.log"
  fi
else
  record "tensor-parallel 2 on cuda" SKIP "no mpirun or no libbaton-comm-mpi.so on this machine"
fi

echo "== baton bench: TinyLlama-1.1B shape, cuda, pp512 and tg128"
if [ -x "$bin/baton" ]; then
  for type in q4_0 f16; do
    file=$log_dir/tinyllama-$type.gguf
    if "$bin/baton" synth tinyllama-1.1b --type "$type" -o "$file" >"$log_dir/synth-$type.log" 2>&1 &&
       "$bin/baton" bench --backend cuda -m "$file" -p 512 -n 128 -r 3 2>&1 |
         tee "$log_dir/bench-$type.log"; then
      record "baton bench cuda $type" PASS "$(grep -E 'tg128|pp512' "$log_dir/bench-$type.log" | tr -s ' ' | tr '\n' ';')"
    else
      record "baton bench cuda $type" FAIL "see synth-$type.log / bench-$type.log"
    fi
    rm -f "$file"
  done
else
  record "baton bench cuda" FAIL "no baton binary"
fi

echo
echo "== summary"
printf '%s\n' "${results[@]}" | tee "$log_dir/summary.txt"
if [ "$failed" -eq 0 ]; then echo "ALL PASS"; else echo "SOME FAILED"; fi
exit "$failed"
