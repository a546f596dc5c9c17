#!/usr/bin/env python3
# tests/integration/mitm_search.py: looks for secrets in what a man in
# the middle saw, for test_mitm.sh.
#
#   mitm_search.py NEEDLES [--token LABEL=KEYHEX]... -- FILE...
#
# NEEDLES: lines "NAME HEX", the bytes to look for (each key is given
# twice by the test: its hex spelling as text, and its raw bytes).
# FILEs: raw streams (tests/tools/mitm --log FILE.cN.DIR) or a packet
# capture, searched as bytes.
# --token LABEL=KEYHEX: also look for the job token T behind a rank key
# KEY = HMAC-SHA256(T, LABEL) (LABEL e.g. "rank 0"): every 32-byte window
# of each file, and every 64-digit window of its hex runs, is tried as T
# (slow: python does a few hundred thousand HMACs a second).
# Prints one line "found NAME in FILE (COUNT times)" per hit, then
# "searched BYTES bytes in N files", and exits 0 (hits or not; 2 on a
# usage error).
import hashlib
import hmac
import re
import sys


def main():
    args = sys.argv[1:]
    if "--" not in args or not args:
        sys.stderr.write(__doc__ if __doc__ else "usage\n")
        return 2
    sep = args.index("--")
    opts, files = args[:sep], args[sep + 1:]
    needles = []
    with open(opts[0]) as f:
        for line in f:
            w = line.split()
            if len(w) == 2:
                needles.append((w[0], bytes.fromhex(w[1])))
    tokens = []
    i = 1
    while i < len(opts):
        if opts[i] != "--token" or i + 1 >= len(opts):
            sys.stderr.write("mitm_search: bad option %s\n" % opts[i])
            return 2
        label, k = opts[i + 1].rsplit("=", 1)
        tokens.append((label.encode(), bytes.fromhex(k)))
        i += 2
    total = 0
    hexrun = re.compile(rb"[0-9a-fA-F]{64,}")
    for path in files:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            print("cannot read %s: %s" % (path, e))
            continue
        total += len(data)
        for name, b in needles:
            n = data.count(b)
            if n:
                print("found %s in %s (%d times)" % (name, path, n))
        for label, key in tokens:
            hits = 0
            cands = (data[j:j + 32] for j in range(len(data) - 31))
            for c in cands:
                if hmac.new(c, label, hashlib.sha256).digest() == key:
                    hits += 1
            for m in hexrun.finditer(data):
                run = m.group(0)
                for j in range(len(run) - 63):
                    c = bytes.fromhex(run[j:j + 64].decode())
                    if hmac.new(c, label, hashlib.sha256).digest() == key:
                        hits += 1
            if hits:
                print("found job-token(%s) in %s (%d times)"
                      % (label.decode(), path, hits))
    print("searched %d bytes in %d files" % (total, len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
