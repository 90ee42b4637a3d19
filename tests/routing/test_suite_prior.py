"""The suite as the router's prior, as tables of cases: a model's suite accuracy on the shape
counts as `prior_weight` pseudo-verdicts in the interval it is ranked by, so an unjudged model is
ranked by its suite and verdicts take over as they accrue. No suite scores: today's choice."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from routing import (
    ROUTER_PANEL,
    Catalog,
    Collection,
    Evidence,
    Model,
    PanelLimits,
    PanelRequest,
    Standing,
    choose_panel,
)
from routing.evidence import recent_after, wilson
from routing.prior import pseudo_verdicts, with_prior

NOW = 1_000_000.0


def model(alias: str, connection: str) -> Model:
    return Model(alias=alias, served=f"openai/{alias}", connection=connection, role="general")


BENCH = (model("strong", "one"), model("weak", "two"), model("middling", "three"))
CATALOG = Catalog(
    models=BENCH,
    collections=(Collection("core", ("middling",)),),
    limits=PanelLimits(max_calls=3, max_explorers=1),
)


def verdicts(useful: int, useless: int) -> Standing:
    """A standing after *useful* good verdicts, then *useless* bad ones, on review."""
    recent = (0.0, 0.0)
    for good in [True] * useful + [False] * useless:
        recent = recent_after(recent, good)
    judged = useful + useless
    return Standing(
        last_seated=NOW - 10,
        seated=judged,
        useful=MappingProxyType({"review": useful}),
        judged=MappingProxyType({"review": judged}),
        recent=MappingProxyType({"review": recent}),
    )


def evidence(suite=None, **standings: Standing) -> Evidence:
    if suite is None:
        return Evidence(MappingProxyType(standings))
    scores = {alias: MappingProxyType(shapes) for alias, shapes in suite.items()}
    return Evidence(MappingProxyType(standings), MappingProxyType(scores))


def primary(found: Evidence, shape: str = "review") -> str:
    panel = choose_panel(PanelRequest(ROUTER_PANEL, shape), CATALOG, found, NOW)
    return next(s.alias for s in panel.seats if s.name == "primary")


@pytest.mark.parametrize(
    "score, weight, pseudo",
    [
        (None, 5, (0.0, 0.0)),  # never scored: no prior
        ((0.8, 8), 5, (4.0, 5.0)),  # accuracy * weight useful of weight
        ((1.0, 2), 5, (2.0, 2.0)),  # never more pseudo-verdicts than tasks answered
        ((0.5, 0), 5, (0.0, 0.0)),  # nothing answered: nothing counted
        ((0.6, 40), 10, (6.0, 10.0)),  # the weight caps a long suite run
        ((0.9, 8), 0, (0.0, 0.0)),  # weight 0: the suite is not read
    ],
)
def test_a_suite_score_counts_as_weighted_pseudo_verdicts(score, weight, pseudo):
    assert pseudo_verdicts(score, weight) == pytest.approx(pseudo)
    assert with_prior((3.0, 4.0), score, weight) == pytest.approx(
        (3.0 + pseudo[0], 4.0 + pseudo[1])
    )


@pytest.mark.parametrize(
    "standings",
    [
        {},
        {"strong": verdicts(3, 1)},
        {"strong": verdicts(1, 4), "weak": verdicts(6, 0), "middling": verdicts(2, 2)},
    ],
)
def test_without_suite_scores_the_interval_and_the_panel_are_todays(standings):
    alone = evidence(**standings)
    scored_elsewhere = evidence({"strong": {"design": (1.0, 8)}}, **standings)
    for found in (alone, scored_elsewhere):
        for m in BENCH:
            assert found.bounds_on(m.alias, "review") == found.of(m.alias).bounds_on("review")
    ask = PanelRequest(ROUTER_PANEL, "review", seed=7)
    today = choose_panel(ask, CATALOG, alone, NOW)
    assert choose_panel(ask, CATALOG, scored_elsewhere, NOW) == today


def test_an_unjudged_model_strong_on_the_suite_is_primary_over_a_weak_one():
    # the weak model is the stalest, which is who today's router would seat with no verdicts
    seen = {"strong": Standing(last_seated=NOW - 5, seated=3)}
    assert primary(evidence(**seen)) == "weak"
    suite = {"strong": {"review": (0.9, 8)}, "weak": {"review": (0.3, 8)}}
    assert primary(evidence(suite, **seen)) == "strong"
    flipped = {"strong": {"review": (0.3, 8)}, "weak": {"review": (0.9, 8)}}
    assert primary(evidence(flipped, **seen)) == "weak"


@pytest.mark.parametrize(
    "bad, chair",
    [
        (0, "strong"),  # the suite alone ranks it first
        (2, "strong"),  # a couple of bad verdicts do not outweigh a perfect suite
        (15, "middling"),  # fifteen do: verdicts take over
    ],
)
def test_bad_verdicts_overturn_a_good_suite_prior_within_fifteen(bad, chair):
    suite = {"strong": {"review": (1.0, 8)}, "middling": {"review": (0.6, 8)}}
    assert primary(evidence(suite, strong=verdicts(0, bad))) == chair


def test_a_perfect_suite_does_not_unseat_a_model_with_a_long_useful_record():
    suite = {"strong": {"review": (1.0, 8)}, "middling": {"review": (0.8, 8)}}
    assert primary(evidence(suite, middling=verdicts(40, 1))) == "middling"
    assert primary(evidence(suite, middling=verdicts(3, 1))) == "strong"


def test_the_suite_prior_reads_the_asked_shape_only():
    suite = {"strong": {"design": (0.95, 8)}, "weak": {"review": (0.7, 8)}}
    assert primary(evidence(suite), "review") == "weak"
    assert primary(evidence(suite), "design") == "strong"


def test_the_bound_narrows_as_verdicts_accrue_beside_the_prior():
    suite = {"strong": {"review": (0.8, 8)}}
    widths = []
    for judged in (0, 5, 20, 60):
        found = evidence(suite, strong=verdicts(judged * 4 // 5, judged - judged * 4 // 5))
        low, high = found.bounds_on("strong", "review")
        widths.append(high - low)
    assert widths == sorted(widths, reverse=True)
    assert evidence(suite).bounds_on("strong", "review") == wilson(4.0, 5.0)


def test_a_suite_scored_model_is_a_contender_for_the_second_opinion():
    suite = {"strong": {"review": (0.9, 8)}, "middling": {"review": (0.85, 8)}}
    # weak is the stalest; with no contender it would take the second chair
    panel = choose_panel(PanelRequest(ROUTER_PANEL, "review"), CATALOG, evidence(suite), NOW)
    assert [(s.name, s.alias) for s in panel.seats][:2] == [
        ("primary", "strong"),
        ("second", "middling"),
    ]


def test_explorer_rotation_is_unchanged_by_suite_scores():
    stale = {"weak": Standing(last_seated=NOW - 500, seated=1)}
    suite = {m.alias: {"review": (0.2 + 0.3 * i, 8)} for i, m in enumerate(BENCH)}
    ask = PanelRequest("core", "review", seed=3)
    without = choose_panel(ask, CATALOG, evidence(**stale), NOW)
    scored = choose_panel(ask, CATALOG, evidence(suite, **stale), NOW)
    explorers = [(s.name, s.alias) for s in without.seats if s.name.startswith("explorer")]
    assert explorers and explorers == [
        (s.name, s.alias) for s in scored.seats if s.name.startswith("explorer")
    ]
