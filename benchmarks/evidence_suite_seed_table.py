"""The seed's column in docs/evidence.md's suite table, from docs/evidence-suite-seed.json.

The suite table is written by hand from the replay's printed figures; this adds (or refreshes)
one column, `seed 0.3.3`, so redrawing it never touches the other columns. Rows are matched by
the start of their measure, in table order; a row the seed's replay does not measure gets "-"
(the seed has no follow-up, and its replay asks the quick set only).

    python benchmarks/evidence_suite_seed_table.py
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evidence_suite_summary import spread as seeds_spread

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "evidence.md"
FIGURES = ROOT / "docs" / "evidence-suite-seed.json"
HEADING = "seed 0.3.3"
START, END = "<!-- suite-table -->", "<!-- /suite-table -->"
Runs = list[dict[str, Any]]


def share(runs: Runs, key: str) -> str:
    return f"{sum(bool(r[key]) for r in runs)}/{len(runs)}"


def spread(values: list[int | None]) -> str:
    return seeds_spread(values, f"never within 60 ({len(values)}/{len(values)})")


def newcomer_first(runs: Runs) -> str:
    took = sum(r["newcomer_judged"] == 0 for r in runs)
    ranked = sum(r["newcomer_ranked_judged"] == 0 for r in runs)
    return f"{took}/{len(runs)} for one turn, by rotation; ranked first {ranked}/{len(runs)}"


def newcomer_turns(runs: Runs) -> str:
    ranked = spread([r["newcomer_ranked"] for r in runs])
    return f"{spread([r['newcomer_primary'] for r in runs])}; ranked first: {ranked}"


def rho(runs: Runs) -> str:
    values = [r["rho_quick"] for r in runs]
    at = sum(v >= 0.8 for v in values)
    return (
        f"median {statistics.median(values):.2f}, min {min(values):.2f} ({at}/{len(values)} >= 0.8;"
        " the same answers)"
    )


def deceiver(runs: Runs) -> str:
    was = [r for r in runs if r["deceiver_was_primary"]]
    return f"{spread([r['deceiver_judged'] for r in was])} (took a turn: {len(was)}/{len(runs)})"


RULES: list[tuple[str, Callable[[Runs], str]]] = [
    (
        "cold start: primary among the best two, after one quick set",
        lambda runs: (
            f"{share(runs, 'cold_top2')} (as shipped: {share(runs, 'cold_top2_as_shipped')})"
        ),
    ),
    ("suite accuracy vs hidden skill, Spearman rho: quick set", rho),
    ("newcomer: primary with no verdict, after its quick set", newcomer_first),
    ("newcomer: panels until primary", newcomer_turns),
    ("... its verdicts by then", lambda runs: spread([r["newcomer_judged"] for r in runs])),
    ("deceiver: verdicts until it loses the chair", deceiver),
]


def cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def row(values: list[str]) -> str:
    return "| " + " | ".join(values) + " |"


def redraw(page: str, runs: Runs) -> str:
    """*page* with the suite table's seed column set from *runs*."""
    head, rest = page.split(START, 1)
    table, tail = rest.split(END, 1)
    lines = [line for line in table.strip().splitlines() if line.strip()]
    header = cells(lines[0])
    has = header[-1] == HEADING
    rules = list(RULES)
    out = []
    for i, line in enumerate(lines):
        values = cells(line)[:-1] if has else cells(line)
        if i == 0:
            values.append(HEADING)
        elif i == 1:
            values.append("---")
        else:
            measure = values[0].strip("*").lstrip("*")
            rule = next((r for r in rules if measure.startswith(r[0])), None)
            if rule is not None:
                rules.remove(rule)
            values.append(rule[1](runs) if rule else "-")
        out.append(row(values))
    return f"{head}{START}\n" + "\n".join(out) + f"\n{END}{tail}"


def main() -> int:
    runs = json.loads(FIGURES.read_text())["runs"]
    PAGE.write_text(redraw(PAGE.read_text(), runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
