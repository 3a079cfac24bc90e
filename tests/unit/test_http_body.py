"""The body reader: a byte cap on the wire and after gzip/deflate decoding, no sockets."""
from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable

import pytest

from heed_core.adapters.body import PIECE, content_codings, read_capped


def reader(data: bytes, step: int = 1000) -> Callable[[int], bytes]:
    """A raw stream handing out at most ``step`` bytes per call, recording what was asked."""
    pos = 0

    def read(n: int) -> bytes:
        nonlocal pos
        assert n > 0
        chunk = data[pos : pos + min(n, step)]
        pos += len(chunk)
        return chunk

    read.consumed = lambda: pos  # type: ignore[attr-defined]
    return read


def raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def test_plain_body_under_the_cap_comes_back_whole() -> None:
    body = read_capped(reader(b"x" * 5000), [], 5000)
    assert (body.data, body.error, body.truncated) == (b"x" * 5000, None, False)


def test_plain_body_over_the_cap_stops_reading_early() -> None:
    # GIVEN a 1 MB body and a 10 kB cap
    read = reader(b"y" * 1_000_000, step=PIECE)
    # WHEN it is read
    body = read_capped(read, [], 10_000)
    # THEN reading stopped right after the cap, and the prefix is kept
    assert body.error == "too_large" and body.truncated
    assert body.data == b"y" * 10_000
    assert read.consumed() <= 10_001  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "coding, encode",
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),  # RFC 9110: zlib-wrapped
        ("deflate", raw_deflate),  # what some servers send instead
    ],
)
def test_gzip_and_deflate_are_decoded(coding: str, encode: Callable[[bytes], bytes]) -> None:
    text = b"<html><title>Agenda</title></html>" * 500
    body = read_capped(reader(encode(text), step=7), [coding], 1_000_000)
    assert body.error is None
    assert body.data == text


def test_several_gzip_members_are_one_body() -> None:
    data = gzip.compress(b"first,") + gzip.compress(b"second")
    assert read_capped(reader(data, step=5), ["gzip"], 100).data == b"first,second"


def test_gzip_bomb_is_cut_at_the_cap_after_decoding() -> None:
    # GIVEN 50 MB of zeros gzip-compressed into ~50 kB, and a 1 MB cap
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    bomb = b"".join(comp.compress(bytes(1 << 20)) for _ in range(50)) + comp.flush()
    assert len(bomb) < 1_000_000
    # WHEN it is read
    body = read_capped(reader(bomb, step=PIECE), ["gzip"], 1_000_000)
    # THEN decoding stops at the cap
    assert body.error == "too_large" and body.truncated
    assert body.data == bytes(1_000_000)


def test_corrupt_gzip_is_a_decompression_error() -> None:
    body = read_capped(reader(b"\x1f\x8b\x08\x00this is not gzip at all"), ["gzip"], 1000)
    assert (body.error, body.data) == ("decompression_error", b"")


def test_gzip_cut_short_is_a_decompression_error() -> None:
    whole = gzip.compress(b"z" * 10_000)
    assert read_capped(reader(whole[: len(whole) // 2]), ["gzip"], 100_000).error == "decompression_error"


def test_junk_after_a_complete_gzip_member_is_ignored() -> None:
    body = read_capped(reader(gzip.compress(b"ok") + b"\x00\x00junk"), ["gzip"], 100)
    assert (body.data, body.error) == (b"ok", None)


def test_an_encoding_we_never_offered_is_a_decompression_error() -> None:
    assert read_capped(reader(b"\x0b\x01\x80"), ["br"], 100).error == "decompression_error"


def test_an_empty_body_with_a_content_encoding_is_empty() -> None:
    assert read_capped(reader(b""), ["gzip"], 100) == read_capped(reader(b""), [], 100)
    assert read_capped(reader(b""), ["gzip"], 100).data == b""


def test_stacked_codings_are_undone_in_reverse_order() -> None:
    data = zlib.compress(gzip.compress(b"layered"))  # gzip applied first, then deflate
    headers = [("Content-Encoding", "gzip"), ("Content-Encoding", "deflate")]
    assert content_codings(headers) == ["gzip", "deflate"]
    assert read_capped(reader(data, step=3), content_codings(headers), 100).data == b"layered"


def test_content_codings_ignores_identity_case_and_spaces() -> None:
    assert content_codings([("content-encoding", " GZIP , identity"), ("X-Other", "deflate")]) == ["gzip"]
    assert content_codings([]) == []


def test_a_cap_of_zero_accepts_only_an_empty_body() -> None:
    assert read_capped(reader(b""), [], 0).error is None
    assert read_capped(reader(b"a"), [], 0).error == "too_large"
