"""Small steps a newcomer takes with the command, as a shell runs them: the version, a config's
summary piped into a pager that stops reading, the summary's connection lines."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[2]
CLI = f"{sys.executable} -m gateway.cli"


def shell(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )


def test_version_prints_the_installed_version():
    done = shell(f"{CLI} --version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"bench-gateway {version('bench-gateway')}"


def test_check_config_piped_into_a_reader_that_stops_reading_ends_quietly():
    """`| head` reads a few lines and leaves; `| true` reads none: neither is an error."""
    for reader in ("head -n 2", "true"):
        done = shell(f"{CLI} check-config --config config/bench.yaml | {reader}")
        assert done.returncode == 0, (reader, done.stderr)
        assert done.stderr == "", reader
    assert shell(f"{CLI} check-config --config config/bench.yaml | head -n 1").stdout == (
        "config config/bench.yaml is valid\n"
    )


def test_check_config_writes_connection_facts_as_the_file_would():
    done = shell(f"{CLI} check-config --config config/bench.yaml")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("connections:\n", 1)[1].split("shapes:\n", 1)[0].splitlines()
    assert any("preferred=true" in line for line in lines)
    assert all("cool_together=false" in line and "None" not in line for line in lines), lines
    assert not any("False" in line or "True" in line for line in lines), lines


def test_check_config_refuses_collection_names_that_differ_only_in_case(tmp_path):
    """Collection names are case-sensitive, as model ids are: two a shift key apart would be
    asked for by mistake, so the config names the pair."""
    raw = yaml.safe_load((ROOT / "config" / "bench.yaml").read_text())
    raw["collections"]["Reviewers"] = dict(raw["collections"]["reviewers"])
    bad = tmp_path / "bench.yaml"
    bad.write_text(yaml.safe_dump(raw, sort_keys=False))
    done = shell(f"{CLI} check-config --config {bad}")
    assert done.returncode == 1
    assert (
        "collections.Reviewers: the collection name 'Reviewers' differs from 'reviewers' only in "
        "case; names are case-sensitive, so rename one"
    ) in done.stderr
