#!/usr/bin/env python3
"""Fails when the public headers (include/baton/) changed since BATON_SOVERSION was last set.

libbaton.so's SOVERSION must change whenever what programs compile against changes, or a
program built against the old headers would load a library it no longer matches. The headers'
code, without comments and blank space, is hashed; cmake/public_headers.sha256 records the hash
that BATON_SOVERSION (CMakeLists.txt) was set for.

Usage: check_soversion.py            check (the ctest PublicApi.SoversionFollowsTheHeaders)
       check_soversion.py --record   after raising BATON_SOVERSION: record the headers' hash
"""
import hashlib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(ROOT, "cmake", "public_headers.sha256")
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


def headers_hash():
    digest = hashlib.sha256()
    folder = os.path.join(ROOT, "include", "baton")
    for name in sorted(os.listdir(folder)):
        if not os.path.isfile(os.path.join(folder, name)):
            continue
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            code = " ".join(COMMENT.sub(" ", f.read()).split())
        digest.update(name.encode() + b"\0" + code.encode() + b"\0")
    return digest.hexdigest()


def soversion():
    with open(os.path.join(ROOT, "CMakeLists.txt"), encoding="utf-8") as f:
        match = re.search(r"^set\(BATON_SOVERSION (\d+)\)", f.read(), re.MULTILINE)
    if not match:
        sys.exit("CMakeLists.txt sets no BATON_SOVERSION")
    return int(match.group(1))


def main():
    version, now = str(soversion()), headers_hash()
    with open(RECORD, encoding="utf-8") as f:
        recorded_version, recorded_hash = f.read().split()
    if sys.argv[1:] == ["--record"]:
        if now != recorded_hash and int(version) <= int(recorded_version):
            sys.exit("include/baton/ changed: raise BATON_SOVERSION above %s in CMakeLists.txt "
                     "before recording" % recorded_version)
        with open(RECORD, "w", encoding="utf-8") as f:
            f.write("%s %s\n" % (version, now))
        print("recorded: SOVERSION %s for headers %s" % (version, now))
        return
    if now != recorded_hash:
        sys.exit("include/baton/ changed since SOVERSION %s was set: raise BATON_SOVERSION in "
                 "CMakeLists.txt, then run scripts/check_soversion.py --record" % recorded_version)
    if version != recorded_version:
        sys.exit("BATON_SOVERSION is %s but cmake/public_headers.sha256 was recorded for %s: run "
                 "scripts/check_soversion.py --record" % (version, recorded_version))
    print("SOVERSION %s matches the public headers" % version)


if __name__ == "__main__":
    main()
