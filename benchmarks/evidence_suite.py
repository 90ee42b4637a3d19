"""Does the suite seed the router? A replay at the routing level, with hidden skills.

Every model has a hidden skill: the chance its answer is useful to the judge, and the
`suite_skill` the simulator answers the shipped suite tasks with (simulator/suite.py: the same
model and task always alike). The suite's answers are scored from their last line as the
contract says, and the scores go into routing's evidence as `prior_weight` pseudo-verdicts
(routing/prior.py). Panels are chosen by `choose_panel` itself, the judge gives verdicts on 60 %
of seats; no HTTP, so twenty seeds take seconds. Side by side: the same replay with verdicts only
(today's gateway, no suite scores in its evidence).

Scenarios, per seed (twenty models, skills 0.90 down to 0.10, shuffled):

1. cold start: one quick set (8 review tasks over the kinds) per model, no verdict: is the
   router's primary among the best two by hidden skill?
2. ranking: Spearman's rho of suite accuracy against hidden skill (the quick set; all review tasks).
3. newcomer: a bench settled over 300 judged panels, then a model of skill 0.97 with its quick
   set: panels until it is primary, and its verdicts by then.
4. deceiver: a model perfect on the suite (skill 1.0) but useless to the judge (0.05) joins a
   cold bench: verdicts on it until it loses the primary chair.

Each of 1, 3 and 4 also with the follow-up the gateway runs after a quick set (`follow`: the
product's own rule, routing/follow_up.py, asked until it names no one), and what it costs.

    python benchmarks/evidence_suite.py            # 20 seeds, writes docs/evidence-suite.json
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from evidence_suite_summary import summary

from gateway.board import Board
from gateway.state.figures import Figures
from routing import ROUTER_PANEL, Catalog, Model, PanelLimits, PanelRequest
from routing import choose_panel as choose
from routing.follow_up import follow_up
from routing.prior import PRIOR_WEIGHT
from simulator import suite

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "evidence-suite.json"
SHAPE = "review"
QUICK = {"bug": 3, "control": 3, "claim": 2}
FAULT = (
    "Is there a bug? End your answer with exactly one line: `FAULT: line N` (N the line of the "
    "bug) or `NO FAULT`."
)
VERDICT = "End your answer with exactly one line: `VERDICT: TRUE` or `VERDICT: FALSE`."
LAST = re.compile(r"^\W*(FAULT: line (\d+)|NO FAULT|VERDICT: (TRUE|FALSE))\W*$", re.IGNORECASE)
LIMITS = PanelLimits(max_calls=4, max_explorers=2, reserves=2)
ALIASES = [f"m{i:02d}" for i in range(1, 21)] + ["m98", "m99"]  # the bench, deceiver, newcomer


@dataclass
class Run:
    seed: int
    cold_top2: bool = False  # with the suite
    cold_top2_verdicts_only: bool = False
    cold_top2_full: bool = False  # with every review task answered, not the quick set only
    rho_quick: float = 0.0
    rho_full: float = 0.0
    rho_follow: float = 0.0  # after the quick set and its follow-up
    newcomer_primary: int | None = None  # panels until primary, with the suite
    newcomer_judged: int | None = None  # ... its verdicts by then
    newcomer_primary_verdicts_only: int | None = None
    newcomer_judged_verdicts_only: int | None = None
    newcomer_quick: float = 0.0  # its quick-set accuracy
    newcomer_primary_full: int | None = None  # incumbents scored on every review task
    newcomer_judged_full: int | None = None
    cold_top2_follow: bool = False  # after the quick set and its follow-up
    cold_follow_calls: int = 0  # ... the follow-up's calls (over the twenty models)
    cold_followed: int = 0  # ... the models it asked
    newcomer_primary_follow: int | None = None  # after its quick set and the follow-up
    newcomer_judged_follow: int | None = None
    newcomer_follow_calls: int = 0  # ... the follow-up's calls
    newcomer_followed: int = 0  # ... the models it asked (the newcomer among them)
    deceiver_first_primary: bool = False
    deceiver_was_primary: bool = False
    deceiver_judged: int | None = None  # verdicts on it when it lost the chair
    deceiver_was_primary_follow: bool = False  # ... after its quick set and the follow-up
    deceiver_judged_follow: int | None = None
    skills: dict[str, float] = field(default_factory=dict)


def asking(task: suite.Task, language: str) -> str:
    numbered = "\n".join(f"{n:>4} | {line}" for n, line in enumerate(task.code.splitlines(), 1))
    fenced = f"```{language}\n{numbered}\n```"
    if task.kind == "claim":
        return f"{fenced}\n\nClaim: {task.claim}\n\n{VERDICT}"
    return f"{fenced}\n\n{FAULT}"


def scored(task: suite.Task, answer: str) -> bool | None:
    """Right or wrong by the answer's last line; None when it has no answer line."""
    match = LAST.match(answer.strip().splitlines()[-1]) if answer.strip() else None
    if match is None:
        return None
    if task.kind == "claim":
        return match.group(3) is not None and (match.group(3).upper() == "TRUE") == task.truth
    line = int(match.group(2)) if match.group(2) else None
    return line in task.lines if task.kind == "bug" else line is None


