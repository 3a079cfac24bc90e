"""Your own bot: `heed new-bot` writes its profile, `heed profile check` says what is still
unwritten (heed.botcheck).

A new bot's profile ``extends:`` a built-in bot and carries that bot's numbers, each with the
promises of PROMISES.md it keeps (from the conformance catalogue), and an identity of its own in
which every value the user must write is marked ``WRITE ME`` (a URL: on the ``write-me.invalid``
host, which never resolves): who it is, what it says of itself (every key the schema declares the
operator's own, such as its AIPREF ``usage``) and its page's texts. In a language Heed has no
sentences for, a second file beside the profile holds the page's sentences to translate."""
from __future__ import annotations

import argparse
import json
import re
import typing
from collections.abc import Mapping
from dataclasses import MISSING
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError
from heed_core.profile import BUILTIN_BOTS, PageTexts, Profile, Spec, builtin_base, load_profile
from heed_core.profile_schema import describe, fields_of

from heed.botcheck import IDENTITY_KEYS, MARK, PLACEHOLDER_HOST, check_lines
from heed.pages import language as page_language

__all__ = ["DEFAULT_BASE", "BotError", "new_bot_files", "new_bot_text", "register", "robots_token_for",
           "warning_lines"]

DEFAULT_BASE = "springstudiobot"  # the most careful: 10 s between requests, a page once a day, titles only


class BotError(ConfigError):
    """A user mistake in new-bot or profile check: one line, exit 2."""

    code = "own_bot"


# --- new-bot -------------------------------------------------------------------------------------

def robots_token_for(name: str) -> str:
    """The product token of a bot named ``mybot`` or ``my-bot``: ``Mybot``, ``MyBot`` (RFC 9309
    2.2.1 allows letters, '-' and '_': digits are left out)."""
    token = "".join(part.capitalize() for part in re.sub(r"[0-9]", "", name).split("-"))
    if not token:
        raise BotError(f"NAME: {name!r} has no letter to make its robots.txt product token from")
    return token


def _rules_by_key(base: str) -> tuple[dict[str, list[tuple[str, str]]], list[tuple[str, str]]]:
    """{profile key: [(rule id, sentence)]} of the base bot's catalogue, and the rules that bind
    no key (kept by the code alone)."""
    from heed.conformance.catalogue import catalogue

    rules, _ = catalogue(base)
    by_key: dict[str, list[tuple[str, str]]] = {}
    free = []
    for r in rules:
        for k in r.keys:
            by_key.setdefault(k, []).append((r.id, r.sentence))
        if not r.keys:
            free.append((r.id, r.sentence))
    return by_key, free


def _pick(merged: Mapping[str, Any], own: Mapping[str, Any], wanted: set[str], at: str = "") -> dict[str, Any]:
    """The base's own keys (in its file's order) and the keys its promises bind, valued as the
    merged base has them."""
    out: dict[str, Any] = {}
    for k in list(own) + [k for k in merged if k not in own]:
        dotted = f"{at}{k}"
        if k not in merged:
            continue
        inner = any(w.startswith(dotted + ".") for w in wanted)
        if k in own or dotted in wanted or inner:
            v = merged[k]
            if isinstance(v, Mapping) and isinstance(own.get(k, {}), Mapping) and (inner or k in own):
                picked = _pick(v, own.get(k) or {}, wanted, dotted + ".")
                out[k] = picked if picked or k in own else v
            else:
                out[k] = v
    return out


def _emit(value: Mapping[str, Any], notes: Mapping[str, list[str]], rules: Mapping[str, list[tuple[str, str]]],
          said: set[str], at: str = "", indent: int = 0) -> list[str]:
    """YAML of ``value``: above each key its notes and the sentence of each promise it keeps
    (said once in the file), after it the ids of those promises."""
    pad = " " * indent
    lines = []
    for k, v in value.items():
        dotted = f"{at}{k}"
        bound = rules.get(dotted, [])
        lines += [f"{pad}# {rid}: {sentence}" for rid, sentence in bound if rid not in said]
        said.update(rid for rid, _ in bound)
        lines += [f"{pad}# {n}" for n in notes.get(dotted, [])]
        ids = f"  # {', '.join(rid for rid, _ in bound)}" if bound else ""
        if isinstance(v, Mapping) and v:
            lines.append(f"{pad}{k}:{ids}")
            lines += _emit(v, notes, rules, said, dotted + ".", indent + 2)
        elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            lines.append(f"{pad}{k}:{ids}")
            for item in v:
                first, *rest = [f"{kk}: {json.dumps(vv, ensure_ascii=False)}" for kk, vv in item.items()]
                lines.append(f"{pad}  - {first}")
                lines += [f"{pad}    {r}" for r in rest]
        else:
            lines.append(f"{pad}{k}: {json.dumps(v, ensure_ascii=False)}{ids}")
    return lines


