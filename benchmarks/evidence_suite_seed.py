"""The suite replay's column for the seed (Benchwarmers 0.3.3): its own ranking, fed suite scores.

The seed's gateway ranks models in one place, route mode (`gateway.route_order`): by the count of
useful verdicts, then by its suite's verified findings (`route.suite_recall`, re-scored from the
saved answers), with a 25 % chance that the member with the oldest record goes first. Its panels
seat members plus explorers by staleness and read no score. So its "primary" here is the route
turn's model, as in benchmarks/evidence.py, and each panel is one route turn.

The same worlds as benchmarks/evidence_suite.py: the same hidden skills, the same quick set per
seed, the same simulator answers (simulator/suite.py, the same model and task always alike). The
answers are saved as the seed saves them (suite/tasks/<id>/task.json, output/<alias>.md) in a
fresh data folder, and the seed's own code, in its venv, as a subprocess
(evidence_suite_seed_driver.py), reads them and ranks. Liberties, all stated in docs/evidence.md:

- the tasks are written as *finding* tasks (no `shape`), one `must_find` each, so that
  `suite_recall` counts them: the seed keeps its own FAULT/NO FAULT (`seeded`, `rebench`) and
  claim tasks out of its routing; as shipped it would read none of ours (`--as-shipped`);
- the answer line goes first in the saved answer (the seed scores the first line only);
- one route turn per panel, no explorer collection; the judge gives a verdict on 60 % of turns;
- the rotation's draws come from `random` seeded per scenario, so runs repeat.

    python benchmarks/evidence_suite_seed.py      # 20 seeds, docs/evidence-suite-seed.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evidence_suite import ROOT, Tasks, asking, scored, spearman
from evidence_suite_summary import share, spread
from setup_envs import venv_python

from simulator import suite

RESULTS = ROOT / "docs" / "evidence-suite-seed.json"
DRIVER = Path(__file__).resolve().parent / "evidence_suite_seed_driver.py"
BENCH = [f"m{i:02d}" for i in range(1, 21)]


@dataclass
class SeedRun:
    seed: int
    cold_top2: bool = False  # the first route turn, after one quick set, no verdict
    cold_top2_as_shipped: bool = False  # the same tasks written as the seed writes them
    cold_ranked_top2: bool = False  # its ranking without the rotation
    rho_quick: float = 0.0  # the seed's recall (found/of) against hidden skill
    newcomer_primary: int | None = None  # turns until it takes a turn
    newcomer_judged: int | None = None  # ... its verdicts before that turn
    newcomer_ranked: int | None = None  # turns until ranked first (no rotation)
    newcomer_ranked_judged: int | None = None
    deceiver_first_primary: bool = False
    deceiver_was_primary: bool = False
    deceiver_judged: int | None = None  # verdicts on it when it lost the chair
    skills: dict[str, float] = field(default_factory=dict)


class SeedBench:
    """One data folder of the seed's and its route mode, ranking from it (the driver)."""

    def __init__(self, folder: Path, aliases: list[str], quality: dict[str, float], seed: int):
        self.home, self.quality = folder, quality
        self.rng = random.Random(seed * 17)
        self.judged: dict[str, int] = {}
        self.n = 0
        config = folder / "config"
        config.mkdir(parents=True)
        self.aliases = list(aliases)
        self.register()
        env = {**os.environ, "BENCHWARMERS_HOME": str(folder), "PYTHONDONTWRITEBYTECODE": "1"}
        self.proc = subprocess.Popen(
            [str(venv_python("seed")), str(DRIVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=folder,
        )
        self.ask({"op": "seed", "seed": seed})

    def register(self) -> None:
        blocks = [
            f'- model_id: {a}\n  model_name: sim-{a}\n  api_base: "http://127.0.0.1:9/v1"\n'
            "  api_key_name: sim\n"
            for a in self.aliases
        ]
        (self.home / "config" / "extra-openai-models.yaml").write_text("\n".join(blocks))

    def ask(self, line: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(line) + "\n")
        self.proc.stdin.flush()
        reply = self.proc.stdout.readline()
        if not reply:
            raise RuntimeError("the seed's driver ended; is benchmarks/.venvs/seed ready?")
        out: dict[str, Any] = json.loads(reply)
        return out

    def save(self, task: suite.Task, task_id: str, alias: str, answer: str, shipped: bool) -> None:
        """An answer as the seed keeps it, under a task in the seed's format."""
        folder = self.home / "suite" / "tasks" / task_id
        (folder / "output").mkdir(parents=True, exist_ok=True)
        if task.kind == "claim":
            clause: dict[str, Any] = {"any_of": [f"verdict: {str(task.truth).lower()}"]}
        elif task.kind == "bug":
            lines = "|".join(str(n) for n in sorted(task.lines))
            clause = {"regex": rf"^\W*fault:\s*line\s*(?:{lines})\b"}
        else:
            clause = {"any_of": ["no fault"]}
        spec: dict[str, Any] = {"id": task_id, "title": task_id, "prompt": "-"}
        spec.update(must_find=[clause], score_in="first_line", min_answer_chars=8)
        if shipped:
            spec["shape"] = "claim" if task.kind == "claim" else "seeded"
        (folder / "task.json").write_text(json.dumps(spec))
        lines_ = answer.strip().splitlines()
        first = [lines_[-1], *lines_[:-1]] if lines_ else []  # the seed scores the first line
        (folder / "output" / f"{alias}.md").write_text("\n".join(first) + "\n")

    def turn(self, judge_share: float = 0.6) -> tuple[str, str]:
        """One route turn, judged; (the model that took it, the one ranked first)."""
        self.n += 1
        got = self.ask({"op": "order", "aliases": self.aliases})
        alias, call = got["order"][0], f"t{self.n}"
        task = f"turn {self.n} (bench/route, review)"
        self.ask({"op": "record", "alias": alias, "task": task, "useful": None, "call": call})
        if self.rng.random() < judge_share:
            good = self.rng.random() < self.quality[alias]
            self.ask({"op": "record", "alias": alias, "task": task, "useful": good, "call": call})
            self.judged[alias] = self.judged.get(alias, 0) + 1
        return alias, got["ranked"][0]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


class World:
    """A seed's world, as evidence_suite.run draws it."""

    def __init__(self, seed: int, tasks: Tasks) -> None:
        rng = random.Random(seed)
        skills = [round(0.9 - 0.8 * i / 19, 3) for i in range(20)]
        rng.shuffle(skills)
        self.seed, self.tasks = seed, tasks
        self.skill = {f"m{i + 1:02d}": s for i, s in enumerate(skills)}
        self.best = set(sorted(self.skill, key=self.skill.__getitem__, reverse=True)[:2])
        self.quick = tasks.quick(rng)

    def answers(self, bench: SeedBench, alias: str, skill: float, shipped: bool = False) -> None:
        for i in self.quick:
            task = self.tasks.review[i]
            asked = asking(task, self.tasks.language[i])
            text = suite.answer(f"seed{self.seed}-{alias}", asked, skill) or ""
            assert scored(task, text) is not None, "the simulator always gives an answer line"
            bench.save(task, i, alias, text, shipped)


def run(seed: int, tasks: Tasks, work: Path) -> SeedRun:
    world = World(seed, tasks)
    out = SeedRun(seed, skills=dict(world.skill))
    for shipped in (False, True):
        cold = SeedBench(work / f"cold-{int(shipped)}", BENCH, world.skill, seed * 7)
        for alias, skill in world.skill.items():
            world.answers(cold, alias, skill, shipped)
        took, ranked = cold.turn(judge_share=0.0)
        if shipped:
            out.cold_top2_as_shipped = took in world.best
        else:
            out.cold_top2, out.cold_ranked_top2 = took in world.best, ranked in world.best
            recall = cold.ask({"op": "recall"})["recall"]
            rates = [recall[a][0] / recall[a][1] for a in BENCH]
            out.rho_quick = spearman(rates, [world.skill[a] for a in BENCH])
        cold.close()
    newcomer(world, out, work / "newcomer")
    deceiver(world, out, work / "deceiver")
    return out


def newcomer(world: World, out: SeedRun, folder: Path) -> None:
    """A bench settled over 300 judged turns, then a model of skill 0.97 with its quick set."""
    bench = SeedBench(folder, BENCH, dict(world.skill), world.seed * 11)
    for alias, skill in world.skill.items():
        world.answers(bench, alias, skill)
    for _ in range(300):
        bench.turn()
    bench.quality["m99"] = 0.97
    bench.aliases.append("m99")
    bench.register()
    world.answers(bench, "m99", 0.97)
    for i in range(1, 61):
        before = bench.judged.get("m99", 0)
        took, ranked = bench.turn()
        if took == "m99" and out.newcomer_primary is None:
            out.newcomer_primary, out.newcomer_judged = i, before
        if ranked == "m99" and out.newcomer_ranked is None:
            out.newcomer_ranked, out.newcomer_ranked_judged = i, before
        if out.newcomer_primary is not None and out.newcomer_ranked is not None:
            break
    bench.close()


def deceiver(world: World, out: SeedRun, folder: Path) -> None:
    """Perfect on the suite (1.0), useless to the judge (0.05), on a cold bench."""
    bench = SeedBench(folder, [*BENCH, "m98"], {**world.skill, "m98": 0.05}, world.seed * 13)
    for alias, skill in {**world.skill, "m98": 1.0}.items():
        world.answers(bench, alias, skill)
    for _ in range(120):
        before = bench.judged.get("m98", 0)
        took, _ranked = bench.turn()
        if took == "m98":
            out.deceiver_was_primary = True
            out.deceiver_first_primary = out.deceiver_first_primary or bench.n == 1
        elif out.deceiver_was_primary:
            out.deceiver_judged = before
            break
    bench.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if not venv_python("seed").exists():
        print("the seed's venv is missing: python benchmarks/setup_envs.py seed", file=sys.stderr)
        return 2
    tasks = Tasks()
    runs = []
    with tempfile.TemporaryDirectory(prefix="seed-suite-") as tmp:
        for seed in range(1, args.seeds + 1):
            runs.append(run(seed, tasks, Path(tmp) / f"s{seed}"))
            print(f"[seed {seed}] {asdict(runs[-1]) | {'skills': '...'}}", flush=True)
    args.out.write_text(json.dumps({"runs": [asdict(r) for r in runs]}, indent=1))
    print(summary(runs))
    return 0


def summary(runs: list[SeedRun]) -> str:
    rho = [r.rho_quick for r in runs]
    return "\n".join(
        [
            f"cold start: {share([r.cold_top2 for r in runs])} (ranked, no rotation "
            f"{share([r.cold_ranked_top2 for r in runs])}; as shipped "
            f"{share([r.cold_top2_as_shipped for r in runs])})",
            f"rho quick: median {statistics.median(rho):.2f}, min {min(rho):.2f}",
            f"newcomer with no verdict: {share([r.newcomer_judged == 0 for r in runs])}; "
            f"turns {spread([r.newcomer_primary for r in runs])}; verdicts "
            f"{spread([r.newcomer_judged for r in runs])}",
            f"newcomer ranked first: {spread([r.newcomer_ranked for r in runs])}; verdicts "
            f"{spread([r.newcomer_ranked_judged for r in runs])}",
            f"deceiver first {share([r.deceiver_first_primary for r in runs])}, ever "
            f"{share([r.deceiver_was_primary for r in runs])}; verdicts until it lost the chair "
            f"{spread([r.deceiver_judged for r in runs if r.deceiver_was_primary])}",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
