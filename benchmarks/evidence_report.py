"""The learning benchmark's table, plots and docs/evidence.md, from its figures (evidence.json).

Kept apart from the runs so the page can be redrawn from saved figures without running anything:
`python benchmarks/evidence_report.py`.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = (("ours_before", "ours, before"), ("ours_after", "ours, after"), ("seed", "seed 0.3.3"))
EXPLORERS = 2


def hidden_qualities(seed: int, n: int = 20) -> dict[str, float]:
    """The qualities a run's world drew (the same shuffle as evidence.World's)."""
    qualities = [round(0.9 - 0.8 * i / (n - 1), 3) for i in range(n)]
    random.Random(seed).shuffle(qualities)
    return {f"m{i + 1:02d}": q for i, q in enumerate(qualities)}


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def _accuracy(runs: list[dict[str, Any]], start: int, stop: int) -> float:
    return _mean([_mean([float(x) for x in r["top2"][start:stop]]) for r in runs])


def _counts(values: list[int | None], cap: int) -> str:
    """Per seed, '-' when it never happened within the phase (more than *cap* panels)."""
    shown = [str(v) if v is not None else f">{cap}" for v in values]
    return " / ".join(shown)


def _demoted(run: dict[str, Any], phases: dict[str, int]) -> str:
    """Panels until the fallen model lost the chair; 'not primary' if it never held it."""
    quality = run.get("quality") or hidden_qualities(run["seed"])
    best = max(quality, key=quality.__getitem__)
    if run["primary"][phases["converge"] - 1] != best:
        return "not primary"
    done = run["demoted_after"]
    return str(done) if done is not None else f">{phases['decline']}"


def rows(results: dict[str, Any]) -> list[tuple[str, str, dict[str, str]]]:
    """(measure, goal, {column: figure})."""
    out: list[tuple[str, str, dict[str, str]]] = []

    def add(measure: str, goal: str, fig) -> None:
        cells = {}
        for key, _ in COLUMNS:
            if key in results:
                cells[key] = fig(results[key])
                older = "limits_best_seated" not in (results[key]["limits"] or [{}])[0]
                if measure.startswith("rate limits") and older:
                    cells[key] = "-"  # measured on an unsettled bench: not comparable
        out.append((measure, goal, cells))

    add(
        "primary among the best two, panels 1-100",
        "",
        lambda r: f"{_accuracy(r['runs'], 0, 100):.0%}",
    )
    add(
        "primary among the best two, panels 101-300",
        ">= 90 %",
        lambda r: f"{_accuracy(r['runs'], 100, r['phases']['converge']):.0%}",
    )
    add(
        "declined best model: panels until not primary (per seed)",
        "<= 30",
        lambda r: " / ".join(_demoted(x, r["phases"]) for x in r["runs"]),
    )
    add(
        "new strong model: panels until first seated",
        "<= ceil(21/2) = 11",
        lambda r: _counts([x["discovered_seated"] for x in r["runs"]], r["phases"]["discover"]),
    )
    add(
        "new strong model: panels until primary",
        "<= 30",
        lambda r: _counts([x["discovered_primary"] for x in r["runs"]], r["phases"]["discover"]),
    )
    add(
        "... its verdicts when it became primary",
        "<= 30",
        lambda r: " / ".join(
            "-" if x["discovered_judged"] is None else str(x["discovered_judged"])
            for x in r["runs"]
        ),
    )
    add(
        "longest run of panels any model went unseated (pool 20)",
        "<= ceil(20/2) = 10",
        lambda r: " / ".join(str(max(x["longest_unseated"].values())) for x in r["runs"]),
    )
    add(
        "... the never-judged model's longest unseated run",
        "<= 10",
        lambda r: " / ".join(str(x["longest_unseated"].get(x["silent"])) for x in r["runs"]),
    )
    add(
        "rate limits: primary chair answered usefully",
        "high",
        lambda r: f"{_mean([x['limits_useful'] for x in r['limits']]):.0%}",
    )
    add(
        "rate limits: the limited best model is primary",
        "",
        lambda r: f"{_mean([x['limits_best_primary'] for x in r['limits']]):.0%}",
    )
    add(
        "rate limits: panels the best model sat in / was refused (429) in",
        "",
        lambda r: " / ".join(
            f"{x.get('limits_best_seated', '?')}, {x.get('limits_best_limited', '?')}"
            for x in r["limits"]
        ),
    )
    add(
        "rate limits: its recorded useful rate vs its quality",
        "not eroded",
        lambda r: " / ".join(
            (
                "never seated"
                if x.get("limits_best_seated") == 0
                else f"{x['limits_best_ratio']:.2f} vs {x['limits_best_quality']:.2f}"
            )
            for x in r["limits"]
        ),
    )
    return out


def goal_table(
    present: list[tuple[str, str]], found: list[tuple[str, str, dict[str, str]]]
) -> list[str]:
    """A markdown table of measures, their goals and one column per side present (the
    churn benchmark's page uses it too)."""
    lines = [
        "| measure | goal | " + " | ".join(name for _, name in present) + " |",
        "| --- | --- | " + " | ".join("---" for _ in present) + " |",
    ]
    for measure, goal, cells in found:
        lines.append(
            f"| {measure} | {goal} | " + " | ".join(cells.get(k, "") for k, _ in present) + " |"
        )
    return lines


def table(results: dict[str, Any]) -> str:
    present = [(k, name) for k, name in COLUMNS if k in results]
    return "\n".join(goal_table(present, rows(results)))


def plots(results: dict[str, Any], docs: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = []
    fig, ax = plt.subplots(figsize=(8, 4))
    for key, label in COLUMNS:
        if key not in results:
            continue
        runs = results[key]["runs"]
        length = results[key]["phases"]["converge"]
        curve = [_mean([float(r["top2"][i]) for r in runs]) for i in range(length)]
        smooth = [_mean(curve[max(0, i - 9) : i + 1]) for i in range(length)]
        style = {"ours_before": (":", 3.0), "ours_after": ("-", 2.0), "seed": ("--", 1.5)}[key]
        ax.plot(range(1, length + 1), smooth, label=label, linestyle=style[0], linewidth=style[1])
    ax.axhline(0.9, color="grey", linestyle=":", label="goal after panel 100")
    ax.axvline(100, color="grey", linestyle=":")
    ax.set_xlabel("panel number")
    ax.set_ylabel("primary among the best two")
    ax.set_title("mean of seeds, 10-panel window", fontsize=9)
    ax.set_ylim(-0.02, 1.02)
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(docs / "evidence-accuracy.png", dpi=90)
    plt.close(fig)
    names.append("evidence-accuracy.png")

    present = [(k, label) for k, label in COLUMNS if k in results]
    fig, axes = plt.subplots(1, len(present), figsize=(4 * len(present), 4), sharey=True)
    for ax, (key, label) in zip(axes if len(present) > 1 else [axes], present, strict=True):
        run = results[key]["runs"][0]
        quality = run.get("quality") or hidden_qualities(run["seed"])
        order = sorted(quality, key=quality.__getitem__, reverse=True)
        ax.bar(range(len(order)), [run["seats"].get(a, 0) for a in order])
        ax.set_xticks(
            range(len(order)), [f"{quality[a]:.2f}" for a in order], rotation=90, fontsize=7
        )
        ax.set_title(f"{label} (seed {run['seed']})")
        ax.set_xlabel("models by hidden quality")
    (axes if len(present) > 1 else [axes])[0].set_ylabel("seats in panels 1-300")
    fig.tight_layout()
    fig.savefig(docs / "evidence-seats.png", dpi=90)
    plt.close(fig)
    names.append("evidence-seats.png")
    return names


def render(results: dict[str, Any], docs: Path) -> None:
    plots(results, docs)
    page = docs / "evidence.md"
    text = page.read_text() if page.exists() else ""
    start, end = "<!-- evidence-table -->", "<!-- /evidence-table -->"
    block = f"{start}\n{table(results)}\n{end}"
    if start in text and end in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end) :]
    else:
        text = text + ("\n" if text else "") + block + "\n"
    page.write_text(text)
    print(table(results))


if __name__ == "__main__":
    figures = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs" / "evidence.json"
    render(json.loads(figures.read_text()), figures.parent)
    sys.exit(0)
