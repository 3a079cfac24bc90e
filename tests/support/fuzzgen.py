"""Hypothesis strategies for what strangers serve: robots.txt files, feeds, sitemaps, pages with
robots, TDMRep, paywall and challenge signals, agenda pages with structured data. Each draws from
the pieces real files are made of (so examples reach deep into a parser), and sometimes from raw
bytes (so nothing is assumed)."""
from __future__ import annotations

import gzip
import json
from typing import Any

from hypothesis import strategies as st

__all__ = ["any_mapping", "feed_body", "headers", "html_body", "json_value", "robots_body", "robots_utf8",
           "sitemap_body", "url_like", "user_agent"]

_WEIRD = st.sampled_from(["", " ", "\t", "\x00", "\ufeff", "\ufffd", "é", "ß", "日本", "\u2028", "\x85", "&", "<", ">",
                          "\"", "'", "%", "%2A", "%24", "%2f", "%zz", "*", "$", "#", "?", "/", ":", ";", "\\"])
_text = st.text(st.characters(codec="utf-8"), max_size=20)
short_text = st.one_of(_text, _WEIRD, st.lists(_WEIRD, max_size=5).map("".join))

# --- URLs and agents ------------------------------------------------------------------------------

_path_piece = st.one_of(st.sampled_from(["a", "news", "public", "tie", "files", "doc.pdf", "x", "", "*", "$",
                                         "%2A", "%24", "%41", "%e9", "é", "..", ".", "~u", "a b", "?q=1", "#f"]),
                        short_text)
path = st.lists(_path_piece, max_size=6).map(lambda parts: "/" + "/".join(parts))
url_like = st.one_of(
    path,
    st.builds(lambda scheme, host, p: f"{scheme}://{host}{p}", st.sampled_from(["http", "https", "HTTP", "ftp", ""]),
              st.sampled_from(["h.example", "H.EXAMPLE:8080", "[::1]", "127.0.0.1", "", "x..y"]), path),
    short_text,
)
user_agent = st.one_of(st.sampled_from(["AubeBot", "aubebot", "AubeBot/0.1 (+https://aube.news/robot)", "Praha-X",
                                        "SpringStudioBot/1.0", "*", "Googlebot", "Aube", "AubeBotX", ""]),
                       short_text)

# --- robots.txt -------------------------------------------------------------------------------------

_directive = st.sampled_from(["User-agent", "user-agent", "USER-AGENT", "User agent", "useragent", "Allow", "allow",
                              "Disallow", "disallow", "Dissallow", "disalow", "Crawl-delay", "crawl delay",
                              "Sitemap", "site-map", "Content-Usage", "Noindex", "Host", "", "#"])
_value = st.one_of(path, user_agent, url_like,
                   st.sampled_from(["1", "0.5", "-1", "nan", "inf", "1e400", "+2", ".5", "10s", "", "/ train-ai=n"]),
                   short_text)
_sep = st.sampled_from([": ", ":", " ", "  :  ", "\t", ""])
_line = st.one_of(st.builds(lambda d, s, v, c: f"{d}{s}{v}{c}", _directive, _sep, _value,
                            st.sampled_from(["", " # note", "#", " #"])),
                  short_text)
_eol = st.sampled_from(["\n", "\r\n", "\r", "\n\n"])
_robots_text = st.lists(st.tuples(_line, _eol), max_size=30).map(lambda ls: "".join(a + b for a, b in ls))
# UTF-8, with or without (what is left of) a BOM
robots_utf8 = st.tuples(st.sampled_from([b"", b"\xef\xbb\xbf", b"\xef\xbb", b"\xef"]), _robots_text).map(
    lambda bt: bt[0] + bt[1].encode("utf-8"))
robots_body = st.one_of(
    robots_utf8,
    _robots_text.map(lambda t: t.encode("utf-16")),
    st.binary(max_size=2000),
)

# --- XML: feeds and sitemaps --------------------------------------------------------------------------

