"""HTML text that is safe as it is (``Markup``) and everything else escaped exactly once (``e``):
the desk's pages are built of these, so a pasted line, a host name or a path can never become
markup."""
from __future__ import annotations

import string
from html import escape

__all__ = ["Markup", "e", "join", "say", "tag"]

_FORMATTER = string.Formatter()


class Markup(str):
    """A string of HTML that needs no escaping (made by this module's functions only)."""


def e(value: object) -> Markup:
    """``value`` as HTML text: escaped, unless it is ``Markup`` already."""
    if isinstance(value, Markup):
        return value
    return Markup(escape(str(value), quote=True))


def join(parts: list[Markup] | tuple[Markup, ...], sep: str = "") -> Markup:
    return Markup(e(sep).join(e(p) for p in parts))


def say(template: str, **values: object) -> Markup:
    """A sentence of the language files with its ``{name}`` filled in: the sentence's own words
    and every value escaped (a value that is ``Markup`` goes in as it is: a link, a code)."""
    out: list[str] = []
    for literal, name, spec, _conv in _FORMATTER.parse(template):
        if literal:
            out.append(e(literal))
        if name is None:
            continue
        value = values.get(name, "{" + name + "}")
        out.append(e(value) if isinstance(value, Markup) else e(format(value, spec or "")))
    return Markup("".join(out))


def tag(element: str, body: object = "", /, **attrs: object) -> Markup:
    """``<element attr="...">body</element>``: attribute values escaped; ``body`` escaped unless
    Markup; an attribute of value True is written bare, False or None left out (``class_`` is
    ``class``, ``data_x`` is ``data-x``)."""
    parts = [element]
    for key, value in attrs.items():
        if value is None or value is False:
            continue
        attr = key.rstrip("_").replace("_", "-")
        parts.append(attr if value is True else f'{attr}="{e(value)}"')
    if element in ("input", "meta", "br", "link"):
        return Markup(f"<{' '.join(parts)}>")
    return Markup(f"<{' '.join(parts)}>{e(body)}</{element}>")
