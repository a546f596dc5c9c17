#!/usr/bin/env python3
# tests/integration/authpeer.py: a hand-made mpiv peer for test_auth.sh.
# Speaks the frame format and the handshake of docs/CONTRACTS.md
# ("Authentication") from scratch, to play a hostile or a forged peer.
#
#   authpeer.py HOST:PORT garbage
#       sends junk; prints "closed" once the server hangs up
#   authpeer.py HOST:PORT hello ROLE JOB RANK INC [KEYHEX|none|random]
#       waits for the Challenge, sends a Hello proven with KEYHEX (hex of
#       the HMAC key; "random": a made-up proof, "none": no proof) and
#       prints "ok" (and checks the server's proof), or "refused: ERROR",
#       or "closed"
#       KEYHEX may also be image:SECRETFILE: the image key of JOB RANK
#       INC derived from the cluster secret in SECRETFILE (what the
#       dispatcher gives the node running that incarnation). With
#       AUTHPEER_CODE=1 a refusal prints "refused code=N: ERROR".
#       The Hello carries the key exchange when the Challenge offers one
#       (X25519, AES-256-GCM or ChaCha20-Poly1305, from python3
#       cryptography) and what follows the HelloReply is sealed
#       (docs/CONTRACTS.md, "Encryption"); AUTHPEER_PLAIN=1 plays a
#       plaintext peer instead (no key, cipher 0).
#       After "ok", an optional request to a checkpoint server:
#         ... get GJOB GRANK       ImageGet; prints "found" or
#                                  "not found: ERROR"
#         ... put PJOB PRANK PINC  ImagePut of a checkpoint 1 taken by
#                                  incarnation PINC, then an empty
#                                  ImageEnd; prints "ack ok" or
#                                  "ack refused: ERROR"
#   authpeer.py HOST:PORT challenge
#       prints "auth=1" or "auth=0"
# Exit 0 whatever the answer, 2 on a timeout or a malformed answer.
import hashlib
import hmac
import os
import socket
import struct
import sys

MAGIC = 0x4D56
T_HELLO, T_HELLO_REPLY, T_CHALLENGE = 1, 2, 5
T_ERROR = 3
T_IMAGE_PUT, T_IMAGE_END, T_IMAGE_ACK, T_IMAGE_GET, T_IMAGE_INFO = 70, 72, 73, 74, 75
ROLES = {"rank": 1, "node": 2, "client": 3, "cm": 4, "cs": 5, "control": 6}


def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_bytes(num, b):
    return varint((num << 3) | 2) + varint(len(b)) + b


