"""The config: LiteLLM's model_list with a bench block, validated once, every problem named."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.settings import ConfigError, load_config, parse_config


def raw_config(**over):
    raw = {
        "model_list": [
            {
                "model_name": "kimi",
                "litellm_params": {
                    "model": "openai/kimi-k2",
                    "api_base": "https://api.example.com/v1",
                    "api_key": "os.environ/EXAMPLE_KEY",
                },
                "bench": {"role": "general"},
            },
            {
                "model_name": "inkling",
                "litellm_params": {"model": "vendor/Inkling:free"},
                "bench": {"connection": "hub", "role": "code", "context_window": 8000},
            },
        ],
        "connections": {"hub": {"rpm": 10, "preferred": True, "cool_together": True}},
        "collections": {"core": {"members": ["kimi", "inkling"], "shape": "review"}},
    }
    raw.update(over)
    return raw


def test_a_good_config_gives_defaults_for_what_it_leaves_out(tmp_path):
    config = parse_config(raw_config(), base=tmp_path, env={"EXAMPLE_KEY": "sk-secret"})
    kimi = config.catalog.model("kimi")
    assert kimi.connection == "api.example.com:443"
    assert kimi.family == "kimik2" and kimi.role == "general"
    inkling = config.catalog.model("inkling")
    assert inkling.family == "inkling" and inkling.preferred and inkling.context_window == 8000
    assert config.litellm_params["kimi"]["api_key"] == "sk-secret"
    assert config.secrets == ("sk-secret",)
    assert config.catalog.roles_for("review") == ("general", "code")
    assert config.catalog.limits.max_calls == 5
    assert config.store == f"sqlite:///{(tmp_path / 'data/records.db').resolve()}"
    assert config.connections["hub"].cool_together


def test_every_problem_is_named_at_once(tmp_path):
    raw = raw_config(
        collections={
            "core": {"members": ["kimi", "ghost"], "shape": "poetry"},
            "panel": {"members": ["kimi"]},
        },
        gateway={"max_calls": 50, "reserves": "two", "speed": 3},
    )
    raw["model_list"].append(dict(raw["model_list"][0]))
    raw["model_list"][1]["bench"]["connection"] = "nowhere"
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, base=tmp_path, env={})
    text = "\n".join(caught.value.problems)
    for expected in (
        "unknown alias 'ghost'",
        "unknown shape 'poetry'",
        "duplicate alias 'kimi'",
        "unknown connection 'nowhere'",
        "EXAMPLE_KEY is not set",
        "gateway.max_calls",
        "gateway.reserves",
        "gateway.speed",
        "'panel' is reserved",
    ):
        assert expected in text, expected


def test_the_shipped_config_is_valid():
    config = load_config(Path(__file__).parents[1] / "config" / "bench.yaml")
    assert {c.name for c in config.catalog.collections} == {"reviewers", "design"}
    assert len({m.connection for m in config.catalog.models}) == 3


def test_an_unreadable_or_invalid_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("model_list: [unclosed")
    with pytest.raises(ConfigError):
        load_config(bad)
