"""Writing docs/performance.md from the stored results of the last runs of each measure.

Why generated: every figure in that page must come from a run, never from a hand edit, and each
measure's row must say how (quick or full, how many runs, when) it was produced, because a
``--only`` run refreshes some rows and leaves the others from an earlier run.
"""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata
from pathlib import Path

import replicas_report
from report import fmt, render_table
from setup_envs import ENVS, relaxed

ORDER = ("fanout", "perseat", "throughput", "scale", "records", "startup", "route", "direct")


def machine() -> list[str]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor() or "?",
    )
    mem = next(
        line.split()[1]
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal")
    )

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return [
        f"- {os.cpu_count()} cores ({cpu}), {int(mem) / 1024**2:.0f} GiB RAM, "
        f"Linux {platform.release()}, Python {sys.version.split()[0]}",
        f"- ours: litellm {version('litellm')}, uvicorn {version('uvicorn')} "
        f"(uvloop {version('uvloop')}, httptools {version('httptools')}), "
        f"starlette {version('starlette')}",
        f"- LiteLLM proxy: `{' '.join(ENVS['proxy'])}` in its own venv, one worker, no database, "
        "a master key (the proxy refuses to start without one)"
        + (
            f"; the index lacked some pins, relaxed: {'; '.join(relaxed('proxy'))}"
            if relaxed("proxy")
            else ""
        ),
        f"- Benchwarmers: `{' '.join(ENVS['seed'])}` in its own venv, `benchwarmers gateway`, "
        "built-in client (`BENCH_CLIENT=builtin`)",
        "- upstream: `bench-gateway simulate` (one process) with a fixed latency for every model; "
        "everything (client, gateway, simulator) shares the same cores over loopback",
    ]


def _missed(results: dict) -> list[str]:
    out = []

    def check(stat, limit, at_most, what):
        if stat is None:
            return
        ok = stat["median"] <= limit if at_most else stat["median"] >= limit
        if not ok:
            out.append(f"- {what}: {fmt(stat, 2)} against {'≤' if at_most else '≥'} {limit:g}")

    f = lambda name: (results.get(name) or {}).get("figures", {})  # noqa: E731
    check(f("fanout").get("ours"), 1.05, True, "fan-out ratio")
    check(f("perseat").get("ours_vs_proxy"), 0.5, True, "CPU per seat, ours/proxy")
    check(f("perseat").get("ours_vs_bare"), 1.3, True, "CPU per seat, ours/bare litellm")
    for c, goal in ((20, 1.0), (100, 1.5)):
        check(f("throughput").get(f"ratio_c{c}"), goal, False, f"throughput c={c}, ours/seed")
        fails = (f("throughput").get(f"ours_c{c}") or {}).get("failed")
        if fails and fails["max"] > 0:
            out.append(f"- throughput c={c}: ours failed {fmt(fails, 0)} requests per run (goal 0)")
    check(f("scale").get("p99_ratio"), 1.3, True, "scale p99 / seat time")
    scale = results.get("scale")
    if scale and f("scale").get("answered"):
        if f("scale")["answered"]["min"] < scale["options"]["panels"]:
            out.append(
                f"- scale: fully answered {fmt(f('scale')['answered'], 0)} of "
                f"{scale['options']['panels']}"
            )
    check(f("records").get("ratio"), 1.1, True, "records: 1M-seat store / empty store latency")
    check(f("startup").get("ours"), 5.0, True, "start-up seconds")
    check(f("route").get("wall_ratio"), 1.05, True, "route turn wall time / direct litellm")
    check(f("route").get("cpu_ratio"), 1.2, True, "route turn CPU / bare litellm")
    check(
        f("route").get("ttfb_route_over_ms"),
        10,
        True,
        "route stream's first text, ms over the member's",
    )
    check(f("direct").get("direct_seat_vs_bare"), 0.25, True, "direct reader seat CPU / bare")
    check(f("direct").get("direct_chunk_vs_bare"), 0.15, True, "direct reader chunk CPU / bare")
    check(f("direct").get("ttft_direct_vs_litellm"), 1.0, True, "direct first text / litellm's")
    out += replicas_report.missed(results.get("replicas"))
    return (out or ["- none: every goal measured is met"]) + _floors(results)


