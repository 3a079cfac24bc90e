"""English: the info page's sentences. Placeholders are filled from the profile."""
from __future__ import annotations

from heed.pages.words import Words

NAME = "English"

_UNITS = {"second": ("second", "seconds"), "minute": ("minute", "minutes"), "hour": ("hour", "hours"),
          "day": ("day", "days"), "week": ("week", "weeks")}

WORDS = Words(
    decimal=".", conj="and", disj="or", units=_UNITS, units_dat=_UNITS,
    nouns={"item": ("item", "items"), "character": ("character", "characters"),
           "child_sitemap": ("child sitemap", "child sitemaps"), "new_page": ("new page", "new pages"),
           "page": ("page", "pages"), "article_page": ("article page", "article pages"),
           "request": ("request", "requests"), "retry": ("more time", "more times"),
           "redirect": ("redirect", "redirects"), "round": ("round", "rounds")},
    singular_for_fractions=False,
    weekdays={1: "Sunday", 2: "Monday", 3: "Tuesday", 4: "Wednesday", 5: "Thursday", 6: "Friday", 7: "Saturday"},
    every={"second": "every {n} {unit}", "minute": "every {n} {unit}", "hour": "every {n} {unit}",
           "day": "every {n} {unit}", "week": "every {n} {unit}",
           "minute_1": "every minute", "hour_1": "every hour", "day_1": "every day", "week_1": "every week"},
    once_every={"second": "once every {n} {unit}", "minute": "once every {n} {unit}", "hour": "once every {n} {unit}",
                "day": "once every {n} {unit}", "week": "once every {n} {unit}",
                "minute_1": "once a minute", "hour_1": "once an hour", "day_1": "once a day", "week_1": "once a week"},
    schedule={
        "once_day": "once a day, at {at}",
        "per_day": "{rounds} a day, at {at}",
        "per_working_day": "{rounds} per working day, at {at}",
        "per_weekend_day": "{rounds} per weekend day, at {at}",
        "once_week": "once a week, on {day} at {at}",
        "per_weekday": "{rounds} every {day}, at {at}",
        "per_days": "{rounds} a day on {days}, at {at}",
        "raw": "on the schedule {expr} (UTC)",
    },
    hour_list="{hours} UTC", time_list="{times} UTC",
)

