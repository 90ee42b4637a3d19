"""What a reload changes (gateway/config/changes.py): the models and collections one config has
that another lacks, and those whose facts differ, as `POST /bench/reload` answers them."""

from __future__ import annotations

import copy
from pathlib import Path

from gateway.config.changes import changes
from gateway.config.settings import parse_config
from tests.helpers.bench import bench_raw


def _config(raw):
    return parse_config(raw, base=Path("."))


def test_models_and_collections_added_removed_and_changed_are_named_in_the_new_order():
    before = bench_raw("http://127.0.0.1:9")
    after = copy.deepcopy(before)
    after["model_list"] = [m for m in after["model_list"] if m["model_name"] != "beta"]
    extra = copy.deepcopy(after["model_list"][0])
    extra["model_name"] = "omega"
    after["model_list"].insert(0, extra)
    after["model_list"][1]["bench"]["role"] = "code"  # alpha's facts
    after["model_list"][2]["litellm_params"]["model"] = "openai/sim-gamma-2"  # gamma's params
    after["collections"]["solo"]["members"] = ["gamma"]
    del after["collections"]["reviewers"]
    after["collections"]["new"] = {"members": ["omega"]}

    found = changes(_config(before), _config(after))
    assert found.as_json() == {
        "added": ["omega"],
        "removed": ["beta"],
        "changed": ["alpha", "gamma"],
        "collections": {"added": ["new"], "removed": ["reviewers"], "changed": ["solo"]},
    }
    assert found.summary() == (
        "models added: omega; models removed: beta; models changed: alpha, gamma; "
        "collections added: new; collections removed: reviewers; collections changed: solo"
    )


def test_the_same_config_changes_nothing():
    raw = bench_raw("http://127.0.0.1:9")
    found = changes(_config(raw), _config(copy.deepcopy(raw)))
    assert found.summary() == "no model or collection changed"
    assert found.as_json()["added"] == [] and found.as_json()["changed"] == []