def _floors(results: dict) -> list[str]:
    """What litellm itself allows at best, measured in the same run with nothing of ours."""
    fan = (results.get("fanout") or {}).get("figures", {})
    lines = []
    if fan.get("bare_one") and fan.get("bare_five"):
        lines.append(
            f"- floor for fan-out: litellm made bare against the same upstream measures "
            f"{fmt(fan['bare_one'], 3)} for one call alone and {fmt(fan['bare_five'], 3)} for "
            "five at once: its set-up of each call is CPU work in one process, so a panel's last "
            "seat cannot leave before the others are set up"
        )
    if fan.get("cpu_busy") and fan.get("cpu_idle"):
        lines.append(
            f"- one litellm call costs {fmt(fan['cpu_busy'], 2, ' ms')} of CPU made back to back "
            f"and {fmt(fan['cpu_idle'], 2, ' ms')} made after waiting out a seat: a core of this "
            f"machine that sat idle runs the same Python code about "
            f"{fan['cpu_idle']['median'] / fan['cpu_busy']['median']:.1f}× as slowly (no page "
            "faults; caches gone cold), and a panel's five calls all come after such a wait. "
            "Handing some of a panel's seats to an idle second worker did not help: it pays the "
            "same cold start (measured while trying it)"
        )
    route = (results.get("route") or {}).get("figures", {})
    over = (route.get("ttfb_route_over_ms") or {}).get("median")
    missed = over is not None and over > 10
    if missed and route.get("ttfb_litellm_as_gateway_over_ms") and route.get("ttfb_relay_over_ms"):
        lines.append(
            "- floor for a route stream's first text: litellm alone, with no gateway, comes "
            f"+{fmt(route.get('ttfb_litellm_over_ms'), 1, ' ms')} after the member's own, "
            f"+{fmt(route['ttfb_litellm_as_gateway_over_ms'], 1, ' ms')} driven as the gateway "
            "drives it (its set-up of the call before the request leaves, then its stream "
            "wrapper's work on the reply's opening chunks, all on the path of the first byte, "
            "at a cold core's speed after the member's wait), and one more HTTP hop "
            f"costs +{fmt(route['ttfb_relay_over_ms'], 1, ' ms')}: together they leave the "
            "gateway's own work (reading and checking the request, choosing the member, the "
            "response and its first event) what is left of the 10 ms"
        )
    return lines


def _litellm_vs_ours(results: dict) -> list[str]:
    found = results.get("perseat") or {}
    p, o = found.get("figures", {}), found.get("options", {})
    lines = []
    for ours_key, bare_key, streamed, how in (
        ("ours", "bare_same", o.get("ours_streamed"), "with its default config"),
        ("ours_variant", "bare_other", o.get("variant_streamed"), f"with `{o.get('variant')}`"),
    ):
        if p.get(ours_key) and p.get(bare_key):
            ours, bare = p[ours_key]["median"], p[bare_key]["median"]
            mode = "streamed" if streamed else "not streamed"
            lines.append(
                f"- Seats {mode} ({how}): the bare litellm loop spends **{bare:.2f} ms** of CPU "
                f"per call; our gateway **{ours:.2f} ms** per seat, so **{ours - bare:.2f} ms "
                f"({100 * (ours - bare) / ours:.0f} %)** of each seat is ours: the HTTP request "
                "and reply, routing, the record writes, the panel's JSON (a panel's fixed costs "
                "are shared by its five seats)."
            )
    if p.get("proxy") and p.get("bare_plain"):
        proxy, bare = p["proxy"]["median"], p["bare_plain"]["median"]
        lines.append(
            f"- LiteLLM's proxy spends **{proxy:.2f} ms** per single request, "
            f"{proxy - bare:+.2f} ms over the same non-streamed call made bare: that is what its "
            "server, auth, router, hooks and logging add."
        )
    prof = results.get("_profile")
    if prof:
        lines += [
            "",
            f"Sampled with py-spy ({prof['total']:,} samples, 200 Hz, one gateway process, "
            f"0-latency panels, 4 at a time; {prof.get('mode', '')}). Share of its busy samples, "
            "by the nearest non-stdlib layer to the leaf:",
            "",
            "| layer | share |",
            "|---|---|",
        ]
        lines += [f"| {k} | {100 * v:.1f} % |" for k, v in prof["layers"]]
        lines += [
            "",
            "Hottest functions of ours (inclusive share of samples):",
            "",
            "| function | share |",
            "|---|---|",
        ]
        lines += [f"| `{k}` | {100 * v:.1f} % |" for k, v in prof["ours"][:10]]
        lines += [
            "",
            "Hottest leaf functions (self share):",
            "",
            "| function | share |",
            "|---|---|",
        ]
        lines += [f"| `{k}` | {100 * v:.1f} % |" for k, v in prof["leaves"][:10]]
    return lines or ["- (run the `perseat` measure to fill this in)"]


