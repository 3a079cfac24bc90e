"""`heed block|unblock|blocks|purge` on a stack (moto, the real handlers) and on a state directory."""
from __future__ import annotations

import base64
import json
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from heed_core.profile import load_profile_data
from heed_core.work import Source

from heed_embedded.state import open_state
from heed_embedded.store import SqliteStore, SqliteTexts

from heed.cli import build_parser
from heed.demo.web import Hit, RecordingServer, Route, Site
from heed.local.runtime import LocalRun

from tests.support.stack import STACK, run_command, stack_aws

PROFILE = {"extends": "subsidieupdate", "politeness": {"min_delay_s": 0.1}}


def _gemeente(ip: str, on_page_a: Any = None) -> RecordingServer:
    def page(n: str) -> Any:
        def body(hit: Hit) -> str:
            if n == "a" and on_page_a is not None:
                on_page_a()
            return (f"<html><head><title>{n}</title></head><body><main><h1>Subsidie {n}</h1>"
                    "<p>Bedrag: EUR 500.</p></main></body></html>")
        return body
    urls = "".join(f"<url><loc>{{{{base}}}}/subsidies/{n}/</loc></url>" for n in ("a", "b"))
    site = Site(name="gemeente", routes={
        "/robots.txt": Route(body="User-agent: *\nAllow: /\n", content_type="text/plain"),
        "/sitemap.xml": Route(body=f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                                   f'{urls}</urlset>', content_type="application/xml", conditional=True),
        **{f"/subsidies/{n}/": Route(body=page(n), conditional=True) for n in ("a", "b")}})
    return RecordingServer(site, ip=ip).start()


def ops(capsys: pytest.CaptureFixture[str], *argv: str, aws: Any = None) -> tuple[int, str, str]:
    return run_command(capsys, *argv, aws=aws)


def _skips(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "skips.jsonl").read_text().splitlines()]


@pytest.fixture
def two_sites() -> Iterator[tuple[RecordingServer, RecordingServer]]:
    a, b = _gemeente("127.0.0.62"), _gemeente("127.0.0.63")
    yield a, b
    a.stop()
    b.stop()


def _run(tmp_path: Path, *sites: RecordingServer) -> LocalRun:
    run = LocalRun(load_profile_data(PROFILE), [Source(id=f"g{i}", url=s.base_url + "/", kind="subsidy")
                                                for i, s in enumerate(sites)],
                   start=time.time(), until=time.time(), out_dir=tmp_path / "out", allow_private=True, patience_s=5)
    run.setup()
    return run


# --- block: the next request ----------------------------------------------------------------------

def test_common_08_a_block_on_the_stack_takes_effect_on_the_next_request(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    holder: dict[str, Any] = {}

    def block_now() -> None:
        # WHEN, while the bot reads page a, the operator blocks the site (robots.txt still allows all)
        args = build_parser().parse_args(["block", "127.0.0.64", "--stack", STACK, "--reason", "mail of the owner"])
        holder["code"] = args.func(args, aws=stack_aws(holder["run"]))

    server = _gemeente("127.0.0.64", on_page_a=block_now)
    run = holder["run"] = _run(tmp_path, server)
    try:
        run.fire(time.time(), ["subsidy"])
        run.drain()
    finally:
        run.close()
        server.stop()
    assert holder["code"] == 0
    # THEN page b, the next request, is never made: skipped as blocked_by_operator with the reason
    assert [r.path for r in server.log()] == ["/robots.txt", "/sitemap.xml", "/subsidies/a/"]
    blocked = [s for s in _skips(tmp_path / "out") if s["reason"] == "blocked_by_operator"]
    assert [s["url"] for s in blocked] == [server.base_url + "/subsidies/b/"]
    assert blocked[0]["detail"] == "mail of the owner"
    capsys.readouterr()


def test_common_08_a_block_in_a_state_dir_holds_on_the_next_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], two_sites: tuple[RecordingServer, RecordingServer]) -> None:
    a, b = two_sites
    state = str(tmp_path / "state")
    bot = tmp_path / "bot.yaml"
    bot.write_text("extends: subsidieupdate\npoliteness:\n  min_delay_s: 0.1\n")
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - {{url: '{a.base_url}/', kind: subsidy, id: a}}\n"
                       f"  - {{url: '{b.base_url}/', kind: subsidy, id: b}}\n")
    run = ["local", "run", "--bot", str(bot), "--state", state, "--allow-private", "--patience", "3"]
    assert ops(capsys, *run, "--sources", str(sources), "--out", str(tmp_path / "out1"))[0] == 0
    a.reset_log()
    b.reset_log()
    # WHEN the operator blocks site a, given as a URL
    code, out, err = ops(capsys, "block", a.base_url + "/subsidies/a/", "--state", state, "--reason", "stop, please")
    assert code == 0 and err.strip() == "heed block: taking 127.0.0.62, the host of " + a.base_url + "/subsidies/a/"
    code, out, _ = ops(capsys, "blocks", "--state", state, "--json")
    assert [json.loads(x)["domain"] for x in out.splitlines()] == ["127.0.0.62"]
    assert ops(capsys, *run, "--out", str(tmp_path / "out2"))[0] == 0
    # THEN a sees no request at all, b is crawled as before
    assert a.log() == [] and b.log() != []
    assert {s["source"] for s in _skips(tmp_path / "out2") if s["reason"] == "blocked_by_operator"} == {"a"}
    # AND once unblocked, a is crawled again
    assert ops(capsys, "unblock", "127.0.0.62", "--state", state)[0] == 0
    assert ops(capsys, *run, "--out", str(tmp_path / "out3"))[0] == 0
    assert a.log() != []


