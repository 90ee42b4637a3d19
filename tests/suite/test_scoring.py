"""Asking and scoring a suite task (contract §20), as pure functions, read from tables of cases:
the question's exact words, and the last verdict line of an answer in any case or emphasis."""

from __future__ import annotations

import pytest

from gateway.suite import asking
from gateway.suite.figures import figures, quick_set
from gateway.suite.share import Caps, Shares, allowed
from gateway.suite.tasks import Task

BUG = Task("b", "bug", "review", "def f(x):\n    return x + 1\n", "python", (2,))
CONTROL = Task("c", "control", "review", "def f(x):\n    return x\n", "python")
FALSE_CLAIM = Task("f", "claim", "code", "x = 1\n", None, (), "x is 2", False)
TRUE_CLAIM = Task("t", "claim", "code", "x = 1\n", None, (), "x is 1", True)


def test_a_bug_question_numbers_the_code_in_a_fence_then_asks_for_one_fault_line():
    assert asking.question(BUG) == (
        "```python\n   1 | def f(x):\n   2 |     return x + 1\n```\n\n"
        "Is there a bug? End your answer with exactly one line: `FAULT: line N` "
        "(N the line of the bug) or `NO FAULT`."
    )


def test_a_claim_question_gives_the_claim_then_asks_for_one_verdict_line():
    assert asking.question(FALSE_CLAIM) == (
        "```\n   1 | x = 1\n```\n\nClaim: x is 2\n\n"
        "End your answer with exactly one line: `VERDICT: TRUE` or `VERDICT: FALSE`."
    )


@pytest.mark.parametrize(
    ("task", "answer", "outcome"),
    [
        (BUG, "FAULT: line 2", asking.FOUND),
        (BUG, "The return adds one.\n**FAULT: line 2**", asking.FOUND),
        (BUG, "Fault: Line 2.", asking.FOUND),
        (BUG, "fault: line 2 (the off-by-one)", asking.FOUND),
        (BUG, "`FAULT: line 2`", asking.FOUND),
        (BUG, "FAULT: line 1", asking.WRONG_LINE),
        (BUG, "NO FAULT", asking.MISSED),
        (BUG, "FAULT: line 1\nOn second thought:\nFAULT: line 2", asking.FOUND),
        (BUG, "FAULT: line 2\nactually no.\n**No fault.**", asking.MISSED),
        (BUG, "I think line 2 is wrong.", None),
        (BUG, "", None),
        (BUG, None, None),
        (BUG, "VERDICT: TRUE", None),
        (CONTROL, "NO FAULT", asking.CLEAN),
        (CONTROL, "_no fault_", asking.CLEAN),
        (CONTROL, "FAULT: line 1", asking.FALSE_ALARM),
        (FALSE_CLAIM, "VERDICT: FALSE", asking.RIGHT),
        (FALSE_CLAIM, "**Verdict: true**", asking.WRONG),
        (TRUE_CLAIM, "verdict: TRUE.", asking.RIGHT),
        (TRUE_CLAIM, "NO FAULT", None),
    ],
)
def test_an_answer_is_scored_by_its_last_verdict_line(task, answer, outcome):
    assert asking.score(task, answer) == outcome


@pytest.mark.parametrize(
    ("task", "answer", "confident"),
    [
        (BUG, "FAULT: line 1", True),
        (BUG, "NO FAULT", False),
        (CONTROL, "FAULT: line 2", True),
        (FALSE_CLAIM, "VERDICT: TRUE", True),
        (TRUE_CLAIM, "VERDICT: FALSE", False),
    ],
)
def test_confidently_wrong_is_a_wrong_line_a_false_alarm_or_true_on_a_false_claim(
    task, answer, confident
):
    assert asking.confidently_wrong(task, asking.score(task, answer)) is confident


def test_figures_count_each_outcome_per_model_and_shape():
    tasks = {t.id: t for t in (BUG, CONTROL, FALSE_CLAIM, TRUE_CLAIM)}
    answers = [
        {"task_id": "b", "alias": "m", "answer": "FAULT: line 1", "at": 5.0},
        {"task_id": "c", "alias": "m", "answer": "NO FAULT", "at": 7.0},
        {"task_id": "f", "alias": "m", "answer": "VERDICT: TRUE", "at": 6.0},
        {"task_id": "t", "alias": "m", "answer": "VERDICT: TRUE", "at": 6.0},
        {"task_id": "b", "alias": "n", "answer": "no line at all", "at": 9.0},
        {"task_id": "gone", "alias": "n", "answer": "NO FAULT", "at": 9.0},
    ]
    found = figures(answers, tasks)
    assert found["m"]["review"] == {
        "found": 0, "of": 1, "wrong_line": 1, "clean": 1, "false_alarms": 0,
        "claims_right": 0, "claims_of": 0, "confidently_wrong": 1, "accuracy": 0.5,
        "answered": 2, "scored_at": 7.0,
    }  # fmt: skip
    code = found["m"]["code"]
    assert (code["claims_right"], code["claims_of"], code["confidently_wrong"]) == (1, 2, 1)
    assert code["accuracy"] == 0.5
    assert "n" not in found  # an answer with no verdict line, or to no task, is not scored


def test_the_quick_set_takes_the_kinds_in_turn():
    def task(kind: str, i: int) -> Task:
        claim = kind == "claim"
        lines = (1,) if kind == "bug" else ()
        return Task(f"{kind}{i}", kind, "review", "x\n", None, lines, "c" if claim else None,
                    True if claim else None)  # fmt: skip

    tasks = {f"{k}{i}": task(k, i) for k in ("bug", "control", "claim") for i in range(4)}
    chosen = quick_set(tasks, 5)
    assert len(chosen) == 5
    kinds = [tasks[i].kind for i in chosen]
    assert kinds.count("bug") == 2 and kinds.count("claim") == 2 and kinds.count("control") == 1


@pytest.mark.parametrize(("cap", "share", "calls"), [(10, 0.5, 5), (3, 0.5, 1), (1, 0.5, 1)])
def test_the_suite_takes_at_most_its_share_of_a_cap_and_at_least_one_call(cap, share, calls):
    assert allowed(cap, share) == calls


def test_a_full_rpm_share_waits_and_a_spent_daily_share_stops():
    caps = Caps("m", "one", rpm=4, rpd=10)
    shares = Shares(0.5, {"m": 1}, {"m": "one"})
    assert shares.check(caps, 100.0) is None
    shares.spent(caps, 100.0)
    shares.spent(caps, 110.0)
    assert shares.check(caps, 120.0) == pytest.approx(40.0)  # two a minute: the first frees
    assert shares.check(caps, 160.0) is None
    shares.spent(caps, 160.0)
    shares.spent(caps, 300.0)
    assert "share of the daily cap on the model is spent (5 of 10/day" in str(
        shares.check(caps, 500.0)
    )
