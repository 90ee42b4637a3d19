"""Steady traffic against a gateway while something happens to it (a reload): clients that each
ask, one request after another, a plain panel, a streamed panel and a route turn, and keep
every outcome, so a test can count the failures (a status other than 200, a stream that did not
end with its `bench` and `[DONE]`, a connection refused or reset)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field

import httpx

ASKS = (
    {"model": "bench/trio", "stream": False},
    {"model": "bench/trio", "stream": True},
    {"model": "bench/trio:route", "stream": False},
)


@dataclass
class Outcome:
    ask: str
    began: float
    ended: float
    failure: str | None  # None: a whole, successful reply


@dataclass
class Steady:
    url: str
    clients: int = 4
    headers: dict[str, str] = field(default_factory=dict)
    outcomes: list[Outcome] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _threads: list[threading.Thread] = field(default_factory=list)

    def __enter__(self) -> Steady:
        for n in range(self.clients):
            thread = threading.Thread(target=self._client, args=(n,), daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(120)

    def done(self) -> int:
        return len(self.outcomes)

    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.failure is not None]

    def spanning(self, moment: float) -> list[Outcome]:
        """The requests in flight at *moment*."""
        return [o for o in self.outcomes if o.began < moment < o.ended]

    def _client(self, n: int) -> None:
        with httpx.Client(base_url=self.url, timeout=120, headers=self.headers) as http:
            turn = n
            while not self._stop.is_set():
                ask = ASKS[turn % len(ASKS)]
                turn += 1
                body = {**ask, "messages": [{"role": "user", "content": f"q{n}.{turn}"}]}
                began = time.monotonic()
                failure = _asked(http, body)
                name = f"{ask['model']}{' stream' if ask['stream'] else ''}"
                self.outcomes.append(Outcome(name, began, time.monotonic(), failure))


def _asked(http: httpx.Client, body: dict) -> str | None:
    """None, or what went wrong."""
    try:
        if not body["stream"]:
            response = http.post("/v1/chat/completions", json=body)
            if response.status_code != 200:
                return f"{response.status_code}: {response.text[:300]}"
            return None if response.json().get("bench") else "no bench in the reply"
        with http.stream("POST", "/v1/chat/completions", json=body) as response:
            if response.status_code != 200:
                return f"{response.status_code}: {response.read()[:300]!r}"
            lines = [line for line in response.iter_lines() if line.startswith("data: ")]
    except httpx.HTTPError as exc:
        return f"{type(exc).__name__}: {exc}"
    if not lines or lines[-1] != "data: [DONE]":
        return "a stream that did not end with [DONE]"
    last = json.loads(lines[-2][len("data: ") :])
    return None if "bench" in last else f"a stream whose last chunk had no bench: {last}"