def _wrap(text: str, prefix: str = "# ", width: int = 100) -> list[str]:
    import textwrap

    return [prefix + line for line in textwrap.wrap(text, width - len(prefix))]


def _texts(language: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for lang in dict.fromkeys([language, page_language.REFERENCE]):
        words = page_language.name_of(lang)
        texts: dict[str, Any] = {}
        for name, tp, meta, default in fields_of(PageTexts):
            if default is MISSING:  # what every page needs; the rest is the writer's to add
                text = f"{MARK}: {meta.doc} (in {words})"
                texts[name] = [text] if typing.get_origin(tp) is tuple else text
        out[lang] = texts
    return out


def _optional_texts() -> list[str]:
    return [f"{name} ({meta.doc})" for name, _, meta, default in fields_of(PageTexts) if default is not MISSING]


def _own_keys(merged: Mapping[str, Any], base: str) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """What the page states as the operator's own choice (the keys the schema declares ``own``):
    each marked WRITE ME, with what it must be and what the base bot chose, never the base's value."""
    values: dict[str, Any] = {}
    notes: dict[str, list[str]] = {}
    for key, tp, meta, _ in fields_of(Spec):
        if meta.own:
            what = describe(tp, meta, key)
            values[key] = f"{MARK}: {what}" + (" ([] for none)" if what.startswith("a list") else "")
            notes[key] = _wrap(f"{MARK}: {meta.doc}. The page states it as your own choice ({base} declares "
                               f"{json.dumps(merged.get(key), ensure_ascii=False)}: {base}'s, not yours).", "")
    return values, notes


def _language(language: str) -> str:
    tag = page_language.canonical_tag(language)
    if tag is None:
        raise BotError(f"--language: {language!r} is not a BCP 47 language tag (a language of 2 or 3 letters, then "
                       "a script, a region or a variant if need be: fr, pt-BR, zh-Hant, es-419)")
    return tag


def new_bot_text(name: str, language: str, base: str = DEFAULT_BASE, sentences_file: str | None = None) -> str:
    """The profile `heed new-bot` writes: ``extends: base``, an identity of its own to write,
    what it says of itself to write, the base's numbers with the promises each keeps, the info
    page's texts to write and, in a language Heed has no sentences for, the name of the file
    that holds them (``sentences_file``, beside the profile; default NAME.LL.yaml)."""
    import yaml

    from heed_core.profile import builtin_text

    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,40}", name):
        raise BotError(f"NAME: {name!r} is not a bot name (lower-case letters, digits and '-', up to 41)")
    if name in BUILTIN_BOTS:
        raise BotError(f"NAME: {name!r} is a built-in bot's name; a bot of your own needs its own")
    language = _language(language)
    if base not in BUILTIN_BOTS:
        raise BotError(f"--extends: {base!r} is not a built-in bot ({', '.join(BUILTIN_BOTS)})")
    token = robots_token_for(name)
    info_url = f"https://{PLACEHOLDER_HOST}/{name}"
    merged = load_profile(base).data
    own = yaml.safe_load(builtin_text(base))  # its own keys, in its order
    by_key, free = _rules_by_key(base)
    said = {rid for rid, _ in free}
    chosen, chosen_notes = _own_keys(merged, base)
    skip = set(IDENTITY_KEYS) | {"language", "description", "info_page"} | set(chosen)
    numbers = _pick(merged, {k: v for k, v in own.items() if k not in skip},
                    {k for k in by_key if k.split(".")[0] not in skip})
    notes: dict[str, list[str]] = {}
    if merged.get("egress", {}).get("ips"):
        # The base's published addresses are its own: yours come with your first deploy.
        numbers["egress"] = {"ips": [], "reverse_dns": None, "ips_json_path": None}
        notes["egress"] = _wrap(
            f"{MARK}: your own addresses: deploy once (heed deploy --force 'no egress address yet'), then set ips to "
            "the stack's EgressIp output, reverse_dns to its PTR name and ips_json_path to where you publish them", "")
    identity = {
        "name": name, "user_agent": f"{token}/0.1 (+{info_url})", "robots_token": token, "info_url": info_url,
        "contact": f"{MARK}: an e-mail address or a contact page URL, read by a person", "language": language}
    id_notes = {
        "name": ["the bot's name: its stack's BotName, its metrics' namespace"],
        "user_agent": [f"{MARK}: put your info_url after the '+' (token/version (+info URL), nothing else)"],
        "robots_token": [
            "the product token site owners name in robots.txt (letters, '-' and '_'): the user agent starts with it"],
        "info_url": [f"{MARK}: your bot's public page (heed info-page writes it), on your own site"],
        "contact": ["an address site owners write to; the info page shows it"],
        "language": ["the info page is written in this language and in English"]}
    head = [
        f"# {name}: a bot of its own on Heed (heed new-bot {name} --language {language} --extends {base}).",
        "#",
        "# Who it is is yours to write: every value marked WRITE ME (a URL on write-me.invalid) is still",
        f"# to write; `heed profile check {name}.yaml` lists what is left, and `heed info-page` and",
        "# `heed deploy` refuse the profile until nothing is.",
        f"# Everything else is {base}'s, and each number says which promise of PROMISES.md it keeps:",
        f"# `heed conformance --bot {name}.yaml` proves them, and `heed deploy` stops at a broken one.",
        "# A stricter number (a longer gap, a lower cap) keeps a promise; a looser one breaks it.",
        "# Kept with no number to change:",
        *[f"#   {rid}: {sentence}" for rid, sentence in free],
        f"extends: {base}",
        "",
        "# --- who the bot is: its own, never " + base + "'s ---",
        *_emit(identity, id_notes, by_key, said),
        "",
        "# --- what it says of itself: your choice, never " + base + "'s ---",
        *_emit(chosen, chosen_notes, by_key, said),
        "",
        f"# --- what it does and promises: {base}'s numbers ---",
        *_emit(numbers, notes, by_key, said),
        "",
        "# --- the words of its public page (heed info-page): yours to write, in "
        f"{' and '.join(dict.fromkeys([language, 'en']))} ---",
        *_wrap("More you may write in each language: " + "; ".join(_optional_texts()) + "."),
        "info_page:",
        *_sentences_lines(name, language, sentences_file),
        "  texts:",
        *_emit(_texts(language), {}, {}, said, "", 4),
    ]
    return "\n".join(head) + "\n"


