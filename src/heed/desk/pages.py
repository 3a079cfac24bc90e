"""The desk's pages: the info page's look (its CSS, one column on a phone), the bot's language or
English (the desk's words in ``heed/pages/languages/*.yaml``, or the bot's own file), forms that
need no script, and every value escaped exactly once (``heed.desk.markup``)."""
from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from heed_core.desk.loglines import MAX_BYTES, MAX_LINES, BadLine
from heed_core.desk.proof import ProofOutcome
from heed_core.desk.verdicts import Verdict
from heed_core.profile import Profile

from heed.desk.markup import Markup, e, join, say, tag
from heed.pages.language import Language
from heed.pages.language import of as language_of
from heed.pages.render import CSS as INFO_CSS

__all__ = ["CSP", "Words", "page"]

DESK_CSS = """\
form{margin:.6rem 0 1rem}
label{display:block;font-weight:600;margin:.9rem 0 .3rem}
input[type=text],textarea,select{width:100%;max-width:100%;font:inherit;font-size:1rem;padding:.5rem .6rem;
border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg)}
textarea{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,"Liberation Mono",monospace;font-size:.85rem;
min-height:7.5rem;line-height:1.4}
textarea.short{min-height:4rem}
.choices label{display:inline;font-weight:400;margin:0 1rem 0 .2rem}
button{font:inherit;font-weight:600;padding:.6rem 1.1rem;margin-top:.9rem;border:0;border-radius:6px;
background:var(--link);color:var(--bg);cursor:pointer;max-width:100%}
button.danger{background:#a1261b;color:#fff}
.hint{color:var(--muted);font-size:.92rem;margin:.25rem 0}
.verdict{border:1px solid var(--line);border-left-width:6px;border-radius:8px;padding:.6rem .9rem;margin:.9rem 0}
.verdict.ours{border-left-color:#1b7f3b}.verdict.not-ours{border-left-color:#a1261b}
.badge{display:inline-block;font-weight:700;padding:.05rem .55rem;border-radius:4px;color:#fff}
.ours .badge{background:#1b7f3b}.not-ours .badge{background:#a1261b}
.verdict ul{list-style:none;padding-left:0;margin:.4rem 0 0}
.verdict li.yes::before{content:"\\2713\\00a0";color:#1b7f3b;font-weight:700}
.verdict li.no::before{content:"\\2717\\00a0";color:#a1261b;font-weight:700}
.verdict li.none::before{content:"\\2013\\00a0";color:var(--muted)}
.line{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.82rem;color:var(--muted);overflow-wrap:anywhere;
margin:.3rem 0 0}
.note{background:var(--box);padding:.7rem .9rem;border-radius:6px;margin:1rem 0}
.problem{border-left:4px solid #a1261b}
.done{border-left:4px solid #1b7f3b}
.token{display:block;font-family:ui-monospace,Menlo,Consolas,monospace;background:var(--box);padding:.6rem .8rem;
border-radius:6px;overflow-wrap:anywhere;user-select:all}
.scroll{overflow-x:auto}
table{width:100%;border-collapse:collapse;font-size:.88rem}
th,td{text-align:left;padding:.35rem .4rem;border-bottom:1px solid var(--line);vertical-align:top}
td.path{overflow-wrap:anywhere;font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.82rem}
td.time{white-space:nowrap}
@media (max-width:30rem){th.why,td.why{display:none}}
"""
STYLE = INFO_CSS + DESK_CSS
# The one inline style, allowed by its hash: the pages run no script and load nothing.
CSP = ("default-src 'none'; style-src 'sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
       + "'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")


@dataclass(frozen=True)
class Words:
    """The desk's words in one language, and where its pages are (``base``: /desk or /desk/en)."""

    lang: Language
    base: str
    other: tuple[Language, str] | None  # the other language and its base

    def __call__(self, key: str, **values: object) -> Markup:
        return say(self.lang.desk.get(key, key), **values)


def words(profile: Profile, lang: str, prefix: str) -> Words:
    """The desk's words in ``lang`` (the bot's language, or English)."""
    mine = language_of(profile, profile.language)
    if lang == profile.language:
        other = (language_of(profile, "en"), f"{prefix}/en") if profile.language != "en" else None
        return Words(mine, prefix, other)
    return Words(language_of(profile, "en"), f"{prefix}/en", (mine, prefix))


def _link(href: str, text: object | None = None) -> Markup:
    return tag("a", text if text is not None else href, href=href)


def _contact(profile: Profile) -> Markup:
    c = profile.contact
    return _link(c if c.startswith(("http://", "https://")) else f"mailto:{c}", c)


