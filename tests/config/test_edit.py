"""Adding and removing a model in the config's text: the edit in ruamel.yaml's hand, every line
it did not change as the file had it (the command's own test, tests/cli/test_models_add.py,
runs it on a file written by hand; these are the layouts ruamel would otherwise rewrite)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gateway.config.edit import EditRefused, NewModel, added, removed
from gateway.config.keep import laid_back

ROOT = Path(__file__).parents[2]
SHIPPED = (ROOT / "config" / "bench.yaml").read_text()


def test_a_model_added_to_the_shipped_config_is_written_like_its_neighbours():
    new = NewModel("small", "openai/sim-small", "http://127.0.0.1:8199/v1", "SMALL_KEY", "freehub")
    after = added(SHIPPED, NewModel(**{**new.__dict__, "context_window": 4096, "to": "design"}))
    before_lines, after_lines = SHIPPED.splitlines(), after.splitlines()
    gained = [line for line in after_lines if line not in before_lines]
    assert gained == [
        "  - model_name: small",
        "    litellm_params: {model: openai/sim-small, api_base: http://127.0.0.1:8199/v1, "
        "api_key: os.environ/SMALL_KEY}",
        "    bench: {connection: freehub, context_window: 4096}",
        "    members: [glm, small]",
    ]
    assert [line for line in before_lines if line not in after_lines] == ["    members: [glm]"]
    assert yaml.safe_load(after)["model_list"][-1]["model_name"] == "small"


LAYOUTS = {
    "a document start and odd spacing": (
        "---\n"
        "model_list:\n"
        "- {model_name: a, litellm_params: { model: openai/a }}   # no indent, flow\n"
        "collections:\n"
        "  c: { members: [ a ] }\n"
        "connections: {}\n",
        "---\n"
        "model_list:\n"
        "- {model_name: a, litellm_params: { model: openai/a }}   # no indent, flow\n"
        "- model_name: b\n"
        "  litellm_params: {model: openai/b}\n"
        "collections:\n"
        "  c: { members: [ a ] }\n"
        "connections: {}\n",
    ),
    "a trailing comment that closes the list": (
        "model_list:\n"
        "    -   model_name: a\n"
        "        litellm_params:\n"
        "            model: openai/a\n"
        "    # end of the models\n"
        "\n"
        "collections: {c: {members: [a]}}\n",
        "model_list:\n"
        "    -   model_name: a\n"
        "        litellm_params:\n"
        "            model: openai/a\n"
        "    -   model_name: b\n"
        "        litellm_params:\n"
        "            model: openai/b\n"
        "    # end of the models\n"
        "\n"
        "collections: {c: {members: [a]}}\n",
    ),
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_model_added_changes_only_its_own_lines(layout):
    written, expected = LAYOUTS[layout]
    assert added(written, NewModel("b", "openai/b")) == expected


def test_removing_the_last_model_hands_its_closing_comment_on():
    written = (
        "model_list:\n"
        "  - model_name: a\n"
        "    litellm_params: {model: openai/a}\n"
        "  - model_name: b\n"
        "    litellm_params:\n"
        "      model: openai/b   # b's own\n"
        "  # end of the models\n"
        "\n"
        "collections: {c: {members: [a]}}\n"
    )
    after, _ = removed(written, "b")
    assert after == (
        "model_list:\n"
        "  - model_name: a\n"
        "    litellm_params: {model: openai/a}\n"
        "  # end of the models\n"
        "\n"
        "collections: {c: {members: [a]}}\n"
    )


def test_what_cannot_be_edited_is_refused_by_name():
    with pytest.raises(EditRefused, match="already in model_list"):
        added(SHIPPED, NewModel("kimi", "openai/x"))
    with pytest.raises(EditRefused, match=r"no collection named 'poets' \(the config has: "):
        added(SHIPPED, NewModel("x", "openai/x", to="poets"))
    with pytest.raises(EditRefused, match="no model named 'ghost'"):
        removed(SHIPPED, "ghost")
    with pytest.raises(EditRefused, match="only member of collection 'design'"):
        removed(SHIPPED, "glm")
    with pytest.raises(EditRefused, match="not valid YAML"):
        added("model_list: [\n", NewModel("x", "openai/x"))


def test_laying_back_keeps_every_line_the_edit_did_not_touch():
    written = "a:   1   # one\nb: [ x ,y ]\nc: 3\n"
    base = "a: 1   # one\nb: [x, y]\nc: 3\n"  # ruamel's hand
    edited = "a: 1   # one\nb: [x, y]\nc: 4\n"
    assert laid_back(written, base, edited) == "a:   1   # one\nb: [ x ,y ]\nc: 4\n"


def test_a_member_added_to_a_list_indented_unlike_the_others_keeps_the_list_one_list():
    written = (
        "model_list:\n"
        "  - model_name: a   # a's\n"
        "    litellm_params: {model: openai/a}\n"
        "collections:\n"
        "  c:\n"
        "    members:\n"
        "    - a\n"
        "    shape: review   # kept\n"
    )
    after = added(written, NewModel("b", "openai/b", to="c"))
    assert yaml.safe_load(after)["collections"]["c"] == {"members": ["a", "b"], "shape": "review"}
    assert after == (
        "model_list:\n"
        "  - model_name: a   # a's\n"
        "    litellm_params: {model: openai/a}\n"
        "  - model_name: b\n"
        "    litellm_params: {model: openai/b}\n"
        "collections:\n"
        "  c:\n"
        "    members:\n"
        "      - a\n"  # the list's lines in one hand: the changed lines
        "      - b\n"
        "    shape: review   # kept\n"
    )


def test_a_name_the_gateway_would_read_as_something_else_is_quoted():
    after = added(SHIPPED, NewModel("on", "openai/1e3", connection="null", to="design"))
    read = yaml.safe_load(after)
    assert read["model_list"][-1]["model_name"] == "on"
    assert read["model_list"][-1]["litellm_params"]["model"] == "openai/1e3"
    assert read["model_list"][-1]["bench"]["connection"] == "null"
    assert read["collections"]["design"]["members"] == ["glm", "on"]


def test_a_members_list_other_collections_may_share_is_not_edited_behind_them():
    written = (
        "model_list:\n"
        "  - {model_name: a, litellm_params: {model: openai/a}}\n"
        "collections:\n"
        "  c: {members: &core [a]}\n"
        "  d: {members: *core}\n"
    )
    with pytest.raises(EditRefused, match=r"anchored list \(&core\).*add the model to it by hand"):
        added(written, NewModel("b", "openai/b", to="c"))
