"""The config: LiteLLM's model_list with a bench block, validated once, every problem named."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.cli.main import check_config
from gateway.config.settings import ConfigError, load_config, parse_config
from gateway.config.words import where


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
                "litellm_params": {"model": "openrouter/vendor/inkling:free"},
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
    raw["model_list"][0]["litellm_params"]["api_base"] = "os.environ/EXAMPLE_BASE"
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, base=tmp_path, env={})
    text = "\n".join(caught.value.problems)
    for expected in (
        "unknown alias 'ghost'",
        "unknown shape 'poetry'",
        "duplicate alias 'kimi'",
        "unknown connection 'nowhere'",
        "EXAMPLE_BASE is not set",  # (an unset key's variable benches its model instead)
        "gateway.max_calls",
        "gateway.reserves",
        "gateway.speed",
        "'panel' is reserved",
    ):
        assert expected in text, expected


def test_the_shipped_config_is_valid():
    config = load_config(Path(__file__).parents[2] / "config" / "bench.yaml")
    assert {c.name for c in config.catalog.collections} == {"reviewers", "design"}
    assert len({m.connection for m in config.catalog.models}) == 3


def test_an_unreadable_or_invalid_file_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError):
        load_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("model_list: [unclosed")
    with pytest.raises(ConfigError):
        load_config(bad)


def test_a_yaml_error_names_the_file_and_where_in_it_on_one_line(tmp_path):
    bad = tmp_path / "bench.yaml"
    bad.write_text("model_list: [unclosed\n")
    with pytest.raises(ConfigError) as caught:
        load_config(bad)
    assert caught.value.problems == [
        f"config {bad} is not valid YAML: line 2, column 1: expected ',' or ']', but got "
        "'<stream end>' (while parsing a flow sequence at line 1, column 13)"
    ]


# -- one mistake, one problem -------------------------------------------------------------------


def shipped_raw() -> dict:
    return yaml.safe_load((Path(__file__).parents[2] / "config" / "bench.yaml").read_text())


ONE_MISTAKE = {
    # a connection whose rpm is malformed is still a connection its models are on
    "a connection's rpm": (("connections", "moonbase", "rpm"), "lots"),
    "a connection not a mapping": (("connections", "moonbase"), 5),
    "a model's rpm": (("model_list", 0, "bench", "rpm"), "lots"),
    "a model's role": (("model_list", 0, "bench", "role"), "coder"),
    "a bench typo": (("model_list", 0, "bench", "conection"), "moonbase"),
    "no model": (("model_list", 0, "litellm_params"), {"api_key": "sim"}),
    # a shape whose roles are malformed is still a shape its collections may name
    "a shape's role": (("shapes", "review"), ["code", "poetry"]),
    "members as text": (("collections", "reviewers", "members"), "kimi"),
    "a merger not text": (("collections", "reviewers", "merger"), 5),
    "a gateway setting": (("gateway", "max_calls"), "lots"),
    "workers": (("gateway", "workers"), "lots"),
    "the store": (("store",), 5),
}


@pytest.mark.parametrize("case", ONE_MISTAKE)
def test_one_mistake_is_one_problem_named_where_it_is(case):
    path, value = ONE_MISTAKE[case]
    problems = problems_of(at(shipped_raw(), path, value), env={})
    assert len(problems) == 1, problems
    assert problems[0].startswith(where(path[: 3 if path[0] == "model_list" else 2])), problems


def test_a_malformed_connection_is_named_once_not_again_by_each_model_on_it():
    raw = shipped_raw()
    for entry in raw["model_list"]:
        entry["bench"]["connection"] = "moonbase"  # all six on it
    raw["connections"]["moonbase"]["rpm"] = "lots"
    assert problems_of(raw, env={}) == [
        "connections.moonbase.rpm: expected a whole number, got 'lots'"
    ]
    raw["model_list"][0]["bench"]["connection"] = "moonbsae"  # a second mistake: a second line
    assert problems_of(raw, env={})[1:] == [
        "model_list[0].bench.connection: unknown connection 'moonbsae'; did you mean "
        "'moonbase'? (connections: freehub, localbox, moonbase)"
    ]


# -- a provider litellm does not know --------------------------------------------------------


def test_an_unknown_provider_is_a_config_problem_naming_its_path_and_the_closest(tmp_path):
    raw = shipped_raw()
    raw["model_list"][0]["litellm_params"]["model"] = "notaprovider/kimi-k2"
    raw["model_list"][1]["litellm_params"]["model"] = "opena/glm-5.2"
    raw["model_list"][2]["litellm_params"]["model"] = "qwen3-coder"
    raw["model_list"][3]["litellm_params"]["custom_llm_provider"] = "groqq"
    code, out, err = run_check_config(raw, tmp_path)
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert lines[0] == "bench-gateway: the config has 4 problem(s):"
    assert lines[1].startswith(
        "  - model kimi: litellm_params.model: provider 'notaprovider' is not one litellm "
        "knows (the closest: "
    )
    written = (tmp_path / "bench.yaml").read_text().splitlines()
    line = next(n for n, text in enumerate(written, 1) if "model: opena/glm-5.2" in text)
    assert lines[2] == (
        "  - model glm: litellm_params.model: provider 'opena' is not one litellm knows; "
        f"did you mean 'openai' or 'opensearch' or 'openai_like'? (line {line})"
    )
    assert lines[3].startswith(
        "  - model qwen-coder: litellm_params.model: litellm cannot tell the provider of "
        "'qwen3-coder': write it provider/model (openai/qwen3-coder for an OpenAI-compatible"
    )
    assert "model deepseek: litellm_params.model: custom_llm_provider 'groqq'" in lines[4]
    assert "did you mean 'groq'" in lines[4]


@pytest.mark.parametrize(
    "model",
    ["groq/llama-3.3-70b-versatile", "openrouter/moonshotai/kimi-k2:free", "nvidia_nim/x/y",
     "gpt-4o", "mistral/mistral-small-latest"],
)  # fmt: skip
def test_a_provider_litellm_knows_passes(tmp_path, model):
    raw = shipped_raw()
    raw["model_list"][0]["litellm_params"] = {"model": model, "api_key": "k"}
    code, _, err = run_check_config(raw, tmp_path)
    assert code == 0, err


# -- every wrongly shaped value, named by its path ----------------------------------------------


def problems_of(raw, env=None) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        parse_config(raw, base=Path("."), env={"EXAMPLE_KEY": "k"} if env is None else env)
    return caught.value.problems


def at(raw, path, value):
    """*raw* with *value* put at *path* (keys and list indexes), creating mappings on the way."""
    node = raw
    for part in path[:-1]:
        node = node.setdefault(part, {}) if isinstance(node, dict) else node[part]
    node[path[-1]] = value
    return raw


WRONG = [
    # (path, value, the path as named, words in the message)
    (("connections", "x"), 5, "connections.x", "expected a mapping"),
    (
        ("collections", "core"),
        ["kimi"],
        "collections.core",
        "expected a mapping with members, got a list",
    ),
    (("gateway",), "fast", "gateway", "expected a mapping of gateway settings, got 'fast'"),
    (("store",), 5, "store", "expected sqlite:///PATH or postgresql://"),
    (("store",), "mysql://db", "store", "got 'mysql://db'"),
    (("store",), "sqlite:///", "store", "expected sqlite:///PATH"),
    (("state",), "memcached://h", "state", "expected redis://"),
    (("state",), ["redis://h"], "state", "got a list"),
    (("gatway",), {"max_calls": 3}, "gatway", "did you mean 'gateway'?"),
    (("gateway", "max_call"), 3, "gateway.max_call", "did you mean 'max_calls'?"),
    (("gateway", "max_calls"), 50, "gateway.max_calls", "must be at most 10, got 50"),
    (("gateway", "max_calls"), "5", "gateway.max_calls", "expected a whole number, got '5'"),
    (("gateway", "max_calls"), True, "gateway.max_calls", "expected a whole number, got true"),
    (("gateway", "max_calls"), 2.5, "gateway.max_calls", "expected a whole number, got 2.5"),
    (("gateway", "reserves"), -1, "gateway.reserves", "must be at least 0"),
    (("gateway", "seat_timeout_s"), "slow", "gateway.seat_timeout_s", "expected a number"),
    (("gateway", "seat_timeout_s"), float("inf"), "gateway.seat_timeout_s", "finite"),
    (("gateway", "require_keys"), "yes", "gateway.require_keys", "expected true or false"),
    (("gateway", "require_keys"), 1, "gateway.require_keys", "expected true or false, got 1"),
    (("gateway", "blind_judging"), "on", "gateway.blind_judging", "expected true or false"),
    (
        ("gateway", "stream_seats"),
        "sometimes",
        "gateway.stream_seats",
        "one of auto, always, never",
    ),
    (
        ("gateway", "upstream_reader"),
        "sdk",
        "gateway.upstream_reader",
        "one of auto, litellm, direct, got 'sdk'",
    ),
    (
        ("model_list", 0, "upstream_reader"),
        True,
        "model_list[0].upstream_reader",
        "one of auto, litellm, direct",
    ),
    (("gateway", "workers"), 0, "gateway.workers", "at least 1, or auto, got 0"),
    (("gateway", "workers"), "many", "gateway.workers", "or auto, got 'many'"),
    (("gateway", "workers"), 2.0, "gateway.workers", "got 2.0"),
    (("gateway", "allowed_hosts"), "example.com", "gateway.allowed_hosts", "expected a list"),
    (("gateway", "allowed_hosts"), ["exa mple.com"], "gateway.allowed_hosts[0]", "host name"),
    (("gateway", "allowed_hosts"), ["a.com:99999"], "gateway.allowed_hosts[0]", "host name"),
    (("gateway", "allowed_hosts"), ["http://a.com"], "gateway.allowed_hosts[0]", "host name"),
    (("gateway", "allowed_origins"), ["localhost:3000"], "gateway.allowed_origins[0]", "origin"),
    (("gateway", "allowed_origins"), ["http://a.com/app"], "gateway.allowed_origins[0]", "no path"),
    (("gateway", "trusted_proxies"), ["nginx"], "gateway.trusted_proxies[0]", "IP address"),
    (("gateway", "public_url"), "gateway.example.com", "gateway.public_url", "http:// or https://"),
    (("gateway", "public_url"), 8123, "gateway.public_url", "expected text"),
    (("gateway", "max_answer_bytes"), 0, "gateway.max_answer_bytes", "at least 1"),
    (("gateway", "max_panels_in_flight"), 0, "gateway.max_panels_in_flight", "at least 1"),
    (("gateway", "max_seats_in_flight"), "lots", "gateway.max_seats_in_flight", "whole number"),
    (("gateway", "max_messages"), 0, "gateway.max_messages", "at least 1"),
    (("gateway", "route_explore"), 1.5, "gateway.route_explore", "at most 1, got 1.5"),
    (("gateway", "first_token_s"), 0, "gateway.first_token_s", "more than 0"),
    (("gateway", "stall_s"), 0, "gateway.stall_s", "more than 0"),
    (("gateway", "route_stream_max_s"), -1, "gateway.route_stream_max_s", "more than 0"),
    (("gateway", "route_tries"), 11, "gateway.route_tries", "at most 10"),
    (("gateway", "route_wait_s"), -1, "gateway.route_wait_s", "at least 0"),
    (("gateway", "route_wait_s"), 61, "gateway.route_wait_s", "at most 60"),
    (("gateway", "quota_day_tz"), "Mars/Olympus", "gateway.quota_day_tz", "time zone"),
    (("gateway", "quota_day_tz"), "../../etc/passwd", "gateway.quota_day_tz", "time zone"),
    (("gateway", "pace_wait_s"), -0.5, "gateway.pace_wait_s", "at least 0"),
    (("gateway", "spill_dir"), "", "gateway.spill_dir", "at least 1 character"),
    (("gateway", "spill_dir"), 7, "gateway.spill_dir", "expected text"),
    (("gateway", "spill_max_mb"), 0, "gateway.spill_max_mb", "more than 0"),
    (("connections", "hub", "rpm"), 0, "connections.hub.rpm", "at least 1"),
    (("connections", "hub", "rpd"), "ten", "connections.hub.rpd", "whole number"),
    (("connections", "hub", "preferred"), "yes", "connections.hub.preferred", "true or false"),
    (("connections", "hub", "rmp"), 5, "connections.hub.rmp", "did you mean 'rpm'?"),
    (("connections",), ["hub"], "connections", "expected a mapping, got a list"),
    (("connections", 7), {}, "connections", "names must be text, got 7"),
    (("shapes",), ["review"], "shapes", "expected a mapping"),
    (("shapes", "tiny"), [], "shapes.tiny", "must not be empty"),
    (("shapes", "tiny"), "general", "shapes.tiny", "expected a list"),
    (("shapes", "tiny"), ["poet"], "shapes.tiny[0]", "one of general, code, light"),
    (("model_list",), [], "model_list", "must not be empty"),
    (("model_list",), {"kimi": {}}, "model_list", "expected a list, got a mapping"),
    (("model_list", 0), "kimi", "model_list[0]", "expected a mapping with model_name"),
    (("model_list", 0, "model_name"), 42, "model_list[0].model_name", "expected text"),
    (("model_list", 0, "model_name"), ["kimi"], "model_list[0].model_name", "expected text"),
    (("model_list", 0, "model_name"), "bad name!", "model_list[0].model_name", "plain name"),
    (("model_list", 0, "litellm_params"), "openai/x", "model_list[0].litellm_params", "model"),
    (("model_list", 0, "litellm_params", "model"), 3, "model_list[0].litellm_params.model", "text"),
    (("model_list", 0, "bench"), [], "model_list[0].bench", "expected a mapping"),
    (("model_list", 0, "bench", "role"), "poet", "model_list[0].bench.role", "one of general"),
    (("model_list", 0, "bench", "rpm"), 0, "model_list[0].bench.rpm", "at least 1"),
    (("model_list", 0, "bench", "rpd"), -3, "model_list[0].bench.rpd", "at least 1"),
    (
        ("model_list", 0, "bench", "context_window"),
        "big",
        "model_list[0].bench.context_window",
        "whole",
    ),
    (("model_list", 0, "bench", "ad_hoc"), "no", "model_list[0].bench.ad_hoc", "true or false"),
    (("model_list", 0, "bench", "family"), ["kimi"], "model_list[0].bench.family", "expected text"),
    (
        ("model_list", 0, "bench", "conection"),
        "hub",
        "model_list[0].bench.conection",
        "'connection'?",
    ),
    (("model_list", 0, "model_nam"), "x", "model_list[0].model_nam", "did you mean 'model_name'?"),
    (("collections",), {}, "collections", "must not be empty"),
    (("collections",), "core", "collections", "expected a mapping"),
    (("collections", "core"), None, "collections.core", "got nothing"),
    (("collections", "core", "members"), "kimi", "collections.core.members", "expected a list"),
    (
        ("collections", "core", "members"),
        ["kimi", "kimi"],
        "collections.core.members",
        "'kimi' more",
    ),
    (
        ("collections", "core", "members"),
        [["kimi"]],
        "collections.core.members[0]",
        "expected text",
    ),
    (("collections", "core", "description"), "x" * 301, "collections.core.description", "300"),
    (("collections", "core", "tags"), ["Review"], "collections.core.tags[0]", "lower-case word"),
    (("collections", "core", "tags"), list("abcdefghi"), "collections.core.tags", "at most 8"),
    (("collections", "core", "reply"), "loud", "collections.core.reply", "panel, merged, route"),
    (("collections", "core", "merger"), "ghost", "collections.core.merger", "unknown merger"),
    (("collections", "core", "memebrs"), [], "collections.core.memebrs", "did you mean 'members'?"),
    (("collections", "bad name"), {"members": []}, "collections['bad name']", "not a plain name"),
    (("collections", "panel"), {"members": []}, "collections.panel", "reserved"),
    (("collections", 3), {"members": []}, "collections", "names must be text, got 3"),
]


@pytest.mark.parametrize(("path", "value", "named", "words"), WRONG, ids=lambda v: str(v)[:40])
def test_a_wrongly_shaped_value_is_named_by_its_path(path, value, named, words):
    raw = at(raw_config(), path, value)
    problems = problems_of(raw)
    assert any(p.startswith(f"{named}: ") and words in p for p in problems), problems


@pytest.mark.parametrize(
    ("raw", "words"),
    [
        (None, "the config is empty"),
        ([1, 2], "the config: expected a mapping with model_list and collections, got a list"),
        ("model_list", "the config: expected a mapping"),
        (5, "got 5"),
        ({}, "model_list: is required"),
    ],
)
def test_a_top_level_that_is_not_a_config_is_named(raw, words):
    assert any(words in p for p in problems_of(raw))


def test_an_unset_environment_variable_is_named_where_it_is_referenced():
    raw = raw_config()
    raw["model_list"][1]["litellm_params"]["model"] = "os.environ/INKLING_MODEL"
    raw["model_list"][0]["litellm_params"]["api_base"] = "os.environ/EXAMPLE_BASE"
    problems = problems_of(raw, env={})
    assert (
        "model_list[0].litellm_params.api_base: references os.environ/EXAMPLE_BASE, but "
        "EXAMPLE_BASE is not set" in problems
    )
    assert any(p.startswith("model_list[1].litellm_params.model: references") for p in problems)
    assert len(problems) == 2  # the unresolved reference is not blamed a second time


def test_a_model_whose_key_variable_is_unset_is_no_problem_but_is_named_unready(tmp_path):
    config = parse_config(raw_config(), base=tmp_path, env={})
    assert config.unready == {"kimi": "EXAMPLE_KEY is not set"}
    assert config.catalog.model("kimi") is not None
    assert config.secrets == ()


def test_check_config_warns_of_a_key_variable_that_is_unset(tmp_path, monkeypatch):
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(raw_config()))
    monkeypatch.delenv("EXAMPLE_KEY", raising=False)
    out, err = io.StringIO(), io.StringIO()
    assert check_config(str(path), out, err) == 0
    assert "warning: model kimi: EXAMPLE_KEY is not set" in err.getvalue()
    assert "problem" not in err.getvalue()


def test_a_bad_model_entry_does_not_hide_the_other_sections_problems():
    raw = at(raw_config(), ("model_list", 1, "bench", "role"), "poet")
    raw["collections"]["core"]["shape"] = "poetry"
    raw["gateway"] = {"max_calls": 0}
    problems = problems_of(raw)
    assert len(problems) == 3, problems  # inkling is still a known alias: no "unknown alias"


def test_new_settings_have_their_defaults_and_take_valid_values(tmp_path):
    config = parse_config(raw_config(), base=tmp_path, env={"EXAMPLE_KEY": "k"})
    gateway = config.gateway
    assert (gateway.workers, gateway.allowed_hosts, gateway.allowed_origins) == ("auto", [], [])
    assert (gateway.public_url, gateway.max_answer_bytes, gateway.max_panels_in_flight) == (
        None,
        4_000_000,
        256,
    )
    assert (gateway.max_seats_in_flight, gateway.max_messages, gateway.route_tries) == (
        2048,
        1000,
        3,
    )
    assert (gateway.route_explore, gateway.first_token_s, gateway.pace_wait_s) == (0.25, 10, 0)
    assert gateway.route_wait_s == 3
    assert (gateway.stall_s, gateway.route_stream_max_s) == (30, 600)
    assert gateway.quota_day_tz == "UTC" and config.state is None and config.model_rpd == {}
    assert (gateway.spill_dir, gateway.spill_max_mb) == ("data/spill", 1024)
    assert config.spill_dir == tmp_path.resolve() / "data" / "spill"  # by the config, as stores
    chosen = {
        "workers": 3,
        "allowed_hosts": ["bench.example.com", "10.0.0.5:8123", "[::1]:8123"],
        "allowed_origins": ["http://localhost:3000", "https://app.example.com"],
        "trusted_proxies": ["127.0.0.1", "10.0.0.0/8", "::1"],
        "public_url": "https://bench.example.com/gateway",
        "route_explore": 1,
        "first_token_s": 5,
        "quota_day_tz": "Europe/Paris",
        "pace_wait_s": 0.5,
        "spill_dir": "../spilled",
        "spill_max_mb": 0.5,
    }
    raw = raw_config(gateway=chosen, state="redis://cache:6379/0")
    raw["model_list"][0]["bench"].update(rpm=30, rpd=1000)
    raw["connections"]["hub"]["rpd"] = 500
    raw["collections"]["core"]["reply"] = "route"
    config = parse_config(raw, base=tmp_path, env={"EXAMPLE_KEY": "k"})
    assert config.gateway.model_dump(include=set(chosen)) == chosen
    assert config.state == "redis://cache:6379/0"
    assert config.spill_dir == tmp_path.resolve().parent / "spilled"
    assert config.model_rpm == {"kimi": 30} and config.model_rpd == {"kimi": 1000}
    assert config.connections["hub"].rpd == 500
    assert config.catalog.collection("core").reply == "route"


@pytest.mark.parametrize(
    ("store", "expected"),
    [
        ("sqlite:///records.db", "sqlite:///{base}/records.db"),
        ("sqlite:///../data/r.db", "sqlite:///{parent}/data/r.db"),
        ("sqlite:////var/lib/bench/r.db", "sqlite:////var/lib/bench/r.db"),
        ("postgresql://bench:pw@db:5432/bench", "postgresql://bench:pw@db:5432/bench"),
    ],
)
def test_a_store_is_sqlite_or_postgresql(tmp_path, store, expected):
    config = parse_config(raw_config(store=store), base=tmp_path, env={"EXAMPLE_KEY": "k"})
    assert config.store == expected.format(
        base=tmp_path.resolve(), parent=tmp_path.resolve().parent
    )


def test_empty_sections_mean_their_defaults(tmp_path):
    raw = raw_config(gateway=None, shapes=None, connections={"hub": None})
    config = parse_config(raw, base=tmp_path, env={"EXAMPLE_KEY": "k"})
    assert config.gateway.max_calls == 5 and config.connections["hub"].rpm is None


def test_every_shipped_config_is_valid():
    root = Path(__file__).parents[2]
    # What docker-compose.yml's replicas profile sets (tests/serve/test_compose.py checks it does).
    env = {"BENCH_STORE_URL": "postgresql://b:pw@postgres/b", "BENCH_STATE_URL": "redis://redis"}
    for path in [*root.glob("config/*.yaml"), *root.glob("gateway/*.yaml")]:
        if "simulate" not in path.name:  # the simulator's own specs, not gateway configs
            load_config(path, env=env)


def test_a_file_that_is_not_text_is_a_config_error(tmp_path):
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ConfigError, match="not UTF-8|not valid YAML"):
        load_config(binary)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path)  # a directory


# -- any YAML shape at any path: check-config answers 0 or 1, never a traceback ------------------

# Paths of the shipped shape, with the kind of value each expects.
PATHS: list[tuple[tuple, str]] = [
    (("model_list",), "list"),
    (("model_list", 0), "mapping"),
    (("model_list", 0, "model_name"), "text"),
    (("model_list", 0, "litellm_params"), "mapping"),
    (("model_list", 0, "litellm_params", "model"), "text"),
    (("model_list", 1, "bench"), "mapping"),
    (("model_list", 1, "bench", "connection"), "text"),
    (("model_list", 1, "bench", "role"), "text"),
    (("model_list", 1, "bench", "family"), "text"),
    (("model_list", 1, "bench", "context_window"), "int"),
    (("model_list", 1, "bench", "ad_hoc"), "bool"),
    (("model_list", 1, "bench", "rpm"), "int"),
    (("model_list", 1, "bench", "rpd"), "int"),
    (("connections",), "mapping"),
    (("connections", "hub"), "mapping"),
    (("connections", "hub", "rpm"), "int"),
    (("connections", "hub", "rpd"), "int"),
    (("connections", "hub", "preferred"), "bool"),
    (("connections", "hub", "cool_together"), "bool"),
    (("shapes",), "mapping"),
    (("shapes", "tiny"), "list"),
    (("shapes", "tiny", 0), "text"),
    (("collections",), "mapping"),
    (("collections", "core"), "mapping"),
    (("collections", "core", "members"), "list"),
    (("collections", "core", "members", 0), "text"),
    (("collections", "core", "description"), "text"),
    (("collections", "core", "tags"), "list"),
    (("collections", "core", "tags", 0), "text"),
    (("collections", "core", "shape"), "text"),
    (("collections", "core", "reply"), "text"),
    (("collections", "core", "merger"), "text"),
    (("gateway",), "mapping"),
    *[
        (("gateway", key), "int")
        for key in (
            "max_calls",
            "reserves",
            "max_body_bytes",
            "max_answer_bytes",
            "max_panels_in_flight",
            "max_seats_in_flight",
            "max_messages",
            "route_tries",
        )
    ],
    *[
        (("gateway", key), "number")
        for key in (
            "seat_timeout_s",
            "keepalive_s",
            "route_explore",
            "first_token_s",
            "route_wait_s",
            "stall_s",
            "route_stream_max_s",
            "pace_wait_s",
            "cooldown_max_s",
        )
    ],
    (("gateway", "require_keys"), "bool"),
    (("gateway", "blind_judging"), "bool"),
    (("gateway", "stream_seats"), "text"),
    (("gateway", "workers"), "workers"),
    (("gateway", "allowed_hosts"), "list"),
    (("gateway", "allowed_origins"), "list"),
    (("gateway", "public_url"), "text"),
    (("gateway", "quota_day_tz"), "text"),
    (("store",), "text"),
    (("state",), "text"),
]

# Where any text is acceptable or refused at that very path, and nowhere else.
TEXT_PATHS = [
    ("store",),
    ("state",),
    ("gateway", "stream_seats"),
    ("gateway", "workers"),
    ("gateway", "public_url"),
    ("gateway", "quota_day_tz"),
    ("gateway", "allowed_hosts", 0),
    ("gateway", "allowed_origins", 0),
    ("collections", "core", "shape"),
    ("collections", "core", "reply"),
    ("collections", "core", "tags", 0),
    ("model_list", 1, "bench", "role"),
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.text(max_size=12),
    st.dates(),
)
yaml_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.one_of(st.text(max_size=8), st.integers(), st.booleans()), inner, max_size=4
        ),
    ),
    max_leaves=12,
)

KINDS = {
    "mapping": lambda v: isinstance(v, dict),
    "list": lambda v: isinstance(v, list),
    "text": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "workers": lambda v: isinstance(v, int | str) and not isinstance(v, bool),
}


def full_raw():
    raw = raw_config(shapes={"tiny": ["general"]}, gateway={}, state="redis://cache:6379/0")
    raw["collections"]["core"].update(
        description="d", tags=["review"], reply="panel", merger="kimi"
    )
    raw["model_list"][1]["bench"].update(family="ink", ad_hoc=False, rpm=5, rpd=50)
    raw["connections"]["hub"]["rpd"] = 100
    raw["model_list"][0]["litellm_params"]["api_key"] = "sk-inline"  # no environment needed
    raw["gateway"] = {"allowed_hosts": ["a.example"], "allowed_origins": ["http://a.example"]}
    return raw


def run_check_config(raw, tmp_path) -> tuple[int, str, str]:
    """What `bench-gateway check-config` does, in-process: (exit code, stdout, stderr)."""
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    code = check_config(str(path), out, err)
    return code, out.getvalue(), err.getvalue()


def named(path: tuple, err: str) -> bool:
    """Named by its path; under a model entry, by the model's name and the path within it."""
    if path[0] == "model_list" and len(path) > 2 and path[2] != "model_name":
        name = full_raw()["model_list"][path[1]]["model_name"]
        return f"  - model {name}: {where(path[2:])}: " in err
    return f"  - {where(path)}: " in err


