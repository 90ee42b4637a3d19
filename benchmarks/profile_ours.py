"""Where our gateway's CPU goes: py-spy samples the serving process under a 0-latency panel load
(one process, whatever `--ours-workers` says: with workers, the process started is a supervisor
that serves nothing).

Why sampling from outside: an in-process profiler would change the very costs it measures and
needs code in the gateway; py-spy reads the stacks of an unmodified ``bench-gateway serve``.
Each sample is charged to the layer nearest its leaf that is not the standard library (our
``gateway/``/``routing/``, litellm and the SDKs it drives, the HTTP server), so that the time
``json.dumps`` spends inside litellm counts as litellm's, and inside our reply as ours.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import subprocess
from collections import Counter

import load_client as lc
import targets as t
from context import Ctx
from setup_envs import ensure, venv_bin

LAYERS = (
    ("ours (gateway/, routing/)", re.compile(re.escape(str(t.ROOT)) + r"/(gateway|routing)/")),
    ("litellm", re.compile(r"/site-packages/litellm/")),
    (
        "SDKs under litellm (openai, httpx, aiohttp, pydantic)",
        re.compile(
            r"/site-packages/(openai|httpx|httpcore|aiohttp|pydantic|pydantic_core|anyio|"
            r"yarl|multidict|tiktoken|h2)/"
        ),
    ),
    (
        "HTTP server (uvicorn, starlette, h11)",
        re.compile(r"/site-packages/(uvicorn|starlette|h11)/"),
    ),
    ("other site-packages", re.compile(r"/site-packages/")),
)
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def _layer(frames: list[tuple[str, str]]) -> str:
    for _, file in reversed(frames):
        for name, pattern in LAYERS:
            if pattern.search(file):
                return name
    return "event loop & standard library"


def _parse(raw: str) -> tuple[Counter, Counter, Counter, int]:
    """(samples by layer, self samples by leaf function, inclusive samples of our functions)."""
    layers, leaves, ours = Counter(), Counter(), Counter()
    total = 0
    for line in raw.splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        frames = []
        for part in stack.split(";"):
            m = _FRAME.match(part.strip())
            if m:
                frames.append((m["func"], m["file"]))
        if not frames:
            continue
        total += n
        layers[_layer(frames)] += n
        func, file = frames[-1]
        leaves[f"{func} ({_short(file)})"] += n
        for func, file in {f for f in frames if LAYERS[0][1].search(f[1]) and _hot(f[1])}:
            ours[f"{func} ({_short(file)})"] += n
    return layers, leaves, ours, total


def _hot(path: str) -> bool:
    """Our frames worth ranking: not the CLI entry point every sample passes through."""
    return not path.endswith("/gateway/cli/main.py")


def _short(path: str) -> str:
    for marker in ("/site-packages/", str(t.ROOT) + "/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return re.sub(r"^.*/lib/python3\.\d+/", "", path)


def profile(ctx: Ctx, seconds: float = 20.0) -> dict:
    ensure("tools", quiet=True)
    raw_path = ctx.work / "ours-profile.txt"
    with contextlib.ExitStack() as stack:
        sim, sim_url = t.start_sim(ctx.work, 0.0)
        stack.callback(sim.stop)
        store = ctx.work / f"store-{secrets.token_hex(4)}.db"
        config = t.ours_config(ctx.work, sim_url, store, 60)
        proc, url = t.start_ours(ctx.work, config, workers=1)  # one process: the one sampled
        stack.callback(proc.stop)
        endpoint = url + "/v1/chat/completions"
        asyncio.run(lc.sequential(endpoint, lc.chat("bench/five"), 20, lambda s, b: True))
        argv = [str(venv_bin("tools", "py-spy")), "record", "--pid", str(proc.pid), "--rate", "200"]
        argv += ["--duration", str(int(seconds)), "--format", "raw", "--output", str(raw_path)]
        argv += ["--gil", "--full-filenames"]  # CPU on Python code only; paths tell layers
        spy = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            asyncio.run(
                lc.closed_loop(
                    endpoint,
                    lc.chat("bench/five"),
                    4,
                    seconds - 1,
                    max_requests=100_000,
                    check=lc.panel_check(5),
                )
            )
            spy.wait(timeout=seconds + 60)
        finally:
            if spy.poll() is None:
                spy.kill()
                spy.wait()
    layers, leaves, ours, total = _parse(raw_path.read_text())
    ctx.log(
        f"profile: {total} samples; "
        + ", ".join(f"{k} {100 * v / max(1, total):.0f}%" for k, v in layers.most_common())
    )
    return {
        "total": total,
        "layers": [(k, v / max(1, total)) for k, v in layers.most_common()],
        "leaves": [(k, v / max(1, total)) for k, v in leaves.most_common(12)],
        "ours": [(k, v / max(1, total)) for k, v in ours.most_common(12)],
        "raw": str(raw_path),
    }
