#!/usr/bin/env python3
# tests/integration/cutproxy.py: a TCP relay in front of a checkpoint
# server that cuts checkpoint streams, for test_ckpt_truncate.sh.
#
#   cutproxy.py LISTEN TARGET PLAN LOG
#
# TARGET "@FILE": the target is read from FILE at each connection (the
# relay can listen before the server it fronts exists, so its port is
# never given up and taken by someone else between a probe and a bind).
#
# Prints "listening on HOST:PORT" once it accepts. Every connection is
# relayed byte for byte both ways. The relay reads the mpiv frames
# (12-byte header: u16 magic, u16 type, u32 meta_len, u32 payload_len,
# big-endian; docs/CONTRACTS.md) the node sends, and knows a connection
# as a download at its ImageGet and as an upload at its ImagePut. Then it
# takes the first line of PLAN for that kind, if any, and removes it:
#
#   down N   cut the CS -> node stream (ImageInfo, ImageData..., ImageEnd)
#            after N bytes of it
#   up N     cut the node -> CS stream (ImagePut, ImageData..., ImageEnd)
#            after N bytes of it
#
# A stream shorter than N is cut inside its ImageEnd frame instead (at
# N modulo that frame's length), so a planned cut always lands before the
# stream is complete. Cutting closes both sockets at once. Connections
# with no plan line pass whole. Each connection appends one line to LOG:
#   conn=I kind=down|up|other plan=N|- cut=BYTES|none total=BYTES head=LEN
# head: the whole length of the stream's first frame (ImagePut of an
# upload, ImageInfo of a download), 0 when none was seen; a cut below it
# leaves the CS (upload) or the node (download) without that frame.
# The plan file is the test's only control; the cut points in it come from
# the test's seeded random numbers, so a failure is reproducible.
import os
import socket
import struct
import sys
import threading

T_IMAGE_PUT, T_IMAGE_END, T_IMAGE_GET = 70, 72, 74
HDR = 12

lock = threading.Lock()
nconn = 0


def take_plan(path, kind):
    """Removes and returns N from the first 'KIND N' line of path."""
    with lock:
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return None
        for i, line in enumerate(lines):
            w = line.split()
            if len(w) == 2 and w[0] == kind:
                del lines[i]
                with open(path + ".new", "w") as f:
                    f.write("".join(l + "\n" for l in lines))
                os.replace(path + ".new", path)
                return int(w[1])
    return None


class Frames:
    """Follows frame boundaries in one direction of a stream."""

    def __init__(self):
        self.buf = b""      # bytes of the current header, while < HDR
        self.left = 0       # bytes of the current frame's body still to come
        self.pos = 0        # offset of the next byte fed

    def feed(self, data, on_header):
        """on_header(type, offset of the frame, frame length) per header."""
        i = 0
        while i < len(data):
            if self.left > 0:
                take = min(self.left, len(data) - i)
                self.left -= take
                i += take
                continue
            take = min(HDR - len(self.buf), len(data) - i)
            self.buf += data[i:i + take]
            i += take
            if len(self.buf) == HDR:
                _, t, ml, pl = struct.unpack(">HHII", self.buf)
                self.left = ml + pl
                on_header(t, self.pos + i - HDR, HDR + ml + pl)
                self.buf = b""
        self.pos += len(data)


class Conn:
    def __init__(self, cid, node, plan_path, log_path):
        self.cid = cid
        self.node = node          # the node's socket
        self.cs = None            # the CS's socket
        self.plan_path = plan_path
        self.log_path = log_path
        self.kind = "other"
        self.plan = None          # bytes of the stream to pass before the cut
        self.start = None         # offset where the stream to cut begins
        self.cut_at = None        # offset of the cut (start + plan, or clamped)
        self.cut = None           # bytes of the stream passed when cut
        self.total = 0            # bytes of the stream passed
        self.head = 0             # length of the stream's first frame
        self.lock = threading.Lock()
        self.closed = False

    def close(self):
        with self.lock:
            if self.closed:
                return
            self.closed = True
        for s in (self.node, self.cs):
            if s is None:
                continue
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def log(self):
        with lock:
            with open(self.log_path, "a") as f:
                f.write("conn=%d kind=%s plan=%s cut=%s total=%d head=%d\n"
                        % (self.cid, self.kind,
                           "-" if self.plan is None else self.plan,
                           "none" if self.cut is None else self.cut,
                           self.total, self.head))


def pump(c, src, dst, node_side):
    """Relays src -> dst (node_side: from the node), cutting if planned.
    Offsets are of this direction; the stream to cut is node -> CS for an
    upload, CS -> node for a download."""
    fr = Frames()

    def mine():
        return c.kind == ("up" if node_side else "down")

    def on_header(t, off, flen):
        if node_side and c.kind == "other" and t in (T_IMAGE_GET, T_IMAGE_PUT):
            c.kind = "down" if t == T_IMAGE_GET else "up"
            c.plan = take_plan(c.plan_path, c.kind)
            if c.kind == "up":
                c.start = off
                if c.plan is not None:
                    c.cut_at = off + c.plan
        if mine() and c.head == 0 and c.start is not None and \
                off == c.start:
            c.head = flen
        if mine() and t == T_IMAGE_END and c.cut_at is not None and \
                c.cut_at >= off:
            # the stream is shorter than the plan: cut inside ImageEnd
            c.cut_at = off + (c.cut_at - c.start) % flen

    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            base = fr.pos
            if not node_side and c.kind == "down" and c.start is None:
                # the node sent ImageGet: the CS's answer starts here
                c.start = base
                if c.plan is not None:
                    c.cut_at = base + c.plan
            fr.feed(data, on_header)
            if mine() and c.start is not None:
                c.total += max(0, base + len(data) - max(base, c.start))
            if not mine() or c.cut_at is None or \
                    base + len(data) <= c.cut_at:
                dst.sendall(data)
                continue
            keep = max(0, c.cut_at - base)
            if keep > 0:
                dst.sendall(data[:keep])
            c.cut = c.total = c.cut_at - c.start
            break
    except OSError:
        pass
    c.close()


def serve(conn_sock, target, plan_path, log_path):
    global nconn
    with lock:
        nconn += 1
        cid = nconn
    c = Conn(cid, conn_sock, plan_path, log_path)
    if target.startswith("@"):
        with open(target[1:]) as f:
            target = f.read().strip()
    host, port = target.rsplit(":", 1)
    try:
        c.cs = socket.create_connection((host, int(port)), timeout=5)
        c.cs.settimeout(None)
    except OSError:
        c.close()
        c.log()
        return
    a = threading.Thread(target=pump, args=(c, c.node, c.cs, True))
    b = threading.Thread(target=pump, args=(c, c.cs, c.node, False))
    a.start()
    b.start()
    a.join()
    b.join()
    c.log()


def main():
    if len(sys.argv) != 5:
        sys.stderr.write("usage: cutproxy.py LISTEN TARGET PLAN LOG\n")
        sys.exit(2)
    listen, target, plan_path, log_path = sys.argv[1:]
    host, port = listen.rsplit(":", 1)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, int(port)))
    ls.listen(64)
    print("listening on %s:%d" % ls.getsockname(), flush=True)
    while True:
        s, _ = ls.accept()
        threading.Thread(target=serve, args=(s, target, plan_path, log_path),
                         daemon=True).start()


if __name__ == "__main__":
    main()