def test_block_mistakes_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = str(tmp_path / "state")
    for argv, line in (
            (["block", "co.uk", "--state", state],
             "heed block: co.uk is a public suffix: blocking it stops every site under it "
             "(give --force if that is what you mean)"),
            (["block", "com", "--state", state], "heed block: com is a public suffix: blocking it stops every "
                                                 "site under it (give --force if that is what you mean)"),
            (["block", "ex ample.com", "--state", state],
             "heed block: 'ex ample.com' is not a host or domain name (e.g. example.com)"),
            (["purge", "co.uk", "--state", state],
             "heed purge: co.uk is a public suffix: a purge names one site's domain (e.g. example.co.uk) "
             "or a host under it"),
            (["blocks", "--state", str(tmp_path / "none")],
             f"heed blocks: --state: {tmp_path / 'none'} is not a heed state directory "
             f"(`heed serve --state {tmp_path / 'none'}` makes one)"),
            (["blocks", "--state", state, "--region", "eu-west-1"],
             "heed blocks: --region and --profile go with --stack, not --state")):
        code, out, err = ops(capsys, *argv)
        assert (code, out) == (2, ""), argv
        assert err.strip().splitlines() == [line]
    code, _, _ = ops(capsys, "block", "co.uk", "--state", state, "--force")
    assert code == 0
    code, _, err = ops(capsys, "unblock", "news.co.uk", "--state", state)
    assert code == 1 and err.strip() == f"heed unblock: news.co.uk is not on the block list of state {state} " \
                                        "(co.uk is: heed unblock co.uk)"


# --- purge: nothing of the domain, everything else --------------------------------------------------

def _stored(state: Path) -> list[str]:
    """Everything a state directory's database keeps, one item a line, as DynamoDB would key it."""
    st = open_state(state, create=False)
    try:
        return SqliteStore(st.db).dump().splitlines()
    finally:
        st.close()


def _texts(state: Path) -> list[str]:
    st = open_state(state, create=False)
    try:
        return [k for k, versions in SqliteTexts(st.db).all_versions().items() for _ in versions]
    finally:
        st.close()


def _items(run: LocalRun) -> list[dict[str, Any]]:
    from heed_aws.runtime import _client

    return _client("dynamodb").scan(TableName=run.res.table_name)["Items"]


def _objects(run: LocalRun) -> list[tuple[str, str]]:
    from heed_aws.runtime import _client

    resp = _client("s3").list_object_versions(Bucket=run.res.bucket)
    return sorted((v["Key"], v["VersionId"]) for v in resp.get("Versions", []))


