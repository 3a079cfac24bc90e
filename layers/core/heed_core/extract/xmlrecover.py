"""Decides how a feed or sitemap that is not well-formed XML is read anyway, as feed readers do.

Small hand-built sites send feeds that a strict parser refuses: an HTML entity (``&nbsp;``),
a bare ``&``, bytes in another encoding than the one declared, blank lines or a comment before
``<?xml``, a PHP warning after the root, an undeclared ``media:`` prefix, raw ``<br>`` in a
description, a CDATA section whose ``]]>`` was forgotten, a file cut short. Each is mended here
on the decoded text, then the result goes through safexml's hardened parser (no DTD loaded, no
entity from a DOCTYPE expanded, nothing fetched, libxml2's limits on). What was mended is said
in ``XmlDoc.recovered``.

The bytes are decoded first (``xmldecode.decode_xml``: a BOM, the HTTP charset, the declared
encoding, UTF-8, windows-1252), the mending done on that text.

Still refused: a DOCTYPE that declares entities (``entity_expansion``), input over the cap
(``too_large``), and a mended text more than twice the cap (``too_large``).
"""
from __future__ import annotations

import bisect
import html.entities
import re

from lxml import etree

from heed_core.extract.safexml import (
    EMPTY,
    ENTITY_EXPANSION,
    MALFORMED_XML,
    TOO_LARGE,
    XmlDoc,
    is_blank,
    make_xml_parser,
)
from heed_core.extract.xmldecode import decode_xml, unicode_codec

__all__ = ["decode_xml", "parse_xml_recovering", "unicode_codec"]

_DECL = re.compile(r"<\?xml\s[^>]*?\?>|<\?xml\?>", re.I)
# XML 1.0 2.2: characters a document may not hold at all, not even as a character reference.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
# Sections whose text is never markup: CDATA, comments, processing instructions, a DOCTYPE.
_SECTIONS = re.compile(
    r"<!\[CDATA\[.*?(?:\]\]>|\Z)|<!--.*?(?:-->|\Z)|<\?.*?(?:\?>|\Z)|<!DOCTYPE(?:[^>\[]|\[[^\]]*\])*>", re.S | re.I
)
_AMP = re.compile(r"&(?:#(?:[0-9]+|[xX][0-9a-fA-F]+);|[A-Za-z_][\w.:-]*;)?")
_XML_ENTITIES = frozenset({"amp;", "lt;", "gt;", "quot;", "apos;"})
_START_TAG = re.compile(r"<([A-Za-z_][\w.-]*(?::[A-Za-z_][\w.-]*)?)")
_PREFIX_USE = re.compile(r"</?([A-Za-z_][\w.-]*):[A-Za-z_]|\s([A-Za-z_][\w.-]*):[A-Za-z_][\w.-]*\s*=")
_PREFIX_DECL = re.compile(r"\bxmlns:([A-Za-z_][\w.-]*)\s*=")
_ENTITY_DECL = re.compile(r"<!ENTITY", re.I)
_PARTIAL_TAG = re.compile(r"<[^<>]*\Z")
# The namespaces feeds and sitemaps use under these prefixes, for a prefix the feed forgot to
# declare (feedparser reads such elements by name; we give them their usual namespace).
_KNOWN_NAMESPACES = {
    "atom": "http://www.w3.org/2005/Atom",
    "content": "http://purl.org/rss/1.0/modules/content/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "dcterms": "http://purl.org/dc/terms/",
    "feedburner": "http://rssnamespace.org/feedburner/ext/1.0",
    "geo": "http://www.w3.org/2003/01/geo/wgs84_pos#",
    "georss": "http://www.georss.org/georss",
    "image": "http://www.google.com/schemas/sitemap-image/1.1",
    "itunes": "http://www.itunes.com/dtds/podcast-1.0.dtd",
    "media": "http://search.yahoo.com/mrss/",
    "news": "http://www.google.com/schemas/sitemap-news/0.9",
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "slash": "http://purl.org/rss/1.0/modules/slash/",
    "sy": "http://purl.org/rss/1.0/modules/syndication/",
    "video": "http://www.google.com/schemas/sitemap-video/1.1",
    "wfw": "http://wellformedweb.org/CommentAPI/",
    "xhtml": "http://www.w3.org/1999/xhtml",
}


