"""`bench-gateway models add|remove` as a person runs them: the real command in its own process,
the model probed on the simulated upstream, a config file written by hand (comments, blank
lines, an odd order, flow lists, anchors), compared byte for byte outside the lines changed."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gateway.serve.server import free_port

ROOT = Path(__file__).parents[2]

CONFIG = """\
---
# A bench kept by hand: comments, blank lines and an odd order on purpose.

gateway:   # settings first, for once
  seat_timeout_s: 5     # short: the simulator is quick


collections:
  trio:
    members: [alpha, beta]   # flow style, on one line
    description: 'three members'
  wide:
    tags: [ review,code ]   # odd spacing, kept
    members:
      - beta
      - gamma
    shape: review
  solo: {members: [gamma], description: one member}   # a flow mapping

model_list:
  # the first model
  - model_name: alpha
    litellm_params: &sim { model: openai/sim-alpha, api_base: "{url}/v1", api_key: sim-key }
    bench: &one {connection: one}

  - litellm_params:   # params before the name
      <<: *sim
      model: openai/sim-beta
    model_name: beta   # trailing spaces after this comment   \n\
    bench: *one

  - model_name: gamma
    litellm_params:
      model: openai/sim-gamma
      api_base: {url}/v1
      api_key: sim-key
    bench:
      role: code    # a comment on the role
  # a comment at the end of the list

connections:
  one: { rpm: 40 }