class Tasks:
    """The shipped review tasks, asked as the gateway asks them."""

    def __init__(self) -> None:
        tasks = suite.load(suite.SHIPPED)
        raw = {p.stem: p.read_text() for p in suite.SHIPPED.glob("*.yaml")}
        self.review = {
            i: t for i, t in sorted(tasks.items()) if f"shape: {SHAPE}" in raw[i].splitlines()
        }
        self.language = {i: "python" if i.startswith("py-") else "javascript" for i in tasks}

    def quick(self, rng: random.Random) -> list[str]:
        chosen: list[str] = []
        for kind, count in QUICK.items():
            chosen += rng.sample(sorted(i for i, t in self.review.items() if t.kind == kind), count)
        return chosen

    def accuracy(self, name: str, skill: float, ids: list[str]) -> tuple[float, int]:
        marks = [
            scored(self.review[i], suite.answer(name, asking(self.review[i], self.language[i]),
                                                skill) or "")
            for i in ids
        ]  # fmt: skip
        answered = [m for m in marks if m is not None]
        return (sum(answered) / len(answered) if answered else 0.0, len(answered))


class Bench:
    """A router's records, kept as the gateway keeps them: its live figures on a board
    (gateway/state/figures.py), seats and verdicts counted there, suite scores published there
    when `suite` is on, and the evidence routing reads taken from them (`Figures.evidence`)."""

    def __init__(
        self, quality: dict[str, float], rng: random.Random, use_suite: bool, weight: float
    ) -> None:
        self.quality, self.rng, self.use_suite = quality, rng, use_suite
        self.figures = Figures(Board.private(), ALIASES, [SHAPE], prior_weight=weight)
        self.judged: dict[str, int] = {}
        self.n = 0

    def score(self, alias: str, score: tuple[float, int]) -> None:
        """A model's suite figures on the shape, published as a suite run publishes them."""
        if self.use_suite:
            self.figures.learn_suite(alias, SHAPE, *score)

    def catalog(self) -> Catalog:
        models = tuple(
            Model(alias=a, served=f"openai/{a}", connection=f"c{i % 5}", role="general")
            for i, a in enumerate(sorted(self.quality))
        )
        return Catalog(models=models, limits=LIMITS)

    def panel(self, judge_share: float = 0.6) -> str:
        """One router panel, judged; its primary's alias."""
        self.n += 1
        ask = PanelRequest(ROUTER_PANEL, SHAPE, seed=self.n)
        evidence = self.figures.evidence({}, SHAPE, aliases=sorted(self.quality))
        seats = choose(ask, self.catalog(), evidence, float(self.n)).seats
        for seat in seats:
            self.figures.seated(seat.alias, float(self.n))
            if self.rng.random() < judge_share:
                good = self.rng.random() < self.quality[seat.alias]
                self.figures.verdict(seat.alias, SHAPE, good, None)
                self.judged[seat.alias] = self.judged.get(seat.alias, 0) + 1
        return next(s.alias for s in seats if s.name == "primary")


