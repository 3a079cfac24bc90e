"""What an answer to a work item means: the item's kind reads it (heed_core.kinds), one good
response in, results, follow-up candidates and skips out.

Pure: no store, no clock, no network. The handlers, and what each is handed and hands back
(``TaskInput``, ``TaskOutput``, ``Candidate``), live in the kinds' rooms; this module asks the
registry for the item's kind and names none."""
from __future__ import annotations

from heed_core import kinds
from heed_core.desk.proof import proof_digest
from heed_core.kinds.handling import Candidate, Cap, Event_, Skip, TaskInput, TaskOutput, text_version
from heed_core.typed_profile import Profile
from heed_core.work import WorkItem

__all__ = ["Candidate", "Cap", "Event_", "Skip", "TaskInput", "TaskOutput", "handle_failure", "handle_success",
           "may_bring", "stored_keys", "text_version"]


def _unknown(inp: TaskInput) -> TaskOutput:
    return TaskOutput(skips=[(inp.item.url, "unknown_purpose", f"{inp.item.task}/{inp.item.purpose}")])


def _proof(inp: TaskInput) -> TaskOutput:
    """A site owner's proof file (the desk): nothing is kept but its digest, in the URL's record,
    which the desk compares with the token it gave (heed_core.desk.proof). The turn's own purpose,
    whatever kind of work brought the host."""
    return TaskOutput(url_fields={"content_hash": proof_digest(inp.result.body)})


def handle_success(inp: TaskInput) -> TaskOutput:
    """A response worth reading (2xx, or a 304 whose kept copy is still read), read by its kind."""
    if inp.item.purpose == "proof":
        return _proof(inp)
    kind = kinds.find(inp.item.task)
    return kind.handle(inp) if kind is not None else _unknown(inp)


def handle_failure(inp: TaskInput, code: str, detail: str) -> TaskOutput:
    """A response (or none) that gives up on the item: the skip, and what its kind reports of it
    (a site check still reports, PRAHA-04)."""
    kind = kinds.find(inp.item.task)
    if kind is None or inp.item.purpose == "proof":
        return TaskOutput(skips=[(inp.item.url, code, detail)])
    return kind.handle_failure(inp, code, detail)


def may_bring(profile: Profile, item: WorkItem) -> int:
    """The most requests an item's answer can still add to its host's work this round, as the
    profile's caps bound them: a feed its articles (``feed.max_items``, or fewer under the
    follow-up's per-source cap), a listing page the sitemap fallback's, a sitemap its task's
    pages, a home page its icon; 0 for the rest. An upper bound for ordering work (a queue with
    more hosts due than it serves at once hands out first the hosts that may take longest),
    never a promise nor a cap."""
    kind = kinds.find(item.task)
    return kind.may_bring(profile, item) if kind is not None else 0


def stored_keys(url: str) -> list[str]:
    """Every bucket key a URL's texts may be kept under (COMMON-08: delete on request)."""
    return kinds.stored_keys(url)
