"""`heed cost`: what one bot's stack costs a month on AWS, all in: the fixed monthly costs beside
the per-page ones, from a dated eu-west-1 price table (heed/data/prices-eu-west-1.json) and the
per-page figures a bench run measured (bench/cost-inputs.json, written by
`bench/run --size 200x10 --cost-inputs bench/cost-inputs.json`)."""
from __future__ import annotations

import argparse
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from heed_core.errors import ConfigError

__all__ = ["EGRESS_MODES", "Estimate", "estimate", "register"]

EGRESS_MODES = ("nat-instance", "nat-gateway", "none")
PRICES = Path(__file__).resolve().parent / "data" / "prices-eu-west-1.json"


def _inputs_path() -> Path:
    from heed.local.root import ROOT

    return ROOT / "bench" / "cost-inputs.json"


@dataclass(frozen=True)
class Line:
    """One row of the table: what is billed, how much of it, at what price, dollars a month."""

    what: str
    quantity: str
    usd: float
    fixed: bool


@dataclass
class Estimate:
    bot: str
    pages: int
    egress: str
    lines: list[Line] = field(default_factory=list)
    free_tier_usd: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def fixed_usd(self) -> float:
        return sum(line.usd for line in self.lines if line.fixed)

    @property
    def per_page_usd(self) -> float:
        return sum(line.usd for line in self.lines if not line.fixed)

    @property
    def total_usd(self) -> float:
        return self.fixed_usd + self.per_page_usd

    def to_json(self) -> dict[str, Any]:
        return {"bot": self.bot, "pages_per_month": self.pages, "egress": self.egress,
                "lines": [{"what": x.what, "quantity": x.quantity, "usd": round(x.usd, 4), "fixed": x.fixed}
                          for x in self.lines],
                "fixed_usd": round(self.fixed_usd, 2), "per_page_usd": round(self.per_page_usd, 2),
                "total_usd": round(self.total_usd, 2), "free_tier_usd": round(self.free_tier_usd, 2),
                "total_after_free_tier_usd": round(self.total_usd - self.free_tier_usd, 2),
                "per_million_pages_usd": round(self.per_page_usd / max(1, self.pages) * 1e6, 2),
                "notes": self.notes}


def _alarm_metrics(template: Mapping[str, Any], egress: str, webhook: bool = False) -> int:
    """Metrics the stack's alarms read (CloudWatch bills an alarm per metric it reads)."""
    conditions = {"UseNatGateway": egress == "nat-gateway", "UseNatInstance": egress == "nat-instance",
                  "HasResultsWebhook": webhook}
    n = 0
    for res in template["Resources"].values():
        if res["Type"] != "AWS::CloudWatch::Alarm" or not conditions.get(res.get("Condition", ""), True):
            continue
        props = res["Properties"]
        n += sum(1 for m in props.get("Metrics", []) if "MetricStat" in m) or 1
    return n


