"""Pure panel selection, as tables of cases: no server, no clock, no I/O."""

from __future__ import annotations

import ast
from pathlib import Path
from types import MappingProxyType

import pytest

from routing import (
    Catalog,
    Collection,
    Evidence,
    Model,
    NothingToSeat,
    PanelLimits,
    PanelRequest,
    PromptTooLarge,
    Standing,
    UnknownAlias,
    UnknownCollection,
    UnknownShape,
    choose_panel,
    family_of,
)
from routing.evidence import MEMORY, recent_after, recent_from_totals, wilson

NOW = 1_000_000.0
DEFAULT_LIMITS = PanelLimits()


def model(alias, connection="a", role="general", **kw):
    return Model(alias=alias, served=f"openai/{alias}", connection=connection, role=role, **kw)


BENCH = (
    model("kimi", "moon"),
    model("glm", "moon"),
    model("coder", "hub", role="code"),
    model("deep", "hub"),
    model("llama", "box"),
    model("tiny", "box", role="light", context_window=1000),
    model("oddball", "box", ad_hoc=True),
)


def catalog(models=BENCH, limits=DEFAULT_LIMITS, **collections):
    colls = tuple(
        Collection(name, tuple(spec["members"]), shape=spec.get("shape"))
        for name, spec in (collections or {"core": {"members": ["kimi"]}}).items()
    )
    return Catalog(models=tuple(models), collections=colls, limits=limits)


def evidence(**standings):
    return Evidence(MappingProxyType(standings))


def seated(panel):
    return [(s.name, s.alias) for s in panel.seats]


def test_family_is_the_served_name_normalised():
    cases = [
        ("vendor/Inkling:free", "inkling"),
        ("inkling", "inkling"),
        ("openai/glm-5.2", "glm52"),
        ("glm-5.3", "glm53"),
        ("groq/llama_3.1-8b", "llama318b"),
    ]
    for served, family in cases:
        assert family_of(served) == family


@pytest.mark.parametrize(
    "shape, admitted, refused",
    [
        ("review", {"coder"}, {"tiny", "oddball"}),
        ("code", {"coder"}, {"tiny", "oddball"}),
        ("design", set(), {"coder", "tiny", "oddball"}),
        ("quick", {"tiny"}, {"coder", "oddball"}),
    ],
)
def test_the_shape_decides_which_roles_may_explore(shape, admitted, refused):
    cat = catalog(limits=PanelLimits(max_calls=10, max_explorers=2, reserves=5))
    aliases = set()
    for seed in range(40):  # over many fair tie-breaks every admitted model shows up
        panel = choose_panel(PanelRequest("core", shape, seed=seed), cat, evidence(), NOW)
        aliases |= {s.alias for s in panel.seats} | set(panel.reserves)
    assert admitted <= aliases
    assert not (refused & aliases)


def test_members_sit_in_order_and_explorers_are_the_stalest():
    ev = evidence(
        glm=Standing(last_seated=NOW - 10, seated=3),
        deep=Standing(last_seated=NOW - 500, seated=3),
        llama=Standing(last_seated=NOW - 100, seated=3),
    )
    cat = catalog(core={"members": ["kimi", "coder"]})
    panel = choose_panel(PanelRequest("core", "general"), cat, ev, NOW)
    assert seated(panel) == [
        ("member1", "kimi"),
        ("member2", "coder"),
        ("explorer1", "deep"),
        ("explorer2", "llama"),
    ]


def test_a_model_with_few_requests_left_explores_only_after_the_others():
    ev = evidence(
        glm=Standing(last_seated=NOW - 10, seated=3),
        deep=Standing(last_seated=NOW - 500, seated=3, scarce=True),  # stalest, but scarce
        llama=Standing(last_seated=NOW - 100, seated=3),
    )
    cat = catalog(core={"members": ["kimi", "coder"]})
    panel = choose_panel(PanelRequest("core", "general"), cat, ev, NOW)
    assert seated(panel)[2:] == [("explorer1", "llama"), ("explorer2", "glm")]
    # when nothing else can sit, a scarce model still does
    scarce = {alias: Standing(scarce=True) for alias in ("glm", "deep", "llama")}
    panel = choose_panel(PanelRequest("core", "general"), cat, evidence(**scarce), NOW)
    assert len(panel.seats) == 4


