"""Panels for requests that carry images, as tables of cases: only models that can see sit."""

from __future__ import annotations

from types import MappingProxyType

import pytest

from routing import (
    IMAGE_PLACEHOLDER,
    Catalog,
    Collection,
    Evidence,
    Model,
    NothingToSeat,
    PanelRequest,
    choose_panel,
    content_text,
    conversation_text,
    has_images,
)

NOW = 1_000_000.0
IMAGE = {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}


def model(alias, connection="a", role="general", **kw):
    return Model(alias=alias, served=f"openai/{alias}", connection=connection, role=role, **kw)


BENCH = (
    model("kimi", "moon"),
    model("glm", "moon"),
    model("eye", "hub", role="vision"),
    model("seer", "box", vision=True),  # a general model that also reads images
    model("lens", "box", role="vision", ad_hoc=True),
    model("coder", "hub", role="code"),
)


def catalog(models=BENCH, shapes=None, **collections):
    colls = tuple(
        Collection(name, tuple(spec["members"]), shape=spec.get("shape"))
        for name, spec in (collections or {"core": {"members": ["kimi", "eye"]}}).items()
    )
    extra = {} if shapes is None else {"shapes": tuple(shapes.items())}
    return Catalog(models=tuple(models), collections=colls, **extra)


def seeing(panel):
    return {s.alias for s in panel.seats}


EVIDENCE = Evidence(MappingProxyType({}))


@pytest.mark.parametrize(
    "fact, sees",
    [
        ({"role": "vision"}, True),
        ({"role": "general", "vision": True}, True),
        ({"role": "general"}, False),
        ({"role": "light"}, False),
        ({"role": "image"}, False),
    ],
)
def test_a_model_sees_by_its_role_or_its_vision_fact(fact, sees):
    assert model("m", **fact).sees is sees


@pytest.mark.parametrize(
    "shape, shape_by, expected_shape, expected_by",
    [
        ("general", "default", "vision", "images"),
        ("review", "collection", "vision", "images"),
        ("code", "header", "vision", "images"),
        ("vision", "header", "vision", "header"),
        ("eyes", "header", "eyes", "header"),  # a custom shape that admits vision models
    ],
)
def test_images_make_the_shape_vision_unless_the_chosen_shape_admits_vision(
    shape, shape_by, expected_shape, expected_by
):
    cat = catalog(shapes={**dict(catalog().shapes), "eyes": ("code", "vision")})
    got_shape, got_by, note = cat.shape_for_images(shape, shape_by)
    assert (got_shape, got_by) == (expected_shape, expected_by)
    assert "images" in note and shape in note


def test_a_member_that_cannot_see_is_skipped_and_a_seeing_reserve_sits_in():
    panel = choose_panel(PanelRequest("core", "vision", images=True), catalog(), EVIDENCE, NOW)
    assert [(s.alias, s.seat) for s in panel.skipped] == [("kimi", "member1")]
    assert "cannot see" in panel.skipped[0].why
    assert all(catalog().model(a).sees for a in seeing(panel))
    assert any(s.replaces == "member1" for s in panel.seats)


def test_without_images_the_same_members_sit_as_before():
    panel = choose_panel(PanelRequest("core", "vision"), catalog(), EVIDENCE, NOW)
    assert {"kimi", "eye"} <= seeing(panel)
    assert panel.skipped == ()


@pytest.mark.parametrize("collection", ["core", "panel"])
def test_explorers_reserves_and_router_seats_all_see(collection):
    panel = choose_panel(PanelRequest(collection, "vision", images=True), catalog(), EVIDENCE, NOW)
    cat = catalog()
    assert seeing(panel) and all(cat.model(a).sees for a in seeing(panel))
    assert all(cat.model(a).sees for a in panel.reserves)


@pytest.mark.parametrize(
    "nominee, seated",
    [("glm", False), ("lens", True), ("seer", True)],
)
def test_a_nominee_is_seated_only_if_it_can_see(nominee, seated):
    ask = PanelRequest("core", "vision", nominees=(nominee,), images=True)
    panel = choose_panel(ask, catalog(), EVIDENCE, NOW)
    assert (nominee in seeing(panel)) is seated
    if not seated:
        assert any(s.alias == nominee and "cannot see" in s.why for s in panel.skipped)


def test_no_model_that_can_see_is_refused_with_a_message_about_images():
    blind = tuple(m for m in BENCH if not m.sees)
    cat = catalog(models=blind, core={"members": ["kimi"]})
    with pytest.raises(NothingToSeat, match="images"):
        choose_panel(PanelRequest("core", "vision", images=True), cat, EVIDENCE, NOW)


@pytest.mark.parametrize(
    "content, text, images",
    [
        ("plain", "plain", False),
        ([{"type": "text", "text": "look"}, IMAGE], f"look\n{IMAGE_PLACEHOLDER}", True),
        ([IMAGE, IMAGE], f"{IMAGE_PLACEHOLDER}\n{IMAGE_PLACEHOLDER}", True),
        ([{"type": "input_audio", "input_audio": {}}], "", False),
        (None, "", False),
    ],
)
def test_an_image_reads_as_a_placeholder_never_its_bytes(content, text, images):
    messages = [{"role": "user", "content": content}]
    assert content_text(content) == text
    assert has_images(messages) is images
    assert "base64" not in conversation_text(messages)
