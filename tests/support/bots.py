"""A bot of its own for the tests: a built-in bot's profile under another identity, so the
commands that refuse a borrowed identity (info-page, deploy, samconfig) take it."""
from __future__ import annotations

import json
import re
from typing import Any

from heed_core.profile import load_profile

__all__ = ["own_identity", "translated", "written"]


def _own(value: Any) -> Any:
    if isinstance(value, str):
        return f"Ours: {value}"
    if isinstance(value, list):
        return [_own(v) for v in value]
    return value


def own_identity(base: str, name: str = "ownbot", host: str = "own.example") -> dict[str, Any]:
    """The identity keys of a bot named ``name`` on ``host`` that extends ``base``: its own user
    agent, token, info URL and contact, and the base's page texts rewritten (its own words)."""
    token = "".join(part.capitalize() for part in name.split("-"))
    texts = load_profile(base).data["info_page"]["texts"]
    return {"extends": base, "name": name, "user_agent": f"{token}/1.0 (+https://{host}/bot)", "robots_token": token,
            "info_url": f"https://{host}/bot", "contact": f"bot@{host}",
            "info_page": {"texts": {lang: {k: v if k == "example_path" else _own(v) for k, v in t.items()}
                                    for lang, t in texts.items()}}}


def written(text: str, name: str = "mybot") -> str:
    """A profile `heed new-bot` wrote for ``name``, with what a user writes where it left WRITE ME
    (its usage: what its base bot declares, chosen again)."""
    base = re.search(r"^extends: (\S+)$", text, re.M)
    if base:
        uses = json.dumps(list(load_profile(base.group(1)).spec.usage))
        text = re.sub(r'^usage: "WRITE ME: [^"]*"', f"usage: {uses}", text, flags=re.M)
    text = text.replace(f"https://write-me.invalid/{name}", f"https://bots.example.org/{name}")
    text = text.replace('"WRITE ME: an e-mail address or a contact page URL, read by a person"',
                        '"crawler@bots.example.org"')
    return re.sub(r'"WRITE ME: ([^"]*)"', lambda m: json.dumps("Example Bots: " + m.group(1)), text)


def translated(text: str, tag: str) -> str:
    """A sentences file `heed new-bot` wrote to translate, with every WRITE ME written: the English
    after the mark, tagged as the translation (``[fr] Who we are ...``), its placeholders kept."""
    return re.sub(r'"WRITE ME: ((?:[^"\\]|\\.)*)"', lambda m: f'"[{tag}] {m.group(1)}"', text)