def _html_entity(name: str) -> str | None:
    chars = html.entities.html5.get(name)
    return "".join(f"&#{ord(c)};" for c in chars) if chars else None


class _Mender:
    """The text-level repairs, each counted for ``recovered``."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.names: dict[str, None] = {}

    def note(self, what: str, n: int = 1) -> None:
        self.counts[what] = self.counts.get(what, 0) + n

    def _amp(self, m: re.Match[str]) -> str:
        ref = m.group(0)
        if len(ref) == 1:  # a bare "&" (a URL's query, "Tom & Jerry")
            self.note("bare_ampersands")
            return "&amp;"
        body = ref[1:]
        if body in _XML_ENTITIES:
            return ref
        if body.startswith("#"):
            digits = body[1:-1]
            hexadecimal = digits[:1] in ("x", "X")
            point = int(digits[1:], 16) if hexadecimal else int(digits)
            if point > 0x10FFFF or _ILLEGAL.match(chr(point)):
                self.note("control_characters")
                return ""
            if digits[:1] == "X":  # XML wants a lowercase x; HTML takes either
                self.note("character_references")
                return f"&#x{digits[1:]};"
            return ref
        replacement = _html_entity(body)
        if replacement is not None:
            self.note("html_entities")
            if len(self.names) < 5:
                self.names.setdefault(ref)
            return replacement
        self.note("unknown_entities")  # kept as the text it is, as feedparser does
        return "&amp;" + body

    def markup(self, text: str) -> str:
        return _AMP.sub(self._amp, text)


_TEXT_ELEMENTS = re.compile(
    r"<((?:[A-Za-z_][\w.-]*:)?(?:description|summary|content|encoded|subtitle|tagline|title))(\s[^<>]*)?>", re.I
)
_TAG = re.compile(r"<(/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:\"[^\"<]*\"|'[^'<]*'))*)\s*(/?)>")


def _well_formed_fragment(content: str) -> bool:
    """Whether markup inside a text element nests and quotes as XML wants (no raw <br>, no
    unclosed <p>, no unquoted attribute, no lone "<")."""
    content = _SECTIONS.sub("", content)
    stack: list[str] = []
    pos = 0
    for m in _TAG.finditer(content):
        if "<" in content[pos:m.start()]:
            return False
        pos = m.end()
        closing, name, _attrs, empty = m.groups()
        if closing:
            if not stack or stack.pop() != name:
                return False
        elif not empty:
            stack.append(name)
    return not stack and "<" not in content[pos:]


_CDATA_OPEN = "<![CDATA["
_CDATA_CLOSE = "]]>"
# The start tag a CDATA section sits right after, e.g. "<description>" of "<description><![CDATA[".
_OPENING_TAG = re.compile(r"<((?:[A-Za-z_][\w.-]*:)?[A-Za-z_][\w.-]*)(?:\s[^<>]*)?>\s*")


def _end_tag(text: str, name: str, start: int, stop: int) -> int:
    """Where the first ``</name>`` (``</name >``, not ``</names>``) between start and stop begins, or -1."""
    tag = f"</{name}"
    at = text.find(tag, start, stop)
    while at >= 0:
        rest = text[at + len(tag): at + len(tag) + 1]
        if rest == ">" or rest.isspace():
            return at
        at = text.find(tag, at + 1, stop)
    return -1


def _close_cdata(text: str) -> tuple[str, int]:
    """A CDATA section whose ``]]>`` was forgotten is closed before the end tag of the element it
    opens in: ``<description><![CDATA[<p>x</p></description>``. It is taken as forgotten when that
    end tag comes before any ``]]>``, and either no ``]]>`` follows at all or another section opens
    between the two (the ``]]>`` is that one's). Where no such end tag follows, the file was cut
    inside the section and stays as it is (the cut entry is dropped like any other). Returns the
    text and how many sections were closed."""
    out: list[str] = []
    pos = closed = 0
    close = 0  # the next "]]>" at or after the section's start; -1 once none is left
    at = text.find(_CDATA_OPEN)
    while at >= 0:
        inside = at + len(_CDATA_OPEN)
        if 0 <= close < inside:
            close = text.find(_CDATA_CLOSE, inside)
        lt = text.rfind("<", max(pos, at - 300), at)
        opening = _OPENING_TAG.fullmatch(text, lt, at) if lt >= 0 else None
        end = _end_tag(text, opening.group(1), inside, close if close >= 0 else len(text)) if opening else -1
        if end >= 0 and (close < 0 or text.find(_CDATA_OPEN, end, close) >= 0):
            out.append(text[pos:end] + _CDATA_CLOSE)
            pos = end
            closed += 1
            at = text.find(_CDATA_OPEN, end)
        elif close < 0:
            break  # cut inside the section
        else:
            at = text.find(_CDATA_OPEN, close + len(_CDATA_CLOSE))
    if not closed:
        return text, 0
    out.append(text[pos:])
    return "".join(out), closed


def _wrap_raw_html(text: str) -> tuple[str, int]:
    """Raw HTML inside a description, summary, content or title becomes character data, as
    feed readers read it; well-formed inline markup (Atom xhtml content) is left alone."""
    spans = [m.span() for m in _SECTIONS.finditer(text)]
    starts = [a for a, _ in spans]

    def in_section(pos: int) -> bool:
        i = bisect.bisect_right(starts, pos) - 1
        return i >= 0 and spans[i][0] <= pos < spans[i][1]

    out: list[str] = []
    pos = wrapped = 0
    # The nearest end tag found per name: reused while it lies ahead, so a file of many
    # unclosed <description>s costs one scan, not one per element.
    nearest: dict[str, re.Match[str] | None] = {}
    for m in _TEXT_ELEMENTS.finditer(text):
        if m.start() < pos or m.group(0).endswith("/>") or in_section(m.start()):
            continue
        name = m.group(1)
        end = nearest.get(name, False)
        if end is False or (end is not None and end.start() < m.end()):  # type: ignore[union-attr]
            close = re.compile(r"</" + re.escape(name) + r"\s*>")
            end = close.search(text, m.end())
            while end is not None and in_section(end.start()):
                end = close.search(text, end.end())
            nearest[name] = end
        if end is None:
            continue
        assert isinstance(end, re.Match)
        content = text[m.end():end.start()]
        if "<" not in content or _well_formed_fragment(content):
            continue
        out.append(text[pos:m.end()])
        out.append("<![CDATA[" + _SECTIONS.sub(_unwrap, content).replace("]]>", "]]]]><![CDATA[>") + "]]>")
        pos = end.start()
        wrapped += 1
    if not wrapped:
        return text, 0
    out.append(text[pos:])
    return "".join(out), wrapped


def _unwrap(m: re.Match[str]) -> str:
    """A CDATA section inside wrapped content gives its text; a comment stays as it is."""
    section = m.group(0)
    if section.startswith("<![CDATA["):
        return section[9:-3] if section.endswith("]]>") else section[9:]
    return section


def _split(text: str) -> list[tuple[bool, str]]:
    """(is_markup, piece) in document order; CDATA, comments, PIs and DOCTYPE are not markup."""
    pieces: list[tuple[bool, str]] = []
    pos = 0
    for m in _SECTIONS.finditer(text):
        if m.start() > pos:
            pieces.append((True, text[pos:m.start()]))
        pieces.append((False, m.group(0)))
        pos = m.end()
    if pos < len(text):
        pieces.append((True, text[pos:]))
    return pieces


def _first_start_tag(pieces: list[tuple[bool, str]], roots: frozenset[str] | None) -> tuple[int, int, str] | None:
    """(piece index, offset, qualified name) of the root's start tag: the first start tag, or
    the first naming one of ``roots`` when the first is something else (a PHP warning's <b>)."""
    first = None
    for i, (is_markup, piece) in enumerate(pieces):
        if not is_markup:
            continue
        for m in _START_TAG.finditer(piece):
            name = m.group(1)
            if first is None:
                first = (i, m.start(), name)
                if roots is None or name.rpartition(":")[2] in roots:
                    return first
            elif name.rpartition(":")[2] in roots:  # type: ignore[operator]
                return (i, m.start(), name)
    return first


def _last_end(pieces: list[tuple[bool, str]], names: frozenset[str] | set[str]) -> tuple[int, int] | None:
    """(piece index, end offset) just after the last end tag with a local name in ``names``."""
    pattern = re.compile(r"</(?:[A-Za-z_][\w.-]*:)?(" + "|".join(map(re.escape, sorted(names))) + r")\s*>")
    for i in range(len(pieces) - 1, -1, -1):
        is_markup, piece = pieces[i]
        if is_markup:
            ends = [m.end() for m in pattern.finditer(piece)]
            if ends:
                return i, ends[-1]
    return None


def _first_start(pieces: list[tuple[bool, str]], names: frozenset[str]) -> tuple[int, int] | None:
    """(piece index, offset) of the first start tag with a local name in ``names``."""
    pattern = re.compile(r"<(?:[A-Za-z_][\w.-]*:)?(?:" + "|".join(map(re.escape, sorted(names))) + r")[\s/>]")
    for i, (is_markup, piece) in enumerate(pieces):
        found = pattern.search(piece) if is_markup else None
        if found is not None:
            return i, found.start()
    return None


def _declare_prefixes(text: str, root_at: int) -> tuple[str, list[str]]:
    used = {a or b for a, b in _PREFIX_USE.findall(text)} - {"xml", "xmlns"}
    missing = sorted(used - set(_PREFIX_DECL.findall(text)))
    if not missing:
        return text, []
    decls = "".join(
        f' xmlns:{p}="{_KNOWN_NAMESPACES.get(p.lower(), "urn:x-heed:undeclared:" + p)}"' for p in missing
    )
    name_end = _START_TAG.match(text, root_at)
    assert name_end is not None
    return text[: name_end.end()] + decls + text[name_end.end():], missing


def _mend(
    text: str, roots: frozenset[str] | None, entries: frozenset[str]
) -> tuple[str | None, str | None, list[str]]:
    """(mended text, error, notes)."""
    notes: list[str] = []
    mender = _Mender()
    stripped = _ILLEGAL.sub("", text)
    if len(stripped) != len(text):
        mender.note("control_characters", len(text) - len(stripped))
    text, closed = _close_cdata(stripped.lstrip("\ufeff"))
    if closed:
        notes.append(f"unclosed_cdata: {closed} section(s) closed before their element's end tag")
    text, wrapped = _wrap_raw_html(text)
    if wrapped:
        notes.append(f"raw_html: {wrapped} element(s) read as text")
    pieces = _split(text)
    root = _first_start_tag(pieces, roots)
    if root is None:
        return None, MALFORMED_XML, notes
    index, offset, qname = root
    prolog = "".join(p for _, p in pieces[:index]) + pieces[index][1][:offset]
    if _ENTITY_DECL.search(prolog) and "<!DOCTYPE" in prolog.upper():
        return None, ENTITY_EXPANSION, notes
    # Junk before the root: blank lines or a comment before <?xml, a PHP warning. The XML
    # declaration and any DOCTYPE go too: the text is handed over as UTF-8, with no DTD.
    decl = _DECL.search(prolog)
    junk = _SECTIONS.sub("", _DECL.sub("", prolog)).strip()
    if decl is not None and decl.start() > 0:
        notes.append("leading_junk: removed before the XML declaration")
    elif junk:
        notes.append("leading_junk: removed before the root element")
    pieces = [(True, pieces[index][1][offset:])] + pieces[index + 1:]
    # The end: junk after the root's end tag is dropped; a missing end tag means the file was
    # cut, and everything after the last complete entry goes (the entry being cut included).
    root_end = _last_end(pieces, {qname.rpartition(":")[2]})
    if root_end is not None:
        i, end = root_end
        tail = pieces[i][1][end:] + "".join(p for _, p in pieces[i + 1:])
        if _SECTIONS.sub("", tail).strip():
            notes.append("trailing_junk: removed after the root element")
        pieces = pieces[:i] + [(True, pieces[i][1][:end])]
    else:
        entry_end = _last_end(pieces, entries) if entries else None
        if entry_end is not None:
            i, end = entry_end
            pieces = pieces[:i] + [(True, pieces[i][1][:end])]
            notes.append("truncated: kept the entries before the break")
        else:
            first = _first_start(pieces, entries) if entries else None
            if first is not None:  # an entry cut in half is no entry: keep what came before it
                i, start = first
                pieces = pieces[:i] + [(True, pieces[i][1][:start])]
            notes.append("truncated: no complete entry before the break")
        last_is_markup, last = pieces[-1]
        if last_is_markup:  # a tag cut in half ("</rss") goes; the recovery closes what is open
            pieces[-1] = (True, _PARTIAL_TAG.sub("", last))
    out = "".join(mender.markup(p) if is_markup else p for is_markup, p in pieces)
    for what in ("html_entities", "bare_ampersands", "unknown_entities", "control_characters", "character_references"):
        if what in mender.counts:
            extra = f" ({', '.join(mender.names)})" if what == "html_entities" else ""
            extra = " removed" if what == "control_characters" else extra
            notes.append(f"{what}: {mender.counts[what]}{extra}")
    out, missing = _declare_prefixes(out, 0)
    if missing:
        notes.append(f"undeclared_prefixes: {', '.join(missing)}")
    return out, None, notes


def parse_xml_recovering(
    body: bytes,
    *,
    max_bytes: int,
    content_type: str | None = None,
    roots: frozenset[str] | None = None,
    entries: frozenset[str] = frozenset(),
) -> XmlDoc:
    """Parse ``body`` as feed readers do: mend what is commonly broken, then parse hardened;
    when libxml2 still finds a fault (raw HTML in a description), let it recover the tree.
    ``roots`` are the root names expected (to skip junk before one); ``entries`` the local
    names of complete entries to keep when the file was cut. Never raises for bad input."""
    if len(body) > max_bytes:
        return XmlDoc(None, TOO_LARGE)
    if is_blank(body):
        return XmlDoc(None, EMPTY)
    text, encoding_note = decode_xml(body, content_type)
    mended, error, notes = _mend(text, roots, entries)
    if mended is None:
        return XmlDoc(None, error or MALFORMED_XML)
    if encoding_note:
        notes.insert(0, encoding_note)
    data = mended.encode("utf-8", errors="replace")
    if len(data) > 2 * max_bytes:
        return XmlDoc(None, TOO_LARGE)
    try:
        root = etree.fromstring(data, make_xml_parser("utf-8"))
    except (etree.XMLSyntaxError, ValueError) as exc:
        try:
            root = etree.fromstring(data, _recovering_parser())
        except (etree.XMLSyntaxError, ValueError):
            root = None
        if root is None:
            return XmlDoc(None, MALFORMED_XML, tuple(notes))
        cut = any(n.startswith("truncated") for n in notes)
        if not (cut and getattr(exc, "code", None) in _END_OF_DATA):
            # A cut file's open elements are closed by the recovery: that is said already.
            notes.append(f"markup_recovered: {_first_error(exc)}")
    if root is None:
        return XmlDoc(None, EMPTY, tuple(notes))
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _ in dtd.entities()):  # type: ignore[union-attr]  # no DTD.entities in lxml-stubs 0.5
        return XmlDoc(None, ENTITY_EXPANSION)
    return XmlDoc(root, None, tuple(notes))


_END_OF_DATA = {etree.ErrorTypes.ERR_TAG_NOT_FINISHED, etree.ErrorTypes.ERR_DOCUMENT_END}


def _first_error(exc: Exception) -> str:
    if not isinstance(exc, etree.XMLSyntaxError):
        return str(exc)
    message = str(exc.msg or exc).split(",")[0].strip()
    return f"{message} (line {exc.lineno})" if exc.lineno else message


def _recovering_parser() -> etree.XMLParser:
    """safexml's hardening, plus libxml2's recovery mode."""
    return etree.XMLParser(
        resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False,
        dtd_validation=False, remove_pis=True, encoding="utf-8", recover=True,
    )
