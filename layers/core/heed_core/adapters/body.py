"""Reads a response body under a byte cap, on the wire and after gzip/deflate decoding."""
from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

__all__ = ["CappedBody", "content_codings", "read_capped"]

PIECE = 64 * 1024


@dataclass(frozen=True)
class CappedBody:
    """The decoded body, or its first ``cap`` bytes with ``error="too_large"``."""

    data: bytes
    error: str | None = None  # None | "too_large" | "decompression_error"
    truncated: bool = False


class _TooLarge(Exception):
    pass


class _Undecodable(Exception):
    pass


def content_codings(headers: Iterable[tuple[str, str]]) -> list[str]:
    """The content codings of a response, in the order the server applied them."""
    names = [
        c.strip().lower() for k, v in headers if k.lower() == "content-encoding" for c in v.split(",")
    ]
    return [c for c in names if c and c != "identity"]


def read_capped(read: Callable[[int], bytes], codings: list[str], cap: int) -> CappedBody:
    """Pull raw bytes with ``read(n)`` (at most n bytes, b"" at the end) until the end or the
    cap. Never holds more than ``cap`` decoded bytes plus one piece in memory."""
    cap = max(0, cap)
    parts: list[bytes] = []
    size = wire = 0

    def keep(pieces: Iterator[bytes]) -> None:
        nonlocal size
        for piece in pieces:
            if size + len(piece) > cap:
                parts.append(piece[: cap - size])
                size = cap
                raise _TooLarge
            parts.append(piece)
            size += len(piece)

    try:
        stages = [_Inflater(c) for c in reversed(codings)]
        while chunk := read(min(PIECE, cap - wire + 1)):
            wire += len(chunk)
            if wire > cap:
                keep(_through(stages, chunk[: len(chunk) - (wire - cap)]))
                raise _TooLarge  # stop reading: the rest stays in the server's socket buffer
            keep(_through(stages, chunk))
        for i, stage in enumerate(stages):
            keep(p for piece in stage.close() for p in _through(stages[i + 1 :], piece))
    except _TooLarge:
        return CappedBody(b"".join(parts), "too_large", truncated=True)
    except (zlib.error, _Undecodable):
        return CappedBody(b"", "decompression_error")
    return CappedBody(b"".join(parts))


def _through(stages: list[_Inflater], data: bytes) -> Iterator[bytes]:
    if not stages:
        yield data
        return
    for piece in stages[0].feed(data):
        yield from _through(stages[1:], piece)


class _Inflater:
    """Incremental gzip/deflate decoding in pieces of at most PIECE bytes, so a
    decompression bomb is cut by the cap before it grows in memory."""

    def __init__(self, coding: str) -> None:
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise _Undecodable(coding)  # we only ever offer gzip and deflate
        self._gzip = coding != "deflate"
        self._z = zlib.decompressobj(16 + zlib.MAX_WBITS) if self._gzip else None
        self._head = b""
        self._members = 0
        self._ignore_rest = False
        self._fed = False

    def feed(self, data: bytes) -> Iterator[bytes]:
        self._fed = self._fed or bool(data)
        if self._z is None:
            # RFC 9110 deflate is zlib-wrapped; some servers send raw deflate. Two bytes tell.
            self._head += data
            if len(self._head) < 2:
                return
            data, self._head = self._head, b""
            wrapped = (data[0] & 0x0F) == 8 and ((data[0] << 8) | data[1]) % 31 == 0
            self._z = zlib.decompressobj(zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS)
        while data and not self._ignore_rest:
            if self._z.eof:
                if not self._gzip:
                    return  # bytes after the end of a deflate stream are ignored
                self._z = zlib.decompressobj(16 + zlib.MAX_WBITS)  # RFC 1952: several members
            z = self._z
            try:
                out = z.decompress(data, PIECE)
            except zlib.error:
                if self._members == 0:
                    raise
                self._ignore_rest = True  # junk after a complete gzip member, as browsers allow
                return
            if out:
                yield out
            if z.eof:
                self._members += 1
                data = z.unused_data
            else:
                data = z.unconsumed_tail  # output still inside zlib comes out on the next call

    def close(self) -> Iterator[bytes]:
        if not self._fed:
            return  # no body at all (304, 204, HEAD-like): nothing to decode
        if self._z is None:
            if self._head:
                raise zlib.error("deflate body shorter than its header")
            return
        while not self._z.eof and not self._ignore_rest:
            out = self._z.decompress(b"", PIECE)
            if not out:
                break
            yield out
        if not self._z.eof and not self._ignore_rest:
            raise zlib.error("compressed body ends before its stream does")
