"""A month of churn on a bench of twelve models, played against this gateway and the gateway as
it was before model health, the same traffic to each: what does a dead model cost?

The month (benchmarks/churn_world.py): two models withdrawn (404 "does not exist", "no
endpoints found for"), one at its end of life (410), one whose free period ends (404 "migrate to
the paid slug"), one whose key is revoked (401) and fixed three days later, one refused by an
account setting (404 "No endpoints found matching your data policy") until the setting changes,
one whose provider is down for an hour (503), one that fails one call in five (500), one
withdrawn that comes back ten days later, and three that stay well. Four collections of three
members are asked in turn, `--per-day` panels a day.

Time runs `--speed` times faster than the wall on the simulator's clock (a day in 10 s by
default), and this gateway's `lifecycle:` times are divided by the same factor, so its waits
(a trial's backoff, the confirmation, the daily re-probe) keep their place in the month. Both
gateways run at once, each with its own simulator (benchmarks/churn_sides.py), and every figure
is read from their records and the simulators' logs afterwards (benchmarks/churn_figures.py).

    python benchmarks/churn.py                    # the month, both gateways (about 5 minutes)
    python benchmarks/churn.py --days 2 --speed 86400 --per-day 24 --out /tmp/churn.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from churn_figures import figures
from churn_sides import BASELINE, Clock, Side, unpack_baseline
from churn_world import COLLECTIONS, DAY, scaled_lifecycle

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "churn.json"
SIDES = ("ours", "before")


def play(side: Side, per_day: float, days: float, late: dict[str, int]) -> None:
    """Ask the panels on the month's schedule (on the simulator's clock); a panel the machine
    could not send on time goes as soon as it can, and is counted late."""
    gap = DAY / per_day
    names = list(COLLECTIONS)
    for n in range(int(per_day * days)):
        due = side.clock.wall(side.t0 + (n + 0.5) * gap)
        wait = due - time.time()
        if wait > 0:
            time.sleep(wait)
        elif -wait * side.clock.speed > gap:
            late[side.name] = late.get(side.name, 0) + 1
        side.ask(n, names[n % len(names)])


def run(
    work: Path, speed: float, days: float, per_day: float, only: list[str], keep: Path | None
) -> dict[str, Any]:
    clock = Clock(speed, time.time())
    sides: dict[str, Side] = {}
    try:
        for name in only:
            code = unpack_baseline(work / "baseline") if name == "before" else None
            sides[name] = Side(name, work, clock, days, code)
            sides[name].start()
        late: dict[str, int] = {}
        errors: list[BaseException] = []

        def month(side: Side) -> None:
            try:
                play(side, per_day, days, late)
            except BaseException as exc:  # surfaced below, after the other side ends
                errors.append(exc)

        threads = [threading.Thread(target=month, args=(s,), name=s.name) for s in sides.values()]
        for side in sides.values():
            side.begin()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
        time.sleep(1.0)  # the last seats' records reach the store
        out = {}
        for name, side in sides.items():
            raw = {
                "t0": side.t0,
                "clock": {"speed": clock.speed, "origin": clock.origin},
                "panels": side.panels(),
                "log": side.log(),
                "events": side.events(),
                "health": side.health(),
                "late": late.get(name, 0),
            }
            if keep is not None:  # what the figures were read from, to look into
                keep.mkdir(parents=True, exist_ok=True)
                (keep / f"{name}.json").write_text(json.dumps(raw, indent=1))
            out[name] = figures(raw, clock, days)
            out[name]["unanswered_panels"] = sum(p["status"] != 200 for p in side.sent)
        return out
    finally:
        for side in sides.values():
            side.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--speed", type=float, default=8640.0, help="sim seconds per wall second")
    parser.add_argument("--days", type=float, default=30.0)
    parser.add_argument("--per-day", type=float, default=48.0, help="panels a day")
    parser.add_argument("--only", choices=SIDES, action="append")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--keep", type=Path, help="write each side's records to this folder")
    parser.add_argument("--no-doc", action="store_true", help="do not rewrite docs/health.md")
    args = parser.parse_args(argv)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="churn-") as tmp:
        results = run(
            Path(tmp), args.speed, args.days, args.per_day, args.only or list(SIDES), args.keep
        )
    results = {
        "run": {
            "speed": args.speed,
            "days": args.days,
            "per_day": args.per_day,
            "baseline": BASELINE,
            "lifecycle": scaled_lifecycle(1.0),
            "lifecycle_scaled": scaled_lifecycle(args.speed),
            "seconds": round(time.time() - started, 1),
            "when": time.strftime("%Y-%m-%d", time.gmtime()),
        },
        **results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    from churn_report import render, table

    print(table(results))
    if not args.no_doc:
        render(results, ROOT / "docs" / "health.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