def page(profile: Profile, w: Words, body: Sequence[Markup], *, title: str | None = None,
         refresh: str | None = None) -> str:
    """A whole document: the shell (title, lead, language switch, footer with a human's contact)
    around ``body``."""
    heading = say(w.lang.desk["title"], token=profile.robots_token)
    head = [Markup("<!doctype html>"), Markup(f'<html lang="{e(w.lang.tag)}">'), Markup("<head>"),
            tag("meta", charset="utf-8"),
            tag("meta", name="viewport", content="width=device-width, initial-scale=1"),
            tag("meta", name="color-scheme", content="light dark"),
            tag("meta", name="robots", content="noindex, nofollow"),
            tag("meta", name="referrer", content="no-referrer")]
    if refresh:
        head.append(tag("meta", http_equiv="refresh", content=f"3; url={refresh}"))
    head += [tag("title", title or heading), Markup(f"<style>{STYLE}</style>"), Markup("</head>")]
    top = [Markup("<body>"), Markup("<header>")]
    if w.other is not None:
        lang, base = w.other
        top.append(tag("nav", tag("a", lang.name, href=f"{base}/", hreflang=lang.tag, lang=lang.tag),
                       class_="lang", aria_label=w.lang.sentences.get("switch_label", "Language")))
    top += [tag("h1", tag("a", heading, href=f"{w.base}/", style=None)),
            tag("p", w("lead", token=profile.robots_token), class_="lead"), Markup("</header>"), Markup("<main>")]
    foot = [Markup("</main>"), Markup("<footer>"), tag("p", w("contact", contact=_contact(profile))),
            tag("p", w("info", link=_link(profile.info_url))), Markup("</footer>"), Markup("</body></html>")]
    return "\n".join([*head, *top, *body, *foot]) + "\n"


def _hidden(name: str, value: str) -> Markup:
    return tag("input", type="hidden", name=name, value=value)


def _form(w: Words, action: str, csrf: str, inner: Sequence[Markup], button: Markup, *,
          danger: bool = False) -> Markup:
    return tag("form", join([_hidden("csrf", csrf), *inner,
                             tag("button", button, type="submit", class_="danger" if danger else None)]),
               method="post", action=f"{w.base}/{action}")


def notice(text: Markup, kind: str = "note") -> Markup:
    return tag("p", text, class_=f"note {kind}" if kind != "note" else "note", role="status")


# --- home: the two questions ----------------------------------------------------------------------

