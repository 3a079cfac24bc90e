"""Decides whether untrusted bytes may become an lxml tree: size cap, no entities, no network."""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from lxml import etree
from lxml import html as lxml_html

__all__ = [
    "HtmlDoc",
    "XmlDoc",
    "charset_from_content_type",
    "decode_html",
    "is_blank",
    "local_name",
    "make_html_parser",
    "make_xml_parser",
    "parse_html",
    "parse_xml",
]

# Stable error codes shared by every parser in heed_core.extract.
EMPTY = "empty"
TOO_LARGE = "too_large"
MALFORMED_XML = "malformed_xml"
BAD_ENCODING = "bad_encoding"
ENTITY_EXPANSION = "entity_expansion"

_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")
# An internal DTD subset: the only place where entities (billion laughs, external
# entities) can be declared. Checked on the raw bytes so such a document never
# reaches libxml2 at all.
_DOCTYPE_SUBSET = re.compile(rb"<!DOCTYPE[^>\[]*\[", re.IGNORECASE)
_ENTITY_DECL = re.compile(rb"<!ENTITY", re.IGNORECASE)
_FIRST_ELEMENT = re.compile(rb"<[A-Za-z_:]")
_XML_DECL_ENCODING = re.compile(rb"^\s*<\?xml[^>]*\bencoding\s*=", re.IGNORECASE)
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", re.IGNORECASE)
_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", re.IGNORECASE)
_BOM_CODECS = ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16"))

_ENCODING_CODES = {
    etree.ErrorTypes.ERR_INVALID_ENCODING,
    etree.ErrorTypes.ERR_INVALID_CHAR,
    etree.ErrorTypes.ERR_UNKNOWN_ENCODING,
    etree.ErrorTypes.ERR_UNSUPPORTED_ENCODING,
}
_ENTITY_CODES = {
    etree.ErrorTypes.ERR_RESOURCE_LIMIT,
    etree.ErrorTypes.ERR_ENTITY_LOOP,
}


@dataclass(frozen=True)
class XmlDoc:
    """The parsed root element, or the stable reason why there is none; ``recovered`` says
    what was mended to get it (xmlrecover), empty for a well-formed document."""

    root: etree._Element | None
    error: str | None
    recovered: tuple[str, ...] = ()


def make_xml_parser(encoding: str | None = None) -> etree.XMLParser:
    """A fresh hardened parser (parsers are not thread-safe, so never share one):
    entities are never substituted, no DTD is loaded, nothing is fetched, and
    libxml2's size limits stay on (huge_tree=False)."""
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        huge_tree=False,
        load_dtd=False,
        dtd_validation=False,
        remove_pis=True,
        encoding=encoding,
    )


def local_name(el: etree._Element) -> str:
    """Tag without its namespace; '' for comments and processing instructions."""
    tag = el.tag
    if not isinstance(tag, str):
        return ""
    return tag.rsplit("}", 1)[-1]


def charset_from_content_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    m = _CHARSET.search(content_type)
    return m.group(1).lower() if m else None


def _declares_entities(body: bytes) -> bool:
    # Only a DOCTYPE in the prolog counts: text about XML inside a CDATA section
    # further down must not make an ordinary feed look hostile.
    first_element = _FIRST_ELEMENT.search(body)
    prolog_end = first_element.start() if first_element else len(body)
    m = _DOCTYPE_SUBSET.search(body, 0, prolog_end)
    return m is not None and _ENTITY_DECL.search(body, m.end()) is not None


def is_blank(body: bytes) -> bool:
    for bom in _BOMS:
        if body.startswith(bom):
            body = body[len(bom):]
            break
    return not body.strip(b" \t\r\n\x00")


def parse_xml(body: bytes, *, max_bytes: int, content_type: str | None = None) -> XmlDoc:
    """Parse ``body`` into a tree, or say why not. Never raises for bad input.

    The size is checked before any parsing; a charset from the Content-Type header
    is used only when the document itself declares none (no BOM, no encoding in the
    XML declaration), since feeds' own prologs are the more reliable of the two."""
    if len(body) > max_bytes:
        return XmlDoc(None, TOO_LARGE)
    if is_blank(body):
        return XmlDoc(None, EMPTY)
    if _declares_entities(body):
        return XmlDoc(None, ENTITY_EXPANSION)
    encoding = None
    charset = charset_from_content_type(content_type)
    if charset and not body.startswith(_BOMS) and not _XML_DECL_ENCODING.match(body):
        encoding = charset
    try:
        parser = make_xml_parser(encoding)
    except LookupError:
        parser = make_xml_parser()
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as exc:
        code = exc.code  # type: ignore[attr-defined]  # lxml-stubs 0.5 lacks .code
        if code in _ENCODING_CODES:
            return XmlDoc(None, BAD_ENCODING)
        if code in _ENTITY_CODES:
            return XmlDoc(None, ENTITY_EXPANSION)
        return XmlDoc(None, MALFORMED_XML)
    except (ValueError, LookupError):
        return XmlDoc(None, BAD_ENCODING)
    if root is None:
        return XmlDoc(None, EMPTY)
    # Belt and braces for a subset the byte scan could not see (e.g. UTF-16 text).
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.entities()):  # type: ignore[union-attr]  # no DTD.entities in lxml-stubs 0.5
        return XmlDoc(None, ENTITY_EXPANSION)
    return XmlDoc(root, None)


@dataclass(frozen=True)
class HtmlDoc:
    """The parsed ``<html>`` element, or the stable reason why there is none."""

    root: lxml_html.HtmlElement | None
    error: str | None


def make_html_parser() -> lxml_html.HTMLParser:
    """A fresh lenient HTML parser that fetches nothing and keeps libxml2's limits."""
    return lxml_html.HTMLParser(
        no_network=True,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        encoding="utf-8",
    )


def _usable(codec: str | None) -> str | None:
    if not codec:
        return None
    try:
        return codecs.lookup(codec).name
    except LookupError:
        return None


def decode_html(body: bytes, content_type: str | None = None) -> str:
    """Bytes to text the way browsers mostly do: BOM, then the HTTP charset, then a
    ``<meta>`` charset near the top, then UTF-8 if it decodes cleanly, else
    windows-1252. Undecodable bytes become U+FFFD; this never raises."""
    for bom, bom_codec in _BOM_CODECS:
        if body.startswith(bom):
            return body.decode(bom_codec, errors="replace")
    codec = _usable(charset_from_content_type(content_type))
    if codec is None:
        m = _META_CHARSET.search(body[:4096])
        codec = _usable(m.group(1).decode("ascii")) if m else None
        # A <meta> cannot truthfully declare UTF-16/32 in an ASCII-compatible
        # byte stream; browsers read such pages as UTF-8 (HTML spec).
        if codec and codec.startswith(("utf-16", "utf-32")):
            codec = "utf-8"
    if codec is None:
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            codec = "cp1252"
    return body.decode(codec, errors="replace")


def parse_html(body: bytes, *, max_bytes: int, content_type: str | None = None) -> HtmlDoc:
    """Parse an HTML page, or say why not (``too_large``, ``empty``). Never raises."""
    if len(body) > max_bytes:
        return HtmlDoc(None, TOO_LARGE)
    if is_blank(body):
        return HtmlDoc(None, EMPTY)
    # Re-encoded as UTF-8 so the parser never guesses (and never trips over an
    # XML declaration in a text string).
    data = decode_html(body, content_type).encode("utf-8", errors="replace")
    try:
        root = lxml_html.document_fromstring(data, parser=make_html_parser())
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return HtmlDoc(None, EMPTY)
    return HtmlDoc(root, None)
