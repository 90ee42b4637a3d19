"""Adaptive follow-up (routing/follow_up.py): after a quick set, the models that could still be the
best on a shape are asked the rest of its tasks, the primary with them when it has answered
fewer, so the chair is decided on equal terms; models surely behind are asked nothing more, and
no task twice."""

from __future__ import annotations

from dataclasses import replace

from routing.follow_up import Ask, contenders, follow_up
from tests.routing.test_suite_prior import evidence, verdicts

REVIEW = [f"r{i:02d}" for i in range(32)]
QUICK = set(REVIEW[:8])
BENCH = ["ace", "nearly", "fair", "poor", "newcomer"]


def cold(**scores: tuple[float, int]):
    return evidence({alias: {"review": score} for alias, score in scores.items()})


def test_after_a_cold_quick_set_only_the_models_that_could_be_best_are_asked_the_rest():
    scored = cold(ace=(1.0, 8), nearly=(0.875, 8), fair=(0.75, 8), poor=(0.25, 8))
    assert contenders(scored, "review", BENCH) == ["ace", "nearly"]
    asked = {alias: QUICK for alias in BENCH}
    runs = follow_up({"review": scored}, {"review": REVIEW}, asked, BENCH)
    assert runs == [Ask(("ace", "nearly"), tuple(REVIEW[8:]))]


def test_a_model_surely_best_already_needs_no_follow_up():
    scored = cold(ace=(1.0, 8), fair=(0.5, 8), poor=(0.0, 8))
    assert contenders(scored, "review", BENCH) == []
    assert follow_up({"review": scored}, {"review": REVIEW}, {}, BENCH) == []


def test_a_newcomer_that_could_beat_the_primary_is_asked_the_rest_and_so_is_the_primary():
    suite = {"newcomer": {"review": (1.0, 8)}, "ace": {"review": (1.0, 8)}}
    settled = evidence(suite, ace=verdicts(45, 5), fair=verdicts(30, 20))
    asked = {"newcomer": QUICK, "ace": QUICK}
    runs = follow_up({"review": settled}, {"review": REVIEW}, asked, BENCH)
    assert runs == [Ask(("ace", "newcomer"), tuple(REVIEW[8:]))]


def test_a_primary_that_answered_every_task_is_not_asked_again():
    suite = {"newcomer": {"review": (0.875, 8)}, "ace": {"review": (0.9375, 32)}}
    settled = evidence(suite, ace=verdicts(48, 2))
    asked = {"newcomer": QUICK, "ace": set(REVIEW)}
    runs = follow_up({"review": settled}, {"review": REVIEW}, asked, BENCH)
    assert runs == [Ask(("newcomer",), tuple(REVIEW[8:]))]


def test_a_primary_ranked_by_verdicts_alone_gets_the_newcomers_tasks_too():
    settled = evidence({"newcomer": {"review": (1.0, 8)}}, ace=verdicts(48, 2))
    runs = follow_up({"review": settled}, {"review": REVIEW}, {"newcomer": QUICK}, BENCH)
    assert runs == [Ask(("ace",), tuple(REVIEW)), Ask(("newcomer",), tuple(REVIEW[8:]))]


def test_a_newcomer_surely_behind_the_primarys_verdicts_is_asked_nothing_more():
    settled = evidence({"newcomer": {"review": (0.75, 8)}}, ace=verdicts(48, 2))
    assert contenders(settled, "review", BENCH) == []
    assert follow_up({"review": settled}, {"review": REVIEW}, {"newcomer": QUICK}, BENCH) == []


def test_contenders_that_answered_everything_end_the_follow_up():
    scored = cold(ace=(0.96875, 32), nearly=(0.9375, 32), poor=(0.25, 8))
    asked = {"ace": set(REVIEW), "nearly": set(REVIEW), "poor": QUICK}
    assert contenders(scored, "review", BENCH) == ["ace", "nearly"]
    assert follow_up({"review": scored}, {"review": REVIEW}, asked, BENCH) == []


def test_each_shape_is_followed_up_on_its_own_tasks():
    code = [f"c{i:02d}" for i in range(10)]
    on_review = cold(ace=(1.0, 8), nearly=(1.0, 8), poor=(0.0, 8))
    on_code = cold(ace=(1.0, 3), poor=(0.0, 3))
    shapes = {"review": on_review, "code": on_code}
    asked = {alias: QUICK | set(code[:3]) for alias in BENCH}
    runs = follow_up(shapes, {"review": REVIEW, "code": code}, asked, BENCH)
    assert runs == [Ask(("ace", "nearly"), tuple(REVIEW[8:]))]  # on code, ace is surely best


def test_a_benched_model_is_neither_a_contender_nor_the_primary():
    suite = {"newcomer": {"review": (1.0, 8)}, "ace": {"review": (1.0, 8)}}
    benched = replace(verdicts(48, 2), unwell="benched: 3 failures in a row")
    assert contenders(evidence(suite, ace=verdicts(48, 2)), "review", BENCH) == ["ace", "newcomer"]
    assert contenders(evidence(suite, ace=benched), "review", BENCH) == []
