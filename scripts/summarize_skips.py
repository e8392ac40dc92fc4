#!/usr/bin/env python3
"""Prints one line saying how many tests ctest skipped and why, grouped by reason.

Usage: summarize_skips.py JUNIT_XML (as written by `ctest --output-junit`). The reason is the
skip message a test printed: GoogleTest's GTEST_SKIP() text, or the "skip: ..." line of a script
test that exits with its SKIP_RETURN_CODE.
"""
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict

GPU = re.compile(r"GPU backend '[^']*' is not usable here")
SHARED = re.compile(r"needs \.\./shared: (.*?) \(")
VENV = re.compile(r"skip: no \S*python-venv/bin/python")


def skip_message(output):
    """The message a skipped test printed, or '' when it printed none."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if line.endswith(": Skipped"):  # GoogleTest: the message follows on the next line
            following = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return "" if following.startswith("[  SKIPPED ]") else following
        if line.startswith("skip: "):
            return line
    return ""


def reason(message):
    """The group a skip message belongs to, and a detail listed within the group."""
    if GPU.search(message):
        return "need a GPU (no device found)", None
    shared = SHARED.search(message)
    if shared:
        return "need ../shared", shared.group(1)
    if VENV.search(message):
        return "need the Python test venv (scripts/python-test-env.sh makes it)", None
    return message or "skipped without a message", None


def main(path):
    counts = Counter()
    details = defaultdict(list)
    for case in ET.parse(path).getroot().iter("testcase"):
        if case.get("status") != "notrun" or case.find("skipped") is None:
            continue
        group, detail = reason(skip_message(case.findtext("system-out") or ""))
        counts[group] += 1
        if detail and detail not in details[group]:
            details[group].append(detail)
    total = sum(counts.values())
    if total == 0:
        print("skipped 0")
        return
    parts = []
    for group, n in counts.most_common():
        listed = f" ({', '.join(details[group])})" if details[group] else ""
        parts.append(f"{n} {group}{listed}")
    print(f"skipped {total}: " + ", ".join(parts))


if __name__ == "__main__":
    main(sys.argv[1])
