#!/usr/bin/env python3
# tests/integration/directpeer.py: a hand-made peer rank for
# test_direct_links.sh. It dials a rank's listening port (the direct
# protocol, docs/DIRECT.md) and plays a hostile or a forged peer with the
# frame format and handshake of authpeer.py.
#
#   directpeer.py HOST:PORT garbage
#       junk at once; "closed" once the rank hangs up
#   directpeer.py HOST:PORT truncated
#       after the Challenge, the first 20 bytes of a Hello; "closed after
#       N s" once the rank hangs up (its handshake deadline)
#   directpeer.py HOST:PORT dsend
#       after the Challenge, a DSend (seq 1, context 0, tag 5, "EVIL")
#   directpeer.py HOST:PORT hello JOB RANK INC PEER PROOF [dsend]
#       after the Challenge, a Hello (PROOF: random, none); with "dsend"
#       a DSend right behind it in the same write; then another DSend
#       once the answer came. Prints "refused code=C: TEXT" or "ok" (the
#       rank accepted us: an impostor got in), then "; closed" once the
#       rank hangs up.
# Anything else the rank sends (a DSend, a DSyncAck: data flowing to a
# peer that never proved the pair key) is printed as "data TYPE" and
# makes the exit status 3. Exit 0 otherwise, 2 on a timeout or a
# malformed answer.
import os
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from authpeer import (MAGIC, T_CHALLENGE, T_HELLO, T_HELLO_REPLY,  # noqa: E402
                      field_bytes, field_varint, frame, parse, read_exact)

T_DSEND = 100
WAIT_S = 20


def dsend(seq, tag, payload):
    meta = field_varint(1, seq) + field_varint(2, 0) + field_varint(3, tag)
    return struct.pack(">HHII", MAGIC, T_DSEND, len(meta),
                       len(payload)) + meta + payload


def read_frame(s):
    magic, t, ml, pl = struct.unpack(">HHII", read_exact(s, 12))
    if magic != MAGIC:
        raise ValueError("bad magic")
    meta = read_exact(s, ml)
    read_exact(s, pl)
    return t, parse(meta)


def until_closed(s):
    """Reads until the rank hangs up; frames it sends meanwhile are
    data nobody should get. Returns their types."""
    got = []
    buf = b""
    try:
        while True:
            c = s.recv(65536)
            if not c:
                break
            buf += c
    except ConnectionResetError:
        pass
    while len(buf) >= 12:
        magic, t, ml, pl = struct.unpack(">HHII", buf[:12])
        got.append(t)
        buf = buf[12 + ml + pl:]
    return got


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    mode = sys.argv[2]
    s = socket.create_connection((host, int(port)), timeout=WAIT_S)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        if mode == "garbage":
            s.sendall(os.urandom(64) + b"\x4d\x56\x00\x01\xff\xff\xff\xff")
            extra = [t for t in until_closed(s) if t != T_CHALLENGE]
            print("closed" + "".join(" data %d" % t for t in extra))
            return 3 if extra else 0
        t, ch = read_frame(s)
        if t != T_CHALLENGE:
            print("no challenge (type %d)" % t)
            return 2
        if mode == "truncated":
            meta = (field_varint(1, 1) + field_varint(2, 1) +
                    field_bytes(3, b"x" * 40))
            t0 = time.monotonic()
            s.sendall(frame(T_HELLO, meta)[:20])
            extra = until_closed(s)
            print("closed after %d s" % round(time.monotonic() - t0) +
                  "".join(" data %d" % t for t in extra))
            return 3 if extra else 0
        if mode == "dsend":
            s.sendall(dsend(1, 5, b"EVIL"))
            extra = until_closed(s)
            print("closed" + "".join(" data %d" % t for t in extra))
            return 3 if extra else 0
        job, rank, inc, peer, how = (sys.argv[3], int(sys.argv[4]),
                                     int(sys.argv[5]), int(sys.argv[6]),
                                     sys.argv[7])
        pipelined = len(sys.argv) > 8 and sys.argv[8] == "dsend"
        meta = (field_varint(1, 1) + field_varint(2, 1) +
                field_bytes(3, job.encode()) +
                field_varint(4, rank & 0xFFFFFFFFFFFFFFFF) +
                field_varint(5, inc) + field_bytes(6, b"directpeer") +
                field_varint(10, peer))
        if how == "random":
            meta += field_bytes(150, os.urandom(32))
            meta += field_bytes(151, os.urandom(32))
        out = frame(T_HELLO, meta)
        if pipelined:
            out += dsend(1, 5, b"EVIL")
        s.sendall(out)
        try:
            t, hr = read_frame(s)
        except (EOFError, ConnectionResetError):
            print("closed")
            return 0
        if t != T_HELLO_REPLY:
            print("data %d" % t)
            return 3
        if hr.get(1, 0):
            answer = "ok"
        else:
            answer = "refused code=%d: %s" % (hr.get(9, 0),
                                              hr.get(2, b"").decode())
        try:
            s.sendall(dsend(1, 5, b"EVIL"))
        except OSError:
            pass
        extra = until_closed(s)
        print(answer + "; closed" + "".join(" data %d" % t for t in extra))
        return 3 if extra else 0
    except (EOFError, ConnectionResetError):
        print("closed")
        return 0
    except socket.timeout:
        print("timeout")
        return 2


if __name__ == "__main__":
    sys.exit(main())
