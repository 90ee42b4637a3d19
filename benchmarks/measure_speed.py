"""Measures of time under load: fan-out, throughput against the seed, and scale.

Why these three: a panel gateway is only worth having if a panel costs the time of its slowest
seat (fan-out), if it keeps answering whole panels when many arrive together (throughput,
against Benchwarmers 0.3.3, the gateway we replace), and if a thousand slow panels at once
neither fail nor blow up its memory (scale). Each run starts fresh processes; the figures are
the medians over runs, with the spread kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import load_client as lc
import rivals
import targets as t
from context import Ctx
from measure_cost import bare
from report import ratios, summary

SEATS = 5
PANEL = lc.chat("bench/five")


def _warm(url: str, n: int = 3) -> None:
    asyncio.run(lc.sequential(url + "/v1/chat/completions", PANEL, n, lambda s, b: True))


def _start(name: str, ctx: Ctx, sim: str, **gateway) -> tuple[t.Proc, str]:
    if name == "seed":
        return rivals.start_seed(ctx.work, sim)
    store = ctx.work / f"store-{time.monotonic_ns()}.db"
    config = t.ours_config(ctx.work, sim, store, gateway.pop("seat_timeout_s", 60), **gateway)
    return t.start_ours(ctx.work, config)


def fanout(ctx: Ctx, seat_s: float = 0.3) -> dict:
    """Panel wall time (as the client sees it) over the slowest seat's configured latency.

    For scale, the same run also times litellm made bare against the same upstream: one call
    alone (what a single seat costs through litellm, with nothing else in the process) and five
    at once (a panel's seats with no gateway around them). And litellm's CPU per call, made one
    at a time, twice: back to back against a 0-latency upstream, and waiting out the seat's
    latency between calls, as a panel's seats do (this machine runs a call much slower after a
    pause, so the second is the one a panel pays)."""
    per: dict[str, list[float]] = {
        "ours": [], "seed": [], "bare_one": [], "bare_five": [], "cpu_busy": [], "cpu_idle": []
    }  # fmt: skip
    for run in range(ctx.runs):
        ctx.check_quiet(f"fan-out run {run + 1}")
        with contextlib.ExitStack() as stack:
            sim, sim_url = t.start_sim(ctx.work, seat_s)
            stack.callback(sim.stop)
            for key, size in (("bare_one", 1), ("bare_five", SEATS)):
                got = bare(sim_url, size * ctx.fanout_panels, batch=size, warmup=size * 3)
                per[key].append(got["batch_wall_s"] / seat_s)
                if size == 1:
                    per["cpu_idle"].append(got["cpu_ms_per_call"])
                ctx.log(f"fan-out run {run + 1} bare litellm, {size} at once: {per[key][-1]:.3f}")
            fast, fast_url = t.start_sim(ctx.work, 0.0)
            with fast:
                per["cpu_busy"].append(bare(fast_url, 300, batch=1)["cpu_ms_per_call"])
            ctx.log(
                f"fan-out run {run + 1} litellm CPU per call: {per['cpu_busy'][-1]:.2f} ms back "
                f"to back, {per['cpu_idle'][-1]:.2f} ms after waiting {seat_s} s"
            )
            for name in ("ours", "seed") if run % 2 == 0 else ("seed", "ours"):
                proc, url = _start(name, ctx, sim_url)
                with proc:
                    _warm(url)
                    got = asyncio.run(
                        lc.sequential(
                            url + "/v1/chat/completions",
                            PANEL,
                            ctx.fanout_panels,
                            lc.panel_check(SEATS),
                        )
                    )
                if got.failed():
                    ctx.note(f"fan-out {name}: {got.failed()} failed panels: {got.errors()}")
                median = got.median()
                per[name].append(median / seat_s if median else None)
                ctx.log(f"fan-out run {run + 1} {name}: median {median:.3f} s for {seat_s} s seats")
    figures = {name: summary(values) for name, values in per.items()}
    figures["ours_vs_one"] = ratios(per["ours"], per["bare_one"])
    return {
        "figures": figures,
        "options": {"seat_s": seat_s, "seats": SEATS, "panels": ctx.fanout_panels},
    }


def _load(ctx: Ctx, name: str, url: str, proc: t.Proc, sim: t.Proc, concurrency: int) -> dict:
    pid = t.gateway_pid(proc)
    cpu0, sim0, began = t.cpu_seconds(pid), sim.cpu(), time.monotonic()
    got = asyncio.run(
        lc.panel_load(url + "/v1/chat/completions", concurrency, ctx.seconds_per_load, ctx.warmup_s)
    )
    wall = time.monotonic() - began
    out = {
        "rate": len(got.ok()) / got.wall_s,
        "p50": got.percentile(0.5),
        "p95": got.percentile(0.95),
        "failed": got.failed(),
        "sent": got.sent(),
        "slowest": max(s.seconds for s in got.samples + got.warmup),
        "client_cpu": got.client_cpu,
        "gateway_cpu": (t.cpu_seconds(pid) - cpu0) / wall,
        "sim_cpu": (sim.cpu() - sim0) / wall,
    }
    ctx.log(
        f"throughput {name} c={concurrency}: {out['rate']:.1f} panels/s, "
        f"p50 {out['p50'] or 0:.2f}, p95 {out['p95'] or 0:.2f}, slowest {out['slowest']:.1f} s, "
        f"failed {out['failed']}/{out['sent']}; CPU share: gateway {out['gateway_cpu']:.2f}, "
        f"simulator {out['sim_cpu']:.2f}, client {out['client_cpu']:.2f}"
    )
    if got.failed():
        ctx.note(f"throughput {name} c={concurrency}: failures {got.errors()}")
    if got.client_cpu > 0.85:
        ctx.note(
            f"throughput {name} c={concurrency}: the load client used "
            f"{got.client_cpu:.0%} of a core and may be a bottleneck"
        )
    return out


def throughput(ctx: Ctx, seat_s: float = 0.2, levels: tuple[int, ...] = (20, 100)) -> dict:
    runs: dict[str, list[dict]] = {}
    for run in range(ctx.runs):
        ctx.check_quiet(f"throughput run {run + 1}")
        with contextlib.ExitStack() as stack:
            sim, sim_url = t.start_sim(ctx.work, seat_s)
            stack.callback(sim.stop)
            for name in ("seed", "ours") if run % 2 == 0 else ("ours", "seed"):
                proc, url = _start(name, ctx, sim_url)
                with proc:
                    _warm(url)
                    for c in levels:
                        runs.setdefault(f"{name}_c{c}", []).append(
                            _load(ctx, name, url, proc, sim, c)
                        )
    figures: dict = {}
    for key, measured in runs.items():
        figures[key] = {k: summary(m[k] for m in measured) for k in measured[0]}
    for c in levels:
        ours = [m["rate"] for m in runs.get(f"ours_c{c}", [])]
        seed = [m["rate"] for m in runs.get(f"seed_c{c}", [])]
        figures[f"ratio_c{c}"] = ratios(ours, seed)
    return {
        "figures": figures,
        "options": {"seat_s": seat_s, "concurrency": list(levels), "seconds": ctx.seconds_per_load},
    }


def scale(ctx: Ctx) -> dict:
    """N panels at once, each of five seats that take seat_s: all must answer, p99 near seat_s.
    Seats may take 4x their time plus a minute before the gateway gives up on them, and the
    client waits a minute longer than that, so the figures show what the gateway does."""
    n, seat_s = ctx.scale_panels, ctx.scale_seat_s
    seat_timeout = seat_s * 4 + 60
    per: dict[str, list] = {}
    for run in range(ctx.runs):
        ctx.check_quiet(f"scale run {run + 1}")
        with contextlib.ExitStack() as stack:
            sim, sim_url = t.start_sim(ctx.work, seat_s)
            stack.callback(sim.stop)
            store = ctx.work / f"store-{time.monotonic_ns()}.db"
            config = t.ours_config(ctx.work, sim_url, store, seat_timeout)
            proc, url = t.start_ours(ctx.work, config)
            with proc:
                rss0 = t.memory_kb(proc.pid, "VmRSS")
                got = asyncio.run(
                    lc.burst(
                        url + "/v1/chat/completions",
                        PANEL,
                        n,
                        lc.panel_check(SEATS),
                        timeout_s=seat_timeout + 60,
                    )
                )
                peak = t.memory_kb(proc.pid, "VmHWM")
            upstream = t.upstream_concurrency(sim_url)
        p99 = got.percentile(0.99)
        for key, value in (
            ("answered", len(got.ok())),
            ("p50", got.percentile(0.5)),
            ("p99", p99),
            ("p99_ratio", p99 / seat_s if p99 else None),
            ("peak_rss_mb", peak / 1024),
            ("upstream_peak", upstream),
            ("client_cpu", got.client_cpu),
            ("failed", got.failed()),
        ):
            per.setdefault(key, []).append(value)
        ctx.log(
            f"scale run {run + 1}: {len(got.ok())}/{n} answered, "
            f"p50 {got.percentile(0.5) or 0:.1f} s, p99 {p99 or 0:.1f} s, RSS {rss0 / 1024:.0f}"
            f" MB before, peak {peak / 1024:.0f} MB; at most {upstream} seat calls open at once"
        )
        if got.failed():
            ctx.note(
                f"scale run {run + 1}: {got.failed()} of {n} panels "
                f"not fully answered: {got.errors()}"
            )
    return {
        "figures": {k: summary(v) for k, v in per.items()},
        "options": {
            "panels": n,
            "seat_s": seat_s,
            "seat_timeout_s": seat_timeout,
        },
    }