FAST = [
    "- **The direct reader** (`gateway/upstream/direct/`: `reader.py`, `sse_reader.py`; "
    "`chunks.py`; "
    "`upstream_reader: auto|litellm|direct`): for providers litellm treats as OpenAI-compatible, "
    "litellm still builds the request (`wire.py`: its provider config's parameter mapping, URL, "
    "headers; the mapping kept per distinct set of parameters) and the gateway sends it on a "
    "session of its own and reads the answer: a plain answer parsed once with orjson, a stream a "
    "line at a time into small chunk objects shaped as litellm's (what one network read brought "
    "is relayed in one write). Failures become litellm's own exceptions (`wire_errors.py`), so "
    "everything downstream is unchanged; `tests/upstream/test_direct_reader.py` holds both "
    "readers to the same client bytes and records. A panel seat fell from 9.0 to 0.66 ms of "
    "gateway CPU and a relayed chunk from 0.73 to 0.024 ms, in the same run.",
    "- **Set-ups in arrival order** (`gateway/upstream/setup_queue.py`): litellm's set-up of a "
    "call is ~2 ms of CPU on the event loop, split by awaits. Started together, five seats "
    "interleave their set-ups, none leaves before the fifth is ready and all five answers come "
    "back at once; a burst of panels does the same on a larger scale. Through the queue, one "
    "set-up runs at a time until its request leaves (the shared session's trace hook says "
    "when): each seat leaves as soon as it is ready, answers come back spread out and are read "
    "as they arrive, and a burst is served first in, first out.",
    "- **litellm's set-up on the loop** (`gateway/upstream/litellm/inline.py`): `acompletion` "
    "hands "
    "each call's set-up to a thread; for providers where it is CPU work only it now runs "
    "inline, with no thread hop and no fight for the GIL.",
    "- **One shared HTTP session** for every seat call (litellm's `shared_session`), with no "
    "connection cap below the panel sizes; unpriced models registered once, so no per-call "
    "walk through price names.",
    "- **Workers that share a burst**: `serve --workers N` gives each worker its own "
    "SO_REUSEPORT socket; uvicorn's shared socket let one worker take about two thirds of a "
    "1,000-panel burst. The workers keep cooldowns, rpm caps and rotation on one board in "
    "shared memory (`gateway/board.py`): a few reads and writes under one `flock` per seat.",
    "- **Records off the loop**: seat rows are batched into one transaction on a writer thread; "
    "each seat still waits for its own commit, so nothing answered is lost.",
    "- **No log line per litellm call**: building the app let the MCP SDK put a rich console "
    "handler at INFO on the root logger, so litellm logged two lines for every call, one rendered "
    "through rich; the root logger is now left as the process owner set it (route turns: gateway "
    "CPU per turn 1.37× a bare litellm call before, 1.16× after).",
    "- **Route streams through one reader task** (`gateway/route/keepalive.py`): the keep-alive "
    "wait "
    "reads the member's chunks in one task per stream and hands each to the reply as it comes, "
    "instead of a task, a timer and an `asyncio.wait` per chunk.",
    "- **Start-up objects frozen** for the GC (`gc.freeze()` after warm-up): a full collection "
    "over litellm's ~370,000 start-up objects took ~120 ms here.",
]

HOW = [
    "- **Fan-out**: panels one after another through `bench/five` (5 seats, each 0.3 s at the "
    "simulator); the client's median panel time ÷ 0.3 s. In the same run, against the same "
    "simulator, `benchmarks/bare_litellm.py` times litellm with nothing around it: one call at a "
    "time, and five at once (a panel's seats made bare); the median call or batch ÷ 0.3 s. "
    "It also takes litellm's CPU per call, one call at a time, twice: back to back against a "
    "0-latency simulator, and against the 0.3 s one, where the process waits out each call as a "
    "panel's seats do.",
    "- **CPU per seat**: 0-latency simulator; after 10 warm-up requests, a bounded batch of "
    "panels (4 at a time); CPU seconds of the serving process from `/proc/<pid>/stat` "
    "(utime+stime, all threads) ÷ seats. The proxy gets 5× as many single requests (per "
    "request); the bare loop makes the same calls 5 at a time in its own process (per call).",
    "- **Throughput**: closed loop, c workers each sending the next panel when the last returns, "
    "for a fixed window after a warm-up; a panel counts only if all 5 seats are `ok`. A failure "
    "is any non-200, client timeout (60 s) or panel with a seat not `ok`.",
    "- **Scale**: all N panels sent at once (one connection each) to seats that take the seat "
    "time, once every worker of ours listens (a burst sent while one is still starting would all "
    "land on the others); peak RSS is the gateway's VmHWM, summed over its workers.",
    "- **Records**: the schema comes from the gateway itself (started on an empty file, then "
    "stopped); rows are bulk-inserted with sqlite3 (5 seats per panel, 90 days of timestamps); "
    "median panel time with a 0-latency simulator, empty store vs the full one.",
    "- **Start-up**: from the process launch to the first 200 on its health route "
    "(ours `/healthz`, proxy `/health/liveliness`, Benchwarmers `/v1/models`).",
    "- **Route turn** (`benchmarks/route_turn.py`): one gateway (`serve --workers 1`), a "
    "collection of one member answering after 0.3 s, and two bare litellm processes making the "
    "gateway's call: one as a script would (`asyncio.run`, litellm's defaults), one as the gateway "
    "drives litellm (uvloop, its inline set-up and shared session, nothing else of the gateway). "
    "Requests of each kind take turns, after 10 warm-ups each. Wall: the client's median plain "
    "turn ÷ the median direct call (timed around the call in the bare process). CPU: each "
    "process's utime + stime over the whole loop ÷ turns, so background work (litellm's logging "
    "tasks, record writes, server timers) counts on every side. First text: until the first "
    "chunk carrying text, through the gateway, from the simulator directly (the member's own), "
    "through a relay with nothing in it, and from litellm in each bare process; every stream is "
    "read whole.",
    "- **Direct reader** (`benchmarks/direct_cost.py`): one simulated upstream and two gateways "
    "(`serve --workers 1`) that differ only in `gateway.upstream_reader` (`direct`, `litellm`), "
    "each measured alone while the others sit idle, after a warm-up, by its process's utime + "
    "stime; bare litellm runs in a process of its own (`benchmarks/bare_litellm.py`) making the "
    "same calls. Per seat: 100 panels of five plain seats, five panels at a time, CPU ÷ seats, "
    "against bare litellm's CPU per plain call (batches of five). Per chunk: 10 streamed route "
    "turns of 1,500 words (502 upstream chunks) read whole, CPU ÷ chunks, against bare litellm's "
    "CPU per call of the same stream ÷ its chunks. First text: 30 streamed route turns of a "
    "short answer, until the first chunk carrying text reaches the client; the median.",
]


