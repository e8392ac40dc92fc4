#!/usr/bin/env python3
"""Fails when a source file includes a header of a layer above its own.

The layers, lowest first (docs/architecture.md draws them):

  0 runtime    tensor, buffer, dtype and its quantizers, graph, op schemas, backend interface,
               registry, plugin ABI, communicator (core/*.h|cpp, core/quantize/, core/comm/), and
               the plain public types
               every layer may use (baton/chat_template_limits.h, baton/error.h,
               baton/export.h, baton/generation.h, baton/lora_options.h,
               baton/sampling_params.h, baton/structured_output.h)
  1 reference  reference kernels (ops/)
  2 formats    GGUF, tokenizer, chat templates, Hugging Face import
  3 models     model families and their loading (models/)
  4 serving    KV cache, engine, sampling
  5 facade     LLM, AsyncLLM, C API (core/llm/, the rest of include/baton/)

Backends (backends/) see only the runtime, and nothing but tools and tests includes a backend.
Tools and tests may include anything. A file may include its own layer and the ones below.

Usage: check_layers.py [ROOT]   (ROOT defaults to the repository this script is in)
"""
import os
import re
import sys

RUNTIME, REFERENCE, FORMATS, MODELS, SERVING, FACADE = range(6)
NAMES = ["runtime", "reference", "formats", "models", "serving", "facade"]
BACKEND = "backend"
PLAIN_PUBLIC_HEADERS = {
    "chat_template_limits.h",
    "error.h",
    "export.h",
    "generation.h",
    "lora_options.h",
    "sampling_params.h",
    "structured_output.h",
}
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cu", ".cuh", ".hip")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

# Path prefixes, most specific first; the first that matches decides.
PREFIXES = [
    ("core/quantize/", RUNTIME),
    ("core/comm/", RUNTIME),
    ("core/gguf/", FORMATS),
    ("core/tokenizer/", FORMATS),
    ("core/chat/", FORMATS),
    ("models/hf_import/", FORMATS),
    ("core/kv_cache/", SERVING),
    ("core/engine/", SERVING),
    ("core/sampling/", SERVING),
    ("core/llm/", FACADE),
    ("ops/", REFERENCE),
    ("models/", MODELS),
    ("backends/", BACKEND),
]


def layer_of(path):
    """The layer of a repository-relative path, or None for files outside the layers."""
    if path.startswith("include/baton/"):
        return RUNTIME if os.path.basename(path) in PLAIN_PUBLIC_HEADERS else FACADE
    for prefix, layer in PREFIXES:
        if path.startswith(prefix):
            return layer
    if path.startswith("core/") and path.count("/") == 1:
        return RUNTIME
    return None


def allowed(source, target):
    if source == BACKEND:
        return target in (RUNTIME, BACKEND)
    if target == BACKEND:
        return False
    return target <= source


def name(layer):
    return layer if layer == BACKEND else NAMES[layer]


def violations(root):
    found = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith(".") and d not in ("build", "tests")]
        for file in sorted(files):
            if not file.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.relpath(os.path.join(directory, file), root)
            source = layer_of(path)
            if source is None:
                continue
            with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    included = match.group(1)
                    if included.startswith("baton/"):
                        included = "include/" + included
                    target = layer_of(included)
                    if target is not None and not allowed(source, target):
                        found.append("%s:%d: %s (%s) includes %s (%s)" % (
                            path, number, path, name(source), match.group(1), name(target)))
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    found = violations(root)
    for line in found:
        print(line)
    if found:
        print("%d include(s) point up the layers (see the table in %s)" % (len(found), __file__))
        sys.exit(1)
    print("every include points down the layers")


if __name__ == "__main__":
    main()
