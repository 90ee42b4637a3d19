"""What the direct reader saves: CPU per panel seat and per relayed chunk, and time to first
text, through the direct reader, through litellm's, and through bare litellm, in one run.

One simulated upstream (a subprocess), two gateways that differ only in
`gateway.upstream_reader` (`direct`, `litellm`; `serve --workers 1`, subprocesses), and the bare
litellm loop (benchmarks/bare_litellm.py, a process of its own making the gateway's call). Each
gateway is measured alone while the others sit idle, after a warm-up, by its process's CPU
(utime + stime from /proc, all threads) over a bounded batch:

1. **Per seat**: `--panels` panels of five seats (plain seat calls, the default), five panels
   at a time; the gateway's CPU ÷ seats, against bare litellm's CPU per plain call.
2. **Per chunk**: `--turns` streamed route turns of `--chunk-words` words (three words a chunk),
   read whole by the client; the gateway's CPU ÷ upstream chunks, against bare litellm's CPU per
   streamed chunk of the same answer.
3. **Time to first text**: `--ttft` streamed route turns of a short answer (upstream latency
   0), until the first chunk carrying text reaches the client; median.

    .venv/bin/python benchmarks/direct_cost.py                    # 3 runs
    .venv/bin/python benchmarks/direct_cost.py --runs 1 --json
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
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

HERE = Path(__file__).resolve().parent
SEATS = 5
READERS = ("direct", "litellm")
OFFLINE = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_OFFLINE_MODE": "true"}


def _config(work: Path, sim_url: str, reader: str) -> Path:
    def model(alias: str, served: str) -> dict[str, Any]:
        params = {"model": f"openai/{served}", "api_base": f"{sim_url}/v1", "api_key": "sim"}
        return {"model_name": alias, "litellm_params": params, "bench": {"connection": "sim"}}

    members = [f"m{i}" for i in range(1, SEATS + 1)]
    raw = {
        "model_list": [
            *(model(alias, f"sim-{alias}") for alias in members),
            model("long", "chunky"),
            model("short", "sim-m1"),
        ],
        "collections": {
            "five": {"members": members},
            "long": {"members": ["long"], "reply": "route"},
            "short": {"members": ["short"], "reply": "route"},
        },
        "gateway": {
            "max_calls": SEATS,
            "max_explorers": 0,
            "reserves": 0,
            "upstream_reader": reader,
            "route_explore": 0,
        },  # fmt: skip
        "store": f"sqlite:///{work / f'records-{reader}.db'}",
    }
    path = work / f"bench-{reader}.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _has_text(line: str) -> bool:
    squeezed = line.replace(" ", "")
    return '"content":"' in squeezed and '"content":""' not in squeezed


async def _panels(client: httpx.AsyncClient, count: int) -> None:
    body = {"model": "bench/five", "messages": [{"role": "user", "content": "Review it."}]}
    for start_at in range(0, count, 5):
        at_once = min(5, count - start_at)
        replies = await asyncio.gather(
            *(client.post("/v1/chat/completions", json=body) for _ in range(at_once))
        )
        for reply in replies:
            reply.raise_for_status()


async def _turn(client: httpx.AsyncClient, collection: str) -> float:
    """One streamed route turn read whole; the seconds to its first text."""
    body = {"model": collection, "stream": True, "messages": [{"role": "user", "content": "Go."}]}
    began, first = time.perf_counter(), None
    async with client.stream("POST", "/v1/chat/completions", json=body) as reply:
        reply.raise_for_status()
        async for line in reply.aiter_lines():
            if first is None and _has_text(line):
                first = time.perf_counter() - began
    assert first is not None, "the turn carried no text"
    return first


async def _gateway(work: Path, sim_url: str, reader: str, args: Any, chunks: int) -> dict:
    config = _config(work, sim_url, reader)
    port, log = free_port(), work / f"gateway-{reader}.log"
    proc = start(["serve", "--host", HOST, "--port", str(port), "--config", str(config),
                  "--workers", "1"], log, env={**os.environ, **OFFLINE})  # fmt: skip
    try:
        url = f"http://{HOST}:{port}"
        await wait_healthy(url, proc, log)
        async with httpx.AsyncClient(base_url=url, timeout=300) as client:
            await _panels(client, 10)
            await _turn(client, "long")
            cpu0 = cpu_seconds(proc.pid)
            await _panels(client, args.panels)
            seat_ms = 1000 * (cpu_seconds(proc.pid) - cpu0) / (args.panels * SEATS)
            cpu0 = cpu_seconds(proc.pid)
            for _ in range(args.turns):
                await _turn(client, "long")
            chunk_ms = 1000 * (cpu_seconds(proc.pid) - cpu0) / (args.turns * chunks)
            firsts = [await _turn(client, "short") for _ in range(args.ttft)]
    finally:
        stop(proc)
    return {"seat_ms": seat_ms, "chunk_ms": chunk_ms, "ttft_ms": 1000 * statistics.median(firsts)}


def _bare(sim_url: str, calls: int, model: str | None = None) -> float:
    """Bare litellm's CPU ms per call (streamed for *model*, else plain)."""
    argv = [sys.executable, str(HERE / "bare_litellm.py"), "--api-base", f"{sim_url}/v1",
            "--calls", str(calls), "--batch", "5", "--warmup", "10"]  # fmt: skip
    if model:
        argv += ["--stream", "--model", model, "--batch", "1"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=900,
                          env={**os.environ, **OFFLINE}, stdin=subprocess.DEVNULL)  # fmt: skip
    if done.returncode:
        raise RuntimeError(f"bare litellm failed: {done.stderr[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    if figures["ok"] != figures["calls"]:
        raise RuntimeError(f"bare litellm: {figures['ok']}/{figures['calls']} calls ok")
    return float(figures["cpu_ms_per_call"])


async def _chunks(sim_url: str) -> int:
    body = {"model": "chunky", "stream": True, "messages": [{"role": "user", "content": "x"}]}
    async with httpx.AsyncClient(timeout=60) as client:
        async with client.stream("POST", f"{sim_url}/v1/chat/completions", json=body) as reply:
            return len([line async for line in reply.aiter_lines() if line.startswith("data: {")])


async def run(args: Any) -> dict[str, Any]:
    per: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-direct-") as tmp:
        work = Path(tmp)
        spec = work / "simulate.yaml"
        chunky = " ".join(f"w{i}" for i in range(args.chunk_words))
        spec.write_text(yaml.safe_dump({"models": {"*": {}, "chunky": {"answer": chunky}}}))
        port, log = free_port(), work / "simulate.log"
        sim = start(["simulate", "--host", HOST, "--port", str(port), "--spec", str(spec)], log)
        try:
            sim_url = f"http://{HOST}:{port}"
            await wait_healthy(sim_url, sim, log)
            chunks = await _chunks(sim_url)
            for _ in range(args.runs):
                for reader in READERS:
                    got = await _gateway(work, sim_url, reader, args, chunks)
                    for key, value in got.items():
                        per.setdefault(f"{reader}_{key}", []).append(value)
                per.setdefault("bare_seat_ms", []).append(_bare(sim_url, args.panels * SEATS))
                per_call = _bare(sim_url, args.turns, model="chunky")
                per.setdefault("bare_chunk_ms", []).append(per_call / chunks)
        finally:
            stop(sim)
    medians = {key: round(statistics.median(values), 4) for key, values in per.items()}
    for reader in READERS:
        medians[f"{reader}_seat_vs_bare"] = round(
            medians[f"{reader}_seat_ms"] / medians["bare_seat_ms"], 3
        )
        medians[f"{reader}_chunk_vs_bare"] = round(
            medians[f"{reader}_chunk_ms"] / medians["bare_chunk_ms"], 3
        )
    runs = {key: [round(v, 4) for v in values] for key, values in per.items()}
    return {"medians": medians, "runs": runs, "chunks_per_turn": chunks, "args": vars(args)}


def direct(ctx: Any) -> dict[str, Any]:
    """benchmarks/compare.py's `direct` measure: the figures run by run, ratios taken within
    each run."""
    quick = bool(ctx.quick)
    args = argparse.Namespace(
        panels=40 if quick else 100, turns=4 if quick else 10, chunk_words=1500,
        ttft=10 if quick else 30, runs=ctx.runs,
    )  # fmt: skip
    measured = asyncio.run(run(args))
    per = measured["runs"]
    figures = {key: summary(values) for key, values in per.items()}
    for reader in READERS:
        figures[f"{reader}_seat_vs_bare"] = ratios(per[f"{reader}_seat_ms"], per["bare_seat_ms"])
        figures[f"{reader}_chunk_vs_bare"] = ratios(per[f"{reader}_chunk_ms"], per["bare_chunk_ms"])
    figures["ttft_direct_vs_litellm"] = ratios(per["direct_ttft_ms"], per["litellm_ttft_ms"])
    options = {k: v for k, v in vars(args).items() if k != "runs"}
    options.update(chunks_per_turn=measured["chunks_per_turn"], gateway_workers=1)
    return {"figures": figures, "options": options}


def report(result: dict[str, Any]) -> str:
    m = result["medians"]
    lines = [
        f"median of {result['args']['runs']} runs; {result['chunks_per_turn']} chunks a turn",
        "                     CPU/seat   x bare   CPU/chunk   x bare   first text",
    ]
    for reader in READERS:
        lines.append(
            f"  {reader:<18} {m[f'{reader}_seat_ms']:7.3f} ms {m[f'{reader}_seat_vs_bare']:7.3f}"
            f"  {m[f'{reader}_chunk_ms']:7.4f} ms {m[f'{reader}_chunk_vs_bare']:7.3f}"
            f"  {m[f'{reader}_ttft_ms']:7.1f} ms"
        )
    lines.append(
        f"  {'bare litellm':<18} {m['bare_seat_ms']:7.3f} ms {1:7.3f}"
        f"  {m['bare_chunk_ms']:7.4f} ms {1:7.3f}"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--panels", type=int, default=100, help="panels measured (100)")
    parser.add_argument("--turns", type=int, default=10, help="long streamed turns (10)")
    parser.add_argument("--chunk-words", type=int, default=1500, help="words a long turn (1500)")
    parser.add_argument("--ttft", type=int, default=30, help="short turns timed (30)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args))
    print(report(result))
    if args.json:
        print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