FAST = settings(
    max_examples=int(os.environ.get("BENCH_CONFIG_EXAMPLES", 60)),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@FAST
@given(st.data())
def test_a_wrongly_shaped_value_anywhere_exits_1_naming_its_path(tmp_path, data):
    path, kind = data.draw(st.sampled_from(PATHS))
    value = data.draw(yaml_values.filter(lambda v: v is not None and not KINDS[kind](v)))
    code, out, err = run_check_config(at(full_raw(), path, value), tmp_path)
    assert code == 1 and out == ""
    assert named(path, err), err


@FAST
@given(st.data())
def test_any_text_where_text_goes_is_taken_or_refused_at_its_path(tmp_path, data):
    path = data.draw(st.sampled_from(TEXT_PATHS))
    text = data.draw(st.one_of(st.text(max_size=30), st.from_regex(r"[a-z]{1,8}://[^\s]{0,20}")))
    code, out, err = run_check_config(at(full_raw(), path, text), tmp_path)
    assert (code, err) == (0, "") or (code == 1 and named(path, err)), err


@FAST
@given(yaml_values)
def test_any_yaml_at_all_is_answered_without_a_traceback(tmp_path, raw):
    code, _, err = run_check_config(raw, tmp_path)
    assert code == 1 and err.startswith("bench-gateway: ")


@FAST
@given(st.data())
def test_any_yaml_in_any_section_is_answered_without_a_traceback(tmp_path, data):
    path, _ = data.draw(st.sampled_from(PATHS))
    code, _, err = run_check_config(at(full_raw(), path, data.draw(yaml_values)), tmp_path)
    assert code in (0, 1) and (code == 0) == (err == "")


def test_a_litellm_proxy_config_pastes_in_whole_and_its_proxy_sections_are_named_ignored(tmp_path):
    raw = yaml.safe_load((Path(__file__).parents[2] / "config" / "bench.yaml").read_text())
    raw["litellm_settings"] = {"drop_params": True}
    raw["router_settings"] = {"routing_strategy": "simple-shuffle"}
    path = tmp_path / "proxy.yaml"
    path.write_text(yaml.safe_dump(raw))
    out, err = io.StringIO(), io.StringIO()
    assert check_config(str(path), out, err) == 0, err.getvalue()
    assert (
        "ignored (LiteLLM proxy settings, not used by the bench): litellm_settings, "
        "router_settings" in out.getvalue()
    )


def test_store_and_state_urls_can_come_from_the_environment(tmp_path: Path) -> None:
    raw = {
        "model_list": [{"model_name": "m", "litellm_params": {"model": "openai/m"}}],
        "collections": {"c": {"members": ["m"]}},
        "store": "os.environ/BENCH_STORE_URL",
        "state": "os.environ/BENCH_STATE_URL",
    }
    env = {
        "BENCH_STORE_URL": "postgresql://bench:s3cret-pw@db:5432/bench",
        "BENCH_STATE_URL": "redis://cache:6379/0",
    }
    config = parse_config(raw, base=tmp_path, env=env, secrets=False)
    assert config.store == "postgresql://bench:s3cret-pw@db:5432/bench"
    assert config.state == "redis://cache:6379/0"
    assert "s3cret-pw" in config.secrets  # kept out of anything logged or shown
    with pytest.raises(ConfigError) as unset:
        parse_config(raw, base=tmp_path, env={"BENCH_STATE_URL": "ftp://x"})
    assert unset.value.problems == [
        "store: references os.environ/BENCH_STORE_URL, but BENCH_STORE_URL is not set",
        "state: expected redis://host:port/db, got 'ftp://x'",
    ]


def test_lifecycle_settings_have_the_contracts_defaults(tmp_path):
    lifecycle = parse_config(raw_config(), base=tmp_path, env={"EXAMPLE_KEY": "k"}).lifecycle
    assert (lifecycle.failures_to_bench, lifecycle.backoff_min_s, lifecycle.backoff_max_s) == (
        3,
        5,
        60,
    )
    assert (lifecycle.confirm_after_s, lifecycle.reprobe_s, lifecycle.auto_retire) == (
        600,
        86400,
        True,
    )
    assert (lifecycle.expiry_warn_days, lifecycle.listing_s) == (7, 21600)


def test_lifecycle_settings_are_read_and_checked_by_their_path(tmp_path):
    raw = raw_config(lifecycle={"failures_to_bench": 5, "auto_retire": False})
    lifecycle = parse_config(raw, base=tmp_path, env={"EXAMPLE_KEY": "k"}).lifecycle
    assert lifecycle.failures_to_bench == 5 and lifecycle.auto_retire is False
    problems = problems_of(raw_config(lifecycle={"failures_to_bench": 0, "bench_after": 2}))
    assert any(p.startswith("lifecycle.failures_to_bench") for p in problems), problems
    assert any("lifecycle" in p and "bench_after" in p for p in problems), problems


def test_listings_may_be_never_read_and_a_connection_names_its_own(tmp_path):
    raw = raw_config(lifecycle={"listing_s": 0})
    assert parse_config(raw, base=tmp_path, env={"EXAMPLE_KEY": "k"}).lifecycle.listing_s == 0
    assert any(p.startswith("lifecycle.listing_s") for p in problems_of(
        raw_config(lifecycle={"listing_s": -1})
    ))  # fmt: skip
    for listing in (True, False, "https://api.example.com/v1/models"):
        raw = raw_config(connections={"hub": {"listing": listing}})
        config = parse_config(raw, base=tmp_path, env={"EXAMPLE_KEY": "k"})
        assert config.connections["hub"].listing == listing
    problems = problems_of(raw_config(connections={"hub": {"listing": "yes"}}))
    assert problems == [
        "connections.hub.listing: must be an http:// or https:// URL with a host, got 'yes'"
    ]


def test_check_config_prints_the_lifecycle_settings(tmp_path, monkeypatch):
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(raw_config(lifecycle={"backoff_max_s": 120})))
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setenv("EXAMPLE_KEY", "k")
    assert check_config(str(path), out, err) == 0, err.getvalue()
    printed = out.getvalue()
    assert "lifecycle:\n  failures_to_bench: 3\n" in printed
    assert "  backoff_max_s: 120" in printed