def estimate(profile: Any, pages: int, egress: str, prices: Mapping[str, Any], inputs: Mapping[str, Any],
             template: Mapping[str, Any], *, webhook: bool = False, base: str | None = None) -> Estimate:
    """The month's bill for ``pages`` pages of ``profile``'s bot (pure: every number comes in);
    ``base``: the built-in bot it extends, whose shape of work it has."""
    from heed_aws.journal import METRICS

    from heed.samconfig import fetcher_max_concurrency

    p, a, hours = prices["prices"], prices["assumptions"], float(prices["hours_per_month"])
    shape, page = bot_units(profile, inputs, base)
    fetchers = fetcher_max_concurrency(profile)
    est = Estimate(profile.name, pages, egress)

    def add(what: str, quantity: str, usd: float, *, fixed: bool) -> None:
        est.lines.append(Line(what, quantity, usd, fixed))

    # --- fixed: what the stack costs with no page fetched ----------------------------------------
    if egress == "nat-instance":
        add("NAT instance (t4g.nano)", f"{hours:.0f} h", hours * p["ec2_t4g_nano_hour"], fixed=True)
        add("NAT instance volume (gp3)", f"{a['nat_instance_volume_gb']} GB",
            a["nat_instance_volume_gb"] * p["ebs_gp3_gb_month"], fixed=True)
    elif egress == "nat-gateway":
        add("NAT gateway", f"{hours:.0f} h", hours * p["nat_gateway_hour"], fixed=True)
    if egress != "none":
        add("public IPv4 address (the Elastic IP)", f"{hours:.0f} h", hours * p["public_ipv4_hour"], fixed=True)
    alarm_metrics = _alarm_metrics(template, egress, webhook)
    add("alarms", f"{alarm_metrics} metrics", alarm_metrics * p["cloudwatch_alarm_metric_month"], fixed=True)
    add("dashboard", "1", p["cloudwatch_dashboard_month"], fixed=True)
    add("custom metrics", f"{len(METRICS)}", len(METRICS) * p["cloudwatch_metric_month"], fixed=True)
    add("alarm topic key (KMS)", "1", p["kms_key_month"], fixed=True)
    ticks = 30 * 24 * 60
    tick_gb_s = ticks * a["scheduler_tick_s"] * a["scheduler_memory_mb"] / 1024
    add("scheduler (a tick a minute)", f"{ticks} ticks",
        ticks * p["lambda_request"] + tick_gb_s * p["lambda_arm64_gb_s"]
        + ticks * (p["dynamodb_rru"] + p["dynamodb_wru"] + a["xray_sampling_rate"] * p["xray_trace"]), fixed=True)
    tick_log_gb = ticks * (inputs["per_tick"]["log_bytes"] + inputs["per_invocation"]["emf_bytes"]
                           + a["lambda_platform_log_bytes_per_invocation"]) / 1e9
    tick_colds = hours / a["lambda_environment_lifetime_h"]
    tick_init_gb_s = tick_colds * a["lambda_init_s"] * a["scheduler_memory_mb"] / 1024
    add("scheduler: cold starts (INIT)", f"{tick_colds:,.0f} starts", tick_init_gb_s * p["lambda_arm64_gb_s"],
        fixed=True)
    tick_gb_s += tick_init_gb_s
    add("scheduler logs", f"{tick_log_gb:.3f} GB", tick_log_gb * p["cloudwatch_logs_gb"], fixed=True)
    add("SQS: Lambda's idle long polls", f"{a['event_source_polls_per_month']:,}",
        a["event_source_polls_per_month"] * p["sqs_fifo_request"], fixed=True)
    if webhook:
        add("webhook: its secret (Secrets Manager)", "1", p["secrets_manager_secret_month"], fixed=True)
        add("webhook: the deliverer's idle long polls", f"{a['event_source_polls_per_month']:,}",
            a["event_source_polls_per_month"] * p["sqs_fifo_request"], fixed=True)

    # --- per page: the bench's measured units, at a real site's latency ---------------------------
    in_flight = profile.politeness.max_in_flight
    parallel = max(1, min(10, int(in_flight))) if in_flight else 10
    billed = page["billed_s"] + max(0.0, a["site_latency_s"] - inputs["bench_latency_s"]) / parallel
    memory_gb = inputs["fetcher_memory_mb"] / 1024
    invocations = pages * page["fetcher_invocations"]
    gb_s = pages * billed * memory_gb
    add("Lambda (fetcher, arm64)", f"{gb_s:,.0f} GB-s, {invocations:,.0f} calls",
        gb_s * p["lambda_arm64_gb_s"] + invocations * p["lambda_request"], fixed=False)
    # Lambda bills a cold start's INIT phase too: a fetcher started for each of its environments
    # each round (rounds more than a few minutes apart find none warm), the scheduler's every
    # few hours (its tick a minute keeps one warm until Lambda retires it).
    rounds = _rounds_per_month(profile)
    colds = rounds * fetchers if pages else 0.0
    init_gb_s = colds * a["lambda_init_s"] * memory_gb
    add("Lambda INIT (cold starts)", f"{colds:,.0f} starts, {init_gb_s:,.0f} GB-s",
        init_gb_s * p["lambda_arm64_gb_s"], fixed=False)
    add("DynamoDB (on demand)", f"{pages * page['wru']:,.0f} WRU, {pages * page['rru']:,.0f} RRU",
        pages * (page["wru"] * p["dynamodb_wru"] + page["rru"] * p["dynamodb_rru"]), fixed=False)
    # What the table keeps is about a month of what it was written (its items' 30-day TTL);
    # point-in-time recovery is billed on the same size.
    table_gb = pages * page.get("table_bytes", a["table_bytes_per_page"]) / 1e9
    add("DynamoDB storage and point-in-time recovery", f"{table_gb:.3f} GB",
        table_gb * (p["dynamodb_storage_gb_month"] + p["dynamodb_pitr_gb_month"]), fixed=False)
    sqs = pages * page["sqs_requests"]
    add("SQS FIFO", f"{sqs:,.0f} requests", sqs * p["sqs_fifo_request"], fixed=False)
    add("EventBridge", f"{pages * page['events']:,.0f} events", pages * page["events"] * p["eventbridge_event"],
        fixed=False)
    bucket_gb = pages * page.get("bucket_bytes", 0.0) * a["texts_kept_months"] / 1e9
    add("S3 (texts kept)", f"{pages * page['s3_puts']:,.0f} puts, {bucket_gb:.2f} GB",
        pages * (page["s3_puts"] * p["s3_put"] + page["s3_gets"] * p["s3_get"])
        + bucket_gb * p["s3_standard_gb_month"], fixed=False)
    log_gb = (pages * page["log_bytes"] + invocations * (inputs["per_invocation"]["emf_bytes"]
                                                        + a["lambda_platform_log_bytes_per_invocation"])) / 1e9
    add("CloudWatch Logs (fetcher)", f"{log_gb:.3f} GB", log_gb * p["cloudwatch_logs_gb"], fixed=False)
    traces = invocations * a["xray_sampling_rate"]
    add("X-Ray", f"{traces:,.0f} traces", traces * p["xray_trace"], fixed=False)
    # --- the results: kept on the stack (the archive, the results log group), and the webhook ------
    results = pages * page["events"]
    kept_gb = results * a["result_bytes"] / 1e9
    add("results: archive and results log group", f"{results:,.0f} results, {kept_gb:.3f} GB",
        kept_gb * (p["eventbridge_archive_gb"] + p["cloudwatch_logs_gb"]), fixed=False)
    delivery_calls = delivery_gb_s = delivery_sqs = 0.0
    if webhook:
        delivery_calls = results / max(1, a["results_per_delivery_invocation"])
        delivery_gb_s = delivery_calls * a["webhook_latency_s"] * a["deliverer_memory_mb"] / 1024
        delivery_sqs = results * 3  # the rule's send, the poller's receive and delete
        add("webhook: deliverer (Lambda) and its queue", f"{delivery_calls:,.0f} calls, {delivery_sqs:,.0f} SQS "
            "requests", delivery_calls * p["lambda_request"] + delivery_gb_s * p["lambda_arm64_gb_s"]
            + delivery_sqs * p["sqs_fifo_request"], fixed=False)
    if egress == "nat-gateway":
        nat_gb = pages * a["page_bytes"] / 1e9
        add("NAT gateway data", f"{nat_gb:.1f} GB", nat_gb * p["nat_gateway_gb"], fixed=False)

    # --- the always-free tiers, for an account that runs only this bot -----------------------------
    free = prices["free_tier"]
    est.free_tier_usd = (
        min(len(METRICS), free["cloudwatch_metrics"]) * p["cloudwatch_metric_month"]
        + min(alarm_metrics, free["cloudwatch_alarm_metrics"]) * p["cloudwatch_alarm_metric_month"]
        + min(1, free["cloudwatch_dashboards"]) * p["cloudwatch_dashboard_month"]
        + min(log_gb + tick_log_gb + kept_gb, free["cloudwatch_logs_gb"]) * p["cloudwatch_logs_gb"]
        + min(invocations + ticks + delivery_calls, free["lambda_requests"]) * p["lambda_request"]
        + min(gb_s + init_gb_s + tick_gb_s + delivery_gb_s, free["lambda_gb_s"]) * p["lambda_arm64_gb_s"]
        + min(sqs + a["event_source_polls_per_month"] * (2 if webhook else 1) + delivery_sqs,
              free["sqs_requests"]) * p["sqs_fifo_request"]
        + min(traces + ticks * a["xray_sampling_rate"], free["xray_traces"]) * p["xray_trace"])
    est.notes = [
        f"prices: {prices['region']}, {prices['as_of']} (heed/data/{PRICES.name})",
        f"per page: {shape}",
        f"assumed: a site answers in {a['site_latency_s']} s "
        f"({'one turn at a time' if parallel == 1 else f'{parallel} turns side by side'}), "
        f"a page is {a['page_bytes'] // 1000} KB (NAT data), X-Ray samples {a['xray_sampling_rate']:.0%}, "
        f"{rounds:,.0f} rounds a month with {fetchers} fetchers each cold, INIT {a['lambda_init_s']} s, "
        f"texts kept {a['texts_kept_months']} months",
    ]
    return est


