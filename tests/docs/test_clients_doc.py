"""docs/clients.md cannot rot: every titled snippet in it runs against a real gateway.

Each ```python title="..."``` block runs as its own process, as a user would paste it, with
`BENCH_URL` and `BENCH_KEY` pointing it at a gateway in front of the simulated upstream; the
`llm` blocks run the `llm` command with the doc's `extra-openai-models.yaml`. A snippet passes
when it exits 0, prints the seats' answer, and its panels are on the record.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.bench import MODELS
from tests.helpers.clients_doc import BLOCK, DOC, DOC_URL, blocks

# What every simulated seat answers: JSON, so the structured-output snippet has something a
# model asked for a JSON reply would send, and plain text to every other snippet.
SDKS = ("openai-chat", "openai-responses", "openai-completions", "anthropic", "ollama",
        "ollama-route", "google-genai", "google-genai-route", "langchain",
        "langchain-structured")  # fmt: skip
ANSWER = {"safe": False, "reasons": ["the loop never backs off"]}


def answering(sim) -> None:
    for served, _connection, _role in MODELS.values():
        sim.set(served, answer=json.dumps(ANSWER))


def panels_recorded(gw) -> int:
    with sqlite3.connect(gw.config.store.removeprefix("sqlite:///")) as db:
        return db.execute("SELECT COUNT(*) FROM panels").fetchone()[0]


def environment(gw, **more: str) -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "BENCH_URL": gw.url,
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
def test_the_python_snippet_runs_against_a_panel(gateway, sim, title):
    answering(sim)
    done = run([sys.executable, "-c", blocks("python")[title]], environment(gateway))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the loop never backs off" in done.stdout
    assert panels_recorded(gateway) >= 1
    assert sim.log(), "no seat was called"


def test_the_llm_snippets_run_against_a_panel(gateway, sim, tmp_path):
    answering(sim)
    models = blocks("yaml")["extra-openai-models.yaml"].replace(DOC_URL, gateway.url)
    assert gateway.url in models
    (tmp_path / "extra-openai-models.yaml").write_text(models)
    env = environment(gateway, LLM_USER_PATH=str(tmp_path))
    done = run(["bash", "-euo", "pipefail", "-c", blocks("sh")["llm"]], env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "the loop never backs off" in done.stdout
    assert "## member1" in done.stdout  # the panel's markdown, a section per seat
    assert panels_recorded(gateway) == 1
