"""A model nobody has judged is ranked by its suite (contract §20): against the primary on equal
terms, its suite every answer counted, so a strong newcomer takes the chair after its quick set
with no verdict when its suite is surely better than the primary's suite and verdicts. Route
mode's prior gives way to verdicts one for one."""

from __future__ import annotations

import pytest

from routing.prior import standing_prior
from tests.routing.test_suite_prior import evidence, primary, verdicts


@pytest.mark.parametrize(
    "newcomer, incumbent, chair",
    [
        ((1.0, 8), (0.875, 8), "strong"),  # 8 of 8 over 7 of 8, no verdict on strong
        ((1.0, 8), (1.0, 8), "middling"),  # equal suites: the verdicts keep the chair
        ((1.0, 8), (0.9, 32), "strong"),  # 8 of 8 surer than 29 of 32
        ((1.0, 8), (1.0, 32), "middling"),  # 32 of 32 surer than 8 of 8
        ((0.875, 8), (0.875, 8), "middling"),
    ],
)
def test_an_unjudged_model_takes_the_chair_when_its_suite_is_surely_better(
    newcomer, incumbent, chair
):
    suite = {"strong": {"review": newcomer}, "middling": {"review": incumbent}}
    assert primary(evidence(suite, middling=verdicts(30, 2))) == chair


def test_an_incumbents_verdicts_above_what_the_suite_proves_keep_the_chair():
    suite = {"strong": {"review": (1.0, 8)}, "middling": {"review": (0.75, 8)}}
    assert primary(evidence(suite, middling=verdicts(12, 3))) == "strong"
    assert primary(evidence(suite, middling=verdicts(60, 0))) == "middling"


def test_once_judged_the_newcomer_is_ranked_by_its_verdicts_and_prior():
    suite = {"strong": {"review": (1.0, 8)}, "middling": {"review": (0.875, 8)}}
    assert primary(evidence(suite, middling=verdicts(18, 2))) == "strong"
    judged = evidence(suite, middling=verdicts(18, 2), strong=verdicts(0, 1))
    assert primary(judged) == "middling"


def test_an_incumbent_without_a_suite_score_is_ranked_by_its_verdicts_alone():
    suite = {"strong": {"review": (1.0, 8)}}
    assert primary(evidence(suite, middling=verdicts(30, 1))) == "middling"


@pytest.mark.parametrize(
    "score, judged, prior",
    [
        (None, 0, 0.0),
        ((0.8, 8), 0, 4.0),  # five pseudo-verdicts, 0.8 of them useful
        ((0.8, 8), 2, 2.4),  # two verdicts took two pseudo-verdicts' places
        ((0.8, 8), 5, 0.0),  # the verdicts have taken over
        ((1.0, 3), 1, 3.0),  # never more than the tasks answered
    ],
)
def test_route_modes_prior_gives_way_one_pseudo_verdict_per_verdict(score, judged, prior):
    assert standing_prior(score, 5.0, judged) == pytest.approx(prior)