store: sqlite:///records.db    # beside the file
"""


@pytest.fixture
def config(sim, tmp_path: Path) -> Path:
    path = tmp_path / "bench.yaml"
    path.write_text(CONFIG.replace("{url}", sim.url))
    path.chmod(0o640)
    return path


def bench(*args: str, config: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", "models", *args, "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        env={**os.environ, "SIM_KEY": "sim-key", **env},
    )


def with_lines(text: str, after: str, *lines: str) -> str:
    """*text* with *lines* put after its one line *after*."""
    assert text.count(after + "\n") == 1
    return text.replace(after + "\n", after + "\n" + "".join(f"{line}\n" for line in lines))


def test_add_probes_the_model_then_writes_it_with_every_other_byte_kept(
    sim, config, make_gateway, monkeypatch
):
    sim.set("sim-delta", context_window=4096)
    written = config.read_text()
    done = bench(
        "add", "delta", "--model", "openai/sim-delta", "--api-base", f"{sim.url}/v1",
        "--api-key-env", "SIM_KEY", "--to", "trio", config=config,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    expected = with_lines(
        written,
        "      role: code    # a comment on the role",
        "  - model_name: delta",
        "    litellm_params:",
        "      model: openai/sim-delta",
        f"      api_base: {sim.url}/v1",
        "      api_key: os.environ/SIM_KEY",
        "    bench:",
        "      context_window: 4096",
    ).replace(
        "    members: [alpha, beta]   # flow style, on one line",
        "    members: [alpha, beta, delta] # flow style, on one line",
    )
    assert config.read_text() == expected
    assert "sim-key" not in config.read_text().split("model_name: delta")[1]  # no key's value
    assert stat.S_IMODE(config.stat().st_mode) == 0o640
    short, long = sim.log("sim-delta")
    assert short["status"] == 200 and long["status"] == 400
    assert 5500 < len(long["body"]["messages"][0]["content"]) // 4 < 6500  # about 6,000 tokens
    assert "its context window is 4,096 tokens" in done.stdout
    assert "reload the running gateway: kill -HUP PID or POST /bench/reload" in done.stdout
    checked = subprocess.run(
        [sys.executable, "-m", "gateway.cli", "check-config", "--config", str(config)],
        capture_output=True, text=True, cwd=ROOT, env={**os.environ, "SIM_KEY": "x"},
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr
    assert "bench/trio" in checked.stdout and "members=alpha, beta, delta" in checked.stdout
    monkeypatch.setenv("SIM_KEY", "sim-key")  # a gateway started on the file seats it
    gateway = make_gateway(yaml.safe_load(config.read_text()))
    assert gateway.config.catalog.model("delta").context_window == 4096
    answered, _ = gateway.ask("bench/trio", "Hello")
    assert {s["alias"]: s["status"] for s in answered.model_extra["bench"]["seats"]}[
        "delta"
    ] == "ok"


def test_a_model_that_answers_the_long_prompt_gets_no_window_and_joins_a_block_list(sim, config):
    written = config.read_text()
    done = bench(
        "add", "eta", "--model", "openai/sim-eta", "--api-base", f"{sim.url}/v1",
        "--connection", "one", "--role", "light", "--to", "wide", config=config,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "was answered: its window holds at least that" in done.stdout
    expected = with_lines(
        written,
        "      role: code    # a comment on the role",
        "  - model_name: eta",
        "    litellm_params:",
        "      model: openai/sim-eta",
        f"      api_base: {sim.url}/v1",
        "    bench:",
        "      connection: one",
        "      role: light",
    )
    expected = with_lines(expected, "      - gamma", "      - eta")
    assert config.read_text() == expected


def test_remove_takes_the_model_out_of_model_list_and_every_collection(config):
    written = config.read_text()
    done = bench("remove", "beta", config=config)
    assert done.returncode == 0, done.stderr
    assert "removed beta" in done.stdout and "trio, wide" in done.stdout
    after = config.read_text()
    kept = yaml.safe_load(after)
    assert [m["model_name"] for m in kept["model_list"]] == ["alpha", "gamma"]
    assert kept["collections"]["trio"]["members"] == ["alpha"]
    assert kept["collections"]["wide"]["members"] == ["gamma"]
    beta = (
        "\n"
        "  - litellm_params:   # params before the name\n"
        "      <<: *sim\n"
        "      model: openai/sim-beta\n"
        "    model_name: beta   # trailing spaces after this comment   \n"
        "    bench: *one\n"
    )
    expected = (
        written.replace(beta, "")
        .replace("      - beta\n", "")
        .replace(  # the comment keeps its column
            "    members: [alpha, beta]   # flow style, on one line",
            "    members: [alpha]         # flow style, on one line",
        )
    )
    assert after == expected
    assert "&sim" in after and "&one" in after  # anchors no one refers to any more stay


REFUSALS = {
    "an alias that exists": (
        ["add", "alpha", "--model", "openai/sim-x"],
        "a model named 'alpha' is already in model_list",
    ),
    "a collection that does not exist": (
        ["add", "x", "--model", "openai/sim-x", "--to", "quartet"],
        "no collection named 'quartet' (the config has: trio, wide, solo)",
    ),
    "a key variable that is not set": (
        ["add", "x", "--model", "openai/sim-x", "--api-key-env", "NOT_SET_ANYWHERE"],
        "NOT_SET_ANYWHERE is not set: the probe cannot reach openai/sim-x without its key",
    ),
    "a result check-config refuses": (
        ["add", "x", "--model", "openai/sim-x", "--connection", "two"],
        "model_list[3].bench.connection: unknown connection 'two'",
    ),
    "a role there is not": (
        ["add", "x", "--model", "openai/sim-x", "--role", "poet"],
        "check-config would refuse the result",
    ),
    "an alias that does not exist": (["remove", "ghost"], "no model named 'ghost' in model_list"),
    "a collection left with no members": (
        ["remove", "gamma"],
        "'gamma' is the only member of collection 'solo': add another member to 'solo' first",
    ),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_a_refusal_says_why_in_one_line_and_leaves_the_file_as_it_was(case, sim, config):
    args, said = REFUSALS[case]
    written = config.read_bytes()
    done = bench(*args, config=config)
    assert done.returncode == 1
    assert said in done.stderr and "Traceback" not in done.stderr
    assert config.read_bytes() == written
    assert sorted(p.name for p in config.parent.iterdir()) == ["bench.yaml"]  # no temp left
    assert sim.log() == []  # refused before anyone was asked


def test_a_model_that_cannot_be_reached_is_refused_and_nothing_written(config):
    written = config.read_bytes()
    port = free_port()
    done = bench(
        "add", "x", "--model", "openai/sim-x", "--api-base", f"http://127.0.0.1:{port}/v1",
        config=config,
    )  # fmt: skip
    assert done.returncode == 1
    assert "x (openai/sim-x) did not answer, so nothing was written: capacity" in done.stderr
    assert f"openai (127.0.0.1:{port}): connection refused" in done.stderr
    assert config.read_bytes() == written


@pytest.mark.parametrize(
    ("behaviour", "said"),
    [
        ({"status": 404, "error_message": "The model sim-x does not exist"}, "gone"),
        ({"empty": True}, "empty (it answered with no text)"),
    ],
)
def test_a_model_without_a_real_answer_is_refused_with_the_providers_words(
    behaviour, said, sim, config
):
    sim.set("sim-x", **behaviour)
    written = config.read_bytes()
    done = bench(
        "add", "x", "--model", "openai/sim-x", "--api-base", f"{sim.url}/v1", config=config
    )
    assert done.returncode == 1
    assert said in done.stderr
    assert behaviour.get("error_message", "") in done.stderr
    assert config.read_bytes() == written
    assert len(sim.log("sim-x")) == 1  # the long prompt is not asked of a model that failed


def test_a_config_with_problems_already_is_refused_as_such_not_blamed_on_the_edit(tmp_path):
    broken = tmp_path / "bench.yaml"
    text = CONFIG.replace("{url}", "http://127.0.0.1:9")
    broken.write_text(text.replace("members: [alpha, beta]", "members: [alpha, ghost]"))
    written = broken.read_bytes()
    done = bench("remove", "beta", config=broken)
    assert done.returncode == 1
    assert f"{broken} has problems already (as check-config names them); mend them first:" in (
        done.stderr
    )
    assert "collections.trio.members[1]: unknown alias 'ghost'" in done.stderr
    assert broken.read_bytes() == written
