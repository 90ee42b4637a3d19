"""A config's mistakes as their author meets them: a file written by hand, `bench-gateway
check-config` run on it, and one line that says what is wrong, where, and what to write.

Each file here is a mistake newcomers made going from the demo to real providers: a shell
variable for a key, a key pasted in, a line indented one level too far out, a key written
twice, a LiteLLM proxy config pasted whole.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.helpers.served import served_gateway

ROOT = Path(__file__).parents[2]

HEAD = """\
model_list:
  - model_name: kimi
    litellm_params: {model: openai/kimi-k2, api_base: "http://127.0.0.1:8199/v1", api_key: sim}
"""
TAIL = """\
collections:
  reviewers:
    members: [kimi, groq]
"""


def check_config(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "bench.yaml"
    path.write_text(text)
    return subprocess.run(
        [sys.executable, "-m", "gateway.cli", "check-config", "--config", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "GROQ_API_KEY": "gsk-from-the-environment"},
    )


def only_problem(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 1 and done.stdout == "", done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == "bench-gateway: the config has 1 problem(s):", done.stderr
    assert len(lines) == 2, done.stderr
    return lines[1]


@pytest.mark.parametrize("written", ["${GROQ_API_KEY}", "$GROQ_API_KEY"])
def test_a_shell_variable_for_a_key_says_to_write_os_environ(tmp_path, written):
    text = (
        HEAD
        + f"""\
  - model_name: groq
    litellm_params:
      model: groq/llama-3.3-70b-versatile
      api_key: {written}
"""
        + TAIL
    )
    assert only_problem(check_config(tmp_path, text)) == (
        f"  - model groq: litellm_params.api_key: '{written}' looks like a shell variable, "
        "which is not read here; write os.environ/GROQ_API_KEY (line 7)"
    )


def test_a_shell_variable_in_flow_style_is_named_not_left_as_yamls_complaint(tmp_path):
    text = (
        HEAD
        + """\
  - model_name: groq
    litellm_params: {model: groq/llama-3.3-70b-versatile, api_key: ${GROQ_API_KEY}}
"""
        + TAIL
    )
    problem = only_problem(check_config(tmp_path, text))
    assert problem.endswith(
        "bench.yaml is not valid YAML: line 5: '${GROQ_API_KEY}' looks like a shell variable, "
        "which is not read here; write os.environ/GROQ_API_KEY"
    ), problem


def test_a_real_key_written_into_the_file_is_warned_about_and_the_config_still_loads(tmp_path):
    text = (
        HEAD
        + """\
  - model_name: groq
    litellm_params:
      model: groq/llama-3.3-70b-versatile
      api_key: gsk_8cQ2mZkV1rT9wXy4bN6pLd3sHf7gJa0e5uIo
"""
        + TAIL
    )
    done = check_config(tmp_path, text)
    assert done.returncode == 0, done.stderr
    assert done.stderr == (
        "warning: model groq: litellm_params.api_key: a real key is written into the file "
        "(whoever reads the file or a backup of it has it): put it in the environment and write "
        "api_key: os.environ/NAME (line 7)\n"
    )
    assert "gsk_8cQ2" not in done.stdout


def test_a_problem_names_the_model_by_its_name_and_line_not_its_index(tmp_path):
    text = (
        HEAD
        + """\
  - model_name: groq
    litellm_params: {model: groq/llama-3.3-70b-versatile, api_key: os.environ/GROQ_API_KEY}
    bench: {role: poet}
"""
        + TAIL
    )
    assert only_problem(check_config(tmp_path, text)) == (
        "  - model groq: bench.role: expected one of general, code, light, vision, image, "
        "got 'poet' (line 6)"
    )


def test_keys_indented_one_level_too_far_out_are_named_as_an_indentation_slip(tmp_path):
    text = (
        HEAD
        + """\
  - model_name: groq
    litellm_params:
    model: groq/llama-3.3-70b-versatile
    api_key: os.environ/GROQ_API_KEY
"""
        + TAIL
    )
    assert only_problem(check_config(tmp_path, text)) == (
        "  - model groq: litellm_params: is empty, and model, api_key are written beside it "
        "(one level too far out): indent them under litellm_params: (line 5)"
    )


def test_members_indented_as_a_collection_of_its_own_say_which_collection(tmp_path):
    text = (
        HEAD
        + """\
  - model_name: groq
    litellm_params: {model: groq/llama-3.3-70b-versatile, api_key: os.environ/GROQ_API_KEY}
