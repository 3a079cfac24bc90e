"""Decides the two facts a weekly site check keeps from a home page: the site's name and its icon URL."""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from heed_core.extract.pages import MAX_TITLE, absolute_http, meta_content
from heed_core.extract.safexml import parse_html

__all__ = ["SiteInfo", "default_icon_url", "site_info"]

_WS = re.compile(r"\s+")


@dataclass(frozen=True)
class SiteInfo:
    """PRAHA-04: the caller stores this and none of the home page content."""

    name: str | None
    icon_url: str
    error: str | None = None


def default_icon_url(base_url: str) -> str:
    """``/favicon.ico`` on the origin of ``base_url``."""
    parts = urlsplit(base_url)
    return urlunsplit((parts.scheme or "https", parts.netloc, "/favicon.ico", "", ""))


def site_info(
    body: bytes, *, base_url: str, max_bytes: int = 5 * 2**20, content_type: str | None = None
) -> SiteInfo:
    """Name from ``og:site_name``, else ``<title>``; icon from ``<link rel="icon">``
    (``shortcut icon`` included), else ``apple-touch-icon``, else ``/favicon.ico``
    on the origin. Never raises; an unreadable page still yields the default icon."""
    fallback_icon = default_icon_url(base_url)
    doc = parse_html(body, max_bytes=max_bytes, content_type=content_type)
    if doc.root is None:
        return SiteInfo(name=None, icon_url=fallback_icon, error=doc.error)
    root = doc.root
    name = meta_content(root, "og:site_name")
    if not name:
        for el in root.iter("title"):
            name = _WS.sub(" ", el.text_content()).strip()[:MAX_TITLE].rstrip() or None
            break
    base = base_url
    for el in root.iter("base"):
        base = absolute_http(el.get("href"), base_url) or base_url
        break
    icon: str | None = None
    touch_icon: str | None = None
    for el in root.iter("link"):
        rel = (el.get("rel") or "").lower().split()
        href = absolute_http(el.get("href"), base)  # data: icons are not fetchable: skipped
        if href is None:
            continue
        if "icon" in rel and icon is None:
            icon = href
        elif any(r.startswith("apple-touch-icon") for r in rel) and touch_icon is None:
            touch_icon = href
    return SiteInfo(name=name, icon_url=icon or touch_icon or fallback_icon)
