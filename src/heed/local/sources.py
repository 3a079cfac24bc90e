"""Read a `--sources` YAML file into Source records, with one clear error per mistake."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from heed_core.profile import TASK_KINDS, Profile
from heed_core.urls import BadUrl, authority
from heed_core.work import Source


class SourcesError(ValueError):
    pass


def load_sources(path: Path, profile: Profile) -> list[Source]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise SourcesError(f"{path}: cannot read ({exc.strerror})") from exc
    except yaml.YAMLError as exc:
        raise SourcesError(f"{path}: not valid YAML") from exc
    if not isinstance(data, dict) or not isinstance(data.get("sources"), list):
        raise SourcesError(f"{path}: expected a mapping with a 'sources' list")
    scheduled = {s.task for s in profile.schedules}
    out: list[Source] = []
    seen: set[str] = set()
    for i, raw in enumerate(data["sources"]):
        where = f"{path}: sources[{i}]"
        if not isinstance(raw, dict):
            raise SourcesError(f"{where}: must be a mapping with url and kind")
        url, kind = raw.get("url"), raw.get("kind")
        if not isinstance(url, str):
            raise SourcesError(f"{where}.url: missing")
        try:
            authority(url)
        except BadUrl as exc:
            raise SourcesError(f"{where}.url: {exc}") from exc
        if kind not in TASK_KINDS:
            raise SourcesError(f"{where}.kind: {kind!r} is not one of {', '.join(TASK_KINDS)}")
        if kind not in scheduled:
            raise SourcesError(f"{where}.kind: {profile.name} has no schedule for {kind!r} "
                               f"(it runs: {', '.join(sorted(scheduled)) or 'nothing'})")
        sid = str(raw.get("id") or Source.make_id(url, kind))
        if sid in seen:
            raise SourcesError(f"{where}.id: {sid!r} is used twice")
        seen.add(sid)
        options: dict[str, Any] = {k: v for k, v in raw.items() if k not in ("id", "url", "kind")}
        out.append(Source(id=sid, url=url, kind=kind, options=options))
    return out
