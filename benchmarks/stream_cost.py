"""What streaming costs: a streamed panel with seats streamed upstream or not, and the seam's
streaming path per chunk against a bare litellm stream.

1. **A streamed panel**: five seats each answering `--answer-kb` of text, asked once of a gateway
   with `stream_seats: always` (every seat streamed upstream: what every streamed panel cost
   before panels stopped streaming their seats) and once with the default (`auto`: not streamed).
   Reported: the panel's wall time and the gateway process's CPU for it.
2. **Per chunk**: `--calls` streamed calls of `--chunks` chunks each, through the gateway's seam
   (`Upstream.call(..., stream=True)`: the path route mode will use for true token streaming) and
   through a bare `litellm.acompletion(stream=True)` loop, alternating, in this one process.
   Reported: CPU per chunk of each, and ours/bare.

The simulated upstream and the gateways run as subprocesses on 127.0.0.1, so the per-chunk CPU is
this process's alone.

    .venv/bin/python benchmarks/stream_cost.py                     # 200 KB seats, 3 runs
    .venv/bin/python benchmarks/stream_cost.py --answer-kb 50 --runs 1
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, like the others

from load import HOST, cpu_seconds, free_port, start, stop, wait_healthy  # noqa: E402

SEATS = 5


def words(size: int) -> str:
    """*size* bytes of distinct words (litellm takes a chunk repeated many times for a loop)."""
    return " ".join(f"w{i}" for i in range(size // 3 + 1))[:size]


def gateway_config(path: Path, sim_url: str, stream_seats: str) -> Path:
    members = [f"m{i}" for i in range(1, SEATS + 1)]
    raw = {
        "model_list": [
            {
                "model_name": alias,
                "litellm_params": {
                    "model": f"openai/big-{alias}",
                    "api_base": f"{sim_url}/v1",
                    "api_key": "sim-key",
                },
                "bench": {"connection": "sim"},
            }
            for alias in members
        ],
        "collections": {"five": {"members": members, "description": "five seats"}},
        "gateway": {
            "max_calls": SEATS,
            "max_explorers": 0,
            "reserves": 0,
            "seat_timeout_s": 600,
            "stream_seats": stream_seats,
        },
        "store": f"sqlite:///{path.parent / f'records-{stream_seats}.db'}",
    }
    path.write_text(yaml.safe_dump(raw))
    return path


async def streamed_panel(work: Path, sim_url: str, stream_seats: str) -> dict[str, Any]:
    """One streamed panel on a fresh gateway: its wall time, and the gateway's CPU for it."""
    config = gateway_config(work / f"bench-{stream_seats}.yaml", sim_url, stream_seats)
    port, log = free_port(), work / f"gateway-{stream_seats}.log"
    gateway = start(["serve", "--host", HOST, "--port", str(port), "--config", str(config)], log)
    try:
        url = f"http://{HOST}:{port}"
        await wait_healthy(url, gateway, log)
        body = {
            "model": "bench/five",
            "stream": True,
            "messages": [{"role": "user", "content": "Review the whole module."}],
        }
        cpu0, began = cpu_seconds(gateway.pid), time.perf_counter()
        received = 0
        async with httpx.AsyncClient(base_url=url, timeout=900) as client:
            async with client.stream("POST", "/v1/chat/completions", json=body) as response:
                response.raise_for_status()
                async for part in response.aiter_bytes():
                    received += len(part)
        return {
            "wall_s": round(time.perf_counter() - began, 3),
            "gateway_cpu_s": round(cpu_seconds(gateway.pid) - cpu0, 3),
            "reply_bytes": received,
        }
    finally:
        stop(gateway)