def test_a_model_no_listing_names_never_explores_but_sits_as_a_member_or_when_named():
    unlisted = {alias: Standing(unlisted=True) for alias in ("glm", "deep")}
    cat = catalog(core={"members": ["kimi", "coder"]}, mine={"members": ["glm"]})
    panel = choose_panel(PanelRequest("core", "general"), cat, evidence(**unlisted), NOW)
    assert seated(panel)[2:] == [("explorer1", "llama")]  # not glm nor deep, even with room
    panel = choose_panel(PanelRequest("mine", "general"), cat, evidence(**unlisted), NOW)
    assert seated(panel)[0] == ("member1", "glm")
    named = PanelRequest("core", "general", nominees=("deep",))
    assert ("explorer1", "deep") in seated(choose_panel(named, cat, evidence(**unlisted), NOW))


def test_a_never_seated_model_explores_before_any_seated_one():
    ev = evidence(deep=Standing(last_seated=NOW - 9999, seated=1), glm=Standing(NOW - 5000, 1))
    panel = choose_panel(PanelRequest("core", "general"), catalog(), ev, NOW)
    assert [s.alias for s in panel.seats[1:]] == ["llama", "deep"]


@pytest.mark.parametrize(
    "max_calls, max_explorers, members, explorers",
    [
        (5, 2, ["kimi"], 2),
        (2, 2, ["kimi"], 1),
        (3, 2, ["kimi", "glm", "coder"], 0),
        (5, 0, ["kimi"], 0),
        (10, 1, ["kimi"], 1),
    ],
)
def test_explorer_chairs_are_max_explorers_bounded_by_max_calls(
    max_calls, max_explorers, members, explorers
):
    limits = PanelLimits(max_calls=max_calls, max_explorers=max_explorers, reserves=0)
    panel = choose_panel(
        PanelRequest("core", "review"),
        catalog(limits=limits, core={"members": members}),
        evidence(),
        NOW,
    )
    assert sum(s.name.startswith("explorer") for s in panel.seats) == explorers


def test_an_explorer_never_shares_a_family_with_a_seated_model():
    models = BENCH + (Model("kimi-2", "other/Kimi:free", "far"),)
    cat = catalog(models=models, limits=PanelLimits(max_calls=10, max_explorers=2, reserves=5))
    for seed in range(30):
        panel = choose_panel(PanelRequest("core", "general", seed=seed), cat, evidence(), NOW)
        aliases = [s.alias for s in panel.seats] + list(panel.reserves)
        assert "kimi-2" not in aliases


def test_cooling_models_neither_explore_nor_wait_in_reserve():
    ev = evidence(glm=Standing(cooling_until=NOW + 30), deep=Standing(cooling_until=NOW + 1))
    for seed in range(20):
        panel = choose_panel(PanelRequest("core", "general", seed=seed), catalog(), ev, NOW)
        assert {"glm", "deep"}.isdisjoint({s.alias for s in panel.seats} | set(panel.reserves))
    # once the cooldown has passed they are back
    later = choose_panel(PanelRequest("core", "general"), catalog(), ev, NOW + 31)
    assert {"glm", "deep"} <= {s.alias for s in later.seats} | set(later.reserves)