_entity = st.sampled_from(["&amp;", "&lt;", "&nbsp;", "&copy;", "&eacute;", "&#233;", "&#x1F600;", "&#0;", "&#xD800;",
                           "&bogus;", "&", "&amp", "]]>", "<![CDATA[x]]>", "<!-- c -->", "<?pi x?>", "<b>b</b>", "<br>",
                           "<script>x</script>", "<img src='/i.jpg'>"])
xml_text = st.lists(st.one_of(short_text, _entity), max_size=6).map("".join)
_date = st.one_of(st.sampled_from(["Mon, 30 Nov 2026 09:00:00 +0100", "2026-11-30T10:00:00Z", "2026-11-30",
                                   "30/11/2026",
                                   "Tue, 31 Feb 2026 25:61:00 GMT", "yesterday", "", "0000-00-00",
                                   "9999-12-31T23:59:59Z",
                                   "2026-13-45T99:99:99+99:99"]), short_text)


def _el(name: str, inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return inner.map(lambda t: f"<{name}>{t}</{name}>")


_rss_item = st.lists(st.one_of(_el("title", xml_text), _el("link", url_like.map(str)), _el("guid", url_like),
                               _el("description", xml_text), _el("pubDate", _date), _el("dc:creator", xml_text),
                               _el("content:encoded", xml_text), _el("category", xml_text),
                               st.just("<enclosure url='/a.mp3' length='1'/>")), max_size=6).map("".join)
_atom_entry = st.lists(st.one_of(_el("title", xml_text), url_like.map(lambda u: f'<link href="{u}"/>'),
                                 url_like.map(lambda u: f'<link rel="enclosure" href="{u}"/>'), _el("id", url_like),
                                 _el("updated", _date), _el("summary", xml_text), _el("content", xml_text)),
                       max_size=6).map("".join)
_prolog = st.sampled_from(['<?xml version="1.0" encoding="UTF-8"?>', '<?xml version="1.0" encoding="iso-8859-1"?>',
                           '<?xml version="1.0" encoding="utf-16"?>', '<?xml version="1.0" encoding="bogus"?>',
                           "", "\n\n<?xml version='1.0'?>", "<!-- x -->",
                           '<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaa">]>',
                           '<?xml version="1.0"?><!DOCTYPE x SYSTEM "file:///etc/passwd">'])


def _feed(prolog: str, kind: str, title: str, entries: list[str], cut: int | None) -> str:
    if kind == "rss":
        body = (f'<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>{title}</title>'
                + "".join(f"<item>{e}</item>" for e in entries) + "</channel></rss>")
    elif kind == "atom":
        body = ('<feed xmlns="http://www.w3.org/2005/Atom"><title>' + title + "</title>"
                + "".join(f"<entry>{e}</entry>" for e in entries) + "</feed>")
    elif kind == "rdf":
        body = ('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">'
                + "".join(f"<item>{e}</item>" for e in entries) + "</rdf:RDF>")
    else:
        body = f"<{kind}>{title}" + "".join(entries) + f"</{kind}>"
    doc = prolog + body
    return doc[:cut] if cut is not None else doc


_encode = st.sampled_from(["utf-8", "utf-16", "latin-1", "cp1252"])


def _bytes(text: str, codec: str) -> bytes:
    return text.encode(codec, "replace")


feed_body = st.one_of(
    st.builds(_bytes, st.builds(_feed, _prolog, st.sampled_from(["rss", "atom", "rdf", "html", "urlset", "CHANNEL"]),
                                xml_text, st.lists(st.one_of(_rss_item, _atom_entry), max_size=8),
                                st.none() | st.integers(0, 3000)), _encode),
    st.binary(max_size=2000),
)

_loc = st.one_of(url_like, st.sampled_from(["http://h.example/a", "https://h.example/b?x=1&amp;y=2", "http://[::1",
                                             "javascript:alert(1)", "//h.example/c", "http://h.example/a b"]))
_sm_entry = st.one_of(
    st.builds(lambda loc, lm: f"<url><loc>{loc}</loc><lastmod>{lm}</lastmod></url>", _loc, _date),
    st.builds(lambda loc: f"<url><loc>{loc}</loc></url>", _loc),
    st.builds(lambda loc: f"<sitemap><loc>{loc}</loc></sitemap>", _loc),
    st.just("<url></url>"), xml_text,
)
_sm_root = st.sampled_from(['<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">', "<urlset>",
                            '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">', "<sitemapindex>",
                            "<rss><channel>", '<feed xmlns="http://www.w3.org/2005/Atom">', "<html>"])


def _sitemap(prolog: str, root: str, entries: list[str], cut: int | None) -> str:
    name = root[1:].split(">")[0].split()[0]
    close = "</channel></rss>" if name == "rss" else f"</{name}>"
    doc = prolog + root + "".join(entries) + close
    return doc[:cut] if cut is not None else doc


_xml_sitemap = st.builds(_sitemap, _prolog, _sm_root, st.lists(_sm_entry, max_size=10),
                         st.none() | st.integers(0, 3000))
_text_sitemap = st.lists(_loc, max_size=10).map("\n".join)
sitemap_body = st.one_of(
    st.builds(_bytes, st.one_of(_xml_sitemap, _text_sitemap), _encode),
    _xml_sitemap.map(lambda t: gzip.compress(t.encode("utf-8"), mtime=0)),
    st.binary(max_size=2000).map(lambda b: b"\x1f\x8b" + b),  # a damaged gzip
    st.binary(max_size=2000),
)

# --- HTML pages -------------------------------------------------------------------------------------

json_value = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True), short_text,
              _date, url_like),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.one_of(short_text, st.sampled_from(
                                ["@type", "@id", "@graph", "@context", "name", "startDate", "endDate", "location",
                                 "address", "offers", "price", "priceCurrency", "url", "image", "description",
                                 "isAccessibleForFree", "hasPart", "eventSchedule", "byDay", "startTime", "endTime",
                                 "duration", "eventStatus", "availability", "item", "itemListElement"])),
                                inner, max_size=5)),
    max_leaves=20)
