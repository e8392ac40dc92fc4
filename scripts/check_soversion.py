#!/usr/bin/env python3
"""Fails when the public headers (include/baton/) changed since the last release and
BATON_SOVERSION was not raised above that release's.

libbaton.so's SOVERSION must change whenever what programs compile against changes, or a
program built against the old headers would load a library it no longer matches. The headers'
code, without comments and blank space, is hashed; cmake/public_headers.sha256 records the
SOVERSION of the last release and its headers' hash. Between releases one raise covers every
change: once BATON_SOVERSION is above the released one, the headers may change further.

Usage: check_soversion.py            check (the ctest PublicApi.SoversionFollowsTheHeaders)
       check_soversion.py --record   at a release: record BATON_SOVERSION and the headers' hash
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
    version, now = soversion(), headers_hash()
    with open(RECORD, encoding="utf-8") as f:
        released, released_hash = f.read().split()
    released = int(released)
    if sys.argv[1:] == ["--record"]:
        if now != released_hash and version <= released:
            sys.exit("include/baton/ changed since SOVERSION %d was released: raise "
                     "BATON_SOVERSION in CMakeLists.txt before recording" % released)
        with open(RECORD, "w", encoding="utf-8") as f:
            f.write("%d %s\n" % (version, now))
        print("recorded the release of SOVERSION %d, headers %s" % (version, now))
        return
    if version < released:
        sys.exit("BATON_SOVERSION is %d, below the released %d" % (version, released))
    if now != released_hash and version == released:
        sys.exit("include/baton/ changed since SOVERSION %d was released: raise BATON_SOVERSION "
                 "in CMakeLists.txt to %d" % (released, released + 1))
    if now == released_hash and version != released:
        sys.exit("BATON_SOVERSION is %d but the headers are those SOVERSION %d was released with"
                 % (version, released))
    print("SOVERSION %d fits the public headers (last release: %d)" % (version, released))


if __name__ == "__main__":
    main()
