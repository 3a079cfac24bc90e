"""A DNS TXT lookup for the desk's second way of proof, asked of one configured resolver over UDP
(RFC 1035: one question, the TXT answers read back; a truncated answer asked again over TCP).
The standard library has none; this is the few lines the desk needs, with a deadline."""
from __future__ import annotations

import os
import socket
import struct

__all__ = ["DnsError", "txt_records"]

_TXT = 16
_IN = 1


class DnsError(OSError):
    """The resolver gave no usable answer (none in time, a malformed one, a server failure)."""


def _query(name: str, qid: int) -> bytes:
    labels = b"".join(bytes([len(p)]) + p for p in (x.encode("idna") for x in name.rstrip(".").split(".")) if p)
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\x00" + struct.pack(">HH", _TXT, _IN)


def _skip_name(msg: bytes, at: int) -> int:
    while True:
        if at >= len(msg):
            raise DnsError("malformed answer")
        n = msg[at]
        if n & 0xC0 == 0xC0:
            return at + 2
        if n == 0:
            return at + 1
        at += 1 + n


def _answers(msg: bytes, qid: int) -> list[str] | None:
    if len(msg) < 12:
        raise DnsError("short answer")
    rid, flags, qd, an, _, _ = struct.unpack(">HHHHHH", msg[:12])
    if rid != qid:
        raise DnsError("answer to another question")
    rcode = flags & 0x0F
    if rcode == 3:
        return []  # NXDOMAIN: no such name, so no record
    if rcode != 0:
        raise DnsError(f"resolver answered rcode {rcode}")
    at = 12
    for _ in range(qd):
        at = _skip_name(msg, at) + 4
    out: list[str] = []
    for _ in range(an):
        at = _skip_name(msg, at)
        rtype, _cls, _ttl, length = struct.unpack(">HHIH", msg[at:at + 10])
        at += 10
        data = msg[at:at + length]
        at += length
        if rtype != _TXT:
            continue
        parts, i = [], 0
        while i < len(data):
            n = data[i]
            parts.append(data[i + 1:i + 1 + n])
            i += 1 + n
        out.append(b"".join(parts).decode("utf-8", "replace"))
    return out


def txt_records(name: str, resolver: tuple[str, int], timeout_s: float = 3.0) -> list[str]:
    """The TXT records of ``name`` (each record's strings joined), asked of ``resolver``; none
    for a name that does not exist. ``DnsError`` when no usable answer comes in ``timeout_s``."""
    qid = int.from_bytes(os.urandom(2), "big")
    query = _query(name, qid)
    family = socket.AF_INET6 if ":" in resolver[0] else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_DGRAM) as s:
            s.settimeout(timeout_s)
            s.connect(resolver)
            s.send(query)
            msg = s.recv(4096)
        if len(msg) > 2 and msg[2] & 0x02:  # TC: truncated, ask again over TCP
            with socket.create_connection(resolver, timeout=timeout_s) as t:
                t.sendall(struct.pack(">H", len(query)) + query)
                size = struct.unpack(">H", t.recv(2))[0]
                msg = b""
                while len(msg) < size:
                    chunk = t.recv(size - len(msg))
                    if not chunk:
                        break
                    msg += chunk
    except OSError as exc:
        raise DnsError(f"{resolver[0]}:{resolver[1]}: {exc}") from exc
    found = _answers(msg, qid)
    return found or []