def bot_units(profile: Any, inputs: Mapping[str, Any], base: str | None = None) -> tuple[str, Mapping[str, Any]]:
    """The per-page units of ``profile``'s shape of work, and where they come from: its own (or its
    base bot's) measured by bench/cost_units.py on the demo web, over the bench's general
    per-turn figures (bench/run --size 200x10: AubeBot's feeds and articles, many pages a host)
    for what the small demo cannot show (the Lambda time of a turn, the log bytes)."""
    general = inputs["per_page"]
    measured = inputs.get("bots", {})
    name = profile.name if profile.name in measured else base
    if name is None or name not in measured:
        return (f"the general shape, measured by bench/run --size {inputs['size']} on {inputs['measured']} "
                f"({inputs['pages']} pages)"), general
    own = measured[name]
    units = {**general, **{k: own["per_page"][k] for k in BOT_UNITS if k in own["per_page"]}}
    return (f"{name}'s shape ({', '.join(BOT_UNITS)}) measured by bench/cost_units.py on {own['measured']} "
            f"({own['requests']} requests on the demo web, batch size {own['batch_size']}); a turn's Lambda time and "
            f"log bytes by bench/run --size {inputs['size']} on {inputs['measured']}"), units


# What a bot's own shape sets (the rest: the bench's many-page figures, steadier than a demo round's).
BOT_UNITS = ("fetcher_invocations", "rru", "wru", "sqs_requests", "events", "s3_puts", "s3_gets",
             "table_bytes", "bucket_bytes")


