"""An async load client: sequential, closed-loop and burst request patterns over aiohttp.

Why aiohttp rather than httpx: on a 2-core machine the client shares the CPU with the gateway
and the simulated upstream, and aiohttp's C-accelerated HTTP parser costs a fraction of httpx's
pure-Python one per request, so the client is less likely to be what limits throughput. Every
pattern is bounded twice, by a request count and by a wall-clock deadline, and stops by itself.
Each result also carries the client's own CPU share (``client_cpu``: CPU seconds / wall
seconds of this single-threaded loop); near 1.0 means the client, not the target, was the limit.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

Check = Callable[[int, Any], bool]  # (status, parsed body) -> fully answered?


@dataclass
class Sample:
    started: float
    seconds: float
    ok: bool
    status: int
    error: str = ""


@dataclass
class LoadResult:
    samples: list[Sample] = field(default_factory=list)  # the counted window
    warmup: list[Sample] = field(default_factory=list)  # sent before it: failures still count
    wall_s: float = 0.0
    client_cpu: float = 0.0  # share of one core the client used while the load ran

    def ok(self) -> list[Sample]:
        return [s for s in self.samples if s.ok]

    def failed(self) -> int:
        """Failures of every request sent, warm-up included: a failure is never discounted."""
        return sum(1 for s in self.samples + self.warmup if not s.ok)

    def sent(self) -> int:
        return len(self.samples) + len(self.warmup)

    def latencies(self, only_ok: bool = True) -> list[float]:
        return sorted(s.seconds for s in self.samples if s.ok or not only_ok)

    def percentile(self, q: float) -> float | None:
        values = self.latencies()
        if not values:
            return None
        return values[min(len(values) - 1, max(0, round(q * (len(values) - 1))))]

    def median(self) -> float | None:
        values = self.latencies()
        return statistics.median(values) if values else None

    def errors(self, limit: int = 3) -> list[str]:
        seen: dict[str, int] = {}
        for s in self.samples + self.warmup:
            if not s.ok:
                key = s.error or f"HTTP {s.status}"
                seen[key] = seen.get(key, 0) + 1
        return [f"{n}x {why}" for why, n in sorted(seen.items(), key=lambda kv: -kv[1])[:limit]]


def panel_check(seats: int) -> Check:
    """A panel counts only when every one of its *seats* answered (ours and Benchwarmers both
    return the seats in a `bench` field with a per-seat status)."""

    def check(status: int, body: Any) -> bool:
        if status != 200 or not isinstance(body, dict):
            return False
        got = (body.get("bench") or {}).get("seats") or []
        return len(got) == seats and all(s.get("status") == "ok" for s in got)

    return check


def completion_check(status: int, body: Any) -> bool:
    try:
        return status == 200 and bool(body["choices"][0]["message"]["content"])
    except (KeyError, IndexError, TypeError):
        return False


def _session(connections: int, timeout_s: float) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(
        limit=connections, limit_per_host=connections, force_close=False
    )
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    return aiohttp.ClientSession(connector=connector, timeout=timeout)


async def _one(session, url, body: bytes, headers, check: Check) -> Sample:
    started = time.monotonic()
    try:
        async with session.post(url, data=body, headers=headers) as response:
            raw = await response.read()
            status = response.status
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        ok = check(status, parsed)
        error = "" if ok else _why(status, parsed)
        return Sample(started, time.monotonic() - started, ok, status, error)
    except TimeoutError:
        return Sample(started, time.monotonic() - started, False, 0, "client timeout")
    except aiohttp.ClientError as exc:
        return Sample(started, time.monotonic() - started, False, 0, type(exc).__name__)


def _why(status: int, parsed: Any) -> str:
    if status != 200:
        message = (parsed or {}).get("error", {}) if isinstance(parsed, dict) else {}
        text = message.get("message", "") if isinstance(message, dict) else str(message)
        text = re.sub(r"\bp[0-9a-f]{12}\b", "<panel>", text)  # so like failures group together
        return f"HTTP {status} {text[:80]}".strip()
    seats = ((parsed or {}).get("bench") or {}).get("seats") or []
    bad = [f"{s.get('status')}" for s in seats if s.get("status") != "ok"]
    return f"200 but seats not all ok: {', '.join(sorted(set(bad))) or 'no seats'}"


def _headers(extra: dict | None) -> dict:
    return {"Content-Type": "application/json", **(extra or {})}


async def alternating(
    urls: list[str], payload, n: int, check: Check, *, timeout_s: float = 60.0
) -> list[LoadResult]:
    """*n* requests to each of *urls*, one at a time, taking turns (the first of each round
    rotating): on a machine others are using too, each target meets the same conditions, so
    their difference is theirs and not the moment's. One result per url."""
    body = json.dumps(payload).encode()
    results = [LoadResult() for _ in urls]
    async with _session(len(urls), timeout_s) as session:
        cpu0, began = time.process_time(), time.monotonic()
        for i in range(n):
            for k in range(len(urls)):
                which = (i + k) % len(urls)
                sample = await _one(session, urls[which], body, _headers(None), check)
                results[which].samples.append(sample)
        wall = time.monotonic() - began
    for result in results:
        result.wall_s = wall
        result.client_cpu = (time.process_time() - cpu0) / max(1e-9, wall)
    return results