def test_reserves_prefer_connections_no_seat_uses_then_evidence():
    ev = evidence(
        kimi=Standing(last_seated=NOW),
        deep=Standing(last_seated=NOW - 1, useful=MappingProxyType({"general": 4})),
    )
    cat = catalog(models=BENCH[:5], limits=PanelLimits(max_calls=2, max_explorers=1, reserves=3))
    panel = choose_panel(PanelRequest("core", "general"), cat, ev, NOW)
    used = {cat.model(s.alias).connection for s in panel.seats}
    first_reserve = cat.model(panel.reserves[0])
    assert first_reserve.connection not in used or len(used) == 3
    assert len(set(panel.reserves)) == len(panel.reserves)


def test_nominees_take_explorer_chairs_and_are_noted_when_unusual():
    ask = PanelRequest("core", "design", nominees=("coder", "oddball"))
    panel = choose_panel(ask, catalog(), evidence(), NOW)
    assert seated(panel)[1:] == [("explorer1", "coder"), ("explorer2", "oddball")]
    assert any("coder" in n and "design" in n for n in panel.notes)
    assert any("oddball" in n and "ad hoc" in n for n in panel.notes)


@pytest.mark.parametrize(
    "nominee, standing, tokens, why",
    [
        ("glm", Standing(cooling_until=NOW + 60), 0, "cooling"),
        ("tiny", Standing(), 5000, "context window"),
        ("kimi", Standing(), 0, "already seated"),
    ],
)
def test_a_nominee_that_cannot_sit_is_skipped_with_why(nominee, standing, tokens, why):
    ask = PanelRequest("core", "general", nominees=(nominee,), prompt_tokens=tokens)
    panel = choose_panel(ask, catalog(), evidence(**{nominee: standing}), NOW)
    skipped = [s for s in panel.skipped if s.alias == nominee]
    assert skipped and why in skipped[0].why
    assert nominee not in {s.alias for s in panel.seats if s.name.startswith("explorer")}


def test_a_member_too_small_for_the_prompt_is_skipped_and_a_reserve_sits_in():
    cat = catalog(core={"members": ["tiny", "kimi"]})
    panel = choose_panel(PanelRequest("core", "general", prompt_tokens=2000), cat, evidence(), NOW)
    assert [s.alias for s in panel.skipped] == ["tiny"]
    assert panel.skipped[0].seat == "member1"
    reserve = [s for s in panel.seats if s.replaces == "member1"]
    assert reserve and reserve[0].name == "reserve1"


@pytest.mark.parametrize(
    "ask, error",
    [
        (PanelRequest("nope", "general"), UnknownCollection),
        (PanelRequest("core", "poetry"), UnknownShape),
        (PanelRequest("core", "general", nominees=("ghost",)), UnknownAlias),
    ],
)
def test_bad_asks_are_refused(ask, error):
    with pytest.raises(error):
        choose_panel(ask, catalog(), evidence(), NOW)


def test_a_prompt_no_member_can_hold_is_refused():
    cat = catalog(core={"members": ["tiny"]})
    with pytest.raises(PromptTooLarge):
        choose_panel(PanelRequest("core", "general", prompt_tokens=5000), cat, evidence(), NOW)


def test_nothing_to_seat_when_everything_is_cooling():
    cool = Standing(cooling_until=NOW + 60)
    ev = evidence(**{m.alias: cool for m in BENCH})
    with pytest.raises(NothingToSeat):
        choose_panel(PanelRequest("panel", "general"), catalog(), ev, NOW)


def test_rotation_spreads_concurrent_panels_evenly():
    """Six panels seated back to back (each marking its seats) over a pool of six explorers
    seat twelve explorers, two per model."""
    pool = tuple(model(f"m{i}", f"c{i % 3}") for i in range(6))
    fixed = model("anchor", "z", ad_hoc=True)
    cat = catalog(models=pool + (fixed,), core={"members": ["anchor"]})
    standings: dict[str, Standing] = {}
    counts: dict[str, int] = {}
    tick = NOW
    for seed in range(6):
        wanted = PanelRequest("core", "general", seed=seed)
        panel = choose_panel(wanted, cat, evidence(**standings), NOW)
        for seat in panel.seats:
            if seat.name.startswith("explorer"):
                tick += 1e-6
                old = standings.get(seat.alias, Standing())
                standings[seat.alias] = Standing(last_seated=tick, seated=old.seated + 1)
                counts[seat.alias] = counts.get(seat.alias, 0) + 1
    assert counts == {f"m{i}": 2 for i in range(6)}


