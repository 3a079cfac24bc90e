"""What the info page says, section by section, from the profile alone.

Numbers, cadences and rules are read from the typed profile and put into the language's
sentence templates; the words that are not numbers (who runs the bot, why it comes, what it
keeps) come from the profile's `info_page.texts.<lang>`. What each source kind says of its work
is its room's (heed_core.kinds: ``Kind.says``), worded here. Nothing here is specific to one bot
or one kind.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from heed_core import kinds
from heed_core.kinds.sayings import Count, Duration, Every, Quoted, Say, Sayings, Value
from heed_core.profile import PageTexts, Profile, ProfileError

from heed.pages import words as wd
from heed.pages.language import REFERENCE
from heed.pages.language import of as language_of
from heed.pages.model import (
    Alternate,
    Block,
    Code,
    Facts,
    Items,
    Link,
    Page,
    Para,
    Pre,
    Section,
    Strong,
    Sub,
    Text,
    fmt,
)

_CRAWL_DELAY_EXAMPLE_S = 30  # the value in the "slow us down" example when the cap allows it
# draft-ietf-aipref-vocab's labels, in the order the page explains them
_USES = (("search", "u_search"), ("ai-use", "u_ai_use"), ("train-ai", "u_train_ai"))


@dataclass(frozen=True)
class Signing:
    """What the page says about signed requests (Web Bot Auth): the Signature-Agent from the
    profile, the directory's URL and the key ids from the key itself."""

    agent: str
    directory: str
    keyids: tuple[str, ...]


def page_languages(p: Profile) -> tuple[str, ...]:
    """The bot's language first, then English."""
    return (p.language,) + ((REFERENCE,) if p.language != REFERENCE else ())


def page_path(p: Profile, lang: str) -> str:
    """Where the page in `lang` is published on the info host: the info URL itself for the
    bot's language, `index.en.html` beside it for English."""
    base = urlsplit(p.info_url).path or "/"
    if lang == p.language:
        return base
    return base.rstrip("/") + f"/index.{lang}.html"


def desk_url(p: Profile, lang: str) -> str:
    """Where the bot's desk answers (``desk: true``): /desk/ on the info host, /desk/en/ in English."""
    return _absolute(p, "/desk/" if lang == p.language else f"/desk/{lang}/")


def _absolute(p: Profile, path: str) -> str:
    parts = urlsplit(p.info_url)
    return f"{parts.scheme}://{parts.netloc}{path}"


def _texts(p: Profile, lang: str) -> PageTexts:
    if p.info_page is None:
        raise ProfileError("info_page: missing (the page needs its texts: info_page.texts.<lang>)")
    return p.info_page.texts[lang]


def _is_form(p: Profile) -> bool:
    return p.contact.startswith(("http://", "https://"))


def _contact(p: Profile) -> Link:
    c = p.contact
    return Link(c, c if c.startswith(("http://", "https://")) else f"mailto:{c}")


