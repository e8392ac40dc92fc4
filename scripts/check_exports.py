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
EXPORTED_FUNCTION = re.compile(r"\bBATON_API\s+[^;(){}]*?\b(\w+)\s*\(([^)]*)\)")
DECLARED_TYPE = re.compile(r"\b(?:class|struct|enum class|enum)\s+(?:BATON_API\s+)?(\w+)")
C_FUNCTION = re.compile(r"^\s*\w[\w\s\*]*?\b(baton_\w+)\s*\(", re.MULTILINE)


# How nm -C spells the standard library types the public functions take, and the short names
# the headers use; normalized() maps the first to the second.
STD_SPELLINGS = [
    ("std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >",
     "std::string"),
    ("std::basic_string_view<char, std::char_traits<char> >", "std::string_view"),
]
VECTOR_SPELLING = re.compile(r"std::vector<(.+?), std::allocator<\1 > >")


def normalized(symbol):
    """An exported symbol as nm -C prints it, with the standard types' short names and without
    the ABI tag of functions returning std::string."""
    symbol = symbol.replace("[abi:cxx11]", "")
    for spelled, short in STD_SPELLINGS:
        symbol = symbol.replace(spelled, short)
    return VECTOR_SPELLING.sub(r"std::vector<\1>", symbol)


def demangled_signature(name, parameters, types):
    """How nm -C prints baton::name(parameters) for parameters of plain or public types,
    normalized."""
    printed = []
    for parameter in filter(None, (p.strip() for p in parameters.split(","))):
        words = parameter.split("=")[0].split()
        type_words = words[:-1] if len(words) > 1 else words  # drop the parameter's name
        if type_words[0] == "const" and type_words[-1].endswith("&"):
            # nm prints "T const&" for "const T&".
            type_words = type_words[1:-1] + [type_words[-1][:-1], "const&"]
        printed.append(" ".join("baton::" + w if w in types else w for w in type_words))
    return "baton::%s(%s)" % (name, ", ".join(printed))


def public_names(include_dir):
    """(classes, function signatures as nm -C prints them, C functions) that the public headers
    export."""
    texts = {}
    for header in glob.glob(os.path.join(include_dir, "baton", "*.h")):
        with open(header) as f:
            texts[os.path.basename(header)] = f.read()
    types = set()
    for text in texts.values():
        types.update(DECLARED_TYPE.findall(text))
    classes, functions, c_functions = set(), set(), set()
    for name, text in texts.items():
        text = re.sub(r"^\s*#.*$", "", text, flags=re.MULTILINE)  # BATON_API's own #define
        classes.update(EXPORTED_CLASS.findall(text))
        for function, parameters in EXPORTED_FUNCTION.findall(text):
            if function not in classes:
                functions.add(demangled_signature(function, parameters, types))
        if name == "baton.h":
            c_functions.update(C_FUNCTION.findall(text))
    return classes, functions, c_functions


def is_public(symbol, classes, functions, c_functions):
    if symbol in c_functions:
        return True
    for prefix in ("typeinfo for ", "typeinfo name for ", "vtable for "):
        if symbol.startswith(prefix):
            return symbol[len(prefix):] in {"baton::" + c for c in classes}
    if any(symbol.startswith("baton::%s::" % c) for c in classes):
        return True
    return normalized(symbol) in functions


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
