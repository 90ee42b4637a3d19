"""Replicas for the tests of several gateways as one: runtimes in one test process sharing a
Redis (`replicas`, `run`), and `bench-gateway serve` processes on ports of their own
(`Replica`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import httpx
import openai

from gateway.config.settings import parse_config
from gateway.runtime import Runtime
from gateway.serve.server import free_port
from gateway.store.open import open_store
from tests.helpers.bench import bench_raw
from tests.helpers.clocks import ManualClock
from tests.helpers.programs import bench_gateway, end


class _Never:
    """The way out of a gateway that must call no model."""

    async def call(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no upstream call in these tests")

    async def open_turn(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no upstream call in these tests")


def replicas(
    count: int, url: str, tmp_path: Path, clock: ManualClock, **facts: Any
) -> list[Runtime]:
    """*count* runtimes sharing one Redis database; *facts* go on alpha's `bench:`."""
    raw = bench_raw("http://127.0.0.1:9", **facts.pop("gateway", {}))
    raw["model_list"][0]["bench"].update(facts)
    raw["state"] = url
    config = parse_config(raw, base=tmp_path)
    return [
        Runtime(config, store=open_store(config.store), upstream=_Never(), clock=clock.now)
        for _ in range(count)
    ]


def run(runtimes: list[Runtime], body: Callable[..., Awaitable[None]]) -> None:
    """Start every runtime's live state, run *body(*runtimes)*, and close them again."""

    async def main() -> None:
        for runtime in runtimes:
            await runtime.live.start()
        try:
            await body(*runtimes)
        finally:
            for runtime in runtimes:
                await runtime.live.close()

    asyncio.run(main())


class Replica:
    """One `bench-gateway serve --workers 1` process, its output in `log`: its config the file
    *config*, else the one its *env* names (BENCH_CONFIG), as a compose service's is."""

    def __init__(
        self, config: Path | None, log: Path, key: str, env: Mapping[str, str] | None = None
    ) -> None:
        self.config, self.log = config, log
        self.env = {**os.environ, **(env or {})}
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.http = httpx.Client(
            base_url=self.url, timeout=30, headers={"Authorization": f"Bearer {key}"}
        )
        self.client = openai.OpenAI(
            base_url=f"{self.url}/v1", api_key=key, max_retries=0, timeout=30
        )

    def launch(self) -> None:
        command = [*bench_gateway(), "serve"]
        if self.config is not None:
            command += ["--config", str(self.config)]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [*command, "--port", str(self.port), "--workers", "1"],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=self.env,
            )

    def wait_ready(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, self.output()
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            time.sleep(0.1)
        raise AssertionError(f"the replica did not become ready:\n{self.output()}")

    def health(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.url}/healthz", timeout=5).json())

    def ask(self, model: str = "bench/anchored", content: str = "Is this right?") -> Any:
        return self.client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": content}]
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        self.http.close()
        self.client.close()
        self.terminate()

    def terminate(self) -> None:
        """SIGTERM, as `docker compose stop` sends; `launch` starts it again on the same port."""
        end(self.proc, grace_s=30)
