"""One info page as a self-contained HTML5 document: no scripts, no external assets, phone-first."""
from __future__ import annotations

from html import escape

from heed.pages.model import Code, Facts, Items, Link, Page, Para, Pre, Section, Strong, Sub, Text, plain

# Small, readable on a phone (one column, long User-Agents wrap), two columns of facts on a
# desktop, dark when the reader's system is dark. No web fonts, no images, nothing loaded.
CSS = """\
:root{--fg:#1d1d1f;--bg:#fdfdfb;--muted:#5b5b60;--box:#f1f0ec;--line:#d9d7d0;--link:#0b57a4}
@media (prefers-color-scheme:dark){
:root{--fg:#ececec;--bg:#161618;--muted:#a9a9b0;--box:#232326;--line:#3a3a3f;--link:#8ab8ff}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;text-size-adjust:100%}
body{margin:0 auto;max-width:44rem;padding:1rem 1.1rem 3rem;color:var(--fg);background:var(--bg);
font:1.05rem/1.6 system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans",sans-serif}
a{color:var(--link);overflow-wrap:anywhere}
header nav.lang{text-align:right;font-size:.95rem}
h1{font-size:1.9rem;line-height:1.2;margin:.4rem 0 .8rem}
h2{font-size:1.3rem;margin:2.2rem 0 .6rem;padding-top:.6rem;border-top:1px solid var(--line)}
h3{font-size:1.05rem;margin:1.4rem 0 .4rem}
.lead{font-size:1.12rem}
nav.toc ol{margin:0;padding-left:1.3rem;columns:2 14rem;color:var(--muted)}
ul{padding-left:1.3rem}
li{margin:.35rem 0}
code,pre{font-family:ui-monospace,"SFMono-Regular",Menlo,Consolas,"Liberation Mono",monospace;font-size:.92em}
code{background:var(--box);padding:.05em .3em;border-radius:4px;overflow-wrap:anywhere}
pre{background:var(--box);padding:.7rem .9rem;border-radius:6px;border-left:4px solid var(--line);
overflow-x:auto;line-height:1.45}
pre code{background:none;padding:0;border-radius:0;overflow-wrap:normal}
dl{margin:.6rem 0 1rem}
dt{font-weight:600;margin-top:.6rem}
dd{margin:0 0 .2rem}
dd p{margin:.1rem 0}
@media (min-width:40rem){dl{display:grid;grid-template-columns:13rem 1fr;gap:.35rem 1rem}dt{margin:0}dd{margin:0}}
footer{margin-top:2.5rem;font-size:.9rem;color:var(--muted)}
"""


def _inline(text: Text) -> str:
    out = []
    for part in text:
        if isinstance(part, Code):
            out.append(f'<code translate="no">{escape(part.text)}</code>')
        elif isinstance(part, Link):
            out.append(f'<a href="{escape(part.href)}">{escape(part.text)}</a>')
        elif isinstance(part, Strong):
            out.append(f"<strong>{escape(part.text)}</strong>")
        else:
            out.append(escape(part, quote=False))
    return "".join(out)


def _block(block: object, level: int) -> list[str]:
    if isinstance(block, Para):
        return [f"<p>{_inline(block.text)}</p>"]
    if isinstance(block, Items):
        return ["<ul>"] + [f"<li>{_inline(t)}</li>" for t in block.items] + ["</ul>"]
    if isinstance(block, Pre):
        return [f'<pre translate="no"><code>{escape(block.text, quote=False)}</code></pre>']
    if isinstance(block, Facts):
        out = ["<dl>"]
        for label, values in block.rows:
            out.append(f"<dt>{escape(label)}</dt>")
            if len(values) == 1:
                out.append(f"<dd>{_inline(values[0])}</dd>")
            else:
                out.append("<dd>" + "".join(f"<p>{_inline(v)}</p>" for v in values) + "</dd>")
        return out + ["</dl>"]
    if isinstance(block, Sub):
        out = [f"<h{level}>{escape(block.heading)}</h{level}>"]
        for inner in block.blocks:
            out += _block(inner, level + 1)
        return out
    raise TypeError(f"unknown block {block!r}")


def _section(section: Section, lang: str) -> list[str]:
    out = [f'<section id="{section.id}" lang="{lang}" aria-labelledby="{section.id}-h">',
           f'<h2 id="{section.id}-h">{escape(section.heading)}</h2>']
    for block in section.blocks:
        out += _block(block, 3)
    return out + ["</section>"]


def render(page: Page) -> str:
    """The whole document. Every character of text is escaped here, once."""
    head = [
        "<!doctype html>",
        f'<html lang="{page.lang}">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        '<meta name="color-scheme" content="light dark">',
        f"<title>{escape(page.title)}</title>",
        f'<meta name="description" content="{escape(plain(page.lead)[:300])}">',
        f'<link rel="canonical" href="{escape(page.url)}">',
        f'<link rel="alternate" hreflang="{page.lang}" href="{escape(page.url)}">',
    ]
    head += [f'<link rel="alternate" hreflang="{a.lang}" href="{escape(a.url)}">' for a in page.alternates]
    if page.client_ranges:
        head.append(f'<link rel="client-ranges" type="application/json" href="{escape(page.client_ranges)}">')
    head += [f"<style>\n{CSS}</style>", "</head>"]
    switch = " · ".join(f'<a href="{escape(a.href)}" hreflang="{a.lang}" lang="{a.lang}">{escape(a.name)}</a>'
                        for a in page.alternates)
    toc = "".join(f'<li><a href="#{s.id}">{escape(s.heading)}</a></li>' for s in page.sections)
    body = ["<body>", "<header>"]
    if switch:
        body.append(f'<nav class="lang" aria-label="{escape(page.switch_label)}">{switch}</nav>')
    body += [f"<h1>{escape(page.title)}</h1>", f'<p class="lead">{_inline(page.lead)}</p>',
             f'<nav class="toc" aria-label="{escape(page.toc_label)}"><ol>{toc}</ol></nav>', "</header>", "<main>"]
    for section in page.sections:
        body += _section(section, page.lang)
    body += ["</main>", f"<footer><p>{_inline(page.footer)}</p></footer>", "</body>", "</html>"]
    return "\n".join(head + body) + "\n"