def render(results: dict, command: str) -> str:
    lines = [
        "# Performance: ours against LiteLLM's proxy, Benchwarmers 0.3.3 and bare litellm",
        "",
        "Generated by `benchmarks/compare.py` from measured runs; rerun it rather than edit.",
        "",
        "## Reproduce",
        "",
        "```sh",
        ".venv/bin/python benchmarks/compare.py --ours-workers 2   # this page (≈20 min)",
        ".venv/bin/python benchmarks/compare.py --quick            # smaller sizes, 2 runs",
        ".venv/bin/python benchmarks/compare.py --only throughput,scale --runs 5",
        ".venv/bin/python benchmarks/compare.py --only= --profile  # only the py-spy profile",
        ".venv/bin/python benchmarks/compare.py --only replicas    # PostgreSQL + Redis replicas",
        "```",
        "",
        "Each measure's line under the table says which command, mode and time produced its "
        "rows (a `--only` run refreshes its rows and keeps the others). The first run creates "
        "`benchmarks/.venvs/` from PyPI. `--render` rewrites this page from the stored results "
        f"without measuring. Last written by `{command}`.",
        "",
        "## Machine",
        "",
        *machine(),
        "",
        "## Results",
        "",
        "Each cell is the median over runs, with the run-to-run range in brackets. Ratios are "
        "taken run by run, ours and the rival measured in the same run, then their median. "
        "✅/❌ compare the median with the goal.",
        "",
        *render_table(results),
        "",
    ]
    for name in ORDER:
        if name in results:
            r = results[name]
            busy = r.get("background") or [0]
            lines.append(
                f"- `{name}`: `{r.get('command', '?')}`, {r['mode']}, {r['runs']} run(s), "
                f"{r['when']}, "
                f"{r.get('seconds', '?')} s; machine busy with other work before a run: "
                f"up to {100 * max(busy):.0f} %; "
                + ", ".join(f"{k}={v}" for k, v in r.get("options", {}).items())
            )
    if "replicas" in results:
        lines += ["", *replicas_report.section(results["replicas"])]
    lines += [
        "",
        "## Goals missed",
        "",
        *_missed(results),
        "",
        "## What makes it fast",
        "",
        *FAST,
        "",
        "## What litellm itself costs vs what is ours",
        "",
        *_litellm_vs_ours(results),
        "",
        "## How each figure is measured",
        "",
        *HOW,
        "",
    ]
    notes = [(n, note) for n in ORDER for note in (results.get(n) or {}).get("notes", [])]
    notes += [
        (
            n,
            f"{who} c={c}: CPU share (of one core) gateway {fmt(m.get('gateway_cpu'))}, "
            f"simulator {fmt(m.get('sim_cpu'))}, load client {fmt(m.get('client_cpu'))}",
        )
        for n in ("throughput",)
        if n in results
        for key, m in sorted(results[n]["figures"].items())
        if "_c" in key and "ratio" not in key
        for who, c in [key.split("_c")]
    ]
    if notes:
        lines += ["## Notes from the runs", ""] + [f"- `{n}`: {text}" for n, text in notes] + [""]
    return "\n".join(lines)
