"""Decides what the bundled demo web holds: each site read from its folder under ``demo/sites/``.

A site folder has a ``site.yaml`` manifest (path -> file and behaviour) and content files.
Text files are templates: ``{{field}}`` (an item field, HTML-escaped; ``|raw``, ``|json``,
``|paras``, ``|rfc822`` filters), ``{{each:<data.yaml>:<item template>[:field=value]}}``
(one rendering per item), ``{{include:<file>}}`` (with the current item), and ``{{base}}`` /
``{{url:<site>}}`` which the server fills per request once the ports are known.
"""
from __future__ import annotations

import functools
import html
import json
import re
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from email.utils import format_datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

from heed_core.errors import ConfigError

from heed.demo.site import Hit, Route, Site, challenge

__all__ = ["SITES_DIR", "SITE_ORDER", "SiteError", "demo_sites", "load_site"]

SITES_DIR = Path(__file__).with_name("sites")
# Order fixes the addresses: the first site gets 127.0.0.10, the next .11, ...
SITE_ORDER = (
    "nyheter", "jsapp",                                                 # SpringStudioBot
    "praha-feeds", "praha-top-redirect", "praha-top-plain", "praha-top-challenge",  # Praha-X
    "theater",                                                          # WannadoBot
    "gemeente", "gemeente-storing",                                     # SubsidieUpdate
    "aube-feeds", "aube-atom", "aube-busy",                             # AubeBot
)

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".xml": "application/xml; charset=utf-8",
    ".json": "application/json",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".png": "image/png",
    ".ico": "image/x-icon",
}
_BINARY = frozenset({".png", ".ico"})
_ROUTE_KEYS = frozenset({
    "file", "type", "status", "headers", "conditional", "last_modified", "gzip", "precompressed",
    "redirect", "retry_after", "challenge", "dynamic", "changes",
})
_TOKEN = re.compile(r"\{\{\s*([^{}|\s]+)\s*(?:\|\s*([a-z0-9]+)\s*)?\}\}")


def _yaml(text: str) -> Any:
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


class SiteError(ConfigError, ValueError):
    """A site folder that cannot be loaded (a bug in the bundled data, not a runtime condition)."""

    code = "bad_site"


def _text(value: Any) -> str:
    return " ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def _rfc822(value: Any) -> str:
    return format_datetime(datetime.fromisoformat(str(value)))


_FILTERS: dict[str, Callable[[Any], str]] = {
    "html": lambda v: html.escape(_text(v), quote=True),
    "raw": _text,
    # Safe inside <script type="application/ld+json">: no "</" can close the element.
    "json": lambda v: json.dumps(v, ensure_ascii=False).replace("</", "<\\/"),
    "paras": lambda v: "\n".join(f"<p>{html.escape(str(p))}</p>" for p in (v if isinstance(v, list) else [v])),
    "rfc822": _rfc822,
}


def fill(template: str, values: Mapping[str, Any]) -> str:
    """Replace the tokens whose name is in ``values``; leave every other token in place."""
    def one(m: re.Match[str]) -> str:
        name, flt = m.group(1), m.group(2) or "html"
        if name not in values:
            return m.group(0)
        if flt not in _FILTERS:
            raise SiteError(f"unknown filter {flt!r} in {m.group(0)}")
        return _FILTERS[flt](values[name])
    return _TOKEN.sub(one, template)


def _epoch(value: Any) -> float:
    if isinstance(value, datetime):
        return value.timestamp()
    return datetime.fromisoformat(str(value)).timestamp()


def _subsidy_page(template: str, spec: Mapping[str, Any]) -> Callable[[Hit], str]:
    """A municipal CMS page: a "Laatst bezocht op" widget that differs at every request
    (SUBSIDIE-04 must not see it as a change), and ``changes``: values that take their
    n-th form at the n-th request, the last one staying (a real change after the first visit)."""
    changes: Mapping[str, list[str]] = spec.get("changes") or {}

    def body(hit: Hit) -> str:
        values: dict[str, Any] = {k: v[min(hit.n, len(v)) - 1] for k, v in changes.items()}
        values["laatst_bezocht"] = time.strftime("%d-%m-%Y om %H:%M:%S", time.localtime(hit.now))
        values["bezoek"] = str(hit.n)
        return fill(template, values)
    return body


_DYNAMIC: dict[str, Callable[[str, Mapping[str, Any]], Callable[[Hit], str]]] = {
    "subsidy": _subsidy_page,
}