class _Writer:
    """The sentences of one page in one language."""

    def __init__(self, p: Profile, lang: str, signing: Signing | None = None) -> None:
        words = language_of(p, lang)
        self.p, self.lang, self.P, self.w = p, lang, words.sentences, words.words
        self.words = words
        self.t = _texts(p, lang)
        self.signing = signing
        self.sayings: tuple[Sayings, ...] = tuple(k.says(p) for k in kinds.running(p))

    # helpers ---------------------------------------------------------------------------------
    def f(self, key: str, **values: object) -> Text:
        return fmt(self.P[key], **values)

    def d(self, seconds: float, *, dative: bool = False) -> str:
        return wd.duration(seconds, self.w, dative=dative)

    def n(self, n: int, noun: str) -> str:
        return wd.count(n, noun, self.w)

    def word(self, value: Value) -> str:
        """A kind's value in the page's words."""
        if isinstance(value, Count):
            return self.n(value.n, value.noun)
        if isinstance(value, Duration):
            return self.d(value.seconds, dative=value.dative)
        if isinstance(value, Every):
            return wd.every(value.seconds, self.w, once=True)
        if isinstance(value, Quoted):
            return wd.join([f"“{t}”" for t in value.words], self.w, self.w.disj)
        return value

    def said(self, slot: str) -> list[Text]:
        """What the bot's kinds say in ``slot`` (a field of ``Sayings``), each sentence once."""
        lines: list[Say] = []
        for sayings in self.sayings:
            lines += [s for s in getattr(sayings, slot) if s not in lines]
        return [fmt(self.kind_word(s.key), **{k: self.word(v) for k, v in s.values.items()}) for s in lines]

    def kind_word(self, key: str) -> str:
        """A sentence a source kind names: the language data must hold it (a new kind's words are
        written in every language's file, as English's are)."""
        if key not in self.P:
            raise ProfileError(f"info_page: no sentence {key!r} in the {self.lang} words (a source kind's: "
                               "every language file writes its sentences)")
        return self.P[key]

    def prose(self, items: tuple[str, ...]) -> list[Text]:
        return [(s,) for s in items]

    def codes(self, labels: list[str], conj: str) -> Text:
        """``a``, ``b`` and ``c`` as code, joined in the page's language."""
        out: list[Code | str] = []
        for i, label in enumerate(labels):
            if i:
                out.append(f" {conj} " if i == len(labels) - 1 else ", ")
            out.append(Code(label))
        return tuple(out)

    # sections --------------------------------------------------------------------------------
    def who(self) -> Section:
        return Section("who", self.P["h_who"], tuple(Para((s,)) for s in self.t.about))

    def recognise(self) -> Section:
        p, P = self.p, self.P
        rows: list[tuple[str, tuple[Text, ...]]] = [
            (P["l_user_agent"], ((Code(p.user_agent),),)),
            (P["l_token"], ((Code(p.robots_token),),)),
            (P["l_operator"], ((self.t.operator,),)),
            (P["l_info"], ((Link(p.info_url, p.info_url),),)),
            (P["l_contact"], ((_contact(p),),)),
        ]
        if self.t.origin:
            rows.append((P["l_origin"], ((self.t.origin,),)))
        eg = p.egress
        if eg.ips:
            lines: list[Text] = [(Code(ip),) for ip in eg.ips]
            if eg.ips_json_path:
                lines.append(self.f("ips_json", link=Link(eg.ips_json_path, eg.ips_json_path)))
            rows.append((P["l_addresses"], tuple(lines)))
        if eg.reverse_dns:
            rows.append((P["l_rdns"], (self.f("rdns", name=Code(eg.reverse_dns)),)))
        sig = self.signing
        if sig is not None:
            keyids = Code(", ".join(sig.keyids))
            rows.append((P["l_signature"], (self.f("sig_row", keyid=keyids), (Link(sig.directory, sig.directory),))))
        blocks: list[Block] = [Facts(tuple(rows)), Para(self.f("ua_only")),
                               Para(self.f("not_us", token=Code(p.robots_token)))]
        if eg.ips and eg.reverse_dns:
            first = eg.ips[0].split("/")[0]
            blocks += [Para(self.f("verify")), Pre(f"host {first}\nhost {eg.reverse_dns}")]
        if sig is not None:
            # Web Bot Auth: how a site checks a request is ours, and the address route beside it.
            blocks.append(Para(self.f("sig_verify", agent=Code(sig.agent), keyid=Code(", ".join(sig.keyids)),
                                      directory=Link(sig.directory, sig.directory))))
            if eg.ips and eg.reverse_dns:
                blocks.append(Para(self.f("sig_or_rdns")))
            elif eg.ips and eg.ips_json_path:
                blocks.append(Para(self.f("sig_or_ips", link=Link(eg.ips_json_path, eg.ips_json_path))))
        return Section("recognise", P["h_recognise"], tuple(blocks))

    def fetch(self) -> Section:
        p = self.p
        fetched: list[Text] = self.prose(self.t.fetches)
        fetched += self.said("fetched")
        kept: list[Text] = self.said("kept")
        kept += self.prose(self.t.keeps)
        blocks: list[Block] = [Items(tuple(fetched)), Sub(self.P["h_keep"], (Items(tuple(kept)),))]
        if p.spec.usage:
            blocks.append(self.usage())
        if self.t.third_parties:
            blocks.append(Sub(self.P["h_third"], (Items(tuple(self.prose(self.t.third_parties))),)))
        if self.t.published:
            blocks.append(Sub(self.P["h_published"], (Items(tuple(self.prose(self.t.published))),)))
        return Section("fetch", self.P["h_fetch"], tuple(blocks))

    def usage(self) -> Sub:
        """AIPREF: the uses the profile declares, the ones it does not, and what a refusal does."""
        declared = self.p.spec.usage
        items = [self.f(key, label=Code(label)) for label, key in _USES if label in declared]
        blocks: list[Block] = [Para(self.f("usage_intro")), Items(tuple(items))]
        others = [label for label, _ in _USES if label not in declared]
        if others:
            blocks.append(Para(self.f("usage_not", uses=self.codes(others, self.w.disj))))
        blocks.append(Para(self.f("usage_refused")))
        blocks += [Para(line) for line in self.said("usage")]
        return Sub(self.P["h_usage"], tuple(blocks))

    def never(self) -> Section:
        items = [self.f("never_get"), self.f("never_js")]
        paywall_checked = any(s.paywall_checked for s in self.sayings)
        items.append(self.f("never_paywall_text" if paywall_checked else "never_paywall"))
        items.append(self.f("never_personal"))
        items += self.prose(self.t.never)
        return Section("never", self.P["h_never"], (Items(tuple(items)),))

    def pace(self) -> Section:
        p = self.p
        items: list[Text] = []
        for kind in p.task_kinds:
            exprs = [s.expression for s in p.schedules if s.task == kind]
            if exprs:
                when = "; ".join(wd.schedule(e, self.w) for e in exprs)
                items.append(self.f("rounds", task=Strong(self.kind_word(f"task_{kind}")), when=when))
        items += self.said("cadence") + self.said("caps") + self.said("follow_caps")
        pol = p.politeness
        items.append(self.f("min_delay", d=self.d(pol.min_delay_s)))
        items.append(self.f("crawl_delay", cap=self.d(pol.crawl_delay_cap_s),
                            cap_dat=self.d(pol.crawl_delay_cap_s, dative=True)))
        items.append(self.f("one_per_host"))
        if pol.max_in_flight == 1:
            items.append(self.f("one_at_a_time"))
        elif pol.max_in_flight:
            items.append(self.f("in_flight", n=self.n(pol.max_in_flight, "request")))
        if pol.round_spacing_s:
            hi = pol.round_spacing_s + pol.round_spacing_jitter_s
            if pol.round_spacing_jitter_s:
                items.append(self.f("spacing", span=wd.span(pol.round_spacing_s, hi, self.w)))
            else:
                items.append(self.f("spacing_fixed", lo=self.d(pol.round_spacing_s)))
        if p.conditional_requests:
            items.append(self.f("conditional"))
        items += self._responses()
        r = p.responses
        if r.retries_per_day == 1:
            items.append(self.f("retry_once", backoff=self.d(r.retry_backoff_s),
                                backoff_dat=self.d(r.retry_backoff_s, dative=True)))
        elif r.retries_per_day:
            items.append(self.f("retries", n=self.n(r.retries_per_day, "retry"), backoff=self.d(r.retry_backoff_s),
                                backoff_dat=self.d(r.retry_backoff_s, dative=True)))
        else:
            items.append(self.f("no_retries"))
        items.append(self.f("redirects", n=self.n(p.redirects.max_hops, "redirect")))
        return Section("pace", self.P["h_pace"], (Items(tuple(items)),))

    def _responses(self) -> list[Text]:
        r = self.p.responses
        labels = {"on_429": "429", "on_403": "403", "on_challenge": self.P["challenge"]}
        out: list[Text] = []
        for action, key in (("stop_host_today", "stop_today"), ("close_source", "stop_close")):
            codes = [labels[k] for k in ("on_429", "on_403", "on_challenge") if getattr(r, k) == action]
            if codes:
                out.append(self.f(key, codes=wd.join(codes, self.w, self.w.disj)))
        out.append(self.f("retry_after"))
        return out

    def robots(self) -> Section:
        p, rb = self.p, self.p.robots
        items = [self.f("robots_first"), self.f("robots_group", token=Code(p.robots_token)),
                 self.f("robots_host"),
                 self.f("robots_cache", ttl=self.d(rb.cache_ttl_s), ttl_dat=self.d(rb.cache_ttl_s, dative=True),
                        once=wd.every(rb.cache_ttl_s, self.w, once=True)),
                 self.f("robots_size", size=wd.size(rb.max_bytes, self.w),
                        hops=self.n(rb.max_redirects, "redirect"))]
        if rb.on_401_403 == rb.on_4xx:
            items.append(self.f(f"rf_4xx_{rb.on_4xx}_incl"))
        else:
            items.append(self.f(f"rf_4xx_{rb.on_4xx}"))
            items.append(self.f(f"rf_401_{rb.on_401_403}"))
        items.append(self.f(f"rf_5xx_{rb.on_5xx}"))
        items.append(self.f(f"rf_unreachable_{rb.on_unreachable}"))
        items.append(self.f("crawl_delay_seconds", cap=self.d(p.politeness.crawl_delay_cap_s),
                            cap_dat=self.d(p.politeness.crawl_delay_cap_s, dative=True),
                            cap_n=wd.number(p.politeness.crawl_delay_cap_s, self.w)))
        if any(s.reads_meta_robots for s in self.sayings):
            items.append(self.f("noindex"))
        if p.spec.usage:
            items.append(self.f("robots_usage"))
        return Section("robots", self.P["h_robots"], (Items(tuple(items)),))

    def control(self) -> Section:
        p, tok = self.p, self.p.robots_token
        path = self.t.example_path or self.P["example_path"]
        cap = p.politeness.crawl_delay_cap_s
        example = int(min(cap, _CRAWL_DELAY_EXAMPLE_S)) or 1
        ttl = p.robots.cache_ttl_s
        blocks: list[Block] = [
            Para(self.f("control_all")), Pre(f"User-agent: {tok}\nDisallow: /"),
            Para(self.f("control_path", path=Code(path))), Pre(f"User-agent: {tok}\nDisallow: {path}"),
            Para(self.f("control_slow", cap=self.d(cap), cap_dat=self.d(cap, dative=True))),
            Pre(f"User-agent: {tok}\nCrawl-delay: {example}"),
        ]
        if p.spec.usage:
            # AIPREF: read, but not used for one purpose (the last declared: search alone is all
            # SpringStudioBot does, and a line for it closes all of that).
            blocks += [Para(self.f("control_usage", token=Code(tok))),
                       Pre(f"User-agent: *\nContent-Usage: / {p.spec.usage[-1]}=n")]
        blocks.append(Para(self.f("control_when", ttl=self.d(ttl), ttl_dat=self.d(ttl, dative=True))))
        return Section("control", self.P["h_control"], tuple(blocks))

    def stop(self) -> Section:
        key = "stop_form" if _is_form(self.p) else "stop_mail"
        blocks: list[Block] = [Para(self.f(key, contact=_contact(self.p))), Para(self.f("stop_delete"))]
        if self.p.spec.desk:
            # The site owners' desk (heed.desk), at /desk/ on the info host, in this page's language.
            url = desk_url(self.p, self.lang)
            blocks.append(Para(fmt(self.words.desk["info_link"], link=Link(url, url))))
        if self.t.removal:
            blocks.append(Para((self.t.removal,)))
        return Section("stop", self.P["h_stop"], tuple(blocks))

    def contact(self) -> Section:
        key = "contact_intro_form" if _is_form(self.p) else "contact_intro"
        blocks: list[Block] = [Para(self.f(key, contact=_contact(self.p))),
                               Items((self.f("send_host"), self.f("send_when"), self.f("send_lines"),
                                      self.f("send_want")))]
        if self.t.contact_note:
            blocks.append(Para((self.t.contact_note,)))
        privacy = self.p.info_page.privacy_url if self.p.info_page else None
        if privacy:
            blocks.append(Para(self.f("privacy", link=Link(privacy, privacy))))
        return Section("contact", self.P["h_contact"], tuple(blocks))