def follow(
    bench: Bench,
    tasks: Tasks,
    skill: dict[str, float],
    names: dict[str, str],
    asked: dict[str, set[str]],
) -> tuple[int, set[str]]:
    """The gateway's follow-up after a quick set, run to its end with the product's own rule
    (routing/follow_up.py): each run's models asked its tasks, their new scores published, the
    rule asked again; (the calls it spent, the models it asked). *asked* grows."""
    calls, followed = 0, set()
    aliases = sorted(bench.quality)
    while True:
        evidence = bench.figures.evidence({}, SHAPE, aliases=aliases)
        runs = follow_up({SHAPE: evidence}, {SHAPE: list(tasks.review)}, asked, aliases)
        if not runs:
            return calls, followed
        for ask in runs:
            for alias in ask.models:
                asked.setdefault(alias, set()).update(ask.tasks)
                calls += len(ask.tasks)
                followed.add(alias)
                bench.score(alias, tasks.accuracy(names[alias], skill[alias], sorted(asked[alias])))


def spearman(xs: list[float], ys: list[float]) -> float:
    def ranks(values: list[float]) -> list[float]:
        order = sorted(range(len(values)), key=values.__getitem__)
        out = [0.0] * len(values)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
                j += 1
            for k in range(i, j + 1):
                out[order[k]] = (i + j) / 2
            i = j + 1
        return out

    rx, ry = ranks(xs), ranks(ys)
    return statistics.correlation(rx, ry)


def newcomer(
    seed: int,
    skill: dict[str, float],
    scores: dict[str, tuple[float, int]],
    use_suite: bool,
    weight: float,
    tasks: Tasks,
    quick: list[str],
    names: dict[str, str],
    asked: dict[str, set[str]] | None = None,
) -> tuple[int | None, int | None, float, int, int]:
    """A model of skill 0.97 with its quick set joins a bench settled over 300 judged panels:
    (panels until it is primary, its verdicts before that panel, its quick-set accuracy, and the
    follow-up's calls and models). *asked*: the tasks each incumbent answered (its cold start's
    quick set and follow-up), and the newcomer's quick set is followed up as the gateway does."""
    settled = Bench(dict(skill), random.Random(seed * 11), use_suite, weight)
    for alias, score in scores.items():
        settled.score(alias, score)
    for _ in range(300):
        settled.panel()
    settled.quality["m99"] = 0.97
    quick_score = tasks.accuracy(names["m99"], 0.97, quick)
    settled.score("m99", quick_score)
    calls = followed = 0
    if asked is not None:
        asked = {**{a: set(t) for a, t in asked.items()}, "m99": set(quick)}
        spent, asked_models = follow(settled, tasks, {**skill, "m99": 0.97}, names, asked)
        calls, followed = spent, len(asked_models)
    for i in range(1, 61):
        before = settled.judged.get("m99", 0)  # verdicts given before this panel's
        if settled.panel() == "m99":
            return (i, before, quick_score[0], calls, followed)
    return (None, None, quick_score[0], calls, followed)


