"""The rivals: LiteLLM's proxy and the Benchwarmers 0.3.3 gateway, each started from its own venv
under benchmarks/.venvs/ (see setup_envs.py) and configured only through its documented files,
flags and environment variables, against the same simulated upstream and the same five models as
our gateway. Nothing of either is copied into this repository.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
from pathlib import Path

from setup_envs import venv_bin
from targets import OFFLINE_ENV, Proc, free_port, models

# --- LiteLLM's proxy ----------------------------------------------------------------------------


def start_proxy(work: Path, sim: str) -> tuple[Proc, str, dict]:
    """`litellm --config` without a database: only a master key is required (the proxy refuses
    to start without one), and the offline variables keep it from fetching anything."""
    lines = ["model_list:"]
    for m in models(5):
        lines += [
            f"  - model_name: {m}",
            f'    litellm_params: {{model: openai/sim-{m}, api_base: "{sim}/v1", api_key: sim}}',
        ]
    lines += [
        "litellm_settings:",
        "  num_retries: 0",
        "  request_timeout: 60",
        "  telemetry: false",
    ]
    config = work / "proxy.yaml"
    config.write_text("\n".join(lines) + "\n")
    key = "sk-" + secrets.token_hex(24)
    port = free_port()
    argv = [str(venv_bin("proxy", "litellm")), "--config", str(config)]
    argv += ["--host", "127.0.0.1", "--port", str(port)]
    env = {**OFFLINE_ENV, "LITELLM_MASTER_KEY": key, "LITELLM_DONT_SHOW_FEEDBACK_BOX": "true"}
    proc = Proc("litellm-proxy", argv, work / "proxy.log", env=env, cwd=work)
    url = f"http://127.0.0.1:{port}"
    try:
        proc.wait_ready(url + "/health/liveliness", timeout=180)
    except BaseException:
        proc.stop()
        raise
    return proc, url, {"Authorization": f"Bearer {key}"}


# --- Benchwarmers 0.3.3 -------------------------------------------------------------------------


def seed_home(work: Path, sim: str) -> tuple[Path, dict]:
    """A fresh data folder: `benchwarmers init --endpoint` (which checks the endpoint answers),
    five models registered in the llm-style yaml its client reads, one 5-member collection."""
    home = work / f"seed-home-{secrets.token_hex(3)}"
    env = {
        "BENCHWARMERS_HOME": str(home),
        "LLM_USER_PATH": str(home / "llm"),
        "XDG_CONFIG_HOME": str(home / "xdg-config"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        "BENCHWARMERS_KEY_SIM": "sim-key",
        "BENCH_CLIENT": "builtin",  # its default since v0.3; no `llm` subprocess per seat
        "BENCH_BIND": "127.0.0.1",
    }
    init = [str(venv_bin("seed", "benchwarmers")), "init", str(home), "--endpoint", "sim"]
    subprocess.run(
        [*init, f"{sim}/v1"],
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    blocks = [
        f'- model_id: {m}\n  model_name: sim-{m}\n  api_base: "{sim}/v1"\n  api_key_name: sim\n'
        for m in models(5)
    ]
    (home / "config" / "extra-openai-models.yaml").write_text("\n".join(blocks))
    collection = {"members": models(5), "shape": "general", "description": "benchmark panel"}
    collection.update(tags=[], reply="all", merger="")
    (home / "config" / "collections.json").write_text(json.dumps({"five": collection}))
    return home, env


def start_seed(work: Path, sim: str) -> tuple[Proc, str]:
    home, env = seed_home(work, sim)
    port = free_port()
    env["BENCH_GATEWAY_PORT"] = str(port)
    argv = [str(venv_bin("seed", "benchwarmers")), "gateway"]
    proc = Proc("benchwarmers", argv, work / "seed.log", env=env, cwd=home)
    url = f"http://127.0.0.1:{port}"
    try:
        proc.wait_ready(url + "/v1/models", timeout=90)
    except BaseException:
        proc.stop()
        raise
    return proc, url
