"""What a route turn costs over calling its member directly.

One gateway (`serve --workers 1`, collection `crew` of one member, `reply: route`), one simulated
upstream answering after `--latency` s, and two bare litellm processes making the gateway's call
(same model, api_base, no retries, a timeout): one as a script would (`asyncio.run`, litellm's
defaults), one as the gateway drives litellm (uvloop, `gateway.upstream`'s inline set-up and
shared session: the gateway with its own work taken out). Requests take turns, one of each kind
after the other, so all meet the same machine. After a warm-up of each:

1. **Wall time** of a plain turn through the gateway against a direct `litellm.acompletion`
   (timed in the bare process around the call alone); the ratio of medians.
2. **CPU per turn**: the gateway process's CPU (utime + stime from /proc, all threads) over the
   whole plain loop ÷ turns, against each bare process's CPU over the same loop ÷ calls. Every
   process sits idle while the others work, so background work (litellm's logging tasks, a
   server's timers) counts on every side. The goal is against the script's litellm.
3. **Time to first byte** of a streamed turn: until the first chunk carrying text, through the
   gateway, from the member itself (a raw streamed request to the simulator), through a relay
   with nothing in it (uvicorn and aiohttp passing bytes: what one more HTTP hop costs here),
   and from litellm alone in both bare processes. Every stream is read whole; the CPU of the
   gateway and of the bare processes over this loop gives streamed CPU per turn too.

    .venv/bin/python benchmarks/route_turn.py                  # 3 runs of 60 turns
    .venv/bin/python benchmarks/route_turn.py --runs 5 --json

`measure(work, turns, latency, runs)` returns the figures (medians and ranges) as a dict; `route`
is benchmarks/compare.py's measure.
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
KINDS = ("route", "member", "relay", "litellm", "litellm_as_gateway")


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


class Helper:
    """This script in another process (`--bare` or `--relay`): a bare one takes one call per
    command line and answers with a figure on a line."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, *args],
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
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def busy_share(seconds: float = 1.0) -> float:
    """Share of the whole machine busy with other work over *seconds* (nothing of ours runs)."""

    def ticks() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        return sum(fields) - fields[3] - fields[4], sum(fields)

    (b0, t0), _ = ticks(), time.sleep(seconds)
    b1, t1 = ticks()
    return (b1 - b0) / max(1, t1 - t0)


async def one_run(work: Path, turns: int, latency: float) -> dict[str, Any]:
    work.mkdir(parents=True, exist_ok=True)
    sim_port, gw_port, relay_port = free_port(), free_port(), free_port()
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
    busy = busy_share()
    sim = start(["simulate", "--port", str(sim_port), "--spec", str(work / "sim.yaml")],
                work / "sim.log")  # fmt: skip
    gateway = start(["serve", "--config", str(work / "bench.yaml"), "--port", str(gw_port),
                     "--workers", "1"], work / "gw.log")  # fmt: skip
    bare = Helper("--bare", params["api_base"])
    driven = Helper("--bare", params["api_base"], "--as-gateway")
    relay = Helper("--relay", str(relay_port), f"{sim_url}/v1/chat/completions")
    try:
        await wait_healthy(gw_url, gateway, work / "gw.log")
        async with httpx.AsyncClient(timeout=60) as client:
            for url in (f"{sim_url}/_sim/health", f"http://{HOST}:{relay_port}/"):
                for _ in range(100):
                    with contextlib.suppress(httpx.TransportError):
                        if (await client.get(url)).status_code < 500:
                            break
                    await asyncio.sleep(0.1)
            route = f"{gw_url}/v1/chat/completions"
            body = {"model": "bench/crew:route", "messages": MESSAGES}
            member = {"model": "sim-a", "messages": MESSAGES, "stream": True}
            streams = {
                "route": lambda: streamed_ttfb(client, route, {**body, "stream": True}),
                "member": lambda: streamed_ttfb(client, f"{sim_url}/v1/chat/completions", member),
                "relay": lambda: streamed_ttfb(client, f"http://{HOST}:{relay_port}/", member),
                "litellm": lambda: bare.ask("stream"),
                "litellm_as_gateway": lambda: driven.ask("stream"),
            }
            for _ in range(WARM):
                (await client.post(route, json=body)).raise_for_status()
                await bare.ask("plain")
                await driven.ask("plain")
                for kind in KINDS:
                    await streams[kind]()
            walls: dict[str, list[float]] = {"route": [], "direct": []}
            cpu0 = (cpu_seconds(gateway.pid), await bare.ask("cpu"), await driven.ask("cpu"))
            for _ in range(turns):
                began = time.perf_counter()
                reply = await client.post(route, json=body)
                walls["route"].append(time.perf_counter() - began)
                assert reply.status_code == 200, reply.text
                walls["direct"].append(await bare.ask("plain"))
                await driven.ask("plain")
            cpu1 = (cpu_seconds(gateway.pid), await bare.ask("cpu"), await driven.ask("cpu"))
            ttfb: dict[str, list[float]] = {kind: [] for kind in KINDS}
            for _ in range(turns):
                for kind in KINDS:
                    ttfb[kind].append(await streams[kind]())
            cpu2 = (cpu_seconds(gateway.pid), await bare.ask("cpu"), await driven.ask("cpu"))
    finally:
        for helper in (bare, driven, relay):
            helper.close()
        stop(gateway)
        stop(sim)
    med = statistics.median
    plain = [1000 * (b - a) / turns for a, b in zip(cpu0, cpu1, strict=True)]
    streamed = [1000 * (b - a) / turns for a, b in zip(cpu1, cpu2, strict=True)]
    member = med(ttfb["member"])
    return {
        "busy": busy,
        "route_ms": 1000 * med(walls["route"]),
        "direct_ms": 1000 * med(walls["direct"]),
        "wall_ratio": med(walls["route"]) / med(walls["direct"]),
        "gw_cpu_ms": plain[0],
        "bare_cpu_ms": plain[1],
        "driven_cpu_ms": plain[2],
        "gw_stream_cpu_ms": streamed[0],
        "bare_stream_cpu_ms": streamed[1],
        "driven_stream_cpu_ms": streamed[2],
        "ttfb_member_ms": 1000 * member,
        **{
            f"ttfb_{kind}_over_ms": 1000 * (med(ttfb[kind]) - member)
            for kind in KINDS[:1] + KINDS[2:]
        },
    }


