"""Does the bench learn? A simulated bench with hidden quality, driven through the real gateway.

Every model gets a hidden *quality* (the chance its answer is useful). The gateway never sees it:
only the judge here does, playing a careful user who judges a share of the answered seats
(`--judge-share`, default 0.6) with a verdict drawn from that seat's quality, through
`POST /bench/verdict`, as people do. The qualities live in this benchmark, not in the simulator,
so nothing the gateway can reach could leak them.

One run per seed, on one record store, in phases:

1. convergence: 20 models, qualities spread evenly and shuffled; `bench/panel` x 300. Is the
   primary truly among the best two, panel by panel?
2. decline: the best model's quality drops to poor; panels until it is no longer primary.
3. discovery: restart with a strong new model in the config (the records stay); panels until it
   is first seated, and until it is primary.
4. silence (all along): one model is never judged; the longest run of panels any model went
   unseated, against ceil(pool / explorers).
5. rate limits (a run of its own: 100 judged panels to settle, then 100 more): the best model
   answers 429 to half its calls; how often the primary's chair still gives a useful answer,
   and whether the best model's verdict share is eroded by seats it never got.

The same phases run on Benchwarmers 0.3.3 (see evidence_targets.py for which of its routes
stand in for what).

    python benchmarks/evidence.py              # 3 seeds, both gateways (12-15 minutes on 2 cores)
    python benchmarks/evidence.py --quick      # 1 seed, shorter phases
    python benchmarks/evidence.py --only ours --label before
    python benchmarks/evidence.py --suite      # the suite as evidence (evidence_suite.py)
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import httpx
from evidence_targets import Ours, Seat, Seed, served
from setup_envs import ensure
from targets import PROJECT_BIN, Proc, free_port

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "evidence.json"
EXPLORERS = 2
PRIMARY_SEATS = ("primary", "route")  # ours; the seed's route-mode turn
SETTLE = 100  # judged panels before the rate limits start


@dataclass
class Phases:
    converge: int = 300
    decline: int = 40
    discover: int = 45
    limits: int = 100


@dataclass
class Trace:
    """What one gateway did in one seeded run."""

    gateway: str
    seed: int
    quality: dict[str, float] = field(default_factory=dict)  # the hidden qualities at the start
    primary: list[str] = field(default_factory=list)  # the primary's alias, panel by panel
    top2: list[bool] = field(default_factory=list)  # ... truly among the best two then?
    seats: dict[str, int] = field(default_factory=dict)  # phase 1 seats per model
    longest_unseated: dict[str, int] = field(default_factory=dict)
    silent: str = ""
    pool: int = 0
    demoted_after: int | None = None
    discovered_seated: int | None = None
    discovered_primary: int | None = None
    discovered_judged: int | None = None  # verdicts the new model had when it became primary
    limits_useful: float = 0.0  # share of panels whose primary chair gave a useful answer
    limits_best_primary: float = 0.0  # share of panels the rate-limited best model was primary
    limits_best_ratio: float = 0.0  # its useful / judged as recorded
    limits_best_quality: float = 0.0
    limits_best_seated: int = 0  # panels the limited best model sat in at all
    limits_best_limited: int = 0  # ... of which it answered 429 (a reserve took its seat)
    seconds: float = 0.0


class World:
    """The hidden qualities, the judge, and the simulated upstream's behaviours."""

    def __init__(self, seed: int, sim: str, share: float, n: int = 20) -> None:
        self.rng = random.Random(seed)
        qualities = [round(0.9 - 0.8 * i / (n - 1), 3) for i in range(n)]
        self.rng.shuffle(qualities)
        self.quality = {f"m{i + 1:02d}": q for i, q in enumerate(qualities)}
        self.sim, self.share = sim, share
        ranked = sorted(self.quality, key=self.quality.__getitem__, reverse=True)
        self.silent = ranked[n // 2]  # a middling model nobody ever judges
        self.judged: dict[str, list[bool]] = {}

    def best(self, k: int = 2) -> set[str]:
        ranked = sorted(self.quality, key=self.quality.__getitem__, reverse=True)
        return set(ranked[:k])

    def judge(self, target: Ours | Seed, seats: list[Seat]) -> list[tuple[Seat, bool]]:
        given = []
        for seat in seats:
            if seat.status != "ok" or seat.alias == self.silent:
                continue
            if self.rng.random() >= self.share:
                continue
            useful = self.rng.random() < self.quality[seat.alias]
            target.verdict(seat.call, useful)
            self.judged.setdefault(seat.alias, []).append(useful)
            given.append((seat, useful))
        return given

    def behave(self, alias: str, **behaviour: object) -> None:
        body = {"model": served(alias), **behaviour}
        httpx.post(f"{self.sim}/_sim/behaviour", json=body, timeout=10).raise_for_status()


def primary_of(seats: list[Seat]) -> str:
    return next((s.alias for s in seats if s.seat in PRIMARY_SEATS), "")


def run_one(kind: str, seed: int, sim: str, work: Path, phases: Phases, share: float) -> Trace:
    world = World(seed, sim, share)
    trace = Trace(kind, seed, quality=dict(world.quality), silent=world.silent)
    started = time.monotonic()
    target: Ours | Seed = (
        Ours(work, sim, work / f"records-{seed}.db") if kind == "ours" else Seed(work, sim)
    )
    aliases = sorted(world.quality)
    last: dict[str, int] = {a: 0 for a in aliases}
    gaps: dict[str, int] = {a: 0 for a in aliases}
    try:
        target.start(aliases)
        n = 0

        def step() -> list[Seat]:
            nonlocal n
            n += 1
            seats = target.panel(n)
            for s in seats:
                if not s.seat.startswith("reserve") and s.seat != "route":
                    gaps[s.alias] = max(gaps.get(s.alias, 0), n - last.get(s.alias, 0) - 1)
                    last[s.alias] = n
            world.judge(target, seats)
            primary = primary_of(seats)
            trace.primary.append(primary)
            trace.top2.append(primary in world.best())
            return seats

        for _ in range(phases.converge):
            for s in step():
                if s.seat != "route" and not s.seat.startswith("reserve"):
                    trace.seats[s.alias] = trace.seats.get(s.alias, 0) + 1
        # decline: the best model turns poor
        fallen = max(world.quality, key=world.quality.__getitem__)
        world.quality[fallen] = 0.1
        for i in range(1, phases.decline + 1):
            if primary_of(step()) != fallen:
                trace.demoted_after = i
                break
        for _ in range(trace.demoted_after or 0, phases.decline):
            step()
        trace.pool = len(aliases)
        for a in aliases:  # a model still unseated now counts its open run too
            gaps[a] = max(gaps[a], n - last[a])
        trace.longest_unseated = dict(gaps)
        # discovery: a strong new model, the records kept
        new = "m99"
        world.quality[new] = 0.97
        aliases.append(new)
        last[new], gaps[new] = n, 0
        target.start(aliases)
        for i in range(1, phases.discover + 1):
            seats = step()
            if trace.discovered_seated is None and any(s.alias == new for s in seats):
                trace.discovered_seated = i
            if primary_of(seats) == new:
                trace.discovered_primary = i
                trace.discovered_judged = len(world.judged.get(new, []))
                break
    finally:
        target.stop()
    trace.seconds = time.monotonic() - started
    return trace


def run_limits(kind: str, seed: int, sim: str, work: Path, phases: Phases, share: float) -> Trace:
    """A settled bench (100 judged panels), then the best model answers 429 to half its calls
    (a coin per panel, a 10 ms Retry-After) for `phases.limits` panels."""
    world = World(seed + 1000, sim, share)
    trace = Trace(kind, seed, quality=dict(world.quality))
    target: Ours | Seed = (
        Ours(work, sim, work / f"limits-{seed}.db") if kind == "ours" else Seed(work, sim)
    )
    best = max(world.quality, key=world.quality.__getitem__)
    trace.limits_best_quality = world.quality[best]
    useful_chair = best_primary = 0
    try:
        target.start(sorted(world.quality))
        for n in range(1, SETTLE + 1):
            world.judge(target, target.panel(n))
        world.judged.pop(best, None)  # its rate is counted over the limited panels only
        for n in range(SETTLE + 1, SETTLE + phases.limits + 1):
            limited = world.rng.random() < 0.5
            world.behave(best, **({"status": 429, "retry_after": 0.01} if limited else {}))
            seats = target.panel(n)
            world.judge(target, seats)
            chair = _chair(seats)
            best_primary += primary_of(seats) == best
            trace.limits_best_seated += any(s.alias == best for s in seats)
            trace.limits_best_limited += any(
                s.alias == best and s.status == "rate_limited" for s in seats
            )
            if chair is not None:
                # the primary chair's answer, judged or not, by its true quality
                useful_chair += world.rng.random() < world.quality[chair.alias]
            trace.primary.append(primary_of(seats))
            trace.top2.append(primary_of(seats) in world.best())
    finally:
        world.behave(best)
        target.stop()
    trace.limits_useful = useful_chair / phases.limits
    trace.limits_best_primary = best_primary / phases.limits
    verdicts = world.judged.get(best, [])
    trace.limits_best_ratio = sum(verdicts) / len(verdicts) if verdicts else 0.0
    return trace


def _chair(seats: list[Seat]) -> Seat | None:
    """Who answered in the primary chair: the primary, else the reserve that took its seat."""
    for s in seats:
        if s.seat in PRIMARY_SEATS and s.status == "ok":
            return s
    first = next((s for s in seats if s.seat in PRIMARY_SEATS), None)
    if first is None:
        return None
    return next((s for s in seats if s.seat.startswith("reserve") and s.status == "ok"), None)


def start_sim(work: Path) -> tuple[Proc, str]:
    """The simulated upstream with every model named in its spec, so its /v1/models lists them:
    the seed seats only models its endpoint says it serves."""
    names = [f"m{i:02d}" for i in range(1, 21)] + ["m99"]
    spec = work / "sim.json"
    spec.write_text(json.dumps({"models": {served(a): {"latency_s": 0.0} for a in names}}))
    port = free_port()
    argv = [str(PROJECT_BIN / "bench-gateway"), "simulate", "--port", str(port)]
    proc = Proc("simulator", [*argv, "--spec", str(spec)], work / "sim.log")
    url = f"http://127.0.0.1:{port}"
    try:
        proc.wait_ready(url + "/healthz", timeout=60)
    except BaseException:
        proc.stop()
        raise
    return proc, url


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="1 seed, shorter phases")
    parser.add_argument("--judge-share", type=float, default=0.6)
    parser.add_argument("--only", choices=("ours", "seed"), action="append")
    parser.add_argument("--label", default="after", help="where ours' figures go: before|after")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--limits-only", action="store_true", help="rerun only the rate limits")
    parser.add_argument("--suite", action="store_true", help="the suite's replay, 20 seeds")
    args = parser.parse_args(argv)
    if args.suite:  # hidden suite skills, replayed at the routing level: seconds, not minutes
        from evidence_suite import main as replay_suite

        return replay_suite([])
    phases = Phases(converge=150, decline=40, discover=40, limits=60) if args.quick else Phases()
    seeds = 1 if args.quick else args.seeds
    kinds = args.only or ["ours", "seed"]
    if "seed" in kinds:
        ensure("seed")
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    with tempfile.TemporaryDirectory(prefix="evidence-") as tmp:
        work = Path(tmp)
        sim_proc, sim = start_sim(work)
        with sim_proc:
            for kind in kinds:
                key = kind if kind == "seed" else f"ours_{args.label}"
                kept = results.get(key, {}).get("runs", []) if args.limits_only else []
                runs, limits = list(kept), []
                for seed in range(1, seeds + 1):
                    if not args.limits_only:
                        trace = run_one(kind, seed, sim, work, phases, args.judge_share)
                        print(f"[{kind} seed {seed}] {summary(trace)}", flush=True)
                        runs.append(asdict(trace))
                    limit = run_limits(kind, seed, sim, work, phases, args.judge_share)
                    print(f"[{kind} seed {seed}] limits: {limit_summary(limit)}", flush=True)
                    limits.append(asdict(limit))
                results[key] = {
                    "runs": runs,
                    "limits": limits,
                    "phases": asdict(phases),
                    "judge_share": args.judge_share,
                }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1))
    from evidence_report import render

    render(results, args.out.parent)
    return 0


def summary(t: Trace) -> str:
    after = t.top2[100:300]
    acc = sum(after) / len(after) if after else 0.0
    bound = math.ceil(t.pool / EXPLORERS)
    return (
        f"primary in best two after 100: {acc:.0%}; demoted after {t.demoted_after}; "
        f"new seated {t.discovered_seated}, primary {t.discovered_primary}; longest unseated "
        f"{max(t.longest_unseated.values())} (bound {bound}; silent {t.silent}: "
        f"{t.longest_unseated.get(t.silent)}); {t.seconds:.0f} s"
    )


def limit_summary(t: Trace) -> str:
    return (
        f"best model primary {t.limits_best_primary:.0%}, primary chair useful "
        f"{t.limits_useful:.0%}; best sat in {t.limits_best_seated} panels, 429 in "
        f"{t.limits_best_limited}; best's recorded ratio {t.limits_best_ratio:.2f} "
        f"(quality {t.limits_best_quality:.2f})"
    )


if __name__ == "__main__":
    sys.exit(main())
