"""Route mode's member order, a pure function: tables of cases."""

from __future__ import annotations

import pytest

from routing.route_order import MemberFigures, route_order

M = ("a", "b", "c")


@pytest.mark.parametrize(
    ("figures", "sticky", "explore", "expected"),
    [
        ({}, None, False, ["a", "b", "c"]),  # no evidence: the collection's order
        ({"c": MemberFigures(useful=3), "b": MemberFigures(useful=1)}, None, False,
         ["c", "b", "a"]),
        ({"b": MemberFigures(useful=2), "c": MemberFigures(useful=2)}, None, False,
         ["b", "c", "a"]),  # ties keep the collection's order
        ({"a": MemberFigures(useful=5, cooling=True)}, None, False, ["b", "c", "a"]),
        ({}, "c", False, ["c", "a", "b"]),  # the conversation's member first
        ({"c": MemberFigures(cooling=True)}, "c", False, ["a", "b", "c"]),  # unless cooling
        (
            {"a": MemberFigures(last_seated=5), "b": MemberFigures(last_seated=1),
             "c": MemberFigures(last_seated=3)},
            None, True, ["b", "a", "c"],
        ),  # exploring: the stalest first
        ({"a": MemberFigures(last_seated=5), "c": MemberFigures(last_seated=3)}, None, True,
         ["b", "a", "c"]),  # never seated is stalest of all
        ({"b": MemberFigures(cooling=True)}, None, True, ["a", "c", "b"]),  # stalest *fresh*
        ({}, "b", True, ["b", "a", "c"]),  # a conversation with a member does not explore
    ],
)  # fmt: skip
def test_members_are_ordered(figures, sticky, explore, expected):
    assert route_order(M, figures, sticky=sticky, explore=explore) == expected


def test_every_member_cooling_keeps_them_all_by_verdicts():
    figures = {m: MemberFigures(useful=i, cooling=True) for i, m in enumerate(M)}
    assert route_order(M, figures, explore=True) == ["c", "b", "a"]


@pytest.mark.parametrize(
    ("figures", "expected"),
    [
        ({"c": MemberFigures(prior=4.5), "b": MemberFigures(prior=1.5)}, ["c", "b", "a"]),
        ({"a": MemberFigures(useful=6), "c": MemberFigures(prior=5.0)}, ["a", "c", "b"]),
        ({"a": MemberFigures(useful=1, prior=1.0), "b": MemberFigures(prior=4.0)},
         ["b", "a", "c"]),
    ],
)  # fmt: skip
def test_a_suite_prior_counts_beside_useful_verdicts_in_the_order(figures, expected):
    assert route_order(M, figures) == expected