def _enc(value: Any) -> Any:
    """An item as JSON can hold it (binary attributes in base64)."""
    if isinstance(value, dict):
        return {k: base64.b64encode(bytes(v)).decode("ascii") if k == "B" else _enc(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_enc(v) for v in value]
    return value


def _of(items: list[dict[str, Any]], ip: str) -> list[str]:
    def text(item: dict[str, Any]) -> str:
        raw = json.dumps(_enc(item))
        for v in item.values():
            if "B" in v:
                try:
                    raw += zlib.decompress(bytes(v["B"])).decode("utf-8", "replace")
                except zlib.error:
                    pass
        return raw
    return sorted(f"{i['pk']['S']}|{i['sk']['S']}" for i in items if ip in text(i))


def test_common_08_subsidie_13_purge_on_the_stack_leaves_nothing_of_the_domain_and_everything_else(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], two_sites: tuple[RecordingServer, RecordingServer]) -> None:
    a, b = two_sites
    run = _run(tmp_path, a, b)
    try:
        run.fire(time.time(), ["subsidy"])
        run.drain()
        before = _items(run)
        objects_before = _objects(run)
        assert _of(before, "127.0.0.62") and _of(before, "127.0.0.63")
        # a dry run counts and deletes nothing
        code, out, _ = ops(capsys, "purge", "127.0.0.62", "--stack", STACK, "--dry-run", "--json", aws=stack_aws(run))
        dry = json.loads(out)
        assert code == 0 and dry["dry_run"] and dry["sources"] == 1 and dry["url_records"] == 3
        assert _items(run) == before
        # WHEN the owner of 127.0.0.62 asks for everything to be deleted
        code, out, err = ops(capsys, "purge", "127.0.0.62", "--stack", STACK, "--json", aws=stack_aws(run))
        report = json.loads(out)
        assert code == 0 and "is not blocked" in err
        assert (report["sources"], report["url_records"], report["objects"]) == (1, 3, 3)
        after = _items(run)
        # THEN nothing of it is left but the tombstone, which names it and the counts, and the purge
        # mark every turn reads with the block list (work made before it is never stored again)
        assert _of(after, "127.0.0.62") == ["BLOCKS|ALL", "META|PURGE#127.0.0.62"]
        tomb = json.loads(next(i for i in after if i["sk"]["S"] == "PURGE#127.0.0.62")["data"]["S"])
        assert tomb["purges"][0]["url_records"] == 3 and tomb["purges"][0]["sources"] == 1
        # AND everything of the other domain is as it was
        assert [i for i in after if _of([i], "127.0.0.63")] == [i for i in before if _of([i], "127.0.0.63")]
        assert len(_objects(run)) == len(objects_before) - 3
        # AND a second purge finds nothing and is on record too
        code, out, _ = ops(capsys, "purge", "127.0.0.62", "--stack", STACK, "--json", aws=stack_aws(run))
        assert json.loads(out)["state_items"] == 0 and json.loads(out)["purges_on_record"] == 2
    finally:
        run.close()


def test_common_08_purge_in_a_state_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       two_sites: tuple[RecordingServer, RecordingServer]) -> None:
    a, b = two_sites
    state = tmp_path / "state"
    bot = tmp_path / "bot.yaml"
    bot.write_text("extends: subsidieupdate\npoliteness:\n  min_delay_s: 0.1\n")
    sources = tmp_path / "sources.yaml"
    sources.write_text(f"sources:\n  - {{url: '{a.base_url}/', kind: subsidy, id: a}}\n"
                       f"  - {{url: '{b.base_url}/', kind: subsidy, id: b}}\n")
    assert ops(capsys, "local", "run", "--bot", str(bot), "--state", str(state), "--allow-private", "--patience", "3",
               "--sources", str(sources), "--out", str(tmp_path / "out"))[0] == 0
    table_before = _stored(state)
    other_before = [x for x in table_before if "127.0.0.63" in x]
    code, out, err = ops(capsys, "purge", "127.0.0.62", "--state", str(state))
    assert code == 0 and "deleted" in out and "URL records:        3" in out
    table = _stored(state)
    left = [x for x in table if "127.0.0.62" in x]
    assert len(left) == 2 and '"PURGE#127.0.0.62"' in left[1] and '"!127.0.0.62"' in left[0]  # tombstone, purge mark
    assert [x for x in table if "127.0.0.63" in x] == other_before
    bucket = _texts(state)
    assert len(bucket) == 3  # b's sitemap copy and two page texts; a's three are gone
