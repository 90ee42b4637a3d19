"""Measures of cost: CPU per seat call and start-up time (the record store's is in
measure_records.py).

Why CPU seconds and not latency: with a 0-latency upstream, the time a seat takes is mostly the
CPU spent on it by the gateway, and CPU is what decides how many panels a small box serves. It
is read from /proc/<pid>/stat of the serving process (all its threads), before and after a
bounded batch of requests, so the load client's own work is never counted. The same batch goes
through LiteLLM's proxy (per request), Benchwarmers (per seat) and a bare litellm loop in its
own process (per call: the floor litellm sets).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import load_client as lc
import rivals
import targets as t
from context import Ctx
from report import ratios, summary

SEATS = 5
PANEL = lc.chat("bench/five")
HERE = Path(__file__).resolve().parent


def _cpu_ms(
    proc: t.Proc,
    url: str,
    payload: dict,
    requests: int,
    per_request: int,
    check,
    headers=None,
    concurrency: int = 4,
) -> tuple[float, int]:
    """CPU ms of *proc*'s serving process per unit (seat or request), and failures."""
    endpoint = url + "/v1/chat/completions"
    asyncio.run(lc.sequential(endpoint, payload, 10, lambda s, b: True, headers=headers))  # warm
    pid = t.gateway_pid(proc)
    cpu0 = t.cpu_seconds(pid)
    got = asyncio.run(
        lc.sequential(endpoint, payload, requests, check, headers=headers, concurrency=concurrency)
    )
    cpu = t.cpu_seconds(pid) - cpu0
    return 1000 * cpu / (requests * per_request), got.failed()


def bare(sim: str, calls: int, stream: bool = False, batch: int = 5, warmup: int = 25) -> dict:
    """Run the bare litellm loop (its own process) and return its JSON figures."""
    argv = [sys.executable, str(HERE / "bare_litellm.py"), "--api-base", f"{sim}/v1"]
    argv += ["--calls", str(calls), "--batch", str(batch), "--warmup", str(warmup)]
    argv += ["--stream"] if stream else []
    env = {**os.environ, **t.OFFLINE_ENV}
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=600, env=env, stdin=subprocess.DEVNULL
    )
    if done.returncode:
        raise RuntimeError(f"bare litellm loop failed: {done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if result["ok"] != result["calls"]:
        raise RuntimeError(f"bare litellm loop: only {result['ok']}/{result['calls']} calls ok")
    return result


def _variant() -> tuple[str, object]:
    """The other seat mode than the gateway's default, in whatever type its setting takes now
    (it has been a bool and a mode string): which of the two is really used is read back from
    the simulator's request log, never assumed."""
    from gateway.config.settings import GatewaySettings

    default = GatewaySettings().stream_seats
    return "stream_seats", (not default) if isinstance(default, bool) else "always"


def _streamed(sim_url: str) -> bool:
    """Whether the last seat calls the simulator saw were streamed."""
    with urllib.request.urlopen(f"{sim_url}/_sim/requests?model=sim-m1", timeout=30) as response:
        log = json.loads(response.read())["requests"]
    return bool(log) and all(entry["stream"] for entry in log[-5:])


def perseat(ctx: Ctx) -> dict:
    panels = ctx.perseat_panels
    per: dict[str, list] = {}
    modes: dict[str, bool] = {}

    def keep(name: str, value: float, failed: int = 0) -> None:
        per.setdefault(name, []).append(value)
        ctx.log(f"per-seat CPU {name}: {value:.3f} ms" + (f" ({failed} failed)" if failed else ""))
        if failed:
            ctx.note(f"per-seat {name}: {failed} failed requests")

    setting, other = _variant()
    for run in range(ctx.runs):
        ctx.check_quiet(f"per-seat run {run + 1}")
        with contextlib.ExitStack() as stack:
            sim, sim_url = t.start_sim(ctx.work, 0.0)
            stack.callback(sim.stop)
            for label, gateway in (("ours", {}), ("ours_variant", {setting: other})):
                store = ctx.work / f"store-{secrets.token_hex(4)}.db"
                config = t.ours_config(ctx.work, sim_url, store, 60, **gateway)
                proc, url = t.start_ours(ctx.work, config)
                with proc:
                    keep(label, *_cpu_ms(proc, url, PANEL, panels, SEATS, lc.panel_check(SEATS)))
                modes[label] = _streamed(sim_url)
            proc, url = rivals.start_seed(ctx.work, sim_url)
            with proc:
                keep("seed", *_cpu_ms(proc, url, PANEL, panels, SEATS, lc.panel_check(SEATS)))
            proc, url, headers = rivals.start_proxy(ctx.work, sim_url)
            with proc:
                keep(
                    "proxy",
                    *_cpu_ms(
                        proc,
                        url,
                        lc.chat("m1"),
                        panels * SEATS,
                        1,
                        lc.completion_check,
                        headers=headers,
                    ),
                )
            keep("bare_stream", bare(sim_url, panels * SEATS, stream=True)["cpu_ms_per_call"])
            keep("bare_plain", bare(sim_url, panels * SEATS)["cpu_ms_per_call"])
    figures = {k: summary(v) for k, v in per.items()}
    same_mode = {
        label: per.get("bare_stream" if modes.get(label) else "bare_plain", [])
        for label in ("ours", "ours_variant")
    }
    figures["bare_same"] = summary(same_mode["ours"])
    figures["bare_other"] = summary(same_mode["ours_variant"])
    figures["ours_vs_proxy"] = ratios(per.get("ours", []), per.get("proxy", []))
    figures["ours_vs_bare"] = ratios(per.get("ours", []), same_mode["ours"])
    figures["variant_vs_bare"] = ratios(per.get("ours_variant", []), same_mode["ours_variant"])
    options = {
        "panels": panels,
        "calls": panels * SEATS,
        "ours_streamed": modes.get("ours"),
        "variant": f"{setting}: {other}",
        "variant_streamed": modes.get("ours_variant"),
    }
    return {"figures": figures, "options": options}


# --- start-up ----------------------------------------------------------------------------------


def startup(ctx: Ctx) -> dict:
    """Launch to the first 200 on each one's health route: ours /healthz (ready only after the
    store is open and litellm warmed up), the proxy /health/liveliness, Benchwarmers /v1/models."""
    per: dict[str, list] = {"ours": [], "proxy": [], "seed": []}
    with contextlib.ExitStack() as stack:
        sim, sim_url = t.start_sim(ctx.work, 0.0)
        stack.callback(sim.stop)
        for run in range(ctx.runs):
            ctx.check_quiet(f"start-up run {run + 1}")
            store = ctx.work / f"store-{secrets.token_hex(4)}.db"
            starts = {
                "ours": lambda s=store: t.start_ours(
                    ctx.work, t.ours_config(ctx.work, sim_url, s, 60)
                ),
                "proxy": lambda: rivals.start_proxy(ctx.work, sim_url),
                "seed": lambda: rivals.start_seed(ctx.work, sim_url),
            }
            for name, start in starts.items():
                proc = start()[0]
                proc.stop()
                per[name].append(proc.ready_s)
                ctx.log(f"start-up run {run + 1} {name}: {proc.ready_s:.2f} s")
    return {"figures": {k: summary(v) for k, v in per.items()}, "options": {}}


def cleanup(ctx: Ctx) -> None:
    """Stores and homes are per-invocation scratch; the big pre-filled store is the bulk of it."""
    for path in ctx.work.glob("records-*.db*"):
        path.unlink(missing_ok=True)
    for path in ctx.work.glob("seed-home-*"):
        shutil.rmtree(path, ignore_errors=True)