def measure(work: Path, turns: int = 60, latency: float = 0.3, runs: int = 3) -> dict[str, Any]:
    """Every run's figures, and each figure's median and range over the runs."""
    done = [asyncio.run(one_run(work / f"run{i}", turns, latency)) for i in range(runs)]
    figures = {key: summary(run[key] for run in done) for key in done[0]}
    pairs = {
        "cpu_ratio": ("gw_cpu_ms", "bare_cpu_ms"),
        "cpu_vs_driven": ("gw_cpu_ms", "driven_cpu_ms"),
        "stream_cpu_ratio": ("gw_stream_cpu_ms", "bare_stream_cpu_ms"),
    }
    for name, (ours, theirs) in pairs.items():
        figures[name] = ratios([r[ours] for r in done], [r[theirs] for r in done])
    return {"figures": figures, "options": {"turns": turns, "latency_s": latency}, "runs": done}


def route(ctx: Any) -> dict[str, Any]:
    """benchmarks/compare.py's `route` measure."""
    turns = 30 if ctx.quick else 60
    measured = measure(ctx.work / "route", turns, 0.3, ctx.runs)
    for run in measured["runs"]:
        ctx.background.append(run["busy"])
    measured["options"].update(gateway_workers=1, cpu=_cpu_model())
    return measured


def _cpu_model() -> str:
    """This machine's processor, as /proc/cpuinfo names it (the page's other rows may have been
    measured on another)."""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "?"


# -- the helper processes --------------------------------------------------------------------


async def bare_main(api_base: str, as_gateway: bool) -> None:
    """Read commands on stdin: `plain` and `stream` make one call and print its wall time (for
    `stream`, until the first text); `cpu` prints this process's CPU seconds so far."""
    for name, value in (("LITELLM_LOCAL_MODEL_COST_MAP", "True"),
                        ("LITELLM_OFFLINE_MODE", "true"), ("HF_HUB_OFFLINE", "1")):  # fmt: skip
        os.environ.setdefault(name, value)
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    params = {"model": "openai/sim-a", "api_base": api_base, "api_key": "sim"}
    request = {"messages": MESSAGES}
    if as_gateway:  # the gateway's own way to litellm, with nothing of the gateway around it
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
        from gateway.upstream.seam import UpstreamSeam

        upstream = UpstreamSeam()
        await upstream.open([params["model"]])

        async def call(stream: bool) -> Any:
            return await upstream.open_turn(params, request, 30, stream=stream, reader="litellm")
    else:

        async def call(stream: bool) -> Any:
            extra = {"stream": True, "stream_options": {"include_usage": True}} if stream else {}
            return await litellm.acompletion(**params, **request, timeout=30, num_retries=0,
                                             max_retries=0, **extra)  # fmt: skip

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while command := (await reader.readline()).decode().strip():
        if command == "cpu":
            print(time.process_time(), flush=True)
            continue
        began = time.perf_counter()
        if command == "plain":
            await call(False)
            print(time.perf_counter() - began, flush=True)
            continue
        first = None
        async for chunk in await call(True):
            if first is None and any(getattr(c.delta, "content", None) for c in chunk.choices):
                first = time.perf_counter() - began
        print(first, flush=True)