class _Folder:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._data: dict[str, list[dict[str, Any]]] = {}

    def read(self, name: str) -> str:
        try:
            return (self.folder / name).read_text("utf-8")
        except OSError as exc:
            raise SiteError(f"{self.folder.name}: cannot read {name}") from exc

    def items(self, name: str, defaults: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        if name not in self._data:
            data = _yaml(self.read(name))
            items = data.get("items") if isinstance(data, dict) else data
            if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
                raise SiteError(f"{self.folder.name}/{name}: expected a list of items")
            self._data[name] = items
        return [{**(defaults or {}), **item} for item in self._data[name]]

    def expand(self, text: str, item: Mapping[str, Any]) -> str:
        def each(m: re.Match[str]) -> str:
            parts = m.group(1).split(":")
            if len(parts) not in (3, 4):
                raise SiteError(f"bad each token {m.group(0)}")
            items = self.items(parts[1])
            if len(parts) == 4:
                field, _, want = parts[3].partition("=")
                items = [i for i in items if str(i.get(field)) == want]
            sub = self.read(parts[2])
            return "".join(self.expand(sub, i) for i in items)
        def one(m: re.Match[str]) -> str:
            name = m.group(1)
            if name.startswith("each:"):
                return each(m)
            if name.startswith("include:"):
                return self.expand(self.read(name[len("include:"):]), item)
            return m.group(0)
        return fill(_TOKEN.sub(one, text), item)

    def body(self, name: str, item: Mapping[str, Any]) -> tuple[bytes | str, str]:
        suffix = Path(name).suffix
        ctype = _TYPES.get(suffix, "application/octet-stream")
        if suffix in _BINARY:
            return (self.folder / name).read_bytes(), ctype
        return self.expand(self.read(name), item), ctype

    def route(self, spec: Any, item: Mapping[str, Any]) -> Route:
        if isinstance(spec, str):
            spec = {"file": spec}
        if not isinstance(spec, dict) or set(spec) - _ROUTE_KEYS:
            raise SiteError(f"{self.folder.name}: bad route {spec!r}")
        if spec.get("challenge"):
            return challenge()
        body: bytes | str | Callable[[Hit], str] = ""
        ctype = "text/html; charset=utf-8"
        if "file" in spec:
            body, ctype = self.body(spec["file"], item)
        headers = [(str(k), str(v)) for k, v in (spec.get("headers") or {}).items()]
        if spec.get("retry_after") is not None:
            headers.append(("Retry-After", str(spec["retry_after"])))
        if spec.get("dynamic"):
            if spec["dynamic"] not in _DYNAMIC or not isinstance(body, str):
                raise SiteError(f"{self.folder.name}: bad dynamic route {spec!r}")
            body = _DYNAMIC[spec["dynamic"]](body, spec)
        if spec.get("precompressed"):
            ctype = "application/gzip"
        redirect = spec.get("redirect")
        return Route(
            body=body,
            status=int(spec.get("status", 301 if redirect else 200)),
            content_type=str(spec.get("type", ctype)),
            headers=tuple(headers),
            conditional=bool(spec.get("conditional", False)),
            last_modified=_epoch(spec["last_modified"]) if spec.get("last_modified") else None,
            gzip=bool(spec.get("gzip", False)),
            precompressed=bool(spec.get("precompressed", False)),
            location=redirect,
        )


@functools.lru_cache(maxsize=64)
def load_site(name: str, root: Path = SITES_DIR) -> Site:
    """One site, read once per process (a Site is immutable; servers copy its routes)."""
    folder = _Folder(root / name)
    manifest = _yaml(folder.read("site.yaml")) or {}
    routes: dict[str, Route] = {}
    for path, spec in (manifest.get("routes") or {}).items():
        routes[str(path)] = folder.route(spec, {})
    for coll in manifest.get("collections") or []:
        for item in folder.items(coll["data"], coll.get("defaults")):
            path = fill(coll["path"], item)
            spec = {**(coll.get("route") or {}), "file": coll["file"], **(item.get("route") or {})}
            routes[path] = folder.route(spec, item)
    fallback = folder.route(manifest["fallback"], {}) if manifest.get("fallback") else None
    return Site(name=name, routes=MappingProxyType(routes), fallback=fallback,
                description=str(manifest.get("description", "")))


def demo_sites(names: tuple[str, ...] = SITE_ORDER) -> list[Site]:
    return [load_site(n) for n in names]
