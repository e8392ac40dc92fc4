#!/usr/bin/env python3
"""Fails when a source file includes a header of a layer above its own.

The build already refuses such an include in every file a target compiles: each layer compiles
with an include path that holds only its own folders and those below (cmake/layers.cmake). This
check is the backstop for files no target on this host compiles (a header nothing includes yet,
GPU kernels without a toolkit) and reads the same table, from cmake/layers.cmake:

  runtime    core/runtime: tensor, buffer, dtype and its quantizers, graph, op schemas, backend
             interface, registry, plugin ABI, communicator; and the plain public headers every
             layer may use (BATON_PLAIN_PUBLIC_HEADERS)
  reference  ops/: reference kernels
  formats    core/formats: GGUF, tokenizer, chat templates, Hugging Face import
  models     models/: shared blocks and the model families
  serving    core/serving: KV cache, engine, sampling
  api        core/api: LLM, AsyncLLM, C API; and the rest of include/baton/

Backends (backends/) see only the runtime, and nothing but tools and tests includes a backend.
Tools and tests may include anything. A file may include its own layer and the ones below.

With --compile-commands, it also reads a build's compile_commands.json and fails when a file of
a layer or a backend compiles with the repository root (or its include/) on its include path,
which would let it include any layer: a target that takes its include path from a library
instead of from its layer.

Usage: check_layers.py [ROOT] [--compile-commands FILE]   (ROOT defaults to the repository this
script is in; the table is always this repository's)
"""
import json
import os
import re
import shlex
import sys

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BACKEND = "backend"
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cu", ".cuh", ".hip")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
CMAKE_SET = re.compile(r"^set\((\w+)((?:\s+[^\s()]+)+)\s*\)", re.MULTILINE)


def read_table(path=os.path.join(REPOSITORY, "cmake", "layers.cmake")):
    """The layers in order, each layer's folders, and the plain public headers."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    values = {name: body.split() for name, body in CMAKE_SET.findall(text)}
    layers = values["BATON_LAYERS"]
    folders = {layer: values["baton_layer_folders_" + layer] for layer in layers}
    return layers, folders, set(values["BATON_PLAIN_PUBLIC_HEADERS"])


LAYERS, FOLDERS, PLAIN_PUBLIC_HEADERS = read_table()
RANK = {layer: index for index, layer in enumerate(LAYERS)}
# Folder prefixes, most specific first, so that the first that matches decides.
PREFIXES = sorted(((folder.rstrip("/") + "/", layer) for layer in LAYERS for folder in FOLDERS[layer]),
                  key=lambda entry: -len(entry[0])) + [("backends/", BACKEND)]


def layer_of(path):
    """The layer of a repository-relative path, or None for files outside the layers."""
    if path.startswith("include/baton/"):
        return LAYERS[0] if os.path.basename(path) in PLAIN_PUBLIC_HEADERS else LAYERS[-1]
    for prefix, layer in PREFIXES:
        if path.startswith(prefix):
            return layer
    return None


def allowed(source, target):
    if source == BACKEND:
        return target in (LAYERS[0], BACKEND)
    if target == BACKEND:
        return False
    return RANK[target] <= RANK[source]


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
                            path, number, path, source, match.group(1), target))
    return found


def root_on_include_path(root, compile_commands):
    """Layer and backend files whose compile command puts `root` or root/include on the path."""
    with open(compile_commands, encoding="utf-8") as f:
        entries = json.load(f)
    forbidden = {os.path.realpath(root), os.path.realpath(os.path.join(root, "include"))}
    found = []
    for entry in entries:
        source = os.path.join(entry["directory"], entry["file"])
        path = os.path.relpath(os.path.realpath(source), os.path.realpath(root))
        if path.startswith("..") or layer_of(path) is None:
            continue
        words = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
        folders = []
        for i, word in enumerate(words):
            for flag in ("-I", "-isystem"):
                if word == flag and i + 1 < len(words):
                    folders.append(words[i + 1])
                elif word.startswith(flag) and len(word) > len(flag):
                    folders.append(word[len(flag):])
        for folder in folders:
            folder = os.path.realpath(os.path.join(entry["directory"], folder))
            if folder in forbidden:
                found.append("%s (%s) compiles with %s on its include path" % (
                    path, layer_of(path), folder))
                break
    return found


def main():
    args = sys.argv[1:]
    compile_commands = None
    if "--compile-commands" in args:
        at = args.index("--compile-commands")
        compile_commands = args[at + 1]
        del args[at:at + 2]
    root = args[0] if args else REPOSITORY
    found = violations(root)
    if compile_commands:
        found += root_on_include_path(root, compile_commands)
    for line in found:
        print(line)
    if found:
        print("%d place(s) where a layer can see above itself (see the table in cmake/layers.cmake)"
              % len(found))
        sys.exit(1)
    print("every include points down the layers" +
          (", and no layer compiles with the root on its include path" if compile_commands else ""))


if __name__ == "__main__":
    main()