def _sentences_lines(name: str, language: str, sentences_file: str | None) -> list[str]:
    if language in page_language.built_in():
        return []
    return [*_wrap(f"Heed has no sentences in {language}: they are yours to translate, in the file named here "
                   "(beside this profile; heed new-bot wrote it from English).", "  # "),
            "  sentences:",
            f"    {language}: {json.dumps(sentences_file or f'{name}.{language}.yaml')}"]


def new_bot_files(name: str, language: str, base: str, out: Path) -> list[tuple[Path, str]]:
    """(path, text) of each file `heed new-bot` writes: the profile at ``out`` and, in a language
    Heed has no sentences for, beside it ``<out's stem>.<tag>.yaml``: English's to translate."""
    tag = _language(language)
    if tag in page_language.built_in():
        return [(out, new_bot_text(name, tag, base))]
    sentences = out.with_name(f"{out.stem}.{tag}.yaml")
    return [(out, new_bot_text(name, tag, base, sentences.name)), (sentences, page_language.to_translate(tag))]


# --- the commands --------------------------------------------------------------------------------

def register(subparsers: Any) -> None:
    """Add ``new-bot`` to the `heed` parser's subcommands."""
    p = subparsers.add_parser(
        "new-bot", help="write the profile of a bot of your own, to fill in (heed profile check says what is left)",
        description="Writes NAME.yaml: a profile that extends a built-in bot, with an identity of its own to "
                    "write (every value marked WRITE ME) and the base's numbers, each with the promise it keeps; "
                    "in a language Heed has no info-page sentences for, NAME.LL.yaml beside it, to translate.")
    p.add_argument("name", metavar="NAME", help="the bot's name: lower-case letters, digits and '-'")
    p.add_argument("--language", required=True, metavar="LL",
                   help="the info page's language (and English), a BCP 47 tag: Heed has sentences in "
                        f"{', '.join(page_language.built_in())}; any other (fr, pt-BR) gets a file to translate")
    p.add_argument("--extends", default=DEFAULT_BASE, metavar="BOT",
                   help=f"the built-in bot whose numbers and promises it takes (default: {DEFAULT_BASE}, the most "
                        "careful: 10 s between requests, each page once a day, titles and links only)")
    p.add_argument("--out", metavar="FILE", help="where to write it (default: ./NAME.yaml; never overwritten)")
    p.add_argument("--json", action="store_true", help="what was written, as one JSON object")
    p.set_defaults(func=cmd_new_bot)