def parse(buf):
    """protobuf fields -> {num: value} (last wins; enough here)."""
    out, i = {}, 0
    while i < len(buf):
        key, i = rd_varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = rd_varint(buf, i)
        elif wt == 2:
            n, i = rd_varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = buf[i:i + 8], i + 8
        elif wt == 5:
            v, i = buf[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        out[num] = v
    return out


def rd_varint(buf, i):
    v, s = 0, 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << s
        s += 7
        if not b & 0x80:
            return v, i


def frame(t, meta):
    return struct.pack(">HHII", MAGIC, t, len(meta), 0) + meta


def read_exact(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b


def read_frame(s):
    magic, t, ml, pl = struct.unpack(">HHII", read_exact(s, 12))
    if magic != MAGIC:
        raise ValueError("bad magic")
    meta = read_exact(s, ml)
    read_exact(s, pl)
    return t, parse(meta)


def lp(b):
    return struct.pack(">I", len(b)) + b


def hello_proof(key, ns, nc, role, job, rank, inc, name, offer=(b"", 0),
                pick=(b"", 0)):
    # v2: the server's key-exchange offer (its key, its ciphers) and the
    # dialler's pick (its key, the cipher) come right after nonce_s.
    m = (lp(b"mpiv-auth-v2 hello") + lp(ns) + lp(offer[0]) +
         struct.pack(">I", offer[1]) + lp(pick[0]) +
         struct.pack(">I", pick[1]) + lp(nc) +
         struct.pack(">I", role) + lp(job.encode()) +
         struct.pack(">I", rank & 0xFFFFFFFF) + struct.pack(">I", inc) +
         lp(name.encode()))
    return hmac.new(key, m, hashlib.sha256).digest()


def reply_proof(key, ns, nc, cp):
    m = lp(b"mpiv-auth-v2 reply") + lp(ns) + lp(nc) + lp(cp)
    return hmac.new(key, m, hashlib.sha256).digest()


class Sealed:
    """The record layer of docs/CONTRACTS.md ("Encryption") over socket s:
    sendall() seals, recv() opens (one record at a time)."""

    def __init__(self, s, cipher, tx, rx):
        from cryptography.hazmat.primitives.ciphers.aead import (
            AESGCM, ChaCha20Poly1305)
        aead = AESGCM if cipher == 1 else ChaCha20Poly1305
        self.s, self.tx, self.rx = s, aead(tx), aead(rx)
        self.tctr = self.rctr = 0
        self.buf = b""

    def sendall(self, data):
        for i in range(0, len(data), 65536):
            pt = data[i:i + 65536]
            hdr = struct.pack(">I", len(pt))
            nonce = b"\0\0\0\0" + struct.pack(">Q", self.tctr)
            self.tctr += 1
            self.s.sendall(hdr + self.tx.encrypt(nonce, pt, hdr))

    def recv(self, n):
        if not self.buf:
            hdr = read_exact(self.s, 4)
            ln = struct.unpack(">I", hdr)[0]
            if ln == 0 or ln > 65536:
                raise ValueError("bad record length")
            nonce = b"\0\0\0\0" + struct.pack(">Q", self.rctr)
            self.rctr += 1
            self.buf = self.rx.decrypt(nonce, read_exact(self.s, ln + 16), hdr)
        b, self.buf = self.buf[:n], self.buf[n:]
        return b


def seal_keys(key, shared, cpub, spub, ns, nc, cipher):
    """client -> server key, server -> client key"""
    if len(key) > 64:
        key = hashlib.sha256(key).digest()
    k = hashlib.blake2b(b"mpiv-seal-v1" + shared + cpub + spub + ns + nc +
                        struct.pack(">I", cipher), key=key,
                        digest_size=64).digest()
    return k[:32], k[32:]


def image_key(path, job, rank, inc):
    with open(path, "rb") as f:
        secret = f.read().rstrip(b" \t\r\n")
    m = (lp(b"mpiv image key v1") + lp(job.encode()) +
         struct.pack(">II", rank & 0xFFFFFFFF, inc))
    return hmac.new(secret, m, hashlib.sha256).digest()


def image_request(s, args):
    if args[0] == "get":
        s.sendall(frame(T_IMAGE_GET, field_bytes(1, args[1].encode()) +
                        field_varint(2, int(args[2]))))
        t, m = read_frame(s)
        if t == T_IMAGE_INFO and m.get(1, 0):
            print("found")
        elif t == T_IMAGE_INFO:
            print("not found: %s" % m.get(2, b"").decode())
        else:
            print("unexpected type %d" % t)
            return 2
        return 0
    meta = (field_bytes(1, args[1].encode()) + field_varint(2, int(args[2])) +
            field_varint(3, 1) + field_varint(4, int(args[3])))
    s.sendall(frame(T_IMAGE_PUT, field_bytes(1, meta)) +
              frame(T_IMAGE_END, b""))
    t, m = read_frame(s)
    if t != T_IMAGE_ACK:
        print("unexpected type %d" % t)
        return 2
    if m.get(1, 0):
        print("ack ok")
    else:
        print("ack refused: %s" % m.get(2, b"").decode())
    return 0


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    mode = sys.argv[2]
    s = socket.create_connection((host, int(port)), timeout=5)
    try:
        if mode == "garbage":
            s.sendall(os.urandom(64) + b"\x4d\x56\x00\x01\xff\xff\xff\xff")
            while s.recv(4096):
                pass
            print("closed")
            return 0
        t, ch = read_frame(s)
        if t != T_CHALLENGE:
            print("no challenge (type %d)" % t)
            return 2
        if mode == "challenge":
            print("auth=%d" % ch.get(3, 0))
            return 0
        role, job, rank, inc = (ROLES[sys.argv[3]], sys.argv[4],
                                int(sys.argv[5]), int(sys.argv[6]))
        how = sys.argv[7] if len(sys.argv) > 7 else "none"
        ns, nc, name = ch.get(2, b""), os.urandom(32), "authpeer"
        meta = (field_varint(1, 1) + field_varint(2, role) +
                field_bytes(3, job.encode()) + field_varint(4, rank) +
                field_varint(5, inc) + field_bytes(6, name.encode()))
        # The key exchange: the server's offer, our pick (AES-256-GCM
        # first); AUTHPEER_PLAIN=1 plays a plaintext peer (no key, cipher 0).
        spub, ciphers = ch.get(4, b""), ch.get(5, 0)
        cipher, cpub, priv = 0, b"", None
        if os.environ.get("AUTHPEER_PLAIN") != "1" and ciphers:
            from cryptography.hazmat.primitives.asymmetric.x25519 import (
                X25519PrivateKey)
            from cryptography.hazmat.primitives import serialization
            priv = X25519PrivateKey.generate()
            cpub = priv.public_key().public_bytes(
                serialization.Encoding.Raw, serialization.PublicFormat.Raw)
            cipher = 1 if ciphers & 2 else 2
            meta += (field_bytes(150, nc) + field_bytes(152, cpub) +
                     field_varint(153, cipher))
        offer, pick = (spub, ciphers), (cpub, cipher)
        key = proof = None
        if how == "random":
            proof = os.urandom(32)
        elif how.startswith("image:"):
            key = image_key(how[6:], job, rank, inc)
            proof = hello_proof(key, ns, nc, role, job, rank, inc, name,
                                offer, pick)
        elif how != "none":
            key = bytes.fromhex(how)
            proof = hello_proof(key, ns, nc, role, job, rank, inc, name,
                                offer, pick)
        if proof is not None:
            if not cipher:
                meta += field_bytes(150, nc)
            meta += field_bytes(151, proof)
        s.sendall(frame(T_HELLO, meta))
        if cipher:
            from cryptography.hazmat.primitives.asymmetric.x25519 import (
                X25519PublicKey)
            shared = priv.exchange(X25519PublicKey.from_public_bytes(spub))
            tx, rx = seal_keys(key or b"", shared, cpub, spub, ns, nc, cipher)
        try:
            t, hr = read_frame(s)
        except EOFError:
            print("closed")
            return 0
        if t != T_HELLO_REPLY:
            print("unexpected type %d" % t)
            return 2
        if not hr.get(1, 0):
            if os.environ.get("AUTHPEER_CODE") == "1":
                print("refused code=%d: %s" % (hr.get(9, 0),
                                               hr.get(2, b"").decode()))
            else:
                print("refused: %s" % hr.get(2, b"").decode())
            return 0
        if key is not None and hr.get(150) != reply_proof(key, ns, nc, proof):
            print("ok but the server's proof is wrong")
            return 2
        if cipher:
            s = Sealed(s, cipher, tx, rx)	# both directions sealed now
        if len(sys.argv) > 8:
            return image_request(s, sys.argv[8:])
        print("ok")
        return 0
    except EOFError:
        print("closed")
        return 0
    except socket.timeout:
        print("timeout")
        return 2


if __name__ == "__main__":
    sys.exit(main())
