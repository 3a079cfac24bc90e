"""Decides whether a subsidy page really changed since its last version, and says what changed.

SUBSIDIE-04: a revisit whose main text is unchanged stops there, so volatile page furniture
("laatst bezocht op ...", "5 minuten geleden", session ids) must not count as a change.
SUBSIDIE-12: customers get a short summary of the sentences that were added or removed.
"""
from __future__ import annotations

import difflib
import hashlib
import re
import unicodedata

import lxml.html
from lxml import etree

from .signals import DEFAULT_MAX_BYTES, Page, parse_html

__all__ = ["content_hash", "diff_summary", "main_text", "normalise"]

MAX_SENTENCES = 5_000

_ALWAYS_DROP = frozenset(
    {"script", "style", "noscript", "template", "svg", "form", "nav", "aside", "iframe", "object",
     "embed", "canvas", "button", "select", "input", "textarea", "dialog", "head"}
)
_PAGE_FURNITURE = frozenset({"header", "footer"})
_DROP_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "dialog", "alertdialog"})
_COOKIE = re.compile(r"cookie|consent|gdpr|onetrust|cookiebot|cc-banner|cc-window", re.IGNORECASE)
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_BLOCK = frozenset(
    {"address", "article", "blockquote", "dd", "div", "dl", "dt", "figcaption", "figure", "h1", "h2",
     "h3", "h4", "h5", "h6", "hr", "li", "main", "ol", "p", "pre", "section", "table", "tbody",
     "td", "th", "thead", "tr", "ul", "br", "caption", "details", "summary", "body", "header", "footer"}
)


def _droppable(el: lxml.html.HtmlElement) -> bool:
    tag = el.tag.lower() if isinstance(el.tag, str) else ""
    if tag in _ALWAYS_DROP:
        return True
    if el.get("hidden") is not None or (el.get("aria-hidden") or "").lower() == "true":
        return True
    if _HIDDEN_STYLE.search(el.get("style") or ""):
        return True
    if (el.get("role") or "").lower() in _DROP_ROLES:
        return True
    if _COOKIE.search((el.get("id") or "") + " " + (el.get("class") or "")):
        return True
    # A <header>/<footer> of the whole page is furniture; one inside an article or
    # <main> belongs to that content (its title, its date line).
    if tag in _PAGE_FURNITURE:
        return not any(a.tag in ("article", "main") for a in el.iterancestors())
    return False