_schema_type = st.sampled_from(["Event", "TheaterEvent", "MusicEvent", "schema:ComedyEvent", "http://schema.org/Festival",
                                "Place", "PostalAddress", "Offer", "NewsArticle", "ItemList", "Schedule", "WebPage"])
_event = st.fixed_dictionaries({"@type": st.one_of(_schema_type, st.lists(_schema_type, max_size=3))},
                               optional={"name": json_value, "startDate": _date, "endDate": _date,
                                         "location": json_value, "offers": json_value, "url": url_like,
                                         "image": json_value, "eventSchedule": json_value, "description": json_value,
                                         "isAccessibleForFree": json_value, "@id": short_text})
_jsonld = st.one_of(st.recursive(_event, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                                  st.builds(lambda g: {"@graph": g},
                                                                            st.lists(inner, max_size=3))),
                                 max_leaves=6).map(lambda d: json.dumps(d, allow_nan=True)),
                    xml_text)
_meta = st.builds(lambda n, c: f'<meta name="{n}" content="{c}">',
                  st.sampled_from(["robots", "ROBOTS", "aubebot", "subsidieupdate", "googlebot", "tdm-reservation",
                                   "tdm-policy", "description"]),
                  st.one_of(st.sampled_from(["noindex", "nofollow", "none", "noindex, nofollow", "all", "1", "0",
                                             "unavailable_after: 2020-01-01", "aubebot: noindex", "max-snippet:-1"]),
                            short_text))