def _rounds_per_month(profile: Any) -> float:
    """How many times a month the bot's schedules fire (one 30-day month from a Monday)."""
    from heed_core.rounds import round_plan

    start = 1_764_547_200.0  # 2025-12-01T00:00Z
    return float(len(round_plan(profile, start, start + 30 * 86400)))


def render(est: Estimate) -> str:
    rows = [("", "quantity", "$/month")]
    for fixed in (True, False):
        rows.append(("fixed, every month" if fixed else f"for {est.pages:,} pages", "", ""))
        rows += [(f"  {x.what}", x.quantity, f"{x.usd:.2f}") for x in est.lines if x.fixed == fixed]
    rows += [("fixed", "", f"{est.fixed_usd:.2f}"), ("per page", f"${est.per_page_usd / max(1, est.pages) * 1e6:.2f} "
             "per million", f"{est.per_page_usd:.2f}"), ("all-in", "", f"{est.total_usd:.2f}"),
             ("  always-free tiers (one bot in the account)", "", f"-{est.free_tier_usd:.2f}"),
             ("all-in after the free tiers", "", f"{est.total_usd - est.free_tier_usd:.2f}")]
    width = [max(len(r[i]) for r in rows) for i in range(3)]
    lines = [f"{est.bot}: {est.pages:,} pages a month, egress {est.egress}"]
    lines += [f"{r[0].ljust(width[0])}  {r[1].rjust(width[1])}  {r[2].rjust(width[2])}".rstrip() for r in rows]
    return "\n".join(lines + [f"({note})" for note in est.notes])


