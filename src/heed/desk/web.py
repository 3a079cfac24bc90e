"""The desk as a WSGI application (PEP 3333, the standard library's): forms in, pages out.

What it guards, before anything else: a method other than GET, HEAD or POST (405); a POST body
that is not a form, has no length, or is bigger than the desk takes (411, 413: refused by its
Content-Length, never read); a form whose CSRF token is not the browser's (403); a client that
asks too often (429). Every page says ``no-store``, runs no script (its Content-Security-Policy
allows its one inline style and nothing else), is never framed and sends no referrer. The only
redirects go to the desk's own fixed paths."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qs, quote

from heed_core.desk.loglines import MAX_BYTES
from heed_core.errors import HeedError
from heed_core.profile import Profile

from heed.desk import pages
from heed.desk.service import SESSION_S, Desk, DeskRefusal, Visitor, gap_choices

__all__ = ["COOKIE", "MAX_BODY", "PREFIX", "SESSION_COOKIE", "DeskApp"]

PREFIX = "/desk"
COOKIE = "heed_desk"  # the browser's desk cookie: its CSRF token's and its proof tokens' anchor
SESSION_COOKIE = "heed_desk_site"  # a proven host, for SESSION_S
MAX_BODY = MAX_BYTES + 16 * 1024  # the paste and the other fields of its form
_COOKIE_S = 86400 * 30
StartResponse = Callable[..., Any]
_STATUS = {200: "200 OK", 303: "303 See Other", 400: "400 Bad Request", 403: "403 Forbidden", 404: "404 Not Found",
           405: "405 Method Not Allowed", 411: "411 Length Required", 413: "413 Content Too Large",
           415: "415 Unsupported Media Type", 429: "429 Too Many Requests", 503: "503 Service Unavailable"}


@dataclass
class Request:
    method: str
    path: str
    query: Mapping[str, list[str]]
    form: Mapping[str, list[str]]
    cookies: Mapping[str, str]
    client: str
    secure: bool

    def field(self, name: str) -> str:
        values = self.form.get(name) or self.query.get(name) or [""]
        return values[0]


@dataclass
class Response:
    status: int
    body: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)


class DeskApp:
    """The desk of ``desk`` as a WSGI callable. ``forwarded``: the client's address is the last
    one of X-Forwarded-For (behind a proxy of the operator's, which must set it); ``client_of``
    (the AWS adapter's) reads it from the environ instead; ``clock`` the wall clock."""

    def __init__(self, desk: Desk, *, prefix: str = PREFIX, forwarded: bool = False,
                 clock: Callable[[], float] = time.time, client_of: Callable[[Mapping[str, Any]], str] | None = None
                 ) -> None:
        self.desk = desk
        self.profile: Profile = desk.profile
        self.prefix = prefix.rstrip("/")
        self.forwarded = forwarded
        self.clock = clock
        self.client_of = client_of

    # --- WSGI ----------------------------------------------------------------------------------------
    def __call__(self, environ: Mapping[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        response, new_cookie = self._handle(environ)
        body = response.body.encode("utf-8")
        headers = [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                   ("Content-Security-Policy", pages.CSP), ("X-Content-Type-Options", "nosniff"),
                   ("X-Frame-Options", "DENY"), ("Referrer-Policy", "no-referrer"),
                   ("Content-Length", str(len(body))), *response.headers]
        if new_cookie is not None:
            headers.append(("Set-Cookie", self._cookie(COOKIE, new_cookie, _COOKIE_S, environ)))
        start_response(_STATUS.get(response.status, f"{response.status} Error"), headers)
        return [b""] if environ.get("REQUEST_METHOD") == "HEAD" else [body]

    def _cookie(self, name: str, value: str, max_age: float, environ: Mapping[str, Any]) -> str:
        secure = "; Secure" if self._secure(environ) else ""
        return f"{name}={value}; Path={self.prefix}/; Max-Age={int(max_age)}; HttpOnly; SameSite=Lax{secure}"

    def _secure(self, environ: Mapping[str, Any]) -> bool:
        if environ.get("wsgi.url_scheme") == "https":
            return True
        return self.forwarded and environ.get("HTTP_X_FORWARDED_PROTO", "") == "https"

    def _client(self, environ: Mapping[str, Any]) -> str:
        if self.client_of is not None:
            return self.client_of(environ)
        if self.forwarded:
            hops = [h.strip() for h in str(environ.get("HTTP_X_FORWARDED_FOR", "")).split(",") if h.strip()]
            if hops:
                return hops[-1]
        return str(environ.get("REMOTE_ADDR") or "-")

    def _handle(self, environ: Mapping[str, Any]) -> tuple[Response, str | None]:
        method = str(environ.get("REQUEST_METHOD", "GET")).upper()
        path = str(environ.get("PATH_INFO") or "/")
        cookies = _cookies(str(environ.get("HTTP_COOKIE", "")))
        cookie = cookies.get(COOKIE, "")
        new_cookie = None
        if not (len(cookie) == 48 and all(c in "0123456789abcdef" for c in cookie)):
            cookie = new_cookie = self.desk.new_cookie()
        visitor = Visitor(client=self._client(environ), cookie=cookie, session=cookies.get(SESSION_COOKIE) or None)
        lang_base = self._base(path)
        w = pages.words(self.profile, lang_base[0], self.prefix)
        try:
            if method not in ("GET", "HEAD", "POST"):
                return Response(405, pages.error_page(self.profile, w, w("err_not_found")),
                                [("Allow", "GET, HEAD, POST")]), new_cookie
            self.desk.limit("page", "client", visitor.client, self.clock())
            form: Mapping[str, list[str]] = {}
            if method == "POST":
                form = self._form(environ)
            request = Request(method, path, parse_qs(str(environ.get("QUERY_STRING", "")), max_num_fields=8),
                              form, cookies, visitor.client, self._secure(environ))
            return self._route(request, visitor, w, lang_base[1], environ), new_cookie
        except DeskRefusal as exc:
            return Response(exc.status, pages.error_page(self.profile, w, w(exc.key, **exc.values))), new_cookie
        except HeedError:
            return Response(503, pages.error_page(self.profile, w, w("err_busy"))), new_cookie

    def _base(self, path: str) -> tuple[str, str]:
        """(language, the rest of the path after the language's base), or ("", "") off the desk."""
        if path in ("", "/") and self.prefix:
            return self.profile.language, "\x00root"
        if not (path == self.prefix or path.startswith(self.prefix + "/")):
            return self.profile.language, "\x00none"
        rest = path[len(self.prefix):] or "/"
        if self.profile.language != "en" and (rest == "/en" or rest.startswith("/en/")):
            return "en", rest[3:] or "/"
        return self.profile.language, rest

    def _form(self, environ: Mapping[str, Any]) -> Mapping[str, list[str]]:
        kind = str(environ.get("CONTENT_TYPE", "")).split(";")[0].strip().lower()
        length_text = str(environ.get("CONTENT_LENGTH") or "").strip()
        if not length_text.isdigit():
            raise DeskRefusal("err_too_big", 411, lines=0, kb=MAX_BODY // 1024)
        length = int(length_text)
        if length > MAX_BODY:
            # Refused by its length alone: not a byte of it is read.
            from heed_core.desk.loglines import MAX_LINES

            raise DeskRefusal("err_too_big", 413, lines=MAX_LINES, kb=MAX_BYTES // 1024)
        if kind != "application/x-www-form-urlencoded":
            raise DeskRefusal("err_csrf", 415)
        raw = environ["wsgi.input"].read(length) if length else b""
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DeskRefusal("err_csrf", 400) from exc
        try:
            return parse_qs(text, keep_blank_values=True, max_num_fields=16)
        except ValueError as exc:
            raise DeskRefusal("err_csrf", 400) from exc

    # --- routes --------------------------------------------------------------------------------------
    def _route(self, r: Request, v: Visitor, w: pages.Words, rest: str, environ: Mapping[str, Any]) -> Response:
        now = self.clock()
        csrf = self.desk.csrf(v)
        dns = self.desk.backend.has_resolver()
        if rest == "\x00root":
            return Response(303, "", [("Location", f"{self.prefix}/")])
        if rest == "\x00none":
            raise DeskRefusal("err_not_found", 404)
        if r.method == "POST" and not self.desk.csrf_ok(v, r.field("csrf")):
            raise DeskRefusal("err_csrf", 403)
        if rest == "/" and r.method != "POST":
            return Response(200, pages.home(self.profile, w, csrf, dns=dns))
        if rest == "/lines" and r.method == "POST":
            host, paste, signature = r.field("host"), r.field("lines"), r.field("signature")
            try:
                found = self.desk.lines(v, host, paste, signature, now)
            except DeskRefusal as exc:
                if exc.status == 429:
                    raise
                return Response(exc.status, pages.home(self.profile, w, csrf, dns=dns, problem=w(exc.key, **exc.values),
                                                       host=host, paste=paste[:MAX_BYTES], signature=signature))
            return Response(200, pages.home(self.profile, w, csrf, dns=dns, lines=pages.verdicts(w, found.verdicts,
                                                                                                 found.bad),
                                            host=host, paste=paste, signature=signature))
        if rest == "/token" and r.method == "POST":
            host = r.field("host")
            try:
                given = self.desk.give(v, host, r.field("method") or "http", now)
            except DeskRefusal as exc:
                if exc.status == 429:
                    raise
                return Response(exc.status, pages.home(self.profile, w, csrf, dns=dns,
                                                       problem=w(exc.key, **exc.values), host=host))
            shown = self.desk.scope_of(given.token).shown
            return Response(200, pages.placed(self.profile, w, csrf, given.text, given.where, given.token.method,
                                              shown, given.token.expires))
        if rest == "/check" and r.method in ("POST", "GET", "HEAD"):
            return self._check(r, v, w, csrf, ask=r.method == "POST", now=now, environ=environ)
        if rest == "/site" and r.method != "POST":
            if r.query.get("proven"):
                shown = self.desk.scope(self.desk.session(v, now)).shown
                return self._site(v, w, csrf, now, done=w("proven", host=shown, minutes=int(SESSION_S // 60)))
            return self._site(v, w, csrf, now)
        if rest == "/explain" and r.method == "POST":
            url = r.field("url")
            try:
                _, answer = self.desk.explain(v, url, now)
            except DeskRefusal as exc:
                if exc.key != "err_not_on_site":
                    raise
                return self._site(v, w, csrf, now, problem=w(exc.key, **exc.values), url=url)
            return self._site(v, w, csrf, now, explained=pages.explained(w, answer, url), url=url)
        if rest in ("/stop", "/slow", "/remove") and r.method == "POST":
            action = self.desk.act(v, rest[1:], now, gap=r.field("gap"))
            return self._site(v, w, csrf, now, done=pages.done(self.profile, w, action.kind, action.name,
                                                               action.detail))
        raise DeskRefusal("err_not_found", 404)

    def _site(self, v: Visitor, w: pages.Words, csrf: str, now: float, **extra: Any) -> Response:
        rows = 200
        found = self.desk.site(v, now, rows)
        scope = self.desk.scope(found.session)
        return Response(200, pages.site(self.profile, w, csrf, scope.shown, scope.name, found.rows, found.kept, rows,
                                        gap_choices(self.profile), **extra))

    def _check(self, r: Request, v: Visitor, w: pages.Words, csrf: str, *, ask: bool, now: float,
               environ: Mapping[str, Any]) -> Response:
        text = r.field("token").strip()[:200]
        checked = self.desk.check(v, text, ask, now)
        outcome = checked.outcome
        shown = self.desk.scope_of(checked.token).shown if checked.token is not None else ""
        if outcome.outcome == "proven" and checked.session is not None:
            cookie = self._cookie(SESSION_COOKIE, checked.session, SESSION_S, environ)
            return Response(303, "", [("Location", f"{w.base}/site?proven=1"), ("Set-Cookie", cookie)])
        if outcome.outcome == "waiting":
            refresh = f"{w.base}/check?token={quote(text, safe='')}"
            return Response(200, pages.waiting(self.profile, w, csrf, text, checked.where, refresh))
        retry = outcome.outcome == "failed" and outcome.reason not in ("asks", "no_dns")
        return Response(200 if outcome.outcome == "failed" else 400,
                        pages.failed(self.profile, w, csrf, text, pages.proof_problem(w, outcome, checked.where),
                                     retry, shown))


def _cookies(header: str) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:
        return {}
    return {k: m.value for k, m in jar.items()}