def lines_form(w: Words, csrf: str, host: str = "", paste: str = "", signature: str = "") -> Markup:
    inner = [tag("label", w("l_host"), for_="host"),
             tag("input", type="text", id="host", name="host", value=host, required=True, autocomplete="url",
                 inputmode="url", placeholder=w.lang.desk.get("host_hint", "")),
             tag("label", w("l_lines"), for_="lines"),
             tag("textarea", paste, id="lines", name="lines", required=True, spellcheck="false", wrap="off",
                 maxlength=MAX_BYTES),
             tag("p", w("lines_hint", lines=MAX_LINES, kb=MAX_BYTES // 1024), class_="hint"),
             tag("label", w("l_signature"), for_="signature"),
             tag("textarea", signature, id="signature", name="signature", class_="short", spellcheck="false")]
    return _form(w, "lines", csrf, inner, w("b_lines"))


def token_form(w: Words, csrf: str, host: str = "", dns: bool = False) -> Markup:
    inner = [tag("label", w("l_host"), for_="proof-host"),
             tag("input", type="text", id="proof-host", name="host", value=host, required=True, inputmode="url",
                 placeholder=w.lang.desk.get("host_hint", ""))]
    if dns:
        inner += [tag("p", join([w("l_method"), Markup(": "),
                                 tag("input", type="radio", id="m-file", name="method", value="http", checked=True),
                                 tag("label", w("m_file"), for_="m-file"),
                                 tag("input", type="radio", id="m-dns", name="method", value="dns"),
                                 tag("label", w("m_dns"), for_="m-dns")]), class_="choices")]
    else:
        inner.append(_hidden("method", "http"))
    return _form(w, "token", csrf, inner, w("b_token"))


def home(profile: Profile, w: Words, csrf: str, *, dns: bool, problem: Markup | None = None,
         lines: Markup | None = None, host: str = "", paste: str = "", signature: str = "") -> str:
    body: list[Markup] = []
    if problem is not None:
        body.append(notice(problem, "problem"))
    body += [Markup('<section id="ask" aria-labelledby="ask-h">'), tag("h2", w("h_lines"), id="ask-h"),
             tag("p", w("lines_intro"))]
    if lines is not None:
        body.append(lines)
    body += [lines_form(w, csrf, host, paste, signature), Markup("</section>"),
             Markup('<section id="prove" aria-labelledby="prove-h">'), tag("h2", w("h_prove"), id="prove-h"),
             tag("p", w("prove_intro")), token_form(w, csrf, host, dns), Markup("</section>")]
    return page(profile, w, body)


_WHY = ("too_long", "not_a_log_line", "bad_address", "bad_time")


def verdicts(w: Words, found: Sequence[Verdict], bad: Sequence[BadLine]) -> Markup:
    out = [tag("h3", w("h_verdicts"), id="verdicts")]
    items: list[tuple[int, Markup]] = []
    for v in found:
        checks = []
        for c in v.checks:
            if c.name == "signature" and c.ok is None:
                continue
            state = "none" if c.ok is None else ("yes" if c.ok else "no")
            checks.append(tag("li", w(f"{c.name}_{state}"), class_=state))
        label = w("ours") if v.ours else w("not_ours")
        items.append((v.line.n, tag("div", join([
            tag("p", join([tag("span", label, class_="badge"), Markup(" "), tag("strong", w("line", n=v.line.n))])),
            tag("p", v.line.raw[:400], class_="line"), tag("ul", join(checks))]),
            class_="verdict " + ("ours" if v.ours else "not-ours"), data_verdict="ours" if v.ours else "not-ours")))
    for b in bad:
        why = w(f"why_{b.reason}") if b.reason in _WHY else e(b.reason)
        items.append((b.n, tag("div", join([tag("p", w("bad_line", n=b.n, why=why)),
                                            tag("p", b.raw[:400], class_="line")]),
                               class_="verdict not-ours", data_verdict="unreadable")))
    out += [m for _, m in sorted(items, key=lambda x: x[0])]
    return join(out)


# --- the proof ---------------------------------------------------------------------------------------

def placed(profile: Profile, w: Words, csrf: str, text: str, where: str, method: str, host: str,
           until: float) -> str:
    if method == "dns":
        how = [tag("p", w("place_dns", name=tag("code", where))), tag("code", f"heed-desk={text}", class_="token",
                                                                      id="token")]
    else:
        how = [tag("p", w("place_file", url=tag("code", where))), tag("code", text, class_="token", id="token")]
    body = [Markup('<section id="place">'), tag("h2", w("h_place")), *how,
            tag("p", w("place_then", host=host, until=_time(until))),
            _form(w, "check", csrf, [_hidden("token", text)], w("b_read")), Markup("</section>")]
    return page(profile, w, body)


_FAILED = {"status": "f_status", "content": "f_content", "robots_disallowed": "f_robots_disallowed",
           "private_address": "f_private_address", "blocked_by_operator": "f_blocked_by_operator",
           "dns_no_answer": "f_dns_no_answer", "dns_no_match": "f_dns_no_match", "expired": "f_expired",
           "used_once": "f_used", "another_browser": "f_not_yours", "no_dns": "f_no_dns", "asks": "f_asks"}


def proof_problem(w: Words, outcome: ProofOutcome, where: str) -> Markup:
    key = _FAILED.get(outcome.reason)
    if key is None:
        return w("f_other", reason=outcome.reason)
    if key == "f_status" and outcome.status is None:
        return w("f_no_answer")
    return w(key, status=outcome.status or "", name=tag("code", where))


def waiting(profile: Profile, w: Words, csrf: str, text: str, where: str, refresh: str) -> str:
    body = [Markup('<section id="waiting">'), tag("h2", w("h_waiting")),
            notice(w("waiting", url=tag("code", where))),
            _form(w, "check", csrf, [_hidden("token", text)], w("b_read")), Markup("</section>")]
    return page(profile, w, body, refresh=refresh)


def failed(profile: Profile, w: Words, csrf: str, text: str, problem: Markup, retry: bool, host: str) -> str:
    body = [notice(problem, "problem")]
    if retry:
        body.append(_form(w, "check", csrf, [_hidden("token", text)], w("b_read")))
    body += [tag("h2", w("h_prove")), token_form(w, csrf, host)]
    return page(profile, w, body)


# --- the proven site ----------------------------------------------------------------------------------

def _time(t: float | str | None) -> str:
    if t is None or t == "":
        return "-"
    if isinstance(t, str):
        try:
            stamp = datetime.fromisoformat(t.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return t
    else:
        stamp = float(t)
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%d %H:%M:%S")


def _audit(w: Words, rows: Sequence[Mapping[str, Any]], limit: int) -> Markup:
    if not rows:
        return tag("p", w("no_requests"))
    head = tag("tr", join([tag("th", w("l_time")), tag("th", w("l_path")), tag("th", w("l_status")),
                           tag("th", w("l_why"), class_="why")]))
    body = []
    for r in rows:
        status = r.get("status") if r.get("status") is not None else r.get("error", "-")
        why = " · ".join(str(x) for x in (r.get("purpose"), r.get("source")) if x)
        body.append(tag("tr", join([tag("td", _time(r.get("t_start")), class_="time"),
                                    tag("td", r.get("path") or "/", class_="path"), tag("td", status),
                                    tag("td", why, class_="why")])))
    return join([tag("p", w("site_intro", n=limit)),
                 tag("div", tag("table", join([tag("thead", head), tag("tbody", join(body))]), id="audit"),
                     class_="scroll")])


def _explain(w: Words, x: Mapping[str, Any] | None, url: str) -> Markup:
    if x is None or "seen" not in x:
        return tag("div", join([tag("p", tag("code", url)), tag("p", w("e_never"))]), class_="note", id="explained")
    out = [tag("p", tag("code", x.get("url", url)))]
    seen = x.get("seen") or {}
    if seen.get("last_fetched"):
        out.append(tag("p", w("e_seen", time=_time(seen["last_fetched"]), status=seen.get("last_status") or "-")))
    else:
        out.append(tag("p", w("e_never")))
    found = [str(f.get("purpose") or f.get("as") or "") + (f" · {f['source']}" if f.get("source") else "")
             for f in x.get("found") or []]
    if found:
        out.append(tag("p", w("e_found", what=join([tag("code", f) for f in found], ", "))))
    robots = x.get("robots") or {}
    if "allowed" in robots:
        rule = robots.get("rule") or "-"
        key = "e_robots_allows" if robots["allowed"] else "e_robots_disallows"
        out.append(tag("p", w(key, rule=tag("code", rule))))
    now = x.get("now") or {}
    if now.get("action") in ("fetch", "fetch_first"):
        out.append(tag("p", w("e_now_fetch")))
    elif now.get("action") == "wait":
        out.append(tag("p", w("e_now_wait", until=_time(now.get("until")), why=tag("code", now.get("why", "")))))
    elif now.get("action") == "skip":
        out.append(tag("p", w("e_now_skip", why=tag("code", now.get("reason", "")))))
    pacing = x.get("pacing") or {}
    if pacing.get("effective_delay_s") is not None:
        out.append(tag("p", w("e_gap", seconds=f"{float(pacing['effective_delay_s']):g}")))
    return tag("div", join(out), class_="note", id="explained")


def site(profile: Profile, w: Words, csrf: str, shown: str, name: str, rows: Sequence[Mapping[str, Any]],
         kept: Mapping[str, int], limit: int, gaps: Sequence[int], *, done: Markup | None = None,
         problem: Markup | None = None, explained: Markup | None = None, url: str = "") -> str:
    body: list[Markup] = []
    if done is not None:
        body.append(notice(done, "done"))
    if problem is not None:
        body.append(notice(problem, "problem"))
    body += [Markup('<section id="site">'), tag("h2", w("h_site", host=shown)), _audit(w, rows, limit),
             tag("h3", w("h_kept")), tag("p", w("kept", urls=kept.get("urls", 0), texts=kept.get("texts", 0),
                                                   sources=kept.get("sources", 0)), id="kept"),
             tag("h3", w("h_explain"))]
    if explained is not None:
        body.append(explained)
    body += [_form(w, "explain", csrf, [tag("label", w("l_url"), for_="url"),
                                        tag("input", type="text", id="url", name="url", value=url, required=True,
                                            inputmode="url")], w("b_explain")),
             Markup("</section>"), Markup('<section id="actions">'), tag("h2", w("h_actions")),
             tag("p", w("stop_note", host=name)), _form(w, "stop", csrf, [], w("b_stop"), danger=True)]
    if gaps:
        options = join([tag("option", w("seconds", n=g), value=str(g)) for g in gaps])
        body += [tag("p", w("slow_note", seconds=f"{profile.politeness.min_delay_s:g}")),
                 _form(w, "slow", csrf, [tag("label", w("l_gap"), for_="gap"),
                                         tag("select", options, id="gap", name="gap")], w("b_slow"))]
    body += [tag("p", w("remove_note", host=name)), _form(w, "remove", csrf, [], w("b_remove"), danger=True),
             Markup("</section>")]
    return page(profile, w, body)


def explained(w: Words, x: Mapping[str, Any] | None, url: str) -> Markup:
    return _explain(w, x, url)


def done(profile: Profile, w: Words, kind: str, shown: str, detail: Mapping[str, Any]) -> Markup:
    if kind == "stop":
        text = w("done_stop", host=shown)
    elif kind == "slow":
        text = w("done_slow", host=shown, seconds=detail.get("min_delay_s"))
    else:
        text = w("done_remove", host=shown, items=detail.get("items", 0), texts=detail.get("texts", 0))
    return join([text, Markup(" "), w("done_told", contact=_contact(profile))])


def error_page(profile: Profile, w: Words, problem: Markup) -> str:
    return page(profile, w, [notice(problem, "problem"), tag("p", tag("a", w("b_lines"), href=f"{w.base}/"))])