TABLE_PAGES = (100_000, 1_000_000)


def table(prices: Mapping[str, Any], inputs: Mapping[str, Any], template: Mapping[str, Any]) -> str:
    """The five bots' bills side by side (Markdown, as the README shows it): with a NAT instance,
    the account's free tiers apart, and the units of each bot's shape that made them."""
    from heed_core.profile import BUILTIN_BOTS, load_profile

    rows = ["| bot | fixed | per million pages | " + " | ".join(
        f"{n:,} pages, after the free tiers" for n in TABLE_PAGES) + " | units a request (measured) |",
        "|---|---|---|" + "---|" * len(TABLE_PAGES) + "---|"]
    for bot in BUILTIN_BOTS:
        profile = load_profile(bot)
        ests = [estimate(profile, n, "nat-instance", prices, inputs, template, base=bot) for n in TABLE_PAGES]
        _, u = bot_units(profile, inputs, bot)
        units = (f"{u['fetcher_invocations']:.2f} Lambda calls, {u['wru']:.1f} WRU, {u['rru']:.1f} RRU, "
                 f"{u['sqs_requests']:.1f} SQS, {u['events']:.2f} events, {u['s3_puts']:.2f} S3 puts")
        rows.append(f"| {bot} | ${ests[0].fixed_usd:.2f} | ${ests[-1].per_page_usd / TABLE_PAGES[-1] * 1e6:.2f} | "
                    + " | ".join(f"${e.total_usd - e.free_tier_usd:.2f}" for e in ests) + f" | {units} |")
    return "\n".join(rows)


def cmd_cost(args: argparse.Namespace) -> int:
    """The table (or --json); a user's mistake is one line on stderr, exit 2."""
    from heed_core.profile import ProfileError, load_profile

    from heed.local.resources import TemplateError, load_template
    from heed.local.root import ROOT

    path = _inputs_path()
    if not args.table and (not args.bot or args.pages_per_month is None):
        raise ConfigError("name the bot and the pages: --bot NAME|FILE --pages-per-month N (or --table: the five bots)")
    try:
        profile = None if args.table else load_profile(args.bot)
        inputs = json.loads(path.read_text(encoding="utf-8"))
        prices = json.loads(PRICES.read_text(encoding="utf-8"))
        template = load_template(ROOT / "template.yaml")
    except ProfileError:
        raise
    except (OSError, ValueError, TemplateError) as exc:
        raise ConfigError(f"cannot read the cost inputs ({exc}); make them with: bench/run --size 200x10 "
                          f"--side heed --cost-inputs {path}") from exc
    if profile is None:
        print(table(prices, inputs, template))
        return 0
    from heed_core.profile import builtin_base

    est = estimate(profile, args.pages_per_month, args.egress, prices, inputs, template, webhook=args.webhook,
                   base=builtin_base(args.bot))
    print(json.dumps(est.to_json(), indent=2) if args.json else render(est))
    return 0


def _pages(text: str) -> int:
    try:
        value = float(text.replace("_", "").replace(",", ""))
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0 or value != int(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of pages")
    return int(value)


def register(subparsers: Any) -> None:
    """Add ``cost`` to the `heed` parser's subcommands."""
    p = subparsers.add_parser("cost", help="what a bot's stack costs a month on AWS, fixed and per page",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--bot", metavar="NAME|FILE", help="a built-in bot name or a profile file")
    p.add_argument("--pages-per-month", type=_pages, metavar="N")
    p.add_argument("--table", action="store_true",
                   help="the five bots side by side, as the README shows them (Markdown)")
    p.add_argument("--egress", choices=EGRESS_MODES, default="nat-instance", help="the stack's EgressMode")
    p.add_argument("--webhook", action="store_true",
                   help="the stack posts its results to a webhook (ResultsWebhookUrl): its deliverer, queue and secret")
    p.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    p.set_defaults(func=cmd_cost)
