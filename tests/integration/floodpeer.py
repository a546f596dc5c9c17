#!/usr/bin/env python3
# tests/integration/floodpeer.py: many unauthenticated connections to one
# mpiv daemon, for test_preauth_flood.sh (a hostile peer that never says
# a valid Hello).
#
#   floodpeer.py HOST:PORT N MODE SRC STATEFILE
#
# opens N connections from source address SRC (any 127.x.y.z works on
# Linux loopback), then:
#   MODE big   each sends a frame header announcing a 1 MiB Hello and then
#              all its meta bytes but the last, as fast as the daemon reads
#   MODE idle  each sends nothing
# and, within 20 s, sorts them: "accepted" (the daemon's Challenge came
# and the connection is still open), "refused" (the daemon hung up without
# sending a byte: closed at accept), "cut" (hung up after its Challenge,
# e.g. on the oversized header), "other" (none of these yet), writes
#   accepted=A refused=R cut=C other=O sent=BYTES
# to STATEFILE (renamed into place: the test polls for it), and holds the
# connections open until STATEFILE.release exists (at most 60 s).
# Exit 0, or 2 on a usage error.
import errno
import os
import selectors
import socket
import struct
import sys
import time

MAGIC = 0x4D56
T_HELLO = 1
BIG = 1 << 20


def connect(host, port, src):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((src, 0))
    s.settimeout(5)
    try:
        s.connect((host, port))
    except OSError:
        s.close()
        return None
    s.setblocking(False)
    return s


def main():
    if len(sys.argv) != 6 or sys.argv[3] not in ("big", "idle"):
        sys.stderr.write("usage: floodpeer.py HOST:PORT N big|idle SRC "
                         "STATEFILE\n")
        return 2
    host, port = sys.argv[1].rsplit(":", 1)
    n, mode, src, state = int(sys.argv[2]), sys.argv[3], sys.argv[4], \
        sys.argv[5]
    socks = []
    for _ in range(n):
        s = connect(host, int(port), src)
        if s is not None:
            socks.append(s)
    # per socket: bytes still to send, bytes received, hung up by the daemon
    todo, got, closed = {}, {}, set()
    sel = selectors.DefaultSelector()
    hdr = struct.pack(">HHII", MAGIC, T_HELLO, BIG, 0)
    chunk = b"\x0a" * 65536
    sent = 0
    for s in socks:
        got[s] = 0
        # one byte short: the frame never completes, so a daemon that
        # buffers it keeps the buffer until its hello timeout
        todo[s] = (len(hdr) + BIG - 1) if mode == "big" else 0
        ev = selectors.EVENT_READ
        if todo[s]:
            ev |= selectors.EVENT_WRITE
        sel.register(s, ev)

    def hangup(s):
        closed.add(s)
        sel.unregister(s)

    def settled():
        return all(s in closed or (got[s] and not todo[s]) for s in socks)

    deadline = time.time() + 20
    grace = None
    while time.time() < deadline:
        if grace is None and settled():
            grace = time.time() + 0.5	# closes still in flight
        if grace is not None and time.time() > grace:
            break
        for key, ev in sel.select(timeout=0.1):
            s = key.fileobj
            if s in closed:
                continue
            if ev & selectors.EVENT_READ:
                try:
                    b = s.recv(65536)
                except OSError:
                    b = b""
                if not b:
                    hangup(s)
                    continue
                got[s] += len(b)
            if ev & selectors.EVENT_WRITE and todo[s]:
                off = len(hdr) + BIG - 1 - todo[s]
                data = hdr[off:] if off < len(hdr) else b""
                data += chunk[:min(len(chunk), todo[s] - len(data))]
                try:
                    w = s.send(data)
                except OSError as e:
                    if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                        continue
                    hangup(s)
                    continue
                todo[s] -= w
                sent += w
                if not todo[s]:
                    sel.modify(s, selectors.EVENT_READ)
    acc = sum(1 for s in socks if s not in closed and got[s])
    ref = sum(1 for s in socks if s in closed and not got[s])
    cut = sum(1 for s in socks if s in closed and got[s])
    with open(state + ".tmp", "w") as f:
        f.write("accepted=%d refused=%d cut=%d other=%d sent=%d\n" %
                (acc, ref, cut, n - acc - ref - cut, sent))
    os.rename(state + ".tmp", state)
    end = time.time() + 60
    while time.time() < end and not os.path.exists(state + ".release"):
        time.sleep(0.05)
    for s in socks:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
