#!/usr/bin/env bash
# Packs what run_on_device.sh needs into .device-bundle/, for a GPU machine that lacks Baton's
# build dependencies: the Release `baton`, gpu_backend_test, libbaton.so and the CUDA plugin
# built here, the shared libraries they need beyond glibc, libstdc++ and CUDA's own (oneDNN, ICU,
# PCRE2, cpp-httplib ...; xz-compressed, about 18 MiB), and stories260K.gguf. The folder is
# ignored by git (.git/info/exclude); carry it to the machine (device tool: carry
# [".device-bundle"]) and run tests/backends/gpu/run_on_device.sh there.
#
# Usage, from the repository root: tests/backends/gpu/make_device_bundle.sh [build-dir]
# (default build/, configured Release with the CUDA plugin enabled; the targets are built here).
set -euo pipefail
cd "$(dirname "$0")/../../.."
build=${1:-build}
bundle=.device-bundle

cmake --build "$build" -j"${JOBS:-2}" --target baton_cli baton_backend_cuda gpu_backend_test
rm -rf "$bundle"
mkdir -p "$bundle/bin" "$bundle/lib" "$bundle/shared/models"
cp "$build/bin/baton" "$build/bin/gpu_backend_test" "$bundle/bin/"
cp -L "$build"/lib/libbaton.so.[0-9]* "$bundle/lib/"
cp "$build/lib/libbaton-backend-cuda.so" "$bundle/lib/"
# The MPI plugin for run_on_device.sh's tensor-parallel check, which runs only where the machine
# has OpenMPI (and so mpirun and libmpi) of its own.
if [ -f "$build/lib/libbaton-comm-mpi.so" ]; then cp "$build/lib/libbaton-comm-mpi.so" "$bundle/lib/"; fi

# Libraries of the base system and of the CUDA install stay behind; everything else travels.
deps=$(ldd "$bundle/bin/baton" "$bundle/bin/gpu_backend_test" "$bundle/lib/libbaton-backend-cuda.so" |
  awk '/=> \// {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[^/]*)\.so' |
  grep -vE 'libbaton|libcublas|libcudart|/usr/local/cuda' || true)
tar -chJf "$bundle/deps.tar.xz" $(for d in $deps; do echo "-C $(dirname "$d") $(basename "$d")"; done)

shared=${BATON_SHARED_DIR:-../shared}
cp "$shared/models/stories260K.gguf" "$bundle/shared/models/"

exclude=.git/info/exclude
grep -qxF "/$bundle/" "$exclude" 2>/dev/null || echo "/$bundle/" >>"$exclude"
du -sh "$bundle"
echo "carry [\"$bundle\"] and run tests/backends/gpu/run_on_device.sh on the GPU machine"