_tag = st.one_of(
    _meta,
    _jsonld.map(lambda j: f'<script type="application/ld+json">{j}</script>'),
    st.builds(lambda t, n, v: f'<div itemscope itemtype="https://schema.org/{t}"><span itemprop="{n}">{v}</span>'
                              f'<meta itemprop="startDate" content="{v}"></div>',
              st.sampled_from(["Event", "MusicEvent", "NewsArticle", "Place"]),
              st.sampled_from(["name", "startDate", "location", "isAccessibleForFree", "price"]), xml_text),
    st.builds(lambda c: f'<div class="{c}">x</div>',
              st.sampled_from(["paywall", "tp-modal", "premium", "subscriber-only", "article-body", ""])),
    st.sampled_from(["<title>Just a moment...</title>", "<script src='/cdn-cgi/challenge-platform/x.js'></script>",
                     "<div id='px-captcha'></div>", "<iframe src='/_Incapsula_Resource'></iframe>",
                     "<main><article><p>text</p></article></main>", "<base href='https://cdn.example/'>",
                     "<meta charset='shift_jis'>",
                     "<meta http-equiv='Content-Type' content='text/html; charset=bogus'>"]),
    xml_text,
)
html_body = st.one_of(
    st.builds(lambda tags, codec: _bytes("<!doctype html><html><head>" + "".join(tags[:len(tags) // 2])
                                         + "</head><body>" + "".join(tags[len(tags) // 2:]) + "</body></html>", codec),
              st.lists(_tag, max_size=10), _encode),
    st.binary(max_size=2000),
)
headers = st.lists(st.tuples(st.sampled_from(["X-Robots-Tag", "x-robots-tag", "tdm-reservation", "tdm-policy",
                                              "cf-mitigated", "Server", "Content-Type", "X-DataDome", "Set-Cookie"]),
                             st.one_of(st.sampled_from(["noindex", "nofollow", "aubebot: noindex", "none", "1", "0",
                                                        "challenge", "cloudflare", "text/html; charset=utf-8", ""]),
                                       short_text)), max_size=4).map(tuple)


def any_mapping(keys: st.SearchStrategy[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Nested mappings whose keys come from ``keys`` (and anything), values of any YAML type."""
    scalar = st.one_of(st.none(), st.booleans(), st.integers(-10**9, 10**9), st.floats(), short_text)
    return st.recursive(st.dictionaries(st.one_of(keys, short_text), scalar, max_size=4),
                        lambda inner: st.dictionaries(st.one_of(keys, short_text),
                                                      st.one_of(scalar, inner, st.lists(st.one_of(scalar, inner),
                                                                                        max_size=3)), max_size=5),
                        max_leaves=15)


# --- real files, damaged ------------------------------------------------------------------------------

_INSERTS = (b"<", b">", b"&", b"&#", b"]]>", b"<![CDATA[", b"<!--", b"-->", b"\x00", b"\xff", b"\xef\xbb\xbf",
            b"\xc3", b'"', b"'", b"<!DOCTYPE x [<!ENTITY e 'ee'>]>", b"&e;", b"</", b"/>", b"\r", b"\n",
            b" xmlns:x='y'",
            b"<x:y>", b"@type", b'{"@type": "Event"', b"}", b"]", b"[", b"http://", b"javascript:", b"%", b"\\u0000")


@st.composite
def mutated(draw: st.DrawFn, seeds: tuple[bytes, ...]) -> bytes:
    """One of ``seeds`` with a few damages: a slice cut, doubled or moved, bytes changed, a piece of
    markup put in, the end cut off."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 6))):
        size = len(data)
        at = draw(st.integers(0, size))
        span = draw(st.integers(0, min(64, size - at)))
        op = draw(st.sampled_from(["cut", "double", "insert", "flip", "truncate", "move"]))
        if op == "cut":
            del data[at:at + span]
        elif op == "double":
            data[at:at] = data[at:at + span]
        elif op == "insert":
            data[at:at] = draw(st.sampled_from(_INSERTS))
        elif op == "flip" and at < size:
            data[at] = draw(st.integers(0, 255))
        elif op == "truncate":
            del data[at:]
        elif op == "move" and span:
            piece = bytes(data[at:at + span])
            del data[at:at + span]
            to = draw(st.integers(0, len(data)))
            data[to:to] = piece
    return bytes(data)
