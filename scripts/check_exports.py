#!/usr/bin/env python3
"""Checks that a shared library exports only Baton's public API.

Usage: check_exports.py LIBRARY INCLUDE_DIR

The public API is what INCLUDE_DIR/baton/*.h declares with BATON_API (classes and free functions
in namespace baton) and the C functions of baton.h. Every defined dynamic symbol of LIBRARY
(`nm -D --defined-only`, demangled) must be one of those, a member of such a class, or its
typeinfo or vtable. Prints each other symbol and exits 1 when there is one.
"""
import glob
import os
import re
import subprocess
import sys

EXPORTED_CLASS = re.compile(r"\bclass\s+BATON_API\s+(\w+)")
EXPORTED_FUNCTION = re.compile(r"\bBATON_API\s+[^;(){}]*?\b(\w+)\s*\(")
C_FUNCTION = re.compile(r"^\s*\w[\w\s\*]*?\b(baton_\w+)\s*\(", re.MULTILINE)


def public_names(include_dir):
    """(classes, functions, C functions) that the public headers export."""
    classes, functions, c_functions = set(), set(), set()
    for header in glob.glob(os.path.join(include_dir, "baton", "*.h")):
        with open(header) as f:
            text = f.read()
        classes.update(EXPORTED_CLASS.findall(text))
        functions.update(EXPORTED_FUNCTION.findall(text))
        if os.path.basename(header) == "baton.h":
            c_functions.update(C_FUNCTION.findall(text))
    return classes, functions - classes, c_functions


def is_public(symbol, classes, functions, c_functions):
    if symbol in c_functions:
        return True
    for prefix in ("typeinfo for ", "typeinfo name for ", "vtable for "):
        if symbol.startswith(prefix):
            return symbol[len(prefix):] in {"baton::" + c for c in classes}
    if any(symbol.startswith("baton::%s::" % c) for c in classes):
        return True
    return any(symbol.startswith("baton::%s(" % f) for f in functions)


def exported_symbols(library):
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", library], check=True,
                         capture_output=True, text=True).stdout
    # "<address> <type> <name>"; the name may contain spaces.
    return [line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2]


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    library, include_dir = sys.argv[1:]
    classes, functions, c_functions = public_names(include_dir)
    symbols = exported_symbols(library)
    private = [s for s in symbols if not is_public(s, classes, functions, c_functions)]
    for symbol in private:
        print("exported but not public API: " + symbol)
    if private:
        return 1
    print("%d symbols, all public API (%d classes, %d functions, %d C functions)"
          % (len(symbols), len(classes), len(functions), len(c_functions)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