def run(seed: int, tasks: Tasks, weight: float = PRIOR_WEIGHT) -> Run:
    rng = random.Random(seed)
    skills = [round(0.9 - 0.8 * i / 19, 3) for i in range(20)]
    rng.shuffle(skills)
    skill = {f"m{i + 1:02d}": s for i, s in enumerate(skills)}
    best = set(sorted(skill, key=skill.__getitem__, reverse=True)[:2])
    out = Run(seed, skills=dict(skill))
    quick = tasks.quick(rng)
    # the simulator's model names: fresh draws per seed
    names = {a: f"seed{seed}-{a}" for a in [*skill, "m98", "m99"]}

    scores = {a: tasks.accuracy(names[a], s, quick) for a, s in skill.items()}
    full = {a: tasks.accuracy(names[a], s, list(tasks.review)) for a, s in skill.items()}
    order = sorted(skill)
    out.rho_quick = spearman([scores[a][0] for a in order], [skill[a] for a in order])
    out.rho_full = spearman([full[a][0] for a in order], [skill[a] for a in order])
    for use_suite in (True, False):
        cold = Bench(dict(skill), random.Random(seed * 7), use_suite, weight)
        for alias, score in scores.items():
            cold.score(alias, score)
        first = cold.panel(judge_share=0.0)
        if use_suite:
            out.cold_top2 = first in best
            cold = Bench(dict(skill), random.Random(seed * 7), use_suite, weight)
            for alias, score in full.items():
                cold.score(alias, score)
            out.cold_top2_full = cold.panel(judge_share=0.0) in best
        else:
            out.cold_top2_verdicts_only = first in best
        # the newcomer, on a bench settled over 300 judged panels
        got = newcomer(seed, skill, scores, use_suite, weight, tasks, quick, names)
        if use_suite:
            out.newcomer_primary, out.newcomer_judged, out.newcomer_quick = got[:3]
            # ... whose incumbents were scored on every review task (a scheduled run)
            got = newcomer(seed, skill, full, use_suite, weight, tasks, quick, names)
            out.newcomer_primary_full, out.newcomer_judged_full = got[:2]
        else:
            out.newcomer_primary_verdicts_only, out.newcomer_judged_verdicts_only = got[:2]
    # the quick set and its follow-up, as the gateway runs them
    cold = Bench(dict(skill), random.Random(seed * 7), True, weight)
    for alias, score in scores.items():
        cold.score(alias, score)
    asked = {a: set(quick) for a in skill}
    out.cold_follow_calls, followed = follow(cold, tasks, skill, names, asked)
    out.cold_followed = len(followed)
    out.cold_top2_follow = cold.panel(judge_share=0.0) in best
    after = {a: tasks.accuracy(names[a], skill[a], sorted(asked[a])) for a in skill}
    out.rho_follow = spearman([after[a][0] for a in order], [skill[a] for a in order])
    got = newcomer(seed, skill, after, True, weight, tasks, quick, names, asked)
    out.newcomer_primary_follow, out.newcomer_judged_follow = got[:2]
    out.newcomer_follow_calls, out.newcomer_followed = got[3:]
    out.deceiver_first_primary, out.deceiver_was_primary, out.deceiver_judged = deceiver(
        seed, skill, scores, weight, tasks, quick, names
    )
    got_deceiver = deceiver(seed, skill, after, weight, tasks, quick, names, asked)
    out.deceiver_was_primary_follow, out.deceiver_judged_follow = got_deceiver[1:]
    return out


def deceiver(
    seed: int,
    skill: dict[str, float],
    scores: dict[str, tuple[float, int]],
    weight: float,
    tasks: Tasks,
    quick: list[str],
    names: dict[str, str],
    asked: dict[str, set[str]] | None = None,
) -> tuple[bool, bool, int | None]:
    """A model perfect on the suite (skill 1.0) but useless to the judge (0.05) joins a cold
    bench with its quick set (and the follow-up, given *asked*): (primary at the first panel,
    primary ever, its verdicts when it lost the chair)."""
    deceived = Bench({**skill, "m98": 0.05}, random.Random(seed * 13), True, weight)
    for alias, score in {**scores, "m98": tasks.accuracy(names["m98"], 1.0, quick)}.items():
        deceived.score(alias, score)
    if asked is not None:
        asked = {**{a: set(t) for a, t in asked.items()}, "m98": set(quick)}
        follow(deceived, tasks, {**skill, "m98": 1.0}, names, asked)
    first = was_primary = False
    for _ in range(120):
        before = deceived.judged.get("m98", 0)
        if deceived.panel() == "m98":
            was_primary = True
            first = first or deceived.n == 1
        elif was_primary:
            return (first, True, before)
    return (first, was_primary, None)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--weight", type=float, default=PRIOR_WEIGHT, help="suite.prior_weight")
    args = parser.parse_args(argv)
    tasks = Tasks()
    runs = [run(seed, tasks, args.weight) for seed in range(1, args.seeds + 1)]
    for r in runs:
        print(
            f"[seed {r.seed}] cold top2 {r.cold_top2} (verdicts only {r.cold_top2_verdicts_only});"
            f" rho {r.rho_quick:.2f}/{r.rho_full:.2f}; newcomer primary after {r.newcomer_primary}"
            f" panels, {r.newcomer_judged} verdicts (quick {r.newcomer_quick:.2f}; verdicts only "
            f"{r.newcomer_primary_verdicts_only}, {r.newcomer_judged_verdicts_only}); deceiver "
            f"first {r.deceiver_first_primary}, lost the chair after {r.deceiver_judged} verdicts",
            flush=True,
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    results = json.loads(args.out.read_text()) if args.out.exists() else {}
    results[f"prior_weight {args.weight:g}"] = {"runs": [asdict(r) for r in runs]}
    args.out.write_text(json.dumps(results, indent=1))
    print(summary(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