def verdicts(useful, judged, shape="review"):
    return Standing(
        useful=MappingProxyType({shape: useful}), judged=MappingProxyType({shape: judged})
    )


def test_router_primary_has_the_surest_record_and_second_is_a_close_contender():
    ev = evidence(glm=verdicts(10, 11), kimi=verdicts(2, 2), deep=verdicts(1, 10))
    panel = choose_panel(PanelRequest("panel", "review"), catalog(), ev, NOW)
    # kimi is the only contender that could still beat glm, so it is second despite sharing
    # glm's connection; deep (1 of 10) cannot.
    assert seated(panel)[:2] == [("primary", "glm"), ("second", "kimi")]
    assert [s.name for s in panel.seats] == ["primary", "second", "explorer1", "explorer2"]


def test_router_second_prefers_another_connection_among_contenders():
    ev = evidence(glm=verdicts(5, 5), kimi=verdicts(5, 5), deep=verdicts(19, 20))
    panel = choose_panel(PanelRequest("panel", "review"), catalog(), ev, NOW)
    assert seated(panel)[0] == ("primary", "deep")
    second = catalog().model(panel.seats[1].alias)
    assert second.alias in {"glm", "kimi"}  # both could beat deep; deep's connection is hub


def test_router_second_rotates_among_contenders():
    ev = {"deep": verdicts(19, 20), "glm": verdicts(5, 5), "kimi": verdicts(5, 5)}
    seconds = []
    tick = NOW
    for _ in range(4):
        panel = choose_panel(PanelRequest("panel", "review"), catalog(), evidence(**ev), NOW)
        second = panel.seats[1].alias
        seconds.append(second)
        tick += 1
        ev[second] = Standing(tick, 1, ev[second].useful, ev[second].judged)
    assert set(seconds) == {"glm", "kimi"}


def test_router_panel_without_evidence_starts_with_the_stalest():
    ev = evidence(**{m.alias: Standing(last_seated=NOW - i) for i, m in enumerate(BENCH)})
    panel = choose_panel(PanelRequest("panel", "general"), catalog(), ev, NOW)
    assert panel.seats[0].alias == "llama"  # the stalest general model that is not ad hoc


def test_router_panel_is_at_most_max_calls_in_priority_order():
    cat = catalog(limits=PanelLimits(max_calls=3, max_explorers=2, reserves=1))
    panel = choose_panel(PanelRequest("panel", "general"), cat, evidence(), NOW)
    assert [s.name for s in panel.seats] == ["primary", "second", "explorer1"]


def test_routing_imports_no_io_library():
    banned = {"starlette", "litellm", "httpx", "sqlite3", "uvicorn", "aiohttp", "gateway", "socket"}
    for path in Path(__file__).parents[2].joinpath("routing").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] not in banned, f"{path.name} imports {name}"


def recent(useful, judged, shape="review", totals=None):
    """A standing whose recent (decayed) figures differ from its all-time ones."""
    all_useful, all_judged = totals or (int(useful), int(judged))
    return Standing(
        useful=MappingProxyType({shape: all_useful}),
        judged=MappingProxyType({shape: all_judged}),
        recent=MappingProxyType({shape: (useful, judged)}),
    )