def relay_main(port: int, upstream: str) -> None:
    """A relay with nothing in it: each request's body is posted to *upstream* and the answer's
    bytes passed back as they come (uvicorn with uvloop and httptools, and aiohttp, as the
    gateway has): what one more HTTP hop costs on this machine."""
    import aiohttp
    import uvicorn

    session: list[aiohttp.ClientSession] = []

    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            return await send({"type": "lifespan.shutdown.complete"})
        body, more = b"", True
        while more:
            message = await receive()
            body, more = body + message.get("body", b""), message.get("more_body", False)
        if scope["method"] == "GET":  # a health check
            await send({"type": "http.response.start", "status": 200, "headers": []})
            return await send({"type": "http.response.body", "body": b"ok"})
        session[:] = session or [aiohttp.ClientSession()]
        headers = {"content-type": "application/json"}
        async with session[0].post(upstream, data=body, headers=headers) as answer:
            kind = answer.headers.get("content-type", "text/event-stream").encode()
            await send({"type": "http.response.start", "status": answer.status,
                        "headers": [(b"content-type", kind)]})  # fmt: skip
            async for data in answer.content.iter_any():
                await send({"type": "http.response.body", "body": data, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    uvicorn.run(app, host=HOST, port=port, log_level="warning", loop="uvloop", http="httptools")


def _print(result: dict[str, Any]) -> None:
    f = result["figures"]

    def show(key: str, digits: int = 1) -> str:
        s = f[key]
        return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"

    print(f"machine busy with other work before each run: {show('busy', 2)}")
    print(f"wall per turn: route {show('route_ms')} ms, direct litellm {show('direct_ms')} ms, "
          f"ratio {show('wall_ratio', 3)} (goal <= 1.05)")  # fmt: skip
    print(f"CPU per plain turn: gateway {show('gw_cpu_ms', 2)} ms, bare litellm "
          f"{show('bare_cpu_ms', 2)} ms, ratio {show('cpu_ratio', 2)} (goal <= 1.2); litellm "
          f"as the gateway drives it {show('driven_cpu_ms', 2)} ms, "
          f"gateway/that {show('cpu_vs_driven', 2)}")  # fmt: skip
    print(f"CPU per streamed turn: gateway {show('gw_stream_cpu_ms', 2)} ms, bare litellm "
          f"{show('bare_stream_cpu_ms', 2)} ms, ratio {show('stream_cpu_ratio', 2)}; "
          f"as the gateway drives it {show('driven_stream_cpu_ms', 2)} ms")  # fmt: skip
    print(f"TTFB streamed over the member's own ({show('ttfb_member_ms')} ms): route "
          f"+{show('ttfb_route_over_ms')} ms (goal <= 10); a relay with nothing in it "
          f"+{show('ttfb_relay_over_ms')} ms; litellm alone +{show('ttfb_litellm_over_ms')} ms, "
          f"as the gateway drives it +{show('ttfb_litellm_as_gateway_over_ms')} ms")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--latency", type=float, default=0.3)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--bare", metavar="API_BASE", help=argparse.SUPPRESS)
    parser.add_argument("--as-gateway", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--relay", nargs=2, metavar=("PORT", "UPSTREAM"), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.bare:
        if options.as_gateway:
            import uvloop

            uvloop.run(bare_main(options.bare, True))
        else:
            asyncio.run(bare_main(options.bare, False))
        sys.exit(0)
    if options.relay:
        relay_main(int(options.relay[0]), options.relay[1])
        sys.exit(0)
    folder = Path(tempfile.mkdtemp(prefix="route-bench-"))
    try:
        measured = measure(folder, options.turns, options.latency, options.runs)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps(measured, indent=1)) if options.json else _print(measured)
