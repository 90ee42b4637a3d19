"""The floor litellm sets: a bare loop of ``litellm.acompletion`` calls, in a process of its own.

Why it exists: our gateway's CPU per seat is litellm's cost plus ours. To say which part is
ours, this process makes the very call the gateway's seat makes (same model string, api_base,
no retries, a timeout, streamed with usage or not) in batches of five at once, like a panel,
and reports its own CPU seconds per call after a warm-up. Nothing else runs in it: no HTTP
server, no records, no routing.

    python benchmarks/bare_litellm.py --api-base http://127.0.0.1:PORT/v1 --calls 500 [--stream]

Prints one JSON line: {"calls", "ok", "cpu_s", "wall_s", "cpu_ms_per_call", "batch_wall_s"}
(the median wall time of one batch: with `--batch 1` and a slow upstream, what one seat asked
alone costs through litellm; with `--batch 5`, a panel's five seats made bare).
"""

from __future__ import annotations

import os

# Before litellm is imported: no price-map download, no model-hub look-ups.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import litellm  # noqa: E402

litellm.suppress_debug_info = True
litellm.telemetry = False
MESSAGES = [{"role": "user", "content": "Review: is retrying forever safe?"}]


async def call(api_base: str, model: str, stream: bool) -> bool:
    kwargs = dict(
        model=f"openai/{model}",
        api_base=api_base,
        api_key="sim",
        messages=MESSAGES,
        timeout=30,
        num_retries=0,
        max_retries=0,
    )
    try:
        if not stream:
            response = await litellm.acompletion(**kwargs)
            return bool(response.choices[0].message.content)
        response = await litellm.acompletion(
            **kwargs, stream=True, stream_options={"include_usage": True}
        )
        parts = []
        async for chunk in response:
            for choice in chunk.choices or ():
                if getattr(choice.delta, "content", None):
                    parts.append(choice.delta.content)
        return bool(parts)
    except Exception:  # a failed call is counted, not fatal
        return False


async def batch(api_base: str, size: int, stream: bool, model: str | None = None) -> int:
    names = [model or f"sim-m{i % 5 + 1}" for i in range(size)]
    results = await asyncio.gather(*(call(api_base, name, stream) for name in names))
    return sum(results)


async def main_async(args) -> dict:
    for _ in range(max(1, args.warmup // args.batch)):
        await batch(args.api_base, args.batch, args.stream, args.model)
    ok = calls = 0
    walls: list[float] = []
    cpu0, wall0 = time.process_time(), time.monotonic()
    deadline = wall0 + args.max_seconds
    while calls < args.calls and time.monotonic() < deadline:
        size = min(args.batch, args.calls - calls)
        began = time.monotonic()
        ok += await batch(args.api_base, size, args.stream, args.model)
        walls.append(time.monotonic() - began)
        calls += size
    cpu, wall = time.process_time() - cpu0, time.monotonic() - wall0
    return {
        "calls": calls,
        "ok": ok,
        "cpu_s": round(cpu, 4),
        "wall_s": round(wall, 4),
        "cpu_ms_per_call": round(1000 * cpu / max(1, calls), 4),
        "batch_wall_s": round(statistics.median(walls), 5) if walls else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api-base", required=True)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=25)
    parser.add_argument("--batch", type=int, default=5, help="calls at once (a panel's seats)")
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--model", help="the simulator's model every call asks (sim-m1..5)")
    parser.add_argument("--max-seconds", type=float, default=300)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main_async(args))), flush=True)


if __name__ == "__main__":
    main()
