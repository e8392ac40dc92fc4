#!/usr/bin/env python3
"""Fails when a source file of core/serving is longer than 400 lines.

The engine and the scheduler grow with every feature; a file past 400 lines is where a
concern should have become a collaborator of its own (docs/architecture.md).

Usage: check_file_sizes.py [ROOT]   (ROOT defaults to the repository this script is in)
"""
import os
import sys

LIMIT = 400
FOLDERS = ["core/serving"]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    problems = []
    for folder in FOLDERS:
        for directory, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp")):
                    continue
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, root)
                with open(path, encoding="utf-8") as f:
                    lines = sum(1 for _ in f)
                if lines > LIMIT:
                    problems.append("%s: %d lines, more than %d" % (relative, lines, LIMIT))
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("every file of %s is within %d lines" % (", ".join(FOLDERS), LIMIT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