def build_page(p: Profile, lang: str, signing: Signing | None = None) -> Page:
    """The page in `lang` (the bot's language or English). A bot that signs its requests needs
    ``signing`` (its key ids come from the key, which the profile only names)."""
    if lang not in page_languages(p):
        raise ProfileError(f"info_page: {lang!r} is not a page language of {p.name} ({', '.join(page_languages(p))})")
    if p.identity.web_bot_auth.enabled and signing is None:
        raise ProfileError("identity.web_bot_auth: the page of a bot that signs names its key id: give the key "
                           "(heed info-page reads key_file or key_secret)")
    w = _Writer(p, lang, signing if p.identity.web_bot_auth.enabled else None)
    sections = (w.who(), w.recognise(), w.fetch(), w.never(), w.pace(), w.robots(), w.control(), w.stop(),
                w.contact())
    for key in (k for sayings in w.sayings for k in sayings.outside_services):
        # WANNADO-09/-10: a bot that hands pages to a render service or a language model says so.
        if not w.t.third_parties:
            raise ProfileError(f"info_page.texts.{lang}.third_parties: missing ({key} sends "
                               "pages to an outside service; the page must say so)")
    others = tuple(Alternate(o, language_of(p, o).name, page_path(p, o), _absolute(p, page_path(p, o)))
                   for o in page_languages(p) if o != lang)
    title = w.t.title or w.P["title"].format(token=p.robots_token)
    ranges = p.egress.ips_json_path if p.egress.ips and p.egress.ips_json_path else None
    return Page(lang=lang, title=title, lead=(w.t.lead,), sections=sections,
                footer=w.f("generated", token=p.robots_token), url=_absolute(p, page_path(p, lang)),
                switch_label=w.P["switch_label"], toc_label=w.P["toc_label"], alternates=others, client_ranges=ranges)
