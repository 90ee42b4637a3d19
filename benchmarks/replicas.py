"""Several replicas against one gateway (issue 17, contract §15): two `serve --workers 1` replicas
on PostgreSQL + Redis, the client sending panels to each in turn as a load balancer would,
against one `serve --workers 2` on SQLite and shared memory; and what 1,000,000 seats already in
PostgreSQL do to each panel.

Why per panel: a replica pays for sharing in round trips to Redis, statements to PostgreSQL and
its own CPU to make both, once per panel and per seat. Counted per panel, those costs are what
docs/scaling.md multiplies out to 10 and 100 replicas, so each is counted at its source:

- Redis round trips from the live state's own counter (`/healthz` → `state`), by cause: the goal
  (one per seating, one per seat finish) is stated from the gateway's side, and only the gateway
  knows why it made a trip. Redis's `INFO commandstats` counts the same steps from its side
  (EVALSHA calls), as a cross-check, and gives the time a Lua step spends inside Redis.
- PostgreSQL statements from `pg_stat_statements`, which counts every statement as it ends:
  each row of a pipelined `executemany`, each BEGIN/COMMIT, and apart from those, the statements
  run inside them (a foreign key's check), with the rows each wrote.

Everything shares this machine's cores: the client, the simulator, the gateways, and on the
replicas' side PostgreSQL and Redis too; their CPU is measured and reported beside the rates.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import urllib.request
from pathlib import Path
from typing import Any

import load_client as lc
import replicas_costs as costs
import targets as t
from context import Ctx
from report import ratios, summary
from services import Postgres, Redis, Statement, delta

SEATS = 5
PANEL = lc.chat("bench/five")
CONCURRENCY = 100
SEAT_S = 0.2


def _config(ctx: Ctx, sim_url: str, store: str, state: str | None) -> Path:
    """Eight models, each on a connection of its own; a collection of three members, so each
    panel also seats two explorers from the other five, rotating (the work a shared state
    exists for: a replica must not seat the explorers another just seated). No rpm caps."""
    model_list = [
        {
            "model_name": m,
            "litellm_params": {"model": f"openai/sim-{m}", "api_base": f"{sim_url}/v1",
                               "api_key": "sim"},
            "bench": {"connection": f"c{m}", "role": "general"},
        }
        for m in t.models(8)
    ]  # fmt: skip
    config: dict[str, Any] = {
        "model_list": model_list,
        "collections": {"five": {"members": t.models(3), "description": "benchmark panel"}},
        "gateway": {"max_calls": SEATS, "max_explorers": 2, "seat_timeout_s": 60.0},
        "store": store,
    }
    if state:
        config["state"] = state
    path = ctx.work / f"replicas-{secrets.token_hex(3)}.yaml"
    path.write_text(json.dumps(config, indent=1))  # JSON is YAML
    return path


def _state(url: str) -> dict[str, Any]:
    with urllib.request.urlopen(url + "/healthz", timeout=10) as response:
        body = json.loads(response.read())
    return dict(body.get("state") or {})


def _trips(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float]:
    """What the live state counted between two looks: round trips (and by cause), panels,
    seat finishes, explorers swapped because another replica had just seated them."""
    counts = {
        key: value - before.get(key, 0)
        for key, value in after.items()
        if isinstance(value, int | float) and not isinstance(value, bool) and key != "queued"
    }
    for cause, n in after["by_cause"].items():
        counts[f"by:{cause}"] = n - before["by_cause"].get(cause, 0)
    return counts


def _run_load(urls: list[str], ctx: Ctx) -> lc.LoadResult:
    targets = [u + "/v1/chat/completions" for u in urls]
    return asyncio.run(lc.panel_load(targets, CONCURRENCY, ctx.seconds_per_load, ctx.warmup_s))


def _outcome(ctx: Ctx, name: str, got: lc.LoadResult, cpu: float) -> dict[str, Any]:
    """The load's figures; CPU is per panel over every panel sent (warm-up included), as the
    counters run from before the first request to after the last answer."""
    panels = max(1, got.sent())
    out = {
        "rate": len(got.ok()) / got.wall_s,
        "p50": got.percentile(0.5),
        "p95": got.percentile(0.95),
        "failed": got.failed(),
        "sent": got.sent(),
        "client_cpu": got.client_cpu,
        "gateway_ms_per_seat": 1000 * cpu / panels / SEATS,
    }
    if got.failed():
        ctx.note(f"replicas {name}: {got.failed()} failed: {got.errors()}")
    if got.client_cpu > 0.85:
        ctx.note(f"replicas {name}: the load client used {got.client_cpu:.0%} of a core")
    return out


def _one_gateway(ctx: Ctx, sim_url: str) -> dict[str, Any]:
    store = ctx.work / f"store-{secrets.token_hex(4)}.db"
    proc, url = t.start_ours(ctx.work, _config(ctx, sim_url, f"sqlite:///{store}", None), workers=2)
    with proc:
        asyncio.run(lc.sequential(url + "/v1/chat/completions", PANEL, 6, lambda s, b: True))
        cpu0 = proc.cpu()
        got = _run_load([url], ctx)
        out = _outcome(ctx, "one gateway", got, proc.cpu() - cpu0)
    ctx.log(
        f"one gateway, 2 workers, SQLite + shared memory: {out['rate']:.1f} panels/s, p50 "
        f"{out['p50'] or 0:.2f} s, failed {out['failed']}/{out['sent']}, gateway "
        f"{out['gateway_ms_per_seat']:.2f} ms CPU per seat"
    )
    return out


def _two_replicas(ctx: Ctx, sim_url: str, pg: Postgres, rd: Redis) -> dict[str, Any]:
    database = f"bench_{secrets.token_hex(4)}"
    rd.empty()
    config = _config(ctx, sim_url, pg.new_database(database), rd.url(0))
    with contextlib.ExitStack() as stack:
        replicas = []
        for _ in range(2):
            proc, url = t.start_ours(ctx.work, config, workers=1)
            stack.callback(proc.stop)
            replicas.append((proc, url))
        urls = [url for _, url in replicas]
        for url in urls:
            asyncio.run(lc.sequential(url + "/v1/chat/completions", PANEL, 3, lambda s, b: True))
        states0 = [_state(u) for u in urls]
        committed0, stored0 = pg.transactions(database), pg.rows(database)
        pg.reset_statements()
        redis0 = rd.counts()

        def cpus() -> list[float]:  # the two replicas, PostgreSQL, Redis
            return [p.cpu() for p, _ in replicas] + [pg.cpu(), rd.cpu()]

        cpu0 = cpus()
        got = _run_load(urls, ctx)
        cpu = [b - a for a, b in zip(cpu0, cpus(), strict=True)]
        trips: dict[str, float] = {}
        for url, before in zip(urls, states0, strict=True):
            for key, n in _trips(before, _state(url)).items():
                trips[key] = trips.get(key, 0) + n
        redis_counts = delta(rd.counts(), redis0)
        statements = pg.statements(database)
        committed = (pg.transactions(database) - committed0, pg.rows(database) - stored0)
        connections = pg.connections(database)
    out = _outcome(ctx, "two replicas", got, cpu[0] + cpu[1])
    out.update(_per_panel(got.sent(), trips, redis_counts, statements, committed, cpu[2:]))
    out["pg_connections"] = connections
    ctx.log(
        f"two replicas, PostgreSQL + Redis: {out['rate']:.1f} panels/s, p50 {out['p50'] or 0:.2f}"
        f" s, failed {out['failed']}/{out['sent']}; per panel {out['redis_trips']:.2f} Redis "
        f"round trips ({out['redis_evalsha']:.2f} EVALSHA seen by Redis, "
        f"{out['redis_us_per_step']:.0f} µs each inside it), {out['pg_statements']:.2f} "
        f"statements sent (+{out['pg_nested']:.2f} run inside them), {out['pg_commits']:.2f} "
        f"commits; CPU per seat: gateway "
        f"{out['gateway_ms_per_seat']:.2f} ms, PostgreSQL {out['pg_ms_per_seat']:.2f} ms, Redis "
        f"{out['redis_ms_per_seat']:.2f} ms; {connections} PostgreSQL connections"
    )
    return out


def _per_panel(
    panels_sent: int,
    trips: dict[str, float],
    redis_counts: dict[str, float],
    statements: list[Statement],
    committed: tuple[int, int],
    services_cpu: list[float],
) -> dict[str, Any]:
    """*committed*: transactions and rows stored (a WITH statement's rows are not all in
    `pg_stat_statements`' count: only its last INSERT's, and only were the query to begin
    with INSERT)."""
    (committed, stored), (pg_cpu, redis_cpu) = committed, services_cpu
    # the gateways' own count of panels seated; the client's count if it is missing
    panels = trips.get("panels") or panels_sent or 1
    steps = redis_counts.get("calls:evalsha", 0) + redis_counts.get("calls:eval", 0)
    usec = redis_counts.get("usec:evalsha", 0) + redis_counts.get("usec:eval", 0)
    net_in = redis_counts.get("total_net_input_bytes", 0)
    net_out = redis_counts.get("total_net_output_bytes", 0)
    by_cause = {k[3:]: v / panels for k, v in trips.items() if k.startswith("by:") and v}
    top = sorted(statements, key=lambda s: -s.calls)[:8]
    sent = [s for s in statements if s.sent]
    written = ("INSERT", "UPDATE", "DELETE")
    return {
        "panels_counted": panels,
        "redis_trips": trips.get("round_trips", 0) / panels,
        "redis_trips_per_seat": trips.get("round_trips", 0) / panels / SEATS,
        "redis_by_cause": by_cause,
        "redis_swaps": trips.get("explorers_swapped", 0) / panels,
        "redis_publishes": redis_counts.get("calls:publish", 0) / panels,
        "redis_evalsha": steps / panels,
        "redis_us_per_step": usec / steps if steps else None,
        "redis_in_per_step": net_in / steps if steps else None,
        "redis_out_per_step": net_out / steps if steps else None,
        "redis_ms_per_seat": 1000 * redis_cpu / panels / SEATS,
        "pg_statements": sum(s.calls for s in sent) / panels,
        "pg_nested": sum(s.calls for s in statements if not s.sent) / panels,
        "pg_top": [[s.query[:70], s.sent, s.calls / panels] for s in top],
        "pg_commits": committed / panels,  # transactions, each statement sent alone counted
        "pg_commit_statements": sum(s.calls for s in sent if s.query == "COMMIT") / panels,
        "pg_rows_written": sum(s.rows for s in sent if s.query.startswith(written)) / panels,
        "pg_rows_stored": stored / panels,  # panels and seats rows found in the tables
        "pg_exec_ms": sum(s.ms for s in sent) / panels,
        "pg_ms_per_seat": 1000 * pg_cpu / panels / SEATS,
    }


def _throughput(ctx: Ctx, pg: Postgres, rd: Redis) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {"one": [], "two": []}
    for run in range(ctx.runs):
        ctx.check_quiet(f"replicas run {run + 1}")
        sim, sim_url = t.start_sim(ctx.work, SEAT_S)
        with sim:
            for name in ("one", "two") if run % 2 == 0 else ("two", "one"):
                runs[name].append(
                    _one_gateway(ctx, sim_url)
                    if name == "one"
                    else _two_replicas(ctx, sim_url, pg, rd)
                )
    figures: dict[str, Any] = {}
    for name, measured in runs.items():
        numeric = [k for k, v in measured[0].items() if isinstance(v, int | float)]
        figures[name] = {k: summary(m[k] for m in measured) for k in numeric}
    figures["ratio"] = ratios([m["rate"] for m in runs["two"]], [m["rate"] for m in runs["one"]])
    figures.update(efficiency(figures))
    last = runs["two"][-1]
    figures["two_detail"] = {"redis_by_cause": last["redis_by_cause"], "pg_top": last["pg_top"]}
    return figures


def efficiency(figures: dict[str, Any]) -> dict[str, Any]:
    """Panels per CPU-second, run by run: of the gateway's two workers (SQLite is in them), and
    of the two replicas with PostgreSQL and Redis, or without. Others' work on this machine
    moves each run's rate a lot (it takes cores away) and its CPU per panel little, so this is
    the ratio the rates would show were the cores ours alone and all busy."""
    one, two = figures["one"], figures["two"]
    gateway = [1000 / (SEATS * ms) for ms in one["gateway_ms_per_seat"]["runs"]]
    replicas_only = [1000 / (SEATS * ms) for ms in two["gateway_ms_per_seat"]["runs"]]
    with_services = [
        1000 / (SEATS * (gw + pg + rd))
        for gw, pg, rd in zip(
            two["gateway_ms_per_seat"]["runs"],
            two["pg_ms_per_seat"]["runs"],
            two["redis_ms_per_seat"]["runs"],
            strict=True,
        )
    ]
    return {
        "per_cpu_one": summary(gateway),
        "per_cpu_two": summary(with_services),
        "per_cpu_two_gateways": summary(replicas_only),
        "per_cpu_ratio": ratios(with_services, gateway),
        "per_cpu_ratio_gateways": ratios(replicas_only, gateway),
    }


def replicas(ctx: Ctx) -> dict[str, Any]:
    pg = Postgres().start()
    try:
        rd = Redis(ctx.work)
        try:
            figures = _throughput(ctx, pg, rd)
            sim, sim_url = t.start_sim(ctx.work, 0.0)
            with sim:

                def config_for(store: str, state: str | None) -> Path:
                    return _config(ctx, sim_url, store, state)

                figures["records"], captured = costs.records(ctx, pg, rd, config_for)
                figures["fan_in"] = costs.fan_in(ctx, pg, rd, config_for, captured)
        finally:
            rd.stop()
    finally:
        pg.stop()
    return {
        "figures": figures,
        "options": {
            "concurrency": CONCURRENCY,
            "seat_s": SEAT_S,
            "seconds": ctx.seconds_per_load,
            "rows": ctx.record_rows,
            "record_panels": 2 * ctx.latency_panels,
        },
    }
