"""What a route turn costs over calling its member directly.

1. **Wall time**: `--turns` plain route turns (`bench/crew:route`, one member answering in
   `--latency` s) against as many direct `litellm.acompletion` calls to the same member, from
   this process, alternating. Reported: the medians and route/direct.
2. **CPU per turn**: the gateway process's CPU over those turns, against this process's CPU per
   direct litellm call (the bare litellm a turn wraps).
3. **Time to first byte** of a streamed turn: until the first chunk carrying text, through the
   gateway and from the member itself (a raw streamed request to the simulator).

    .venv/bin/python benchmarks/route_turn.py
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import httpx  # noqa: E402
import litellm  # noqa: E402
import yaml  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load import HOST, cpu_seconds, free_port, start, stop, wait_healthy  # noqa: E402

MESSAGES = [{"role": "user", "content": "Say something."}]


async def first_text(client: httpx.AsyncClient, url: str, body: dict) -> float:
    began = time.perf_counter()
    async with client.stream("POST", url, json=body) as response:
        async for line in response.aiter_lines():
            if '"content":"' in line.replace(" ", "") and '"content":""' not in line.replace(
                " ", ""
            ):
                return time.perf_counter() - began
    raise RuntimeError("no text came")


async def main(turns: int, latency: float) -> None:
    folder = Path(tempfile.mkdtemp(prefix="route-bench-"))
    sim_port, gw_port = free_port(), free_port()
    sim_url, gw_url = f"http://{HOST}:{sim_port}", f"http://{HOST}:{gw_port}"
    (folder / "sim.yaml").write_text(yaml.safe_dump({"models": {"*": {"latency_s": latency}}}))
    params = {"model": "openai/sim-a", "api_base": f"{sim_url}/v1", "api_key": "sim"}
    config = {
        "model_list": [{"model_name": "a", "litellm_params": params}],
        "collections": {"crew": {"members": ["a"], "reply": "route"}},
        "gateway": {"route_explore": 0},
        "store": f"sqlite:///{folder / 'records.db'}",
    }
    (folder / "bench.yaml").write_text(yaml.safe_dump(config))
    sim = start(["simulate", "--port", str(sim_port), "--spec", str(folder / "sim.yaml")],
                folder / "sim.log")  # fmt: skip
    gateway = start(["serve", "--config", str(folder / "bench.yaml"), "--port", str(gw_port),
                     "--workers", "1"], folder / "gw.log")  # fmt: skip
    try:
        await wait_healthy(gw_url, gateway, folder / "gw.log")
        async with httpx.AsyncClient(timeout=60) as client:
            for _ in range(60):
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get(f"{sim_url}/_sim/health")).status_code < 500:
                        break
                await asyncio.sleep(0.1)
            body = {"model": "bench/crew:route", "messages": MESSAGES}
            direct_kwargs = {**params, "messages": MESSAGES, "num_retries": 0, "max_retries": 0}
            await client.post(f"{gw_url}/v1/chat/completions", json=body)  # warm both
            await litellm.acompletion(**direct_kwargs, timeout=30)
            routed, direct, direct_cpu = [], [], 0.0
            gw_cpu = 0.0
            for _ in range(turns):
                cpu0 = cpu_seconds(gateway.pid)
                began = time.perf_counter()
                reply = await client.post(f"{gw_url}/v1/chat/completions", json=body)
                routed.append(time.perf_counter() - began)
                gw_cpu += cpu_seconds(gateway.pid) - cpu0
                assert reply.status_code == 200, reply.text
                mine = time.process_time()
                began = time.perf_counter()
                await litellm.acompletion(**direct_kwargs, timeout=30)
                direct.append(time.perf_counter() - began)
                direct_cpu += time.process_time() - mine
            ttfb_route, ttfb_member = [], []
            for _ in range(turns):
                ttfb_route.append(
                    await first_text(
                        client, f"{gw_url}/v1/chat/completions", {**body, "stream": True}
                    )  # fmt: skip
                )
                ttfb_member.append(
                    await first_text(client, f"{sim_url}/v1/chat/completions",
                                     {"model": "sim-a", "messages": MESSAGES, "stream": True})
                )  # fmt: skip
    finally:
        stop(gateway)
        stop(sim)
    r, d = statistics.median(routed), statistics.median(direct)
    print(f"wall per turn: route {r * 1000:.1f} ms, direct litellm {d * 1000:.1f} ms, "
          f"ratio {r / d:.3f}")  # fmt: skip
    ratio = gw_cpu / max(direct_cpu, 1e-9)
    print(f"CPU per turn: gateway {gw_cpu / turns * 1000:.2f} ms, bare litellm "
          f"{direct_cpu / turns * 1000:.2f} ms, ratio {ratio:.2f}")  # fmt: skip
    tr, tm = statistics.median(ttfb_route), statistics.median(ttfb_member)
    print(f"TTFB streamed: route {tr * 1000:.1f} ms, member {tm * 1000:.1f} ms, "
          f"+{(tr - tm) * 1000:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.3)
    options = parser.parse_args()
    asyncio.run(main(options.turns, options.latency))