@pytest.mark.parametrize(
    "useful, judged",
    [(0, 0), (1, 1), (0, 1), (5, 5), (9, 10), (18, 20), (27, 30), (40, 80)],
)
def test_wilson_bounds_hold_the_ratio_and_narrow_with_evidence(useful, judged):
    low, high = wilson(useful, judged)
    assert 0.0 <= low <= high <= 1.0
    if judged:
        assert low <= useful / judged <= high
        wider_low, wider_high = wilson(useful / 2, judged / 2)
        assert wider_low <= low and high <= wider_high + 1e-9
    else:
        assert (low, high) == (0.0, 1.0)


def test_recent_weights_level_off_at_the_memory():
    figures = (0.0, 0.0)
    for _ in range(20 * MEMORY):
        figures = recent_after(figures, True)
    assert MEMORY - 0.01 < figures[1] < MEMORY and figures[0] == figures[1]
    assert recent_from_totals(90, 100) == pytest.approx((0.9 * MEMORY, MEMORY))
    assert recent_from_totals(3, 4) == (3, 4)
    assert recent_from_totals(0, 0) == (0, 0)


@pytest.mark.parametrize(
    "standings, primary",
    [
        # one lucky verdict does not make a primary
        ({"kimi": verdicts(1, 1), "deep": verdicts(18, 20)}, "deep"),
        # being asked more is not being better: 40 useful of 80 loses to 9 of 10
        ({"kimi": verdicts(40, 80), "deep": verdicts(9, 10)}, "deep"),
        # the recent record counts: 90 of 100 all told, but 2 of the last 12
        ({"kimi": recent(2, 12, totals=(90, 100)), "deep": recent(8, 9)}, "deep"),
        # and a long good record that is still good keeps the chair
        ({"kimi": recent(27, 30, totals=(90, 100)), "deep": recent(3, 3)}, "kimi"),
        # no useful verdict at all: not a primary by evidence
        ({"kimi": verdicts(0, 5), "deep": verdicts(1, 2)}, "deep"),
    ],
)
def test_router_primary_is_the_model_surest_to_be_useful(standings, primary):
    panel = choose_panel(PanelRequest("panel", "review"), catalog(), evidence(**standings), NOW)
    assert seated(panel)[0] == ("primary", primary)


def test_router_second_is_the_most_promising_judged_contender():
    # deep is primary; glm could still be better (its upper bound reaches deep's lower one),
    # llama cannot (4 of 20), coder was never judged: explorers are for the unjudged.
    ev = evidence(
        deep=verdicts(18, 20), glm=verdicts(2, 2), llama=verdicts(4, 20), coder=Standing()
    )
    panel = choose_panel(PanelRequest("panel", "review"), catalog(), ev, NOW)
    assert seated(panel)[:2] == [("primary", "deep"), ("second", "glm")]


def test_router_second_is_the_stalest_elsewhere_when_no_one_else_is_judged():
    seen = {"deep": NOW - 1, "kimi": NOW - 5, "glm": NOW - 2, "coder": NOW - 3, "llama": NOW - 9}
    ev = {alias: Standing(last_seated=at) for alias, at in seen.items()}
    ev["deep"] = Standing(
        NOW - 1, 1, MappingProxyType({"review": 3}), MappingProxyType({"review": 3})
    )
    panel = choose_panel(PanelRequest("panel", "review"), catalog(), evidence(**ev), NOW)
    assert seated(panel)[:2] == [("primary", "deep"), ("second", "llama")]


def test_reserves_are_ranked_by_how_sure_their_record_is():
    ev = evidence(
        kimi=Standing(last_seated=NOW),
        glm=verdicts(1, 1, shape="general"),
        deep=verdicts(18, 20, shape="general"),
        llama=verdicts(40, 80, shape="general"),
    )
    cat = catalog(models=BENCH[:5], limits=PanelLimits(max_calls=1, max_explorers=0, reserves=3))
    panel = choose_panel(PanelRequest("core", "general"), cat, ev, NOW)
    # by useful count llama (40) would lead; by a sure useful rate deep (18 of 20) does
    assert panel.reserves[:2] == ("deep", "llama")