async def per_chunk(sim_url: str, calls: int, runs: int) -> dict[str, Any]:
    """CPU per chunk: the seam's streaming path against a bare litellm stream, alternating."""
    from gateway.upstream import seam as seam_module  # (makes litellm quiet first)

    litellm = importlib.import_module("litellm")

    params = {"model": "openai/chunky", "api_base": f"{sim_url}/v1", "api_key": "sim-key"}
    messages = [{"role": "user", "content": "Stream it."}]
    seam = seam_module.UpstreamSeam()
    await seam.open([params["model"]])

    async def ours() -> int:
        # litellm's own streaming path (benchmarks/direct_cost.py measures the direct reader)
        answer = await seam.call(params, messages, {}, 120, stream=True, reader="litellm")
        return len(answer.text)

    async def bare() -> int:
        stream = await litellm.acompletion(
            **params, messages=messages, stream=True, timeout=120, num_retries=0, max_retries=0
        )
        parts = [c.choices[0].delta.content or "" async for c in stream if c.choices]
        return len("".join(parts))

    chunks = await _chunks_per_call(sim_url)
    figures: dict[str, list[float]] = {"ours": [], "bare": []}
    try:
        await ours(), await bare()  # warm both paths
        for _ in range(runs):
            for name, one in (("ours", ours), ("bare", bare)):
                cpu0 = time.process_time()
                for _ in range(calls):
                    await one()
                figures[name].append((time.process_time() - cpu0) / (calls * chunks))
    finally:
        await seam.close()
    ours_ms = 1000 * statistics.median(figures["ours"])
    bare_ms = 1000 * statistics.median(figures["bare"])
    return {
        "chunks_per_call": chunks,
        "calls_per_run": calls,
        "ours_ms_per_chunk": round(ours_ms, 4),
        "bare_ms_per_chunk": round(bare_ms, 4),
        "ratio": round(ours_ms / bare_ms, 3),
        "runs": {k: [round(1000 * v, 4) for v in vs] for k, vs in figures.items()},
    }


async def _chunks_per_call(sim_url: str) -> int:
    """Content chunks the simulator sends for the chunky model (three words a chunk)."""
    async with httpx.AsyncClient(timeout=60) as client:
        body = {"model": "chunky", "stream": True, "messages": [{"role": "user", "content": "x"}]}
        async with client.stream("POST", f"{sim_url}/v1/chat/completions", json=body) as reply:
            lines = [line async for line in reply.aiter_lines() if line.startswith("data: {")]
    return len(lines)


async def run(answer_kb: int, chunk_words: int, calls: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-stream-") as tmp:
        work = Path(tmp)
        spec = work / "simulate.yaml"
        spec.write_text(
            yaml.safe_dump(
                {
                    "models": {
                        "*": {"answer": words(answer_kb * 1000)},
                        "chunky": {"answer": " ".join(f"w{i}" for i in range(chunk_words))},
                    }
                }
            )
        )
        sim_port, sim_log = free_port(), work / "simulate.log"
        sim = start(
            ["simulate", "--host", HOST, "--port", str(sim_port), "--spec", str(spec)], sim_log
        )
        try:
            sim_url = f"http://{HOST}:{sim_port}"
            await wait_healthy(sim_url, sim, sim_log)
            panels = {
                mode: [await streamed_panel(work, sim_url, mode) for _ in range(runs)]
                for mode in ("always", "auto")
            }
            chunk = await per_chunk(sim_url, calls, runs)
        finally:
            stop(sim)
    return {"answer_kb": answer_kb, "seats": SEATS, "panel": panels, "per_chunk": chunk}


def report(result: dict[str, Any]) -> str:
    def median(mode: str, key: str) -> float:
        return statistics.median(p[key] for p in result["panel"][mode])

    c = result["per_chunk"]
    lines = [
        f"streamed panel, {result['seats']} seats of {result['answer_kb']} KB each "
        f"(median of {len(result['panel']['auto'])}):",
        f"  seats streamed upstream (stream_seats: always): {median('always', 'wall_s'):.2f} s, "
        f"gateway CPU {median('always', 'gateway_cpu_s'):.2f} s",
        f"  seats not streamed (default, auto):             {median('auto', 'wall_s'):.2f} s, "
        f"gateway CPU {median('auto', 'gateway_cpu_s'):.2f} s",
        f"seam streaming path, {c['chunks_per_call']} chunks a call x {c['calls_per_run']} calls:",
        f"  ours {c['ours_ms_per_chunk']:.3f} ms CPU per chunk, bare litellm "
        f"{c['bare_ms_per_chunk']:.3f} ms: ours/bare {c['ratio']:.2f}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answer-kb", type=int, default=200, help="each seat's answer (200)")
    parser.add_argument(
        "--chunk-words", type=int, default=1500, help="words a streamed call (1500: 500 chunks)"
    )
    parser.add_argument("--calls", type=int, default=10, help="streamed calls per run (10)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each (3)")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.answer_kb, args.chunk_words, args.calls, args.runs))
    print(report(result))
    if args.json:
        print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