collections:
  reviewers:
    description: second opinions
  members: [kimi, groq]
"""
    )
    assert only_problem(check_config(tmp_path, text)) == (
        "  - collections.members: a collection's members, written one level too far out "
        "(where collections are named): indent it under reviewers: (line 9)"
    )


def test_a_key_written_twice_is_named_rather_than_the_last_silently_winning(tmp_path):
    text = (
        HEAD
        + """\
  - model_name: groq
    litellm_params: {model: groq/llama-3.3-70b-versatile, api_key: os.environ/GROQ_API_KEY}
"""
        + TAIL
        + """\
  reviewers:
    members: [kimi]
"""
    )
    assert only_problem(check_config(tmp_path, text)) == (
        "  - collections.reviewers: written twice (lines 7 and 9), and YAML would keep only the "
        "second: merge them or rename one"
    )


PASTED = """\
model_list:
  - model_name: kimi
    litellm_params:
      model: openai/kimi-k2
      api_base: http://127.0.0.1:8199/v1
      api_key: sim
      rpm: 1
      tpm: 6000
  - model_name: groq
    litellm_params:
      model: groq/llama-3.3-70b-versatile
      api_key: os.environ/GROQ_API_KEY
      rpm: 30
    bench: {rpm: 20}
collections:
  reviewers:
    members: [kimi, groq]
litellm_settings: {drop_params: true}
router_settings: {routing_strategy: simple-shuffle}
"""


def test_a_pasted_litellm_config_keeps_its_rpm_as_the_cap_and_names_what_it_ignores(tmp_path):
    done = check_config(tmp_path, PASTED)
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    for line in (
        "ignored (LiteLLM proxy settings, not used by the bench): litellm_settings, "
        "router_settings",
        "model kimi: litellm_params.tpm: ignored: the bench has no token cap (it caps requests: "
        "bench.rpm, bench.rpd) (line 8)",
        "model kimi: litellm_params.rpm: kept as this model's cap (bench.rpm: 1) (line 7)",
        "model groq: litellm_params.rpm: ignored: bench.rpm (20) is this model's cap (line 13)",
    ):
        assert line in out, done.stdout
    models = [line.split() for line in out if line.startswith(("  kimi ", "  groq "))]
    assert [(m[0], m[-1]) for m in models] == [("kimi", "rpm=1"), ("groq", "rpm=20")]


def test_a_litellm_master_key_is_refused_naming_what_protects_this_gateway(tmp_path):
    text = PASTED + "general_settings:\n  master_key: sk-1234\n"
    assert only_problem(check_config(tmp_path, text)) == (
        "  - general_settings.master_key: this gateway does not read LiteLLM's master key, and "
        "would answer anyone without it: set gateway.require_keys: true, create a key with "
        "`bench-gateway keys create NAME`, and remove master_key (line 21)"
    )


def test_serve_logs_what_a_pasted_config_ignores_and_keeps_its_rpm_as_a_cap(tmp_path, sim):
    raw = yaml.safe_load(PASTED.replace("http://127.0.0.1:8199", sim.url))
    raw["model_list"][1]["litellm_params"] = {
        "model": "openai/sim-groq",
        "api_base": f"{sim.url}/v1",
        "api_key": "sim",
    }
    with served_gateway(raw, tmp_path) as gateway:
        log = gateway.log.read_text()
        assert (
            "ignored (LiteLLM proxy settings, not used by the bench): litellm_settings, "
            "router_settings" in log
        ), log
        assert "model kimi: litellm_params.rpm: kept as this model's cap (bench.rpm: 1)" in log
        assert "model kimi: litellm_params.tpm: ignored: the bench has no token cap" in log
        for _ in range(3):
            asked = gateway.http.post(
                "/v1/chat/completions",
                json={"model": "bench/reviewers", "messages": [{"role": "user", "content": "hi"}]},
            )
            assert asked.status_code == 200, asked.text
    assert len(sim.log("kimi-k2")) == 1  # one request a minute, as `rpm: 1` said
    assert len(sim.log("sim-groq")) == 3
    forwarded = sim.log("kimi-k2")[0]["body"]
    assert "rpm" not in forwarded and "tpm" not in forwarded
