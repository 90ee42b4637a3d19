"""docs/clients.md cannot rot: every titled snippet in it runs against the demo, as shipped.

The doc (and the README) say its snippets run against `bench-gateway demo` as is, so that is
what they run against: the real `demo` command on a free port, its config and its simulated
models unchanged (nothing here makes them answer what a snippet needs). Each
```python title="..."``` block runs as its own process, as a user would paste it, with
`BENCH_URL` and `BENCH_KEY` pointing it at the demo; the `llm` blocks run the `llm` command with
the doc's `extra-openai-models.yaml`. A snippet passes when it exits 0 and prints what the demo's
models answered, and the demo has the panels on its record.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import httpx
import pytest
import yaml

from simulator.reading import RULES
from tests.helpers.clients_doc import BLOCK, DOC, DOC_URL, blocks
from tests.helpers.demo import Demo, a_real_call, newcomer_folder, running_demo, shell_env

SDKS = ("openai-chat", "openai-responses", "openai-completions", "anthropic", "ollama",
        "ollama-route", "google-genai", "google-genai-route", "langchain",
        "langchain-structured")  # fmt: skip
DEMO_MODELS = yaml.safe_load(
    resources.files("gateway.cli").joinpath("demo_simulate.yaml").read_text(encoding="utf-8")
)["models"]
# what the demo's simulated models say (their stock answers, and the points they read from a
# prompt, up to a cited part): a snippet that prints one was answered by them
ANSWERS = (
    [b["answer"] for b in DEMO_MODELS.values() if b.get("answer")]
    + [point.partition("{")[0] for _name, _pattern, point in RULES]
    + ["The tool said: "]
)  # a route member's answer once the snippet's tool has run


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[Demo]:
    with running_demo(tmp_path_factory.mktemp("demo")) as served:
        yield served


def answered(printed: str) -> bool:
    return any(answer in printed for answer in ANSWERS)


def panels_recorded(demo: Demo) -> int:
    return len(httpx.get(f"{demo.url}/bench/panels", params={"limit": 100}).json()["panels"])


def environment(demo: Demo, **more: str) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "BENCH_URL": demo.url,
        "BENCH_KEY": "local",
        "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
        **more,
    }


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_every_python_block_is_titled_so_it_is_run():
    """(The untitled blocks are the settings of tools that cannot be run here; the doc says so.)"""
    text = DOC.read_text()
    assert re.findall(r"^```python\n", text, re.M) == [], "an untitled block would not be run"
    titles = [title for _lang, title, _code in BLOCK.findall(text)]
    assert len(titles) == len(set(titles))
    assert set(SDKS) <= set(blocks("python"))


@pytest.mark.parametrize("title", sorted(blocks("python")))
def test_the_python_snippet_runs_against_the_demo_as_shipped(demo, title):
    done = run([sys.executable, "-c", blocks("python")[title]], environment(demo))
    assert done.returncode == 0, done.stderr[-3000:]
    assert answered(done.stdout), done.stdout[-3000:]
    assert panels_recorded(demo) >= 1


@pytest.mark.parametrize("title", ["ollama-route", "google-genai-route"])
def test_the_route_snippet_shows_the_member_calling_the_tool_and_reading_its_result(demo, title):
    """The demo's member calls the snippet's `weather` for the city asked about, the snippet runs
    it, and the member's last answer says what the tool said."""
    done = run([sys.executable, "-c", blocks("python")[title]], environment(demo))
    assert done.returncode == 0, done.stderr[-3000:]
    said = [line for line in done.stdout.splitlines() if line.startswith("The tool said: ")]
    assert said and "sunny in Oslo" in said[0], done.stdout[-3000:]


def test_the_structured_output_snippet_parses_the_merged_answer_of_the_demo(demo):
    """`with_structured_output` against the demo's own models: they honour `response_format`
    as a real model does, so the merger's answer parses into the snippet's `Review`."""
    done = run([sys.executable, "-c", blocks("python")["langchain-structured"]], environment(demo))
    assert done.returncode == 0, done.stderr[-3000:]
    safe, _, reasons = done.stdout.strip().partition(" ")
    assert safe in ("True", "False") and reasons.startswith("['") and answered(reasons)


def test_the_llm_snippets_run_against_the_demo(demo, tmp_path):
    models = blocks("yaml")["extra-openai-models.yaml"].replace(DOC_URL, demo.url)
    assert demo.url in models
    (tmp_path / "extra-openai-models.yaml").write_text(models)
    env = environment(demo, LLM_USER_PATH=str(tmp_path))
    before = panels_recorded(demo)
    done = run(["bash", "-euo", "pipefail", "-c", blocks("sh")["llm"]], env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert answered(done.stdout), done.stdout[-3000:]
    assert "## member1" in done.stdout  # the panel's markdown, a section per seat
    assert panels_recorded(demo) == before + 1


def test_the_shell_block_runs_against_the_demo(demo, tmp_path):
    """`bench-gateway` from the shell, in a folder with a change to diff and a question.md; the
    placeholder call id is a real one."""
    folder = newcomer_folder(tmp_path / "work")
    env = shell_env(tmp_path / "bin", BENCH_GATEWAY_URL=demo.url)
    script = blocks("sh")["shell"].replace("p1a2b3c4d5e6.member1", a_real_call(demo))
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert answered(done.stdout) and "owed verdicts:" in done.stdout
    assert "recorded" in done.stdout and "Traceback" not in done.stderr
