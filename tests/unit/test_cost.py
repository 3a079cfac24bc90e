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
                 "CloudWatch Logs (fetcher)", "X-Ray", "all-in", "always-free tiers"):
        assert line in out, line
    assert "eu-west-1, 2026-11" in out and "measured by bench/run" in out


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
    # the goals (README): one bot, nat-instance, the account's always-free tiers applied
    assert small["total_after_free_tier_usd"] <= 10.0 and big["total_after_free_tier_usd"] <= 25.0
    # a NAT gateway costs its hours and its data beside
    gateway = figures["nat-gateway", 1_000_000]
    assert gateway["fixed_usd"] > big["fixed_usd"] + 30 and any(x["what"] == "NAT gateway data"
                                                                  for x in gateway["lines"])


def test_the_per_page_costs_follow_the_bench_run_not_constants(parts: Any) -> None:
    prices, inputs, template = parts
    aube = load_profile("aubebot")
    base = estimate(aube, 1_000_000, "nat-instance", prices, inputs, template)
    doubled = copy.deepcopy(inputs)
    doubled["per_page"]["wru"] *= 2
    doubled["per_page"]["log_bytes"] *= 2
    again = estimate(aube, 1_000_000, "nat-instance", prices, doubled, template)
    line = {x.what: x.usd for x in base.lines}
    more = {x.what: x.usd for x in again.lines}
    wru_usd = 1_000_000 * inputs["per_page"]["wru"] * prices["prices"]["dynamodb_wru"]
    assert more["DynamoDB (on demand)"] == pytest.approx(line["DynamoDB (on demand)"] + wru_usd)
    assert more["CloudWatch Logs (fetcher)"] > line["CloudWatch Logs (fetcher)"]
    assert base.fixed_usd == again.fixed_usd
    # no page, no per-page cost
    assert estimate(aube, 0, "none", prices, inputs, template).per_page_usd == 0.0


def test_a_mistake_is_one_line(capsys: Any) -> None:
    code, _, err = run_command(capsys, "cost", "--bot", "nobot", "--pages-per-month", "10")
    assert code == 2 and err.count("\n") == 1
