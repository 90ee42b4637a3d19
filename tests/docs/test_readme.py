"""README.md's "Use it" cannot rot: its curl block and its Python snippets run, pasted as written,
against `bench-gateway demo` as shipped, as the README says they do.

The one liberty: the demo's address. The README's snippets name `localhost:8123`, the demo's
default port; the test's demo runs on a free port, so nothing collides with a gateway already
there, and the snippets are pointed at it. (The README's install, test-suite, docker and
`serve` commands are not run here: `serve` and `simulate` are run by tests/cli/test_examples.py.)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.demo import Demo, running_demo

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```$", re.M | re.S)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[Demo]:
    with running_demo(tmp_path_factory.mktemp("demo")) as served:
        yield served


def pointed_at(code: str, demo: Demo) -> str:
    address = demo.url.removeprefix("http://")
    return code.replace("http://localhost:8123", demo.url).replace("localhost:8123", address)


def blocks(language: str) -> list[str]:
    return [code for lang, code in BLOCK.findall(README) if lang == language]


def test_the_curl_block_asks_judges_and_reads_the_record_back(demo):
    script = next(code for code in blocks("sh") if "/bench/verdict" in code)
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", pointed_at(script, demo)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "## member1 — kimi" in out  # the panel's markdown, a section per seat
    verdict, record = (json.loads(line) for line in out.strip().splitlines()[-2:])
    assert verdict["recorded"] is True
    assert record["id"] == verdict["call"]
    assert record["verdict"]["note"] == "spotted the missing backoff"
    assert record["verdict"]["false"] == ["the loop leaks a socket"]


@pytest.mark.parametrize("index", range(len(blocks("python"))))
def test_the_python_snippet_runs_against_the_demo(demo, index):
    code = pointed_at(blocks("python")[index], demo)
    assert demo.url in code
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "never backs off" in done.stdout, done.stdout[-2000:]  # kimi, a member, answered


def test_the_merged_snippet_shows_who_agrees_and_who_differs(demo):
    """The demo's seats read the question: all make its obvious point, some of them more, so the
    merger's reply names what all of them agree on and who alone said the rest."""
    code = pointed_at(next(c for c in blocks("python") if ":merged" in c), demo)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    merged = done.stdout.partition("Merged from ")[2]
    agreed, _, apart = merged.partition("All of them agree:")[2].partition("\nOnly ")
    assert "never backs off" in agreed and apart.strip(), done.stdout[-2000:]