def cmd_new_bot(args: argparse.Namespace) -> int:
    out = Path(args.out or f"{args.name}.yaml")
    files = new_bot_files(args.name, args.language, args.extends, out)  # a BotError: heed.cli.main tells it
    for path, _ in files:
        if path.exists():
            raise BotError(f"--out: {path} exists (give another --out, or remove it)")
    written: list[Path] = []
    try:
        for path, text in files:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    except OSError as exc:
        for path in written:  # all or nothing: a profile without its sentences file would not load
            path.unlink(missing_ok=True)
        raise BotError(f"--out: cannot write {path} ({exc.strerror or exc})") from exc
    sentences = files[1][0] if len(files) > 1 else None
    if getattr(args, "json", False):
        print(json.dumps({"wrote": str(out), "name": args.name, "extends": args.extends,
                          "language": _language(args.language), "sentences": str(sentences) if sentences else None,
                          "next": f"heed profile check {out}"}))
        return 0
    also = f" and {sentences} (the page's sentences, to translate)" if sentences else ""
    print(f"wrote {out}{also}: fill in every WRITE ME, then: heed profile check {out}")
    return 0


def warning_lines(ref: str, profile: Profile) -> list[str]:
    """One line per key of ``profile`` that breaks a promise of the built-in bot it extends,
    naming the rule ids: its numbers judged as `heed conformance` and `heed deploy` judge them
    (the gaps, caps, in-flight limit and schedules of the base's rules), no scenario played."""
    from heed.conformance.catalogue import broken_numbers

    base = builtin_base(ref)
    if base is None:
        return []
    by_key: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for broken in broken_numbers(base, profile):
        if not set(broken.keys) & set(IDENTITY_KEYS):  # an identity that is not its own has lines of its own
            by_key.setdefault(broken.keys, []).append((broken.rule, broken.said))
    lines = []
    for found in by_key.values():
        rules = list(dict.fromkeys(rule for rule, _ in found))
        lines.append(f"{ref}: warning: {found[0][1]}: breaks {base}'s promise{'s' if len(rules) > 1 else ''} "
                     f"{', '.join(rules)} (heed deploy stops at it unless --force)")
    return lines


def cmd_profile_check(args: argparse.Namespace) -> int:
    """`heed profile check FILE`: 0 when nothing is left to write, 1 with a line per key that
    is, 2 for a profile that does not load. A warning (a number looser than the base bot's
    promise) is a line too, and changes no exit code."""
    from heed_core.bundle import content_hash

    profile = load_profile(args.bot)  # a profile that does not load: heed.cli.main, exit 2
    lines = check_lines(args.bot, profile)
    warnings = warning_lines(args.bot, profile)
    if getattr(args, "json", False):
        print(json.dumps({"profile": args.bot, "bot": profile.name, "ready": not lines, "to_write": lines,
                          "warnings": warnings, "sha256": content_hash(profile)}, ensure_ascii=False))
        return 1 if lines else 0
    for line in lines + warnings:
        print(line)
    if lines:
        print(f"{args.bot}: {len(lines)} to write before it is published or deployed")
        return 1
    said = f", {len(warnings)} warning{'s' if len(warnings) > 1 else ''} above" if warnings else ""
    print(f"{args.bot}: ready: {profile.name}, its own identity, every sentence written "
          f"(sha256 {content_hash(profile)}){said}")
    return 0
