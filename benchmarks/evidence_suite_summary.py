"""The suite replay's figures over its seeds (benchmarks/evidence_suite.py), as lines of text:
what it prints, and what docs/evidence.md's table is read from."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evidence_suite import Run


def share(values: list[bool]) -> str:
    """How many of *values* are true, of how many: `12/20`."""
    return f"{sum(values)}/{len(values)}"


def spread(values: list[int | None], none: str | None = None) -> str:
    """`median 3, 1-18; 2 never` over the seeds that saw it (None: never); *none* when none did
    (`none of N` by default)."""
    got = sorted(v for v in values if v is not None)
    never = len(values) - len(got)
    if not got:
        return none if none is not None else f"none of {len(values)}"
    head = f"median {statistics.median(got):g}, {got[0]}-{got[-1]}"
    return head + (f"; {never} never" if never else "")


def summary(runs: list[Run]) -> str:
    """The replay's figures over its seeds, a line per scenario."""

    def calls(values: list[float]) -> str:
        return f"median {statistics.median(values):.1f}, {min(values):.1f}-{max(values):.1f}"

    deceived = [r for r in runs if r.deceiver_was_primary_follow]
    return "\n".join(
        [
            f"cold start, primary among the best two: suite {share([r.cold_top2 for r in runs])},"
            f" verdicts only {share([r.cold_top2_verdicts_only for r in runs])}; after every"
            f" review task {share([r.cold_top2_full for r in runs])}",
            f"Spearman rho, quick set: median {statistics.median(r.rho_quick for r in runs):.2f},"
            f" min {min(r.rho_quick for r in runs):.2f}; all review tasks: median "
            f"{statistics.median(r.rho_full for r in runs):.2f}, min "
            f"{min(r.rho_full for r in runs):.2f}; after the follow-up: median "
            f"{statistics.median(r.rho_follow for r in runs):.2f}, min "
            f"{min(r.rho_follow for r in runs):.2f}, at 0.8 or more "
            f"{share([r.rho_quick >= 0.8 for r in runs])} on the quick set, "
            f"{share([r.rho_follow >= 0.8 for r in runs])} after the follow-up",
            f"newcomer primary with no verdict: suite "
            f"{share([r.newcomer_judged == 0 for r in runs])} (incumbents scored on every task "
            f"{share([r.newcomer_judged_full == 0 for r in runs])}), verdicts only "
            f"{share([r.newcomer_judged_verdicts_only == 0 for r in runs])}",
            f"newcomer, panels until primary: suite {spread([r.newcomer_primary for r in runs])};"
            f" incumbents scored on every task {spread([r.newcomer_primary_full for r in runs])};"
            f" verdicts only {spread([r.newcomer_primary_verdicts_only for r in runs])}",
            f"newcomer, its verdicts by then: suite {spread([r.newcomer_judged for r in runs])};"
            f" verdicts only {spread([r.newcomer_judged_verdicts_only for r in runs])}",
            f"cold start after a quick set and its follow-up: "
            f"{share([r.cold_top2_follow for r in runs])}; its calls per model "
            f"{calls([r.cold_follow_calls / 20 for r in runs])}; models it asked "
            f"{spread([r.cold_followed for r in runs])}",
            f"newcomer after its quick set and the follow-up: primary with no verdict "
            f"{share([r.newcomer_judged_follow == 0 for r in runs])}; panels until primary "
            f"{spread([r.newcomer_primary_follow for r in runs])}; its verdicts by then "
            f"{spread([r.newcomer_judged_follow for r in runs])}; the follow-up's calls "
            f"{spread([r.newcomer_follow_calls for r in runs])}, models it asked "
            f"{spread([r.newcomer_followed for r in runs])}",
            f"deceiver after its quick set and the follow-up: primary "
            f"{share([r.deceiver_was_primary_follow for r in runs])}; verdicts until it lost the "
            f"chair {spread([r.deceiver_judged_follow for r in deceived])}",
            f"deceiver primary at first: {share([r.deceiver_first_primary for r in runs])}, ever:"
            f" {share([r.deceiver_was_primary for r in runs])}; verdicts until it lost the chair:"
            f" {spread([r.deceiver_judged for r in runs if r.deceiver_was_primary])}",
        ]
    )
