"""The site check kind (PRAHA-04): whether a site answers, where its home page leads, its name and
its icon; a site that does not answer is a result too. Nothing else of the home page is kept."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from heed_core.extract import site_check
from heed_core.kinds.base import Kind
from heed_core.kinds.handling import Candidate, TaskInput, TaskOutput, canon, content_type, emit, usage_refused
from heed_core.kinds.sayings import Every, Sayings, say
from heed_core.profile_schema import key
from heed_core.typed_profile import Profile
from heed_core.urls import short_hash
from heed_core.work import WorkItem

__all__ = ["KIND", "SiteCheckTask"]


@dataclass(frozen=True, kw_only=True)
class SiteCheckTask:
    min_interval_s: float = key(0, ge=0, doc="at most one check per site this often")


def _site_checked(inp: TaskInput, out: TaskOutput, c: Mapping[str, Any], icon_url: str | None,
                  icon_status: Any) -> None:
    item = inp.item
    emit(inp, out, "site.checked", short_hash(inp.profile.name, "check", item.source_id, item.round_id),
         {"kind": "site_check", "url": c.get("start_url", item.source_url), "reachable": True,
          "final_url": c.get("final_url"), "status": c.get("status"), "name": c.get("name"),
          "icon_url": icon_url, "icon_status": icon_status})


def _homepage(inp: TaskInput) -> TaskOutput:
    item, out = inp.item, TaskOutput()
    ctx = {"start_url": item.ctx.get("first_url", item.url), "final_url": item.url, "status": inp.result.status}
    if usage_refused(inp, out):
        # PRAHA-04 records whether the site answered and where it led, and that is kept; its name
        # is the page's content, and its icon would be followed from it: neither.
        out.source_fields["last_read"] = inp.now
        _site_checked(inp, out, {**ctx, "name": None}, None, None)
        return out
    info = site_check.site_info(inp.result.body, base_url=item.url, content_type=content_type(inp.result))
    # PRAHA-04: nothing of the home page is kept but its name and where it led.
    out.candidates.append(Candidate(item.follow(canon(inp, info.icon_url), "icon", ctx={**ctx, "name": info.name})))
    return out


def _icon(inp: TaskInput, icon_status: Any) -> TaskOutput:
    out = TaskOutput(source_fields={"last_read": inp.now})
    _site_checked(inp, out, inp.item.ctx, inp.item.url, icon_status)
    return out


class SiteCheck(Kind):
    name = "site_check"
    section = SiteCheckTask
    entry_purpose = "homepage"
    handlers = {"homepage": _homepage, "icon": lambda inp: _icon(inp, inp.result.status)}

    def cadence_s(self, profile: Profile) -> float:
        return profile.section("site_check", SiteCheckTask).min_interval_s

    def handle_failure(self, inp: TaskInput, code: str, detail: str) -> TaskOutput:
        """PRAHA-04: a home page that gave no answer is reported as unreachable; an icon that gave
        none, with the check it ends."""
        item, result = inp.item, inp.result
        if item.purpose == "icon":
            icon = _icon(inp, result.status or result.error or code)
            icon.skips.append((item.url, code, detail))
            return icon
        out = TaskOutput(skips=[(item.url, code, detail)])
        if item.purpose == "homepage":
            emit(inp, out, "site.checked", short_hash(inp.profile.name, "check", item.source_id, item.round_id),
                 {"kind": "site_check", "url": item.ctx.get("first_url", item.url), "reachable": False,
                  "final_url": item.url, "status": result.status, "error": result.error or code, "name": None})
            out.source_fields["last_read"] = inp.now
        return out

    def may_bring(self, profile: Profile, item: WorkItem) -> int:
        return 1 if item.purpose == "homepage" else 0  # a home page its icon

    def says(self, profile: Profile) -> Sayings:
        interval = profile.section("site_check", SiteCheckTask).min_interval_s
        return Sayings(fetched=(say("f_site_check"),), kept=(say("k_site_check"),), usage=(say("usage_site_check"),),
                       cadence=(say("site_check_interval", once=Every(interval)),) if interval else ())


KIND = SiteCheck()
