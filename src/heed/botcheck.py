"""What a profile must lose before its page is published or its bot deployed: an identity that
is still its base bot's (``identity_problem``: info-page, deploy and samconfig refuse it; local
run and conformance warn), values still marked ``WRITE ME`` by `heed new-bot` (a URL: on the
``write-me.invalid`` host, which never resolves), and the sentences of its page still to
translate where it carries its own (``untranslated``)."""
from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from heed_core.profile import BUILTIN_BOTS, Profile, builtin_base, load_profile, sentence_files
from heed_core.profile_schema import MARK

from heed.pages.language import leaves, problems

__all__ = ["ADDRESS_KEYS", "IDENTITY_KEYS", "MARK", "PLACEHOLDER_HOST", "check_lines", "identity_problem", "refusal",
           "inherited_identity", "untranslated", "unwritten", "warn_identity"]

PLACEHOLDER_HOST = "write-me.invalid"  # RFC 2606: .invalid never resolves
_UNWRITTEN = re.compile(rf"{MARK}|{re.escape(PLACEHOLDER_HOST)}", re.IGNORECASE)

# Who a bot is: never its base bot's. The info page's texts hold its operator and every sentence.
IDENTITY_KEYS = ("name", "user_agent", "robots_token", "info_url", "contact")
# What the base bot publishes as its own, where it has any: its addresses, its signing agent and
# its privacy statement.
ADDRESS_KEYS = ("egress.ips", "egress.reverse_dns", "identity.web_bot_auth.signature_agent", "info_page.privacy_url")
_TEXT_FIELDS_NOT_IDENTITY = ("example_path",)


# --- identity is never inherited by accident -------------------------------------------------------

def _strings(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, Mapping):
        return {s for v in value.values() for s in _strings(v)}
    if isinstance(value, (list, tuple)):
        return {s for v in value for s in _strings(v)}
    return set()


def inherited_identity(profile: Profile, base: Profile) -> list[str]:
    """The identity keys of ``profile`` whose value is still ``base``'s (set or not): its name,
    user agent, robots token, info URL, contact, the info page's texts, and the addresses the
    base publishes. A text is the base's if any of its sentences is one of the base's."""
    keys = [k for k in IDENTITY_KEYS if profile.get(k) == base.get(k)]
    mine, theirs = profile.get("info_page.texts") or {}, base.get("info_page.texts") or {}
    if mine and mine == theirs:
        keys.append("info_page.texts")
    else:
        sentences = {s for lang in theirs.values() for k, v in lang.items()
                     if k not in _TEXT_FIELDS_NOT_IDENTITY for s in _strings(v)}
        keys += [f"info_page.texts.{lang}.{k}" for lang, texts in mine.items() for k, v in texts.items()
                 if k not in _TEXT_FIELDS_NOT_IDENTITY and _strings(v) & sentences]
    for k in ADDRESS_KEYS:
        theirs_v = base.get(k)
        if theirs_v and _strings(profile.get(k)) & _strings(theirs_v):
            keys.append(k)
    return keys


def identity_problem(ref: str, profile: Profile) -> str | None:
    """One line naming the identity keys a profile file still takes from the built-in bot it
    extends, or None (a built-in bot, a file that extends none, a bot of its own)."""
    base = builtin_base(ref)
    if base is None:
        return None
    keys = inherited_identity(profile, load_profile(base))
    if not keys:
        return None
    return (f"{ref}: identity inherited from {base}: {', '.join(keys)} (a bot of its own sets its own; "
            f"heed new-bot NAME --language LL --extends {base} writes them to fill in)")


def warn_identity(ref: str, profile: Profile) -> None:
    """local run and conformance: say it once, and go on."""
    problem = identity_problem(ref, profile)
    if problem:
        print(f"heed: warning: {problem}; sites would see {profile.user_agent!r}", file=sys.stderr)


# --- what is still unwritten ---------------------------------------------------------------------

def unwritten(profile: Profile) -> list[tuple[str, str]]:
    """(key, what to write) of every value still marked WRITE ME (or on the placeholder host), but
    the page's sentences (``untranslated`` says what of those is left)."""
    out = []
    for at, v in leaves(profile.data, ""):
        if at.startswith("info_page.sentences."):
            continue
        if isinstance(v, str) and _UNWRITTEN.search(v):
            hint = v.split(":", 1)[1].strip() if v.upper().startswith(MARK + ":") else f"replace {v!r}"
            out.append((at, hint))
    return out


def untranslated(ref: str, profile: Profile) -> list[tuple[str, str, str]]:
    """(file, key, what is wrong) of each key of the sentences files the profile carries (its
    page in a language Heed has none for) that keeps the page from being made: still to
    translate, missing, misspelt. ``file`` is the file the profile names (else its key)."""
    page = profile.info_page
    if page is None or not page.sentences:
        return []
    files = {lang: _shown(path) for lang, path in sentence_files(ref).items()} if ref not in BUILTIN_BOTS else {}
    return [(files.get(lang, f"{ref}: info_page.sentences.{lang}"), at, what)
            for lang, data in page.sentences.items() for at, what in problems(data, desk=profile.spec.desk)]


def _shown(path: Path) -> str:
    """A file as the user would name it: from the current folder when it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def refusal(ref: str, profile: Profile) -> str | None:
    """The one line info-page refuses a profile with: the identity keys it still takes from its
    base bot, else the keys still marked WRITE ME and the page's sentences still to translate;
    None when there is nothing to refuse."""
    problem = identity_problem(ref, profile)
    if problem:
        return problem
    keys = [k for k, _ in unwritten(profile)]
    left = untranslated(ref, profile)
    if left:
        keys.append(f"{len(left)} sentence{'s' if len(left) > 1 else ''} in "
                    f"{', '.join(dict.fromkeys(f for f, _, _ in left))}")
    if keys:
        return f"{ref}: still to write: {', '.join(keys)} (heed profile check {ref} says what each is)"
    return None


def check_lines(ref: str, profile: Profile) -> list[str]:
    """Every mistake a profile must lose before it may be published or deployed, one a line."""
    lines = [f"{ref}: {k}: still to write ({hint})" for k, hint in unwritten(profile)]
    lines += [f"{where}: {at}: {what}" for where, at, what in untranslated(ref, profile)]
    base = builtin_base(ref)
    if base is not None:
        lines += [f"{ref}: {k}: still {base}'s (write your own)"
                  for k in inherited_identity(profile, load_profile(base))]
    return lines
