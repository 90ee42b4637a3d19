"""What a route turn costs over calling its member directly.

One gateway (`serve --workers 1`, collection `crew` of one member, `reply: route`), one simulated
upstream answering after `--latency` s, and a bare litellm process making the same call as the
gateway's (same model, api_base, no retries, a timeout), each request of one kind followed by
one of the other, so that both meet the same machine. After a warm-up of each:

1. **Wall time** of a plain turn through the gateway against a direct `litellm.acompletion`
   (timed in the bare process around the call alone); the ratio of medians.
2. **CPU per turn**: the gateway process's CPU (utime + stime from /proc, all threads) over the
   whole plain loop ÷ turns, against the bare process's CPU over the same loop ÷ calls. Both
   loops include the time each process sits idle while the other works, so background work
   (litellm's logging tasks, a server's timers) counts on both sides.
3. **Time to first byte** of a streamed turn: until the first chunk carrying text, through the
   gateway and from the member itself (a raw streamed request to the simulator), with litellm's
   own (a direct streamed call, in the bare process) for reference. Every stream is read whole;
   the gateway's and the bare process's CPU over this loop give streamed CPU per turn too.

    .venv/bin/python benchmarks/route_turn.py                  # 3 runs of 60 turns
    .venv/bin/python benchmarks/route_turn.py --runs 5 --json

`measure(work, turns, latency, runs)` returns the figures (medians and ranges) as a dict, for
benchmarks/compare.py.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import HOST, cpu_seconds, free_port, start, stop, wait_healthy  # noqa: E402
from report import ratios, summary  # noqa: E402

MESSAGES = [{"role": "user", "content": "Say something."}]
WARM = 10


def _has_text(line: str) -> bool:
    squeezed = line.replace(" ", "")
    return '"content":"' in squeezed and '"content":""' not in squeezed


async def streamed_ttfb(client: httpx.AsyncClient, url: str, body: dict) -> float:
    """Seconds until the first chunk carrying text; the rest of the stream is read too."""
    began = time.perf_counter()
    first = None
    async with client.stream("POST", url, json=body) as response:
        async for line in response.aiter_lines():
            if first is None and _has_text(line):
                first = time.perf_counter() - began
    if first is None:
        raise RuntimeError(f"no text came from {url}")
    return first


class Bare:
    """The bare litellm process: one call per command line, its figures on a line back."""

    def __init__(self, api_base: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--bare", api_base],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    async def ask(self, command: str) -> float:
        def exchange() -> float:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
            return float(self.proc.stdout.readline())

        return await asyncio.to_thread(exchange)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


async def one_run(work: Path, turns: int, latency: float) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    sim_port, gw_port = free_port(), free_port()
    sim_url, gw_url = f"http://{HOST}:{sim_port}", f"http://{HOST}:{gw_port}"
    (work / "sim.yaml").write_text(yaml.safe_dump({"models": {"*": {"latency_s": latency}}}))
    params = {"model": "openai/sim-a", "api_base": f"{sim_url}/v1", "api_key": "sim"}
    config = {
        "model_list": [{"model_name": "a", "litellm_params": params}],
        "collections": {"crew": {"members": ["a"], "reply": "route"}},
        "gateway": {"route_explore": 0},
        "store": f"sqlite:///{work / 'records.db'}",
    }
    (work / "bench.yaml").write_text(yaml.safe_dump(config))
    sim = start(["simulate", "--port", str(sim_port), "--spec", str(work / "sim.yaml")],
                work / "sim.log")  # fmt: skip
    gateway = start(["serve", "--config", str(work / "bench.yaml"), "--port", str(gw_port),
                     "--workers", "1"], work / "gw.log")  # fmt: skip
    bare = Bare(params["api_base"])
    try:
        await wait_healthy(gw_url, gateway, work / "gw.log")
        async with httpx.AsyncClient(timeout=60) as client:
            for _ in range(60):
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get(f"{sim_url}/_sim/health")).status_code < 500:
                        break
                await asyncio.sleep(0.1)
            route = f"{gw_url}/v1/chat/completions"
            body = {"model": "bench/crew:route", "messages": MESSAGES}
            streamed = {**body, "stream": True}
            member = {"model": "sim-a", "messages": MESSAGES, "stream": True}
            for _ in range(WARM):
                (await client.post(route, json=body)).raise_for_status()
                await streamed_ttfb(client, route, streamed)
                await bare.ask("plain")
                await bare.ask("stream")
            plain: dict[str, list[float]] = {"route": [], "direct": []}
            gw0, bare0 = cpu_seconds(gateway.pid), await bare.ask("cpu")
            for _ in range(turns):
                began = time.perf_counter()
                reply = await client.post(route, json=body)
                plain["route"].append(time.perf_counter() - began)
                assert reply.status_code == 200, reply.text
                plain["direct"].append(await bare.ask("plain"))
            gw1, bare1 = cpu_seconds(gateway.pid), await bare.ask("cpu")
            ttfb: dict[str, list[float]] = {"route": [], "member": [], "litellm": []}
            for _ in range(turns):
                ttfb["route"].append(await streamed_ttfb(client, route, streamed))
                ttfb["member"].append(await streamed_ttfb(client, f"{sim_url}/v1/chat/completions",
                                                          member))  # fmt: skip
                ttfb["litellm"].append(await bare.ask("stream"))
            gw2, bare2 = cpu_seconds(gateway.pid), await bare.ask("cpu")
    finally:
        bare.close()
        stop(gateway)
        stop(sim)
    med = statistics.median
    return {
        "route_ms": 1000 * med(plain["route"]),
        "direct_ms": 1000 * med(plain["direct"]),
        "wall_ratio": med(plain["route"]) / med(plain["direct"]),
        "gw_cpu_ms": 1000 * (gw1 - gw0) / turns,
        "bare_cpu_ms": 1000 * (bare1 - bare0) / turns,
        "gw_stream_cpu_ms": 1000 * (gw2 - gw1) / turns,
        "bare_stream_cpu_ms": 1000 * (bare2 - bare1) / turns,
        "ttfb_route_ms": 1000 * med(ttfb["route"]),
        "ttfb_member_ms": 1000 * med(ttfb["member"]),
        "ttfb_litellm_ms": 1000 * med(ttfb["litellm"]),
        "ttfb_over_ms": 1000 * (med(ttfb["route"]) - med(ttfb["member"])),
        "ttfb_litellm_over_ms": 1000 * (med(ttfb["litellm"]) - med(ttfb["member"])),
    }


def measure(work: Path, turns: int = 60, latency: float = 0.3, runs: int = 3) -> dict[str, Any]:
    """Every run's figures, and each figure's median and range over the runs."""
    done = [asyncio.run(one_run(work / f"run{i}", turns, latency)) for i in range(runs)]
    figures = {key: summary(run[key] for run in done) for key in done[0]}
    figures["cpu_ratio"] = ratios([r["gw_cpu_ms"] for r in done], [r["bare_cpu_ms"] for r in done])
    figures["stream_cpu_ratio"] = ratios(
        [r["gw_stream_cpu_ms"] for r in done], [r["bare_stream_cpu_ms"] for r in done]
    )
    return {"figures": figures, "options": {"turns": turns, "latency_s": latency}, "runs": done}


# -- the bare litellm process ----------------------------------------------------------------


async def bare_main(api_base: str) -> None:
    """Read commands on stdin: `plain` and `stream` make one call and print its wall time (for
    `stream`, until the first text); `cpu` prints this process's CPU seconds so far."""
    for name, value in (("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
                        ("LITELLM_OFFLINE_MODE", "true"), ("HF_HUB_OFFLINE", "1")):  # fmt: skip
        os.environ.setdefault(name, value)
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    kwargs = dict(model="openai/sim-a", api_base=api_base, api_key="sim", messages=MESSAGES,
                  timeout=30, num_retries=0, max_retries=0)  # fmt: skip
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while command := (await reader.readline()).decode().strip():
        if command == "cpu":
            print(time.process_time(), flush=True)
            continue
        began = time.perf_counter()
        if command == "plain":
            await litellm.acompletion(**kwargs)
            print(time.perf_counter() - began, flush=True)
            continue
        first = None
        stream = await litellm.acompletion(
            **kwargs, stream=True, stream_options={"include_usage": True}
        )
        async for chunk in stream:
            if first is None and any(getattr(c.delta, "content", None) for c in chunk.choices):
                first = time.perf_counter() - began
        print(first, flush=True)


def _print(result: dict[str, Any]) -> None:
    f = result["figures"]

    def show(key: str, digits: int = 1) -> str:
        s = f[key]
        return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"

    print(f"wall per turn: route {show('route_ms')} ms, direct litellm {show('direct_ms')} ms, "
          f"ratio {show('wall_ratio', 3)} (goal <= 1.05)")  # fmt: skip
    print(f"CPU per plain turn: gateway {show('gw_cpu_ms', 2)} ms, bare litellm "
          f"{show('bare_cpu_ms', 2)} ms, ratio {show('cpu_ratio', 2)} (goal <= 1.2)")  # fmt: skip
    print(f"CPU per streamed turn: gateway {show('gw_stream_cpu_ms', 2)} ms, bare litellm "
          f"{show('bare_stream_cpu_ms', 2)} ms, ratio {show('stream_cpu_ratio', 2)}")  # fmt: skip
    print(f"TTFB streamed: route {show('ttfb_route_ms')} ms, member {show('ttfb_member_ms')} ms, "
          f"+{show('ttfb_over_ms')} ms (goal <= 10); direct litellm "
          f"+{show('ttfb_litellm_over_ms')} ms")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bare", metavar="API_BASE", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.bare:
        asyncio.run(bare_main(options.bare))
        sys.exit(0)
    folder = Path(tempfile.mkdtemp(prefix="route-bench-"))
    try:
        measured = measure(folder, options.turns, options.latency, options.runs)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(measured, indent=1)) if options.json else _print(measured)
