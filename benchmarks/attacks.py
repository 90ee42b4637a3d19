"""Attacks on one gateway's event loop: heavy bodies and heads, with /healthz polled meanwhile.

Starts `bench-gateway simulate` and `bench-gateway serve` (one worker) as subprocesses on
127.0.0.1, then for each attack prints its answer, how long it took, and the worst /healthz
latency while it ran; then the memory 100 connections of 2 MB unfinished heads add, how long a
silent connection stays open, and the mean time of an ordinary request on a keep-alive
connection (the per-request cost of the head limits).

    .venv/bin/python -m benchmarks.attacks [header|logit|messages|stop|temperature]
"""

from __future__ import annotations

import asyncio
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from benchmarks.load import HOST, free_port, peak_rss_kib, start, stop, wait_healthy, write_files

START = b'{"model": "bench/five", "messages": [{"role": "user", "content": "hi"}]'


def field(name: bytes, value: bytes) -> bytes:
    return START + b', "' + name + b'": ' + value + b"}"


BODIES = {
    "logit_bias of 1.5 M keys (17 MB)": lambda: field(
        b"logit_bias", b"{" + b",".join(map(b'"%d":1'.__mod__, range(1_500_000))) + b"}"
    ),
    "100,000 empty messages": lambda: (
        b'{"model": "bench/five", "messages": ['
        + b",".join([b'{"role": "user", "content": ""}'] * 100_000)
        + b"]}"
    ),
    "stop as 9 M integers (18 MB)": lambda: field(
        b"stop", b"[" + b",".join([b"7"] * 9_000_000) + b"]"
    ),
    "temperature 1e999": lambda: field(b"temperature", b"1e999"),
}


def polled(url: str, attack) -> tuple[str, float, float]:
    """(attack's answer, its seconds, worst /healthz seconds meanwhile)."""
    answer: list[str] = []
    began = time.perf_counter()
    thread = threading.Thread(target=lambda: answer.append(attack()))
    worst = 0.0
    with httpx.Client(base_url=url, timeout=60) as health:
        thread.start()
        while thread.is_alive():
            t = time.perf_counter()
            health.get("/healthz")
            worst = max(worst, time.perf_counter() - t)
            time.sleep(0.01)
    thread.join()
    return answer[0], time.perf_counter() - began, worst


def post(url: str, body: bytes) -> str:
    headers = {"Content-Type": "application/json"}
    try:
        r = httpx.post(f"{url}/v1/chat/completions", content=body, headers=headers, timeout=300)
        return f"{r.status_code} {r.text[:70]!r}"
    except httpx.HTTPError as exc:
        return f"error {exc!r}"


def big_head(header_bytes: int) -> bytes:
    return (
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * header_bytes + b"\r\n\r\n"
    )


def raw_head(port: int, head: bytes) -> str:
    with socket.create_connection((HOST, port)) as sock:
        sock.settimeout(120)
        try:
            sock.sendall(head)
        except OSError as exc:
            return f"send ended: {exc.strerror}; got {sock.recv(40)!r}"
        try:
            return repr(sock.recv(40))
        except OSError as exc:
            return f"recv: {exc.strerror}"


def held_heads(port: int, pid: int, count: int = 100, each: int = 2_000_000) -> str:
    before = rss_kib(pid)
    socks = []
    for _ in range(count):
        sock = socket.create_connection((HOST, port))
        sock.setblocking(False)
        socks.append(sock)
        head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + b"a" * each
        try:
            sock.send(head)
        except OSError:
            pass
    time.sleep(3)
    after = rss_kib(pid)
    for sock in socks:
        sock.close()
    return f"RSS {before / 1024:.0f} MB -> {after / 1024:.0f} MB"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def silent(port: int, limit_s: float = 20) -> str:
    with socket.create_connection((HOST, port)) as sock:
        sock.settimeout(limit_s)
        began = time.perf_counter()
        try:
            sock.recv(1)
            return f"closed after {time.perf_counter() - began:.1f} s"
        except TimeoutError:
            return f"still open after {limit_s:g} s"


def ordinary(url: str, n: int = 2000) -> str:
    with httpx.Client(base_url=url) as client:
        client.get("/healthz")
        began = time.perf_counter()
        for _ in range(n):
            client.get("/healthz")
        return f"{(time.perf_counter() - began) / n * 1e6:.0f} us per GET /healthz (keep-alive)"


def main() -> None:
    only = sys.argv[1] if len(sys.argv) > 1 else ""  # run only the attacks whose name has this
    with tempfile.TemporaryDirectory(prefix="bench-attacks-") as folder:
        work = Path(folder)
        sim_port, port = free_port(), free_port()
        spec, config, _ = write_files(work, sim_port, 0.05)
        sim = gateway = None
        try:
            sim = start(
                ["simulate", "--host", HOST, "--port", str(sim_port), "--spec", str(spec)],
                work / "sim.log",
            )
            gateway = start(
                [
                    "serve",
                    "--host",
                    HOST,
                    "--port",
                    str(port),
                    "--config",
                    str(config),
                    "--workers",
                    "1",
                ],
                work / "gw.log",
            )
            url = f"http://{HOST}:{port}"
            asyncio.run(wait_healthy(f"http://{HOST}:{sim_port}", sim, work / "sim.log"))
            asyncio.run(wait_healthy(url, gateway, work / "gw.log"))
            print(f"ordinary: {ordinary(url)}")
            for name, build in BODIES.items():
                if only not in name:
                    continue
                body = build()
                answer, took, worst = polled(url, lambda body=body: post(url, body))
                print(f"{name}: {answer}; {took:.2f} s; worst /healthz {worst * 1000:.0f} ms")
            for size in (1_000_000, 50_000_000) if only in "header" else ():
                head = big_head(size)  # built before: building it holds this process's GIL
                answer, took, worst = polled(url, lambda head=head: raw_head(port, head))
                print(
                    f"{size / 1e6:g} MB header: {answer}; {took:.2f} s; "
                    f"worst /healthz {worst * 1000:.0f} ms"
                )
            if only:
                return
            print(f"100 unfinished 2 MB heads: {held_heads(port, gateway.pid)}")
            print(f"silent connection: {silent(port)}")
            print(f"peak RSS {peak_rss_kib(gateway.pid) / 1024:.0f} MB")
        finally:
            stop(gateway)
            stop(sim)


if __name__ == "__main__":
    main()
