"""Per-panel costs of one replica on PostgreSQL + Redis that the throughput run cannot isolate:
what a store of 1,000,000 seats does to each panel, and what hearing another replica's change
costs a replica.

Why the second: each Lua step publishes the cells it wrote, and every worker of every replica
listens, so a worker hears every step of the whole fleet (six per panel). With two replicas
that is noise; with a hundred it is most of what a worker hears. So the cost of one heard
publication is measured on its own: one idle replica, real publications (captured from its own
panels) replayed to it at a fixed rate with the sequence numbers it expects next, its CPU over
the replay less its CPU idle for as long.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import load_client as lc
import prefill_pg
import targets as t
from context import Ctx
from report import ratios, summary
from services import Postgres, Redis

SEATS = 5
PANEL = lc.chat("bench/five")
CHANNEL = "bench:changes"  # where each Lua step publishes the cells it wrote (gateway/state)
RATE, SECONDS = 2000, 5  # publications replayed per second, and for how long
LISTENERS = 8  # subscribers added for the second replay
ConfigFor = Callable[[str, str | None], Path]  # (store URL, state URL) -> a config file


def records(ctx: Ctx, pg: Postgres, rd: Redis, config_for: ConfigFor) -> tuple[dict, list]:
    """Two replicas of one worker side by side, one on an empty database, one on a database
    holding ``ctx.record_rows`` seats, each with a Redis of its own, against a 0-latency
    simulator: panels one at a time, taking turns between them, so both meet the same moments
    of a shared machine. Per panel: median time, the replica's CPU, and PostgreSQL's time
    executing its statements (`pg_stat_statements`, which splits it by database). Also returns
    the publications heard from the empty one."""
    per: dict[str, list[float | None]] = {}
    captured: list[bytes] = []
    panels = 2 * ctx.latency_panels
    full = prefill_pg.prefill(ctx, pg, config_for)
    other = Redis(ctx.work)
    try:
        for run in range(ctx.runs):
            ctx.check_quiet(f"replicas records run {run + 1}")
            empty = _name()
            urls = {"empty": pg.new_database(empty), "full": pg.url(full)}
            rd.empty()
            other.empty()
            with contextlib.ExitStack() as stack:
                procs, endpoints = {}, {}
                for label, redis in (("empty", rd), ("full", other)):
                    config = config_for(urls[label], redis.url(0))
                    proc, gw = t.start_ours(ctx.work, config, workers=1)
                    stack.callback(proc.stop)
                    procs[label], endpoints[label] = proc, gw + "/v1/chat/completions"
                targets = [endpoints["empty"], endpoints["full"]]
                asyncio.run(lc.alternating(targets, PANEL, 10, lambda s, b: True))
                pg.reset_statements()
                cpu0 = {label: proc.cpu() for label, proc in procs.items()}
                with rd.listening(CHANNEL) as heard:
                    got = asyncio.run(lc.alternating(targets, PANEL, panels, lc.panel_check(SEATS)))
                cpu = {label: proc.cpu() - cpu0[label] for label, proc in procs.items()}
                ready = {label: proc.ready_s for label, proc in procs.items()}
            captured = heard
            pg_ms = {
                label: sum(s.ms for s in pg.statements(name))
                for label, name in (("empty", empty), ("full", full))
            }
            for label, result in zip(("empty", "full"), got, strict=True):
                median = result.median()
                for key, value in (
                    ("ms", 1000 * median if median else None),
                    ("gateway_cpu_ms", 1000 * cpu[label] / panels),
                    ("pg_exec_ms", pg_ms[label] / panels),
                    ("startup_s", ready[label]),
                ):
                    per.setdefault(f"{label}_{key}", []).append(value)
                if result.failed():
                    ctx.note(
                        f"replicas records {label}: {result.failed()} failed: {result.errors()}"
                    )
            per.setdefault("publications", []).append(len(heard) / panels)
            per.setdefault("publication_bytes", []).append(
                sum(map(len, heard)) / len(heard) if heard else None
            )
            ctx.log(
                f"replicas records run {run + 1}: median panel "
                + ", ".join(f"{k} {per[f'{k}_ms'][-1] or 0:.1f} ms" for k in ("empty", "full"))
                + "; replica CPU per panel "
                + ", ".join(
                    f"{k} {per[f'{k}_gateway_cpu_ms'][-1]:.1f} ms" for k in ("empty", "full")
                )
                + "; PostgreSQL executing per panel "
                + ", ".join(f"{k} {per[f'{k}_pg_exec_ms'][-1]:.2f} ms" for k in ("empty", "full"))
            )
    finally:
        other.stop()
    figures: dict[str, Any] = {k: summary(v) for k, v in per.items()}
    for key in ("ms", "gateway_cpu_ms", "pg_exec_ms"):
        figures[f"ratio_{key}"] = ratios(per[f"full_{key}"], per[f"empty_{key}"])
    figures["panels"] = panels
    return figures, captured


def _name() -> str:
    return f"bench_{secrets.token_hex(4)}"


def fan_in(
    ctx: Ctx, pg: Postgres, rd: Redis, config_for: ConfigFor, captured: list[bytes]
) -> dict[str, Any]:
    """CPU per publication: of a replica hearing it (socket, parsing, writing its board), of
    Redis taking the PUBLISH and delivering it to that one replica, and of Redis delivering it
    to one more subscriber (from a second replay with LISTENERS `redis-cli` subscribers more).
    *captured* is replayed at RATE for SECONDS; CPU idle for as long is taken off."""
    if not captured:
        return {}
    per: dict[str, list[float | None]] = {}
    for run in range(ctx.runs):
        rd.empty()
        proc, _ = t.start_ours(ctx.work, config_for(pg.new_database(_name()), rd.url(0)), workers=1)
        with proc:
            time.sleep(1.0)  # its start-up's last work
            idle = _cpu(proc, rd, lambda: time.sleep(SECONDS + 1.0))
            alone = _cpu(proc, rd, lambda: _replay(rd, captured))
            with rd.subscribers(CHANNEL, LISTENERS):
                more = _cpu(proc, rd, lambda: _replay(rd, captured))
        sent = RATE * SECONDS
        figures = {
            "gateway_us": 1e6 * (alone[0] - idle[0]) / sent,
            "redis_publish_us": 1e6 * (alone[1] - idle[1]) / sent,
            "redis_delivery_us": 1e6 * (more[1] - alone[1]) / (sent * LISTENERS),
            "idle_share": idle[0] / (SECONDS + 1.0),
        }
        for key, value in figures.items():
            per.setdefault(key, []).append(value)
        ctx.log(
            f"replicas fan-in run {run + 1}: {sent:.0f} publications at {RATE}/s; CPU per "
            f"publication: the replica hearing it {figures['gateway_us']:.1f} µs, Redis "
            f"{figures['redis_publish_us']:.1f} µs (PUBLISH, one subscriber), "
            f"{figures['redis_delivery_us']:.1f} µs per subscriber more"
        )
    out: dict[str, Any] = {k: summary(v) for k, v in per.items()}
    out["rate"], out["seconds"], out["listeners"] = RATE, SECONDS, LISTENERS
    return out


def _cpu(proc: t.Proc, rd: Redis, work: Callable[[], object]) -> tuple[float, float]:
    """CPU seconds of the replica and of Redis while *work* runs, and one second after."""
    gateway0, redis0 = proc.cpu(), rd.cpu()
    work()
    time.sleep(1.0)  # the last ones, still being read
    return proc.cpu() - gateway0, rd.cpu() - redis0


def _replay(rd: Redis, captured: list[bytes], rate: int = RATE, seconds: float = SECONDS) -> int:
    """Publish *captured* in a loop at *rate* for *seconds*, renumbered to follow what Redis
    holds now, so the listening replica takes each one (its epoch, the next sequence number)."""
    epoch = (rd.client.get("bench:epoch") or b"").decode()
    seq = int(rd.client.get("bench:seq") or 0)
    messages = [json.loads(m) for m in captured]
    sent, began = 0, time.monotonic()
    total = int(rate * seconds)
    batch = max(1, rate // 50)  # 50 batches a second
    while sent < total:
        pipe = rd.client.pipeline(transaction=False)
        for _ in range(min(batch, total - sent)):
            seq += 1
            news = messages[sent % len(messages)]
            pipe.publish(CHANNEL, json.dumps({"epoch": epoch, "seq": seq, "cells": news["cells"]}))
            sent += 1
        pipe.execute()
        ahead = began + sent / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
    return sent
