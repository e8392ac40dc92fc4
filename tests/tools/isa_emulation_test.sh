#!/usr/bin/env bash
# The same baton binary must run, and give the same greedy text, on CPUs without AVX-512
# (Haswell: AVX2) and without AVX at all (Nehalem), emulated by qemu-user. Exit 77 = skipped.
set -euo pipefail
baton=$1
model=$2
if ! command -v qemu-x86_64 >/dev/null; then
  echo "qemu-x86_64 not installed (Debian package qemu-user); skipping"
  exit 77
fi
if [ ! -f "$model" ]; then
  echo "$model not present; skipping"
  exit 77
fi
# Each CPU picks its own kernel level: a BATON_CPU_ISA from the suite's environment (avx2, say)
# would name a level the emulated Nehalem lacks.
unset BATON_CPU_ISA
run() { "$@" run -m "$model" -n 24 --temp 0 -q -t 2 2>/dev/null; }
native=$(run "$baton")
for cpu in Haswell Nehalem; do
  emulated=$(run qemu-x86_64 -cpu "$cpu" "$baton")
  if [ "$emulated" != "$native" ]; then
    echo "on $cpu the output differs:"
    echo "native:   $native"
    echo "emulated: $emulated"
    exit 1
  fi
  echo "$cpu: same output as native"
done
