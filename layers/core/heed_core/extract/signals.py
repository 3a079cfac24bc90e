"""Decides whether a page may be stored and its links followed (robots meta tags, X-Robots-Tag).

Also home of the hardened HTML parsing every HTML reader in ``heed_core.extract`` shares.
"""
from __future__ import annotations

import codecs
import re
from collections.abc import Iterable
from dataclasses import dataclass

import lxml.html
from lxml import etree

__all__ = [
    "DEFAULT_MAX_BYTES",
    "Directives",
    "Page",
    "decode_html",
    "meta_values",
    "parse_html",
    "robots_directives",
]

DEFAULT_MAX_BYTES = 5 * 2**20
TOO_LARGE = "too_large"

Headers = Iterable[tuple[str, str]]

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)


def decode_html(body: bytes) -> str:
    """Bytes to text: BOM, then a ``<meta charset>`` near the top, then UTF-8, then cp1252.

    Done here rather than by libxml2 because libxml2 falls back to Latin-1 for the
    many UTF-8 pages that declare their charset only in the Content-Type header."""
    for bom, enc in _BOMS:
        if body.startswith(bom):
            return body[len(bom):].decode(enc, errors="replace")
    m = _META_CHARSET.search(body[:4096])
    if m:
        try:
            codec = codecs.lookup(m.group(1).decode("ascii", "replace"))
        except LookupError:
            codec = None
        # A page that says "iso-8859-1" is in practice cp1252 (WHATWG encoding spec).
        if codec is not None and codec.name not in ("utf-16-le", "utf-16-be", "utf-16"):
            name = "cp1252" if codec.name in ("latin-1", "iso8859-1", "ascii") else codec.name
            return body.decode(name, errors="replace")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        return body.decode("cp1252", errors="replace")


def parse_html(body: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> lxml.html.HtmlElement | None:
    """The document's root element, or None for empty, oversized or unparseable input.

    A fresh parser per call (lxml parsers are not thread-safe); no network, no huge
    trees, comments and processing instructions dropped so they never reach text."""
    if not body or len(body) > max_bytes:
        return None
    # Characters XML cannot hold would make later tree edits (e.g. drop_tree) raise.
    text = _NOT_XML.sub("", decode_html(body))
    if not text.strip():
        return None
    parser = lxml.html.HTMLParser(  # type: ignore[call-arg]  # lxml-stubs 0.5 lacks default_doctype
        no_network=True, huge_tree=False, remove_comments=True, remove_pis=True, default_doctype=False
    )
    try:
        root = lxml.html.document_fromstring(text, parser=parser)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    return root


class Page:
    """A response's body parsed at most once (``parse_html``) for the readers of one turn that
    share it: first those that only read the tree (``root``), then at most one that takes it
    apart (``take``). An article was parsed up to four times the same way (its robots meta tags,
    its paywall markers, its TDM reservation, its text)."""

    __slots__ = ("_parsed", "_root", "body", "max_bytes")

    def __init__(self, body: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.body, self.max_bytes = body, max_bytes
        self._root: lxml.html.HtmlElement | None = None
        self._parsed = False

    def root(self) -> lxml.html.HtmlElement | None:
        """The tree, to read and leave as it is (None: empty, oversized or unparseable)."""
        if not self._parsed:
            self._root, self._parsed = parse_html(self.body, max_bytes=self.max_bytes), True
        return self._root

    def take(self) -> lxml.html.HtmlElement | None:
        """The tree, for a reader that changes it: a later reader gets a fresh parse."""
        root = self.root()
        self._root, self._parsed = None, False
        return root


def meta_values(root: lxml.html.HtmlElement | None, name: str) -> list[str]:
    """``content`` of every ``<meta name=...>`` whose name matches, case-insensitively."""
    if root is None:
        return []
    wanted = name.strip().lower()
    out: list[str] = []
    for el in root.iter("meta"):
        if (el.get("name") or "").strip().lower() == wanted:
            content = el.get("content")
            if content is not None:
                out.append(content)
    return out


@dataclass(frozen=True)
class Directives:
    """What the page asks of us. ``sources`` names each place a directive came from,
    e.g. ``x-robots-tag:noindex`` or ``meta-robots:nofollow``."""

    noindex: bool = False
    nofollow: bool = False
    sources: tuple[str, ...] = ()
    error: str | None = None


# Directives that take a value after a colon; anything else before a colon is a user agent.
_VALUED = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})
_UA_TOKEN = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-]*$")


def _product_token(token: str) -> str:
    return token.split("/", 1)[0].strip().lower()


def _apply(directives: str, origin: str, found: dict[str, list[str]]) -> None:
    # Commas are the standard separator; spaces are tolerated because the stricter
    # reading of "noindex nofollow" is that the owner meant both.
    for word in directives.replace(",", " ").split():
        d = word.lower()
        if d == "none":
            found["noindex"].append(f"{origin}:none")
            found["nofollow"].append(f"{origin}:none")
        elif d in ("noindex", "nofollow"):
            found[d].append(f"{origin}:{d}")


def _header_directives(value: str, token: str, found: dict[str, list[str]]) -> None:
    """One X-Robots-Tag value. A leading ``agent:`` scopes what follows to that agent,
    until another ``agent:`` appears (``googlebot: noindex, otherbot: nofollow``)."""
    scope: str | None = None
    for segment in value.split(","):
        seg = segment.strip()
        if not seg:
            continue
        head, sep, rest = seg.partition(":")
        head_l = head.strip().lower()
        if sep and head_l not in _VALUED and _UA_TOKEN.match(head.strip()) and rest.strip():
            scope = head_l
            seg = rest.strip()
        # SUBSIDIE-09: an unscoped directive, or one naming our product token, applies;
        # one naming another crawler does not.
        if scope is None or (token and scope == token):
            _apply(seg, "x-robots-tag", found)


def robots_directives(
    headers: Headers, body: bytes | None, token: str, *, max_bytes: int = DEFAULT_MAX_BYTES,
    page: Page | None = None,
) -> Directives:
    """noindex/nofollow from every ``X-Robots-Tag`` header (each repeated header read on
    its own, SUBSIDIE-09), ``<meta name="robots">`` and ``<meta name="<token>">``.

    A body larger than ``max_bytes`` is not parsed: the header answer comes back with
    ``error="too_large"`` so the caller can decide to skip the page. ``page``: the body's
    parse, shared with the turn's other readers."""
    tok = _product_token(token)
    found: dict[str, list[str]] = {"noindex": [], "nofollow": []}
    for name, value in headers:
        if name.strip().lower() == "x-robots-tag":
            _header_directives(value, tok, found)
    error = None
    if body:
        if len(body) > max_bytes:
            error = TOO_LARGE
        else:
            root = page.root() if page is not None else parse_html(body, max_bytes=max_bytes)
            for meta_name in dict.fromkeys(n for n in ("robots", tok) if n):
                for content in meta_values(root, meta_name):
                    _apply(content, f"meta-{meta_name}", found)
    sources = tuple(dict.fromkeys(found["noindex"] + found["nofollow"]))
    return Directives(
        noindex=bool(found["noindex"]), nofollow=bool(found["nofollow"]), sources=sources, error=error
    )
