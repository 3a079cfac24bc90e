"""Operator tools: a stop request without robots.txt change, and deleting a domain's data (COMMON-08)."""
from __future__ import annotations

import json
import time
from pathlib import Path

from heed_core.profile import load_profile_data
from heed_core.work import Source

from heed.demo.web import RecordingServer, Route, Site
from heed.local.runtime import LocalRun


def _site(ip: str) -> RecordingServer:
    pages = {f"/subsidies/{n}/": Route(body=f"<html><head><title>{n}</title></head><body><main><h1>Subsidie {n}</h1>"
                                            f"<p>Bedrag: EUR 500.</p></main></body></html>") for n in ("a", "b")}
    urls = "".join(f"<url><loc>{{{{base}}}}/subsidies/{n}/</loc></url>" for n in ("a", "b"))
    site = Site(name="gemeente", routes={
        "/robots.txt": Route(body="User-agent: *\nAllow: /\n", content_type="text/plain"),
        "/sitemap.xml": Route(body=f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>',
                              content_type="application/xml"),
        **pages})
    return RecordingServer(site, ip=ip).start()


def _run(server: RecordingServer, tmp_path: Path) -> LocalRun:
    profile = load_profile_data({"extends": "subsidieupdate", "politeness": {"min_delay_s": 0.1}})
    run = LocalRun(profile, [Source(id="g", url=server.base_url + "/", kind="subsidy")], start=time.time(),
                   until=time.time(), out_dir=tmp_path, allow_private=True, patience_s=5)
    run.setup()
    return run


def test_common_08_block_list_stops_a_site_without_robots_change(tmp_path: Path):
    server = _site("127.0.0.41")
    run = _run(server, tmp_path)
    try:
        from heed_aws import runtime

        # GIVEN the site owner asked us to stop (robots.txt still allows everything)
        runtime.store().block_domain("127.0.0.41", "mail from the site owner, 2026-11-30")
        # WHEN a round runs
        run.fire(time.time(), ["subsidy"])
        run.drain()
        # THEN the site sees no request at all, and the skip says why
        assert server.log() == []
        skips = [json.loads(x) for x in (tmp_path / "skips.jsonl").read_text().splitlines()]
        assert [s["reason"] for s in skips] == ["blocked_by_operator"]
        assert "site owner" in skips[0]["detail"]
    finally:
        run.close()
        server.stop()


def test_common_08_purge_deletes_everything_stored_from_a_domain(tmp_path: Path):
    server = _site("127.0.0.42")
    run = _run(server, tmp_path)
    try:
        from heed.operator.actions import purge_domain

        run.fire(time.time(), ["subsidy"])
        run.drain()
        from heed.local.runtime import operator_store

        store = operator_store()
        host = f"http://{server.host}"
        assert store.get_url(server.base_url + "/subsidies/a/") is not None
        from heed_aws.runtime import _client

        bucket = run.res.bucket
        assert _client("s3").list_object_versions(Bucket=bucket).get("Versions")
        # WHEN the operator purges the domain
        report = purge_domain(store, "127.0.0.42", s3=_client("s3"), bucket=bucket)
        # THEN nothing of it is left: state, sources, results and kept page texts
        # two page texts, one sitemap copy
        assert report.state_items > 0 and report.sources == 1 and report.objects == 3
        assert store.get_url(server.base_url + "/subsidies/a/") is None
        assert store.read_host(host).version == 0  # the host's item, its robots.txt copy with it, is gone
        assert store.list_sources() == []
        assert not _client("s3").list_object_versions(Bucket=bucket).get("Versions")
        leftover = [i for i in _client("dynamodb").scan(TableName=run.res.table_name)["Items"]
                    if "127.0.0.42" in json.dumps(i)]
        # but the purge mark every turn reads (work made before it is never stored again)
        assert [(i["pk"]["S"], sorted(k for k in i if "127.0.0.42" in k)) for i in leftover] == [
            ("BLOCKS", ["!127.0.0.42"])]
    finally:
        run.close()
        server.stop()
