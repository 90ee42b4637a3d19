"""The churn benchmark end to end on a tiny month (two days, a few seconds on the wall): both
gateways served for real, each with its own simulator on the fast clock, the figures read back
from their records, and the table written to a page."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import churn  # noqa: E402
from churn_figures import lost_chairs  # noqa: E402
from churn_report import END, START, render  # noqa: E402
from churn_sides import BASELINE  # noqa: E402
from churn_world import FATES  # noqa: E402


def _has_baseline() -> bool:
    found = subprocess.run(
        ["git", "-C", str(ROOT), "cat-file", "-e", f"{BASELINE}^{{commit}}"], capture_output=True
    )
    return found.returncode == 0


@pytest.fixture(scope="module")
def month(tmp_path_factory) -> tuple[dict, Path]:
    if not _has_baseline():
        pytest.skip(f"this clone lacks commit {BASELINE} (a shallow clone?): no gateway before")
    work = tmp_path_factory.mktemp("churn")
    out, keep = work / "churn.json", work / "raw"
    argv = ["--days", "2", "--speed", "43200", "--per-day", "12", "--no-doc"]
    assert churn.main([*argv, "--out", str(out), "--keep", str(keep)]) == 0
    return json.loads(out.read_text()), keep


def test_both_gateways_play_the_same_month_and_every_panel_is_on_the_record(month):
    results, keep = month
    for side in ("ours", "before"):
        raw = json.loads((keep / f"{side}.json").read_text())
        figures = results[side]
        assert figures["panels"] == len(raw["panels"]) == 24
        assert figures["seats"] == sum(len(p["seats"]) for p in raw["panels"])
        # every call that reached a model came from a panel's seat or the gateway's own probe
        assert figures["upstream_calls"] == len(raw["log"])
        assert figures["seats"] + figures["probes"] == figures["upstream_calls"]
        failing = {f.alias for f in FATES if f.fails_on is not None and f.every is None}
        assert set(figures["failing"]) == failing


def test_the_gateway_before_seats_a_withdrawn_member_and_loses_its_chair(month):
    results, keep = month
    raw = json.loads((keep / "before.json").read_text())
    withdrawn = results["before"]["failing"]["withdrawn-a"]
    assert withdrawn["seats"] >= 1 and withdrawn["lost"] == withdrawn["seats"]
    assert results["before"]["has_health"] is False and raw["events"] == []
    assert any("withdrawn-a" in lost_chairs(p) for p in raw["panels"])


def test_this_gateway_retires_only_what_was_withdrawn(month):
    results, keep = month
    ours = results["ours"]
    assert ours["has_health"] and ours["false_retirements"] == []
    dead = {f.alias for f in FATES if f.dead}
    assert set(ours["retired_at_end"]) <= dead | {"returns"}
    retired = {e["alias"] for e in json.loads((keep / "ours.json").read_text())["events"]}
    assert retired <= {f.alias for f in FATES if f.fails_on is not None}


def test_the_table_is_written_between_its_markers_and_again_in_place(month, tmp_path):
    results, _ = month
    page = tmp_path / "health.md"
    page.write_text(f"# Health\n\nBefore.\n\n{START}\nold\n{END}\n\nAfter.\n")
    render(results, page)
    render(results, page)
    text = page.read_text()
    assert text.count(START) == 1 and "old" not in text
    assert text.startswith("# Health\n\nBefore.") and text.endswith("After.\n")
    assert "| panels that lost a chair (chairs lost) | 0 |" in text
    assert "this gateway" in text and "before model health" in text