def _content_root(root: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    mains = root.findall(".//main")
    if mains:
        return [mains[0]]
    role_main = root.xpath(".//*[@role='main']")
    if role_main:
        return [role_main[0]]
    articles = root.findall(".//article")
    if len(articles) == 1:
        return list(articles)
    body = root.find(".//body")
    return [body if body is not None else root]


def _block_text(el: lxml.html.HtmlElement) -> str:
    parts: list[str] = []
    for event, node in etree.iterwalk(el, events=("start", "end")):
        if not isinstance(node.tag, str):
            continue
        block = node.tag.lower() in _BLOCK
        if event == "start":
            if block:
                parts.append("\n")
            if node.text:
                parts.append(node.text)
        else:
            if block:
                parts.append("\n")
            if node.tail and node is not el:
                parts.append(node.tail)
    lines = (" ".join(line.split()) for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line)


def main_text(body: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES, page: Page | None = None) -> str:
    """The page's main content as plain text, one block per line ('' when unreadable):
    ``<main>``, else ``[role=main]``, else the only ``<article>``, else the body, always
    minus navigation, page header/footer, asides, scripts, forms and cookie banners.
    ``page``: the body's parse, taken (its tree is taken apart here)."""
    root = page.take() if page is not None else parse_html(body, max_bytes=max_bytes)
    if root is None:
        return ""
    for el in [e for e in root.iter() if isinstance(e.tag, str) and _droppable(e)]:
        if el.getparent() is not None:
            el.drop_tree()
    chosen = _content_root(root)
    text = "\n".join(_block_text(el) for el in chosen).strip()
    if not text and chosen[0] is not root:
        body_el = root.find(".//body")
        text = _block_text(body_el if body_el is not None else root)
    return text


_MONTHS = (
    r"(?:jan(?:uari|uary)?|feb(?:ruari|ruary)?|m(?:aa)?rt|mar(?:ch)?|apr(?:il)?|mei|may|ju[nl][ie]?|"
    r"june|july|aug(?:ustus|ust)?|sep(?:t(?:ember)?)?|o[kc]t(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_WEEKDAY = (r"(?:(?:maan|dins|woens|donder|vrij|zater|zon)dag|ma|di|wo|do|vr|za|zo|mon|tue|wed|thu|fri|sat|sun)"
            r"\w*\.?,?\s+")
_DATE = (
    rf"(?:{_WEEKDAY})?(?:\d{{1,2}}[-/.]\d{{1,2}}[-/.]\d{{2,4}}|\d{{4}}-\d{{2}}-\d{{2}}|"
    rf"\d{{1,2}}\s+{_MONTHS}(?:\s+\d{{4}})?|{_MONTHS}\s+\d{{1,2}},?\s+\d{{4}})(?!\d)"
)
# The (?!\d) keeps an amount such as "12.000" from being read as the time 12.00.
_TIME = (
    r"(?:T|,?\s*(?:om|at|-)?\s*)\d{1,2}[:.]\d{2}(?:[:.]\d{2})?(?:\.\d+)?(?!\d)"
    r"(?:Z|[+-]\d{2}:?\d{2})?(?:\s*(?:uur|u\b|h\b|am|pm))?"
)
_WIDGET_LABEL = (
    r"(?:(?:voor\s+het\s+)?laatst\s+(?:bezocht|bekeken|geraadpleegd|gewijzigd|bijgewerkt|aangepast)|"
    r"geraadpleegd|pagina\s+(?:bezocht|bekeken)|last\s+(?:visited|viewed|accessed|updated|modified)|"
    r"retrieved|accessed)"
)
_WIDGET = re.compile(
    rf"{_WIDGET_LABEL}\s*(?:op|on|at|om)?\s*:?\s*(?:{_DATE}(?:{_TIME})?|{_TIME.replace('(?:T|', '(?:')})",
    re.IGNORECASE,
)
_AGO = re.compile(
    r"(?:\d+|een|één|an?|one)\s+(?:seconde[n]?|minuut|minuten|uur|uren|dag(?:en)?|week|weken|"
    r"seconds?|minutes?|hours?|days?|weeks?)\s+(?:geleden|ago)",
    re.IGNORECASE,
)
_SESSION = re.compile(
    r"\b(jsessionid|phpsessid|aspsessionid\w*|sessionid|session_id|sid|csrf[\w-]*|xsrf[\w-]*|_token|"
    r"authenticity_token|__requestverificationtoken)(\s*[=:]\s*)[\"']?[\w\-+/.%]{6,}[\"']?",
    re.IGNORECASE,
)
_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"), None)


def _squash(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def normalise(text: str) -> str:
    """Text with volatile boilerplate removed and whitespace canonical (one space inside a
    line, no empty lines). Idempotent, so a stored normalised text re-hashes the same."""
    text = _squash(unicodedata.normalize("NFC", text).translate(_INVISIBLE).replace("\u00a0", " "))
    # Removing one widget can bring two pieces of text together that form another; repeat
    # until nothing changes so that normalise(normalise(x)) == normalise(x).
    for _ in range(8):
        before = text
        text = _WIDGET.sub("", text)
        text = _AGO.sub("", text)
        text = _SESSION.sub(lambda m: m.group(1) + "=*", text)
        text = _squash(text)
        if text == before:
            break
    return text


def content_hash(text: str) -> str:
    """sha256 hex of the normalised text: equal hashes mean nothing worth reporting changed."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in normalise(text).split("\n"):
        out.extend(s for s in _SENTENCE_END.split(line) if s)
        if len(out) >= MAX_SENTENCES:
            break
    return out[:MAX_SENTENCES]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - 1, 0)].rstrip() + "…"


def diff_summary(old: str, new: str, *, max_chars: int = 300) -> str:
    """Removed sentences as ``- ...`` and added ones as ``+ ...``, in page order, one per
    line, cut to ``max_chars``; '' when nothing changed."""
    before, after = _sentences(old), _sentences(new)
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    lines: list[str] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        lines += [f"- {s}" for s in before[i1:i2]]
        lines += [f"+ {s}" for s in after[j1:j2]]
    if not lines:
        return ""
    each = max(max_chars // 2, 40)
    return _clip("\n".join(_clip(line, each) for line in lines), max_chars)
