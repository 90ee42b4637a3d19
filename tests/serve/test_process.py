"""Process-wide settings belong to the process owner (gateway/serve/process.py), never to the
app."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]


def test_an_app_and_its_lifespan_leave_the_gc_and_the_switch_interval_alone(make_gateway):
    before = (gc.get_threshold(), gc.get_freeze_count(), sys.getswitchinterval())
    gateway = make_gateway()  # create_app, then its lifespan on a real server
    completion, _ = gateway.ask()
    assert completion.model_extra["bench"]["seats"]
    gateway.close()  # the lifespan's shutdown too
    assert (gc.get_threshold(), gc.get_freeze_count(), sys.getswitchinterval()) == before


def test_importing_the_gateway_sets_no_environment():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "HF_", "AIOHTTP"))}
    script = (
        "import json, os, gateway, gateway.cli.main, gateway.serve.process\n"
        "print(json.dumps(sorted(k for k in gateway.serve.process.ENVIRONMENT if k in os.environ)))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []


def test_the_process_owners_environment_keeps_litellm_offline_as_it_loads():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LITELLM_", "HF_", "AIOHTTP"))}
    script = (
        "from gateway.serve import process\n"
        "process.set_environment()\n"
        "import os, gateway.upstream\n"
        "print(os.environ['LITELLM_OFFLINE_MODE'])"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "true"
    assert "cost map" not in done.stderr and "Failed to fetch" not in done.stderr


def test_the_process_that_serves_tunes_itself_once_the_app_has_started(tmp_path):
    """What `serve` runs (gateway.workers.served_app) in a process of its own: before start-up
    the interpreter is as Python left it; after, the owner's settings hold."""
    config = {
        "model_list": [
            {"model_name": "m", "litellm_params": {"model": "openai/m", "api_base": "http://x"}}
        ],
        "collections": {"c": {"members": ["m"]}},
        "store": f"sqlite:///{tmp_path / 'records.db'}",
    }
    script = f"""
import gc, json, sys
from pathlib import Path
from gateway.serve import process
process.own()
from gateway.serve.server import ServerThread
from gateway.config.settings import parse_config
from gateway.serve.workers import served_app
before = gc.get_threshold()
config = parse_config({config!r}, base=Path({str(tmp_path)!r}))
with ServerThread(served_app(config)):
    after = gc.get_threshold(), gc.get_freeze_count() > 0, sys.getswitchinterval()
print(json.dumps([before, after]))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    before, (threshold, frozen, interval) = json.loads(done.stdout.splitlines()[-1])
    assert before == list(gc.get_threshold())  # untouched until the app has started
    assert threshold == [50_000, 20, 10] and frozen and interval == 0.0005


def test_building_an_app_leaves_the_root_logger_as_the_process_had_it(tmp_path):
    """The MCP SDK's server configures the root logger when built (INFO, a rich handler); left
    so, every litellm call in a served gateway logged a line of its own. In a fresh interpreter
    (pytest's own handlers on the root would hide a change), nothing about it may change."""
    config = {
        "model_list": [
            {"model_name": "m", "litellm_params": {"model": "openai/m", "api_base": "http://x"}}
        ],
        "collections": {"c": {"members": ["m"]}},
        "store": f"sqlite:///{tmp_path / 'records.db'}",
    }
    script = f"""
import json, logging
from pathlib import Path
from gateway.serve import process
process.set_environment()
from gateway.app import create_app
from gateway.config.settings import parse_config
root = logging.getLogger()
before = [root.level, [type(h).__name__ for h in root.handlers]]
create_app(parse_config({config!r}, base=Path({str(tmp_path)!r})))
after = [root.level, [type(h).__name__ for h in root.handlers]]
print(json.dumps([before, after, logging.getLogger("LiteLLM").getEffectiveLevel()]))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert done.returncode == 0, done.stderr
    before, after, litellm_level = json.loads(done.stdout.splitlines()[-1])
    assert before == [30, []]  # Python's own: WARNING, no handler
    assert after == before
    assert litellm_level >= 30  # litellm's INFO line per call stays off