PHRASES = {
    "title": "{token}: our crawler",
    "switch_label": "Language",
    "toc_label": "On this page",
    "generated": "This page is generated from the configuration {token} runs with: every number on it is "
                 "the one the crawler uses.",
    # headings
    "h_who": "Who we are and why we come",
    "h_recognise": "How to recognise us",
    "h_fetch": "What we fetch",
    "h_keep": "What we keep, and why",
    "h_third": "Services that work for us",
    "h_published": "What is published from your content",
    "h_never": "What we never do",
    "h_pace": "How often and how fast",
    "h_robots": "How we read your robots.txt",
    "h_control": "How to slow us down or keep us out",
    "h_stop": "Removal, or a stop without touching robots.txt",
    "h_contact": "Contact",
    # recognise
    "l_user_agent": "User-Agent",
    "l_token": "robots.txt token",
    "l_operator": "Operator",
    "l_info": "This page",
    "l_contact": "Contact",
    "l_origin": "Where requests come from",
    "l_addresses": "Our addresses",
    "l_rdns": "Reverse DNS",
    "ips_json": "The same list, machine-readable: {link}",
    "rdns": "Each address has a reverse DNS name, {name}, and that name points back to the same addresses.",
    "ua_only": "We use this one User-Agent and never hide behind a browser string: if your log shows a browser, "
               "that is not us.",
    "not_us": "A User-Agent that calls itself {token} but differs from the one above, or that behaves otherwise "
              "than described here, is probably not us. Send us the log lines and we will find out.",
    "verify": "To check that a request came from us, look up its address and then the name you get back:",
    # fetch and keep
    "f_feed": "Your public RSS or Atom feed: at most {items} per read.",
    "f_feed_only": "From a feed we open only the addresses it published, and follow no link inside your site.",
    "k_feed": "Of each feed item: its title, link and date, and at most {chars} of its summary.",
    "k_feed_no_summary": "Of each feed item: its title, link and date.",
    "f_article_short": "Nothing else while the feed suffices: the page of an article only when your feed gives a "
                       "summary shorter than {chars}.",
    "f_article_selected": "For the items we write about, the article page the feed links to.",
    "f_article_once": "An article page is read once and never requested again.",
    "k_article_text": "The text of the article pages we open.",
    "k_article_read": "Of an article page we keep its title and address; its text is read, not stored.",
    "k_tdmrep": "Where a text and data mining reservation is declared (TDMRep: a tdm-reservation: 1 header, a "
                "tdm-reservation meta tag, or /.well-known/tdmrep.json), we do not keep the text. We read "
                "tdmrep.json at most {once} per host, and only where robots.txt allows it.",
    "f_page": "The pages our customers added: from each item listed there, its title, link and publication time.",
    "k_page": "Title, link and publication time of each item; never an author, a user name or the text of a post.",
    "f_fallback": "If such a page is built with JavaScript and gives no items, we read your sitemap.xml instead "
                  "(and at most {children} below it) and fetch the title of at most {pages} under the same path.",
    "f_title_refetch": "A title we already fetched is not fetched again within {d}.",
    "f_sitemap": "Your sitemap, and the titles of the pages it lists.",
    "f_site_check": "Your home page and its icon: whether the site answers, where it redirects and what it is "
                    "called. We read nothing more.",
    "k_site_check": "Whether your site answered, where it redirected, and its name; nothing of the home page itself.",
    "f_subsidy": "We start at your sitemap and follow only pages whose address is about subsidies: it contains "
                 "{topics}.",
    "f_compare": "Each page is compared with its previous version. If nothing changed, processing stops there: "
                 "a revisit costs you one request and nothing more.",
    "k_subsidy": "The text of each subsidy page, to see when it changes. Our customers get a summary of at most "
                 "{chars} with a link to your page as the source.",
    "f_agenda": "We start at your sitemap.xml and follow only the pages about the programme or tickets (their "
                "address contains {patterns}). We never walk your site blindly.",
    "f_structured": "The events are read from the page's structured data (schema.org) first.",
    "k_agenda": "Of each event: its name, date and time, location, price, description, an image and the link "
                "to your page.",
    # never
    "never_get": "Only GET requests: no forms, no logging in, no orders, no site search.",
    "never_js": "No JavaScript, no cookies sent or kept, no tracking; consent dialogs are not loaded.",
    "never_paywall": "Only pages open to every visitor: nothing behind a login or a paywall.",
    "never_paywall_text": "Only pages open to every visitor: nothing behind a login, and a paywalled page is never "
                          "extracted, even when it carries its text.",
    "never_personal": "No personal data beyond what the public item itself shows.",
    # pace
    "rounds": "{task}: {when}.",
    "task_feed": "Feed rounds",
    "task_page": "Page rounds",
    "task_sitemap": "Sitemap rounds",
    "task_site_check": "Site check",
    "task_subsidy": "Subsidy rounds",
    "task_agenda": "Agenda round",
    "feed_interval": "Each feed is read at most {once}; when nothing changed, no data is sent.",
    "site_check_interval": "Each site is checked at most {once}.",
    "cap_page": "At most {pages} per source in each round.",
    "cap_subsidy": "At most {pages} per host in each round.",
    "cap_agenda": "At most {pages} per site in each round.",
    "cap_articles": "At most {per} per source per {window}, and {total} over all sources together.",
    "min_delay": "At least {d} between two requests to the same host, counted from the end of one request to "
                 "the start of the next.",
    "crawl_delay": "If your Crawl-delay asks for longer, we wait that long, up to {cap}.",
    "one_per_host": "Never two requests to the same host at the same time.",
    "one_at_a_time": "Our requests go out one at a time: never two connections at once, to you or to anyone else.",
    "in_flight": "At most {n} at once over all sites together.",
    "spacing": "In a round, {span} pass between two pages of the same site.",
    "spacing_fixed": "In a round, at least {lo} pass between two pages of the same site.",
    "conditional": "We send If-None-Match and If-Modified-Since: for an unchanged page you answer 304 and send "
                   "nothing.",
    "challenge": "a challenge page",
    "stop_today": "If you answer {codes}, we stop fetching from your site for the rest of the day (UTC).",
    "stop_close": "If you turn us away with {codes}, we stop and mark the source as closed: we do not come back "
                  "by ourselves, and we try no other addresses or identities.",
    "retry_after": "A Retry-After header that asks for longer is honoured.",
    "retries": "After a server error or a timeout we try at most {n} the same day, the first after {backoff}, "
               "then each time twice as long.",
    "retry_once": "After a server error or a timeout we try once more the same day, after {backoff}.",
    "no_retries": "After a server error or a timeout we do not try again the same day.",
    "redirects": "A redirect is followed as a new request: its target is checked against robots.txt and paced "
                 "like any other address. We follow at most {n} in a row.",
    # robots
    "robots_first": "We read your robots.txt before anything else on a host, and fetch nothing it closes to us.",
    "robots_group": "We follow the group that names {token} (in any letter case) if you have one, otherwise the "
                    "group for *. Disallow and Allow work as RFC 9309 says: the longest matching rule wins, Allow "
                    "wins a tie, and * and $ work as wildcards.",
    "robots_host": "Everything is per host: each subdomain needs its own robots.txt, so a rule on example.org "
                   "does not cover shop.example.org.",
    "robots_cache": "We fetch robots.txt at most {once} per host and reuse it in between, so a change takes "
                    "effect within {ttl}.",
    "robots_size": "We read the first {size} of the file and follow at most {hops} to it.",
    "rf_4xx_allow_incl": "No robots.txt, or an HTTP 4xx on it (401 and 403 included): we read that as no "
                         "restrictions.",
    "rf_4xx_deny_incl": "No robots.txt, or an HTTP 4xx on it (401 and 403 included): we fetch nothing.",
    "rf_4xx_allow": "No robots.txt, or an HTTP 4xx on it: we read that as no restrictions.",
    "rf_4xx_deny": "No robots.txt, or an HTTP 4xx on it: we fetch nothing.",
    "rf_401_allow": "If access to robots.txt is refused (401 or 403), we read that as no restrictions.",
    "rf_401_deny": "If access to robots.txt is refused (401 or 403), we fetch nothing.",
    "rf_5xx_deny": "If robots.txt answers with a server error (5xx), we fetch nothing until we can read it.",
    "rf_5xx_skip_host": "A server error (5xx) on robots.txt we read as “not now”: we skip your host for that round.",
    "rf_unreachable_deny": "If robots.txt cannot be reached at all (no answer, a broken connection), we fetch "
                           "nothing.",
    "rf_unreachable_skip_host": "If robots.txt cannot be reached at all, we skip your host for that round.",
    "crawl_delay_seconds": "Crawl-delay is read in seconds. We honour values up to {cap}; anything above counts "
                           "as {cap}.",
    "noindex": "noindex and nofollow, in a robots meta tag or an X-Robots-Tag header: we do not keep the page, "
               "and follow no links from it.",
    # control
    "example_path": "/private/",
    "control_all": "With your robots.txt, in the root of each host. To keep us out entirely:",
    "control_path": "To close only a part, for example {path}:",
    "control_slow": "To slow us down instead of closing, a Crawl-delay in seconds (we honour up to {cap}):",
    "control_when": "A change takes effect within {ttl}, the next time we read the file.",
    # stop
    "stop_mail": "Write to {contact}. A request to stop is carried out even if your robots.txt stays as it is: "
                 "we put your domain, with its subdomains, on our block list. No discussion has to come first.",
    "stop_form": "Use our contact form, {contact}. A request to stop is carried out even if your robots.txt "
                 "stays as it is: we put your domain, with its subdomains, on our block list. No discussion has "
                 "to come first.",
    "stop_delete": "On request we delete everything we have stored from your domain.",
    # contact
    "contact_intro": "Questions, or does our crawler behave otherwise than described here? Write to {contact}. "
                     "It helps if you send:",
    "contact_intro_form": "Questions, or does our crawler behave otherwise than described here? Use our contact "
                          "form, {contact}. It helps if you send:",
    "send_host": "the domain or host name concerned;",
    "send_when": "the date and time of the requests, with the time zone;",
    "send_lines": "a few lines from your log, with the path and the User-Agent;",
    "send_want": "what you want: slower, a part closed, or no visits at all.",
    "privacy": "How we handle data: {link}",
    # AI usage preferences (AIPREF) and signed requests (Web Bot Auth)
    "h_usage": "What we use it for",
    "usage_intro": "What we do with what we read, in the terms of the AI preferences vocabulary (AIPREF) that "
                   "sites use in robots.txt and in the Content-Usage header:",
    "u_search": "{label}: we point people to your page: what we show links back to it.",
    "u_ai_use": "{label}: an AI system works with the text (a language model that summarises, extracts or helps "
                "write), without being trained on it.",
    "u_train_ai": "{label}: the text trains an AI model.",
    "usage_not": "We do not use it for {uses}.",
    "usage_refused": "Where a Content-Usage line in your robots.txt (in the group that applies to us, the longest "
                     "matching path) or a page's Content-Usage header says n to one of these uses, we keep nothing "
                     "of that page and follow nothing from it.",
    "usage_site_check": "Our site check then records only whether your site answered and where it led; not its "
                        "name, and the icon is not fetched.",
    "robots_usage": "We read Content-Usage lines (AIPREF) from the group that applies to us; they change nothing of "
                    "Allow, Disallow or Crawl-delay.",
    "control_usage": "To let us read your pages but not use them for one of these purposes, add a Content-Usage "
                     "line where the rules that apply to us already are (a new group naming {token} would replace "
                     "the * group for us):",
    "l_signature": "Signed requests",
    "sig_row": "Web Bot Auth (RFC 9421), key id {keyid}",
    "sig_verify": "Every request we send, robots.txt included, carries an HTTP message signature (Web Bot Auth, "
                  "RFC 9421) with Signature-Agent {agent} and key id {keyid}. To check one, take our public keys "
                  "from {directory} (the directory is signed with the same key) and verify the request's Signature "
                  "header against them. A request that names us without a valid signature is not ours.",
    "sig_or_rdns": "Without checking signatures, the address check above tells you the same: a request from us "
                   "comes from one of our addresses, and its reverse DNS name points back to it.",
    "sig_or_ips": "Without checking signatures, compare the request's address with the list at {link}.",
}
