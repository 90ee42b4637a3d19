"""What a client format costs: the gateway's CPU per panel rendered in each format, against chat.

Every format is read -> seat -> render around the same panel, so whatever a format costs beyond
chat is its reader and its renderer (and litellm's translators where a format uses them). The
goal is at most 1.1x chat's CPU per panel, plain and streamed.

One simulated upstream (every seat answers at once) and one gateway (one worker, a collection of
five members, no explorers, no reserves) run as subprocesses on 127.0.0.1. Each run sends, for
every format and mode in turn (the order rotates run by run, so a drift of the machine's speed
does not fall on one format), a bounded batch of panels 4 at a time, reading every reply whole,
and takes the gateway process's CPU (utime + stime from /proc) over the batch. A format's ratio
is taken within a run, against chat in the same mode; the table shows the median ratio over
runs and its range.

    .venv/bin/python benchmarks/formats.py                  # 5 runs of 60 panels per cell
    .venv/bin/python benchmarks/formats.py --runs 3 --panels 30 --json
    .venv/bin/python benchmarks/formats.py --write-doc      # also docs/performance.md's section
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script, like the others

from load import HOST, cpu_seconds, free_port, start, stop, wait_healthy  # noqa: E402

SEATS = 5
COLLECTION = "five"
GOAL = 1.1
CONCURRENCY = 4
DOC = Path(__file__).resolve().parent.parent / "docs" / "performance.md"
BEGIN, END = "<!-- formats.py: begin -->", "<!-- formats.py: end -->"
PROMPT = "Is this retry loop safe?"
USER = [{"role": "user", "content": PROMPT}]


def _chat(stream: bool) -> tuple[str, dict[str, Any]]:
    body = {"model": f"bench/{COLLECTION}", "messages": USER, "stream": stream}
    return "/v1/chat/completions", body


def _completions(stream: bool) -> tuple[str, dict[str, Any]]:
    return "/v1/completions", {"model": f"bench/{COLLECTION}", "prompt": PROMPT, "stream": stream}


def _responses(stream: bool) -> tuple[str, dict[str, Any]]:
    return "/v1/responses", {"model": f"bench/{COLLECTION}", "input": PROMPT, "stream": stream}


def _anthropic(stream: bool) -> tuple[str, dict[str, Any]]:
    body = {"model": f"bench/{COLLECTION}", "max_tokens": 512, "messages": USER, "stream": stream}
    return "/v1/messages", body


def _ollama(stream: bool) -> tuple[str, dict[str, Any]]:
    return "/api/chat", {"model": f"bench/{COLLECTION}", "messages": USER, "stream": stream}


def _gemini(stream: bool) -> tuple[str, dict[str, Any]]:
    method = "streamGenerateContent?alt=sse" if stream else "generateContent"
    body = {"contents": [{"role": "user", "parts": [{"text": PROMPT}]}]}
    return f"/v1beta/models/{COLLECTION}:{method}", body


# format -> (path, body) for a plain or streamed panel; chat first, the baseline
FORMATS: dict[str, Callable[[bool], tuple[str, dict[str, Any]]]] = {
    "chat": _chat,
    "completions": _completions,
    "responses": _responses,
    "anthropic": _anthropic,
    "ollama": _ollama,
    "gemini": _gemini,
}
MODES = ("plain", "streamed")


def write_files(work: Path, sim_port: int) -> tuple[Path, Path]:
    spec = work / "simulate.yaml"
    spec.write_text(yaml.safe_dump({"models": {"*": {"latency_s": 0.0}}}))
    members = [f"m{i}" for i in range(1, SEATS + 1)]
    raw = {
        "model_list": [
            {
                "model_name": alias,
                "litellm_params": {
                    "model": f"openai/sim-{alias}",
                    "api_base": f"http://{HOST}:{sim_port}/v1",
                    "api_key": "sim-key",
                },
                "bench": {"connection": "sim"},
            }
            for alias in members
        ],
        "collections": {COLLECTION: {"members": members, "description": "five seats"}},
        "gateway": {"max_calls": SEATS, "max_explorers": 0, "reserves": 0, "seat_timeout_s": 60},
        "store": f"sqlite:///{work / 'records.db'}",
    }
    config = work / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    return spec, config


async def one_panel(client: httpx.AsyncClient, path: str, body: dict[str, Any]) -> None:
    """One panel, its reply read to the end; refused unless every seat's section is in it."""
    async with client.stream("POST", path, json=body) as reply:
        text = (await reply.aread()).decode()
    if reply.status_code != 200:
        raise RuntimeError(f"{path}: {reply.status_code} {text[:500]}")
    missing = [s for s in range(1, SEATS + 1) if f"member{s}" not in text]
    if missing:
        raise RuntimeError(f"{path}: seats {missing} missing from the reply: {text[:500]}")


async def batch(client: httpx.AsyncClient, path: str, body: dict[str, Any], panels: int) -> None:
    queue = iter(range(panels))

    async def worker() -> None:
        for _ in queue:
            await one_panel(client, path, body)

    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))


