"""What every measure is handed: where to write, how many runs, how big, and a logger.

Why it is its own module: the sizes differ between ``--quick`` and a full run, and every measure
must read them from one place so that the figures written to docs/performance.md say exactly
which sizes produced them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Ctx:
    work: Path  # this invocation's scratch folder (logs, configs, stores)
    runs: int
    quick: bool
    scale_panels: int = 1000
    scale_seat_s: float = 30.0
    record_rows: int = 1_000_000
    seconds_per_load: float = 20.0  # counted window of each closed-loop throughput run
    warmup_s: float = 3.0
    perseat_panels: int = 200
    latency_panels: int = 100
    fanout_panels: int = 30
    notes: list[str] = field(default_factory=list)
    background: list[float] = field(default_factory=list)  # see check_quiet
    started: float = field(default_factory=time.monotonic)

    @classmethod
    def make(cls, work: Path, runs: int | None, quick: bool, **overrides) -> Ctx:
        base = (
            dict(
                runs=2,
                scale_panels=200,
                scale_seat_s=10.0,
                record_rows=200_000,
                seconds_per_load=6.0,
                warmup_s=1.5,
                perseat_panels=60,
                latency_panels=40,
                fanout_panels=10,
            )
            if quick
            else dict(runs=3)
        )
        if runs:
            base["runs"] = runs
        base.update({k: v for k, v in overrides.items() if v is not None})
        return cls(work=Path(work).resolve(), quick=quick, **base)

    def log(self, message: str) -> None:
        print(f"[{time.monotonic() - self.started:7.1f}s] {message}", flush=True)

    def check_quiet(self, what: str, seconds: float = 1.0) -> float:
        """Share of the whole machine busy while none of our processes runs. Others may be using
        this machine (tests, other benchmarks); a busy box makes every figure of that run worse,
        so it is measured and noted rather than assumed away."""

        def busy() -> tuple[int, int]:
            fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
            idle = fields[3] + fields[4]  # idle + iowait
            return sum(fields) - idle, sum(fields)

        (b0, t0), _ = busy(), time.sleep(seconds)
        b1, t1 = busy()
        share = (b1 - b0) / max(1, t1 - t0)
        self.background.append(share)
        if share > 0.10:
            self.note(f"{what}: the machine was {share:.0%} busy with other work before it started")
        return share

    def note(self, message: str) -> None:
        """A finding worth carrying into the report (client saturation, errors seen, ...)."""
        self.log("NOTE: " + message)
        self.notes.append(message)
