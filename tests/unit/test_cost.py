"""`heed cost`: the month's bill, fixed beside per page, from the dated price table and a bench run's
per-page figures (bench/cost-inputs.json), never from constants of its own."""
from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from heed_core.profile import load_profile

from heed.cost import PRICES, _inputs_path, estimate
from heed.local.resources import load_template
from heed.local.root import ROOT

from tests.support.stack import run_command


@pytest.fixture(scope="module")
def parts() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    prices = json.loads(PRICES.read_text(encoding="utf-8"))
    inputs = json.loads(_inputs_path().read_text(encoding="utf-8"))
    return prices, inputs, load_template(ROOT / "template.yaml")


def test_the_table_has_the_fixed_costs_beside_the_per_page_ones(capsys: Any) -> None:
    code, out, err = run_command(capsys, "cost", "--bot", "aubebot", "--pages-per-month", "100000")
    assert (code, err) == (0, "")
    for line in ("NAT instance (t4g.nano)", "public IPv4 address", "alarms", "dashboard", "custom metrics",
                 "Lambda (fetcher, arm64)", "DynamoDB (on demand)", "SQS FIFO", "EventBridge",
                 "CloudWatch Logs (fetcher)", "X-Ray", "all-in", "always-free tiers", "Lambda INIT (cold starts)",
                 "DynamoDB storage and point-in-time recovery", "S3 (texts kept)"):
        assert line in out, line
    assert "eu-west-1, 2026-11" in out and "aubebot's shape" in out and "measured by bench/cost_units.py" in out


def test_json_and_the_goals_with_a_nat_instance(capsys: Any) -> None:
    figures = {}
    for egress in ("nat-instance", "nat-gateway"):
        for pages in (100_000, 1_000_000):
            code, out, _ = run_command(capsys, "cost", "--bot", "aubebot", "--pages-per-month", str(pages),
                                       "--egress", egress, "--json")
            assert code == 0
            figures[egress, pages] = json.loads(out)
    small, big = figures["nat-instance", 100_000], figures["nat-instance", 1_000_000]
    assert small["fixed_usd"] == big["fixed_usd"] and small["total_usd"] < big["total_usd"]
    # the free tiers are shown apart, never folded into the all-in figure
    assert 0 < small["free_tier_usd"] < small["total_usd"]
    assert small["total_after_free_tier_usd"] == pytest.approx(small["total_usd"] - small["free_tier_usd"], abs=0.011)
    # a NAT gateway costs its hours and its data beside
    gateway = figures["nat-gateway", 1_000_000]
    assert gateway["fixed_usd"] > big["fixed_usd"] + 30 and any(x["what"] == "NAT gateway data"
                                                                  for x in gateway["lines"])


def test_the_per_page_costs_follow_the_bench_run_not_constants(parts: Any) -> None:
    prices, inputs, template = parts
    aube = load_profile("aubebot")
    base = estimate(aube, 1_000_000, "nat-instance", prices, inputs, template, base="aubebot")
    doubled = copy.deepcopy(inputs)
    doubled["bots"]["aubebot"]["per_page"]["wru"] *= 2  # its shape's units
    doubled["per_page"]["log_bytes"] *= 2  # the general bench's
    again = estimate(aube, 1_000_000, "nat-instance", prices, doubled, template, base="aubebot")
    line = {x.what: x.usd for x in base.lines}
    more = {x.what: x.usd for x in again.lines}
    wru_usd = 1_000_000 * inputs["bots"]["aubebot"]["per_page"]["wru"] * prices["prices"]["dynamodb_wru"]
    assert more["DynamoDB (on demand)"] == pytest.approx(line["DynamoDB (on demand)"] + wru_usd)
    assert more["CloudWatch Logs (fetcher)"] > line["CloudWatch Logs (fetcher)"]
    assert base.fixed_usd == again.fixed_usd
    # no page, no per-page cost
    assert estimate(aube, 0, "none", prices, inputs, template).per_page_usd == 0.0


def test_a_mistake_is_one_line(capsys: Any) -> None:
    code, _, err = run_command(capsys, "cost", "--bot", "nobot", "--pages-per-month", "10")
    assert code == 2 and err.count("\n") == 1


def test_each_bot_is_billed_for_its_own_shape(parts: Any) -> None:
    # AubeBot's batch of one is at least a Lambda call a request; a bot that keeps texts puts them
    # in S3 and keeps them; an own bot that extends a built-in one has its base's shape
    prices, inputs, template = parts
    aube = estimate(load_profile("aubebot"), 100_000, "nat-instance", prices, inputs, template, base="aubebot")
    calls = next(x for x in aube.lines if x.what == "Lambda (fetcher, arm64)").quantity
    assert int(calls.split(", ")[1].split()[0].replace(",", "")) >= 100_000
    praha = estimate(load_profile("praha-x"), 100_000, "nat-instance", prices, inputs, template, base="praha-x")
    s3 = next(x for x in praha.lines if x.what == "S3 (texts kept)")
    assert s3.usd > 0 and not s3.quantity.startswith("0 puts")
    for est in (aube, praha):
        assert next(x for x in est.lines if x.what == "Lambda INIT (cold starts)").usd > 0
        assert next(x for x in est.lines if x.what == "DynamoDB storage and point-in-time recovery").usd > 0
    general = estimate(load_profile("aubebot"), 100_000, "nat-instance", prices, {**inputs, "bots": {}}, template)
    assert "the general shape" in " ".join(general.notes) and general.per_page_usd != aube.per_page_usd


def test_the_readme_cost_table_is_the_tools(capsys: Any) -> None:
    # the README's table is `heed cost --table` as it prints now (regenerate it when a price,
    # a bench figure or a profile moves)
    code, out, _ = run_command(capsys, "cost", "--table")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = readme.split("<!-- heed cost --table -->\n", 1)[1].split("\n<!-- end -->", 1)[0]
    assert code == 0 and shown.strip() == out.strip()


def test_without_a_bot_or_pages_it_says_what_to_name(capsys: Any) -> None:
    code, _, err = run_command(capsys, "cost", "--bot", "aubebot")
    assert code == 2 and err.count("\n") == 1 and "--pages-per-month" in err


def test_the_table_without_its_inputs_is_one_line(capsys: Any, tmp_path: Any, monkeypatch: Any) -> None:
    # --table reads the same files as one bot's bill, and a missing one is the same one line
    monkeypatch.setattr("heed.cost._inputs_path", lambda: tmp_path / "missing.json")
    code, out, err = run_command(capsys, "cost", "--table")
    assert code == 2 and out == "" and err.count("\n") == 1 and "cost inputs" in err
