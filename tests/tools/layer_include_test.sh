#!/bin/sh
# A wrong-way include fails to compile: a file compiled with the runtime layer's include path
# (as every target of that layer is) cannot include the engine, a backend or the LLM facade,
# while a header of its own layer compiles.
# Usage: layer_include_test.sh CXX RUNTIME_INCLUDE_DIR
set -u
cxx=$1
layer=$2
# Compiled from an empty folder: a quoted include is looked for beside the including file first,
# which for a file in the source tree is its own folder, never the repository root.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
compile() {
  printf '#include "%s"\n' "$1" > "$scratch/probe.cpp"
  "$cxx" -std=c++20 -fsyntax-only -I"$layer" -I"$layer/include" "$scratch/probe.cpp" 2>&1
}
if ! out=$(compile core/runtime/graph.h); then
  echo "FAIL: the runtime's own header core/runtime/graph.h did not compile:"
  echo "$out"
  exit 1
fi
for upward in core/serving/engine/engine.h models/model.h backends/cpu/cpu_backend.h baton/llm.h; do
  if out=$(compile "$upward"); then
    echo "FAIL: the runtime layer compiled an include of $upward"
    exit 1
  fi
  # GCC says "HEADER: No such file or directory", clang "'HEADER' file not found".
  case $out in
    *"$upward: No such file or directory"* | *"'$upward' file not found"*)
      echo "refused: $upward (not found)" ;;
    *) echo "FAIL: $upward failed for another reason:"; echo "$out"; exit 1 ;;
  esac
done
echo "the runtime layer compiles its own headers and refuses four wrong-way includes"