async def sequential(
    url,
    payload,
    n: int,
    check: Check,
    *,
    headers=None,
    timeout_s=60.0,
    concurrency: int = 1,
    deadline_s: float = 600.0,
) -> LoadResult:
    """*n* requests, *concurrency* at a time (1 = one after another)."""
    return await closed_loop(
        url, payload, concurrency, deadline_s, n, check, headers=headers, timeout_s=timeout_s
    )


async def panel_load(
    urls: str | list[str], concurrency: int, seconds: float, warmup_s: float, seats: int = 5
) -> LoadResult:
    """The throughput measures' load: `bench/five` panels in a closed loop for *seconds* after
    *warmup_s*, each counted only when every one of its *seats* answered."""
    return await closed_loop(
        urls,
        chat("bench/five"),
        concurrency,
        seconds,
        max_requests=int(concurrency * seconds * 20) + 1000,
        check=panel_check(seats),
        timeout_s=60,
        warmup_s=warmup_s,
    )


async def closed_loop(
    url,
    payload,
    concurrency: int,
    duration_s: float,
    max_requests: int,
    check: Check,
    *,
    headers=None,
    timeout_s: float = 60.0,
    warmup_s: float = 0.0,
) -> LoadResult:
    """*concurrency* workers each send their next request when the last one returns, until
    *duration_s* has passed or *max_requests* were started. Requests started in the first
    *warmup_s* are sent but not counted; wall_s covers only the counted window. *url* may be a
    list: requests then go to each in turn (round robin, as a load balancer would)."""
    body = json.dumps(payload).encode()
    targets = [url] if isinstance(url, str) else list(url)
    turn = [0]
    result = LoadResult()
    started = time.monotonic()
    counted_from = started + warmup_s
    stop_at = counted_from + duration_s
    budget = [max_requests]

    async with _session(concurrency, timeout_s) as session:
        seen = [0, 0]  # completed, failed: a target failing everything is not worth waiting on

        async def worker() -> None:
            while (
                time.monotonic() < stop_at
                and budget[0] > 0
                and not (seen[0] >= 20 and seen[1] == seen[0])
            ):
                budget[0] -= 1
                target, turn[0] = targets[turn[0] % len(targets)], turn[0] + 1
                sample = await _one(session, target, body, _headers(headers), check)
                seen[0] += 1
                seen[1] += not sample.ok
                (result.samples if sample.started >= counted_from else result.warmup).append(sample)

        cpu0 = time.process_time()
        await asyncio.wait_for(
            asyncio.gather(*(worker() for _ in range(concurrency))),
            timeout=warmup_s + duration_s + timeout_s + 30,
        )
        ended = time.monotonic()
        result.client_cpu = (time.process_time() - cpu0) / max(1e-9, ended - started)
    # The window closes when the last counted request was started; requests still running then
    # finish and count, so wall_s runs to the last completion.
    last = max((s.started + s.seconds for s in result.samples), default=counted_from)
    result.wall_s = max(1e-9, last - counted_from)
    return result


async def burst(
    url, payload, n: int, check: Check, *, headers=None, timeout_s: float = 120.0
) -> LoadResult:
    """*n* requests all at once, each on its own connection; waits for every one of them."""
    body = json.dumps(payload).encode()
    result = LoadResult()
    async with _session(n, timeout_s) as session:
        cpu0, began = time.process_time(), time.monotonic()
        samples = await asyncio.wait_for(
            asyncio.gather(*(_one(session, url, body, _headers(headers), check) for _ in range(n))),
            timeout=timeout_s + 30,
        )
        result.wall_s = time.monotonic() - began
        result.client_cpu = (time.process_time() - cpu0) / max(1e-9, result.wall_s)
    result.samples = list(samples)
    return result


def chat(model: str, content: str = "Review: is retrying forever safe?") -> dict:
    return {"model": model, "messages": [{"role": "user", "content": content}]}