async def measure(url: str, pid: int, runs: int, panels: int) -> dict[str, Any]:
    """CPU ms per panel of every (format, mode), run by run."""
    cells = [(name, mode) for mode in MODES for name in FORMATS]
    ms: dict[str, dict[str, list[float]]] = {m: {n: [] for n in FORMATS} for m in MODES}
    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        for name, mode in cells:  # warm every path (imports, litellm's translators, caches)
            await batch(client, *FORMATS[name](mode == "streamed"), panels=8)
        for run in range(runs):
            shift = run % len(cells)
            for name, mode in cells[shift:] + cells[:shift]:
                path, body = FORMATS[name](mode == "streamed")
                cpu0 = cpu_seconds(pid)
                await batch(client, path, body, panels)
                ms[mode][name].append(1000 * (cpu_seconds(pid) - cpu0) / panels)
    return ms


def summarise(ms: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    rows: dict[str, Any] = {}
    for mode, per in ms.items():
        base = per["chat"]
        for name, values in per.items():
            ratios = [v / b for v, b in zip(values, base, strict=True)]
            rows.setdefault(name, {})[mode] = {
                "ms": round(statistics.median(values), 2),
                "ms_range": [round(min(values), 2), round(max(values), 2)],
                "ratio": round(statistics.median(ratios), 3),
                "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
            }
    return rows


async def run(runs: int, panels: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-formats-") as tmp:
        work = Path(tmp)
        sim_port, port = free_port(), free_port()
        spec, config = write_files(work, sim_port)
        sim = gateway = None
        try:
            sim_log, gw_log = work / "simulate.log", work / "gateway.log"
            sim = start(["simulate", "--host", HOST, "--port", str(sim_port), "--spec", str(spec)],
                        sim_log)  # fmt: skip
            await wait_healthy(f"http://{HOST}:{sim_port}", sim, sim_log)
            gateway = start(["serve", "--host", HOST, "--port", str(port), "--workers", "1",
                             "--config", str(config)], gw_log)  # fmt: skip
            url = f"http://{HOST}:{port}"
            await wait_healthy(url, gateway, gw_log)
            began, load = time.monotonic(), [os.getloadavg()[0]]
            ms = await measure(url, gateway.pid, runs, panels)
            load.append(os.getloadavg()[0])
        finally:
            stop(gateway)
            stop(sim)
    return {
        "runs": runs,
        "panels_per_cell": panels,
        "seats": SEATS,
        "seconds": round(time.monotonic() - began, 1),
        "load_average": [round(x, 1) for x in load],  # 1-minute, at the start and at the end
        "cores": os.cpu_count(),
        "formats": summarise(ms),
        "ms": ms,
    }


def table(result: dict[str, Any]) -> str:
    def cell(figures: dict[str, Any], name: str) -> str:
        lo, hi = figures["ms_range"]
        text = f"{figures['ms']:.1f} ms ({lo:.1f}–{hi:.1f})"
        if name == "chat":
            return f"{text} | 1 (baseline)"
        rlo, rhi = figures["ratio_range"]
        mark = "✅" if figures["ratio"] <= GOAL else "❌"
        return f"{text} | {figures['ratio']:.3f} ({rlo:.3f}–{rhi:.3f}) {mark}"

    lines = [
        "| format | plain: CPU per panel | plain: ÷ chat | streamed: CPU per panel "
        "| streamed: ÷ chat |",
        "|---|---|---|---|---|",
    ]
    for name, modes in result["formats"].items():
        lines.append(f"| {name} | {cell(modes['plain'], name)} | {cell(modes['streamed'], name)} |")
    return "\n".join(lines)


def section(result: dict[str, Any], command: str) -> str:
    load = result.get("load_average", ["?", "?"])
    return "\n".join(
        [
            BEGIN,
            "## Client formats: CPU per panel against chat",
            "",
            f"Written by `{command}`; rerun it rather than edit. One gateway (one worker) and one "
            f"simulated upstream answering at once; a panel of {result['seats']} seats; per "
            f"format and mode, {result['panels_per_cell']} panels 4 at a time, every reply read "
            f"whole; the gateway's CPU (utime + stime) over the batch ÷ panels. {result['runs']} "
            "runs, the order of formats rotated run by run; each ratio is taken within a run "
            f"against chat in the same mode (median, range in brackets). Goal: ≤ {GOAL}× chat. "
            f"Load average at the start and end: {load[0]} and {load[1]} on {result['cores']} "
            "cores (a machine shared with other work: the spread is mostly its noise).",
            "",
            table(result),
            "",
            END,
        ]
    )


def write_doc(text: str) -> None:
    """Replace this script's section of docs/performance.md, or append it; nothing else."""
    doc = DOC.read_text()
    if BEGIN in doc and END in doc:
        head, _, rest = doc.partition(BEGIN)
        _, _, tail = rest.partition(END)
        doc = head + text + tail
    else:
        doc = doc.rstrip("\n") + "\n\n" + text + "\n"
    DOC.write_text(doc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--panels", type=int, default=60, help="panels per format, mode and run")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--write-doc", action="store_true", help="update docs/performance.md")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.runs, args.panels))
    command = "python benchmarks/formats.py " + " ".join(
        a for a in (argv if argv is not None else sys.argv[1:]) if a not in ("--json",)
    )
    if args.write_doc:
        write_doc(section(result, command.strip()))
    print(json.dumps(result, indent=1) if args.json else table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
