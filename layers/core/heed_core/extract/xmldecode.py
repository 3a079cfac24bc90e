"""The text of an XML document whose bytes may not say truthfully what they are: a BOM, the
HTTP charset, the XML declaration's encoding, UTF-8, windows-1252, in that order, each used only
when the bytes decode under it. Apart from ``xmlrecover`` (which names ``decode_xml`` and
``unicode_codec`` again for the code that imports them there) so that each file stays small
enough to read whole (issue 36)."""
from __future__ import annotations

import codecs
import re

from heed_core.extract.safexml import charset_from_content_type

__all__ = ["decode_xml", "unicode_codec"]

_BOM_CODECS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8"), (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le"),
)
# Without a BOM, the first characters still tell a UTF-16/32 document ("<?" in two or four bytes).
_SNIFF_CODECS = (
    (b"\x00\x00\x00<", "utf-32-be"), (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00<\x00?", "utf-16-be"), (b"<\x00?\x00", "utf-16-le"),
)
_DECL_ENCODING = re.compile(rb"<\?xml[^>]*?\bencoding\s*=\s*[\"']([A-Za-z0-9._:-]+)[\"']", re.I)


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _strict(data: bytes, codec: str) -> str | None:
    try:
        return data.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return None


def unicode_codec(body: bytes) -> tuple[str, int] | None:
    """(codec, BOM length) when the first bytes say UTF-8 by a BOM, or UTF-16/32 by a BOM or by
    how "<?" is spelled in two or four bytes; None for an ASCII-compatible start."""
    for bom, codec in _BOM_CODECS:
        if body.startswith(bom):
            return codec, len(bom)
    for sniff, codec in _SNIFF_CODECS:
        if body.startswith(sniff):
            return codec, 0
    return None


def decode_xml(body: bytes, content_type: str | None) -> tuple[str, str | None]:
    """Text of an XML document and, when the bytes did not follow what was declared, a note.

    Order: a BOM; the HTTP charset (it wins over the document's own declaration, as in
    feedparser and browsers); the encoding in the XML declaration; UTF-8; windows-1252,
    the encoding of most mislabelled Western pages. A candidate is used only if the bytes
    decode under it without error; the last resort replaces what does not decode."""
    sniffed = unicode_codec(body)
    if sniffed is not None:
        codec, skip = sniffed
        return body[skip:].decode(codec, errors="replace"), None
    http = _codec(charset_from_content_type(content_type))
    m = _DECL_ENCODING.search(body, 0, 512)
    declared_name = m.group(1).decode("ascii").lower() if m else None
    declared = _codec(declared_name)
    if declared and declared.startswith(("utf-16", "utf-32")):
        declared = "utf-8"  # an ASCII-compatible byte stream cannot truthfully say UTF-16
    said = http or declared
    for codec in dict.fromkeys(c for c in (http, declared, "utf-8", "cp1252") if c):
        text = _strict(body, codec)
        if text is not None:
            if said and codec != said:
                return text, f"encoding: declared {said}, read as {codec}"
            if declared_name and declared is None and not http:
                return text, f"encoding: unknown {declared_name!r} declared, read as {codec}"
            return text, None
    return (body.decode("cp1252", errors="replace"),
            f"encoding: declared {said or 'none'}, read as cp1252 with replacements")
