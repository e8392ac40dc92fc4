#!/usr/bin/env bash
# Installs Baton's build and test dependencies from Debian's packages (only those missing),
# then configures and builds into build/. Usage:
#   scripts/setup.sh [extra cmake -D flags]   everything: library, CLI, plugins, tests, fuzzers
#   scripts/setup.sh --cli                    only what a build needs, then only the `baton`
#                                             command and what it links (scripts/run.sh)
#   scripts/setup.sh --deps-only              only what a build needs, and stop (`pip install .`)
#   scripts/setup.sh --fuzz-deps              that plus clang and its libFuzzer (scripts/fuzz.sh)
set -euo pipefail
cd "$(dirname "$0")/.."

# What building the library, the `baton` command and the Python module needs.
packages=(
  build-essential cmake ninja-build pkg-config git
  nlohmann-json3-dev libpcre2-dev libicu-dev libcli11-dev libdnnl-dev ocl-icd-opencl-dev
  libeigen3-dev
  libcpp-httplib-dev libsentencepiece-dev libopenmpi-dev openmpi-bin
  python3-dev python3-venv pybind11-dev
)
# What the full build and its test suite add: GoogleTest, hipcc for the ROCm plugin, qemu for
# the emulated-CPU tests, chromium for the playground test.
# Debian 12's clang is clang 14, whose libFuzzer is in libclang-rt-14-dev.
if [ "${1:-}" = "--fuzz-deps" ]; then
  packages+=(clang libclang-rt-14-dev)
elif [ "${1:-}" != "--deps-only" ] && [ "${1:-}" != "--cli" ]; then
  packages+=(
    libgtest-dev libgmock-dev qemu-user
    hipcc libamdhip64-dev
    chromium chromium-driver
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ "${1:-}" = "--deps-only" ] || [ "${1:-}" = "--fuzz-deps" ]; then
  exit 0
fi

jobs=$(nproc)
if [ "${1:-}" = "--cli" ]; then
  # A first configure leaves the tests out, since GoogleTest may not be installed; a build that
  # scripts/test.sh configured keeps its tests and builds only the command here.
  tests=()
  [ -f build/CMakeCache.txt ] || tests=(-DBATON_BUILD_TESTS=OFF)
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "${tests[@]}" >/dev/null
  cmake --build build -j"$jobs" --target baton_cli
  exit 0
fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBATON_BUILD_TESTS=ON "$@" >/dev/null
cmake --build build -j"$jobs"
