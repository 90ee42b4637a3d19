"""Start-up, as a newcomer waits for it: from `serve` to the first `/healthz` 200 and to the first
answered panel, ours (one worker, two workers) beside LiteLLM's proxy (`litellm --config`); and
what each command imports (`python -X importtime`), litellm above all.

    python benchmarks/startup.py                # 3 runs of each, medians and ranges
    python benchmarks/startup.py --runs 5 --no-proxy

Every process is real, on loopback, in front of the simulated upstream answering at once, and
offline (litellm's offline variables set, as `serve` sets them). Ours runs from this checkout
(`python -m gateway.cli`), the proxy from `benchmarks/.venvs/proxy` (benchmarks/setup_envs.py),
on the same litellm pin. Times are wall clock from the process's start, so they include the
interpreter's own start-up; the machine's load is printed with them, as it moves them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from setup_envs import venv_bin  # noqa: E402
from targets import OFFLINE_ENV, Proc, free_port  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OURS = [sys.executable, "-m", "gateway.cli"]
HERE_ENV = {**OFFLINE_ENV, "PYTHONPATH": str(ROOT)}  # this checkout's code, not an installed one
QUESTION = [{"role": "user", "content": "Is this retry loop safe?"}]


def post(url: str, body: dict, headers: dict | None = None) -> int:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def timed_start(proc: Proc, health: str, ask: tuple[str, dict, dict]) -> tuple[float, float, float]:
    """(seconds to the first health 200, to the first answered request, CPU seconds to the
    first health 200) of a process started just now."""
    healthy = proc.wait_ready(health, timeout=300, headers=ask[2])
    cpu = proc.cpu()
    while True:
        status = post(*ask)
        if status == 200:
            return healthy, time.monotonic() - proc.started, cpu
        if time.monotonic() - proc.started > 300:
            raise RuntimeError(f"{proc.name}: no answer ({status}): {proc.tail()}")
        time.sleep(0.02)


def start_sim(work: Path) -> tuple[Proc, str]:
    spec = work / "sim.json"
    spec.write_text(json.dumps({"models": {"*": {"latency_s": 0}}}))
    port = free_port()
    proc = Proc(
        "simulator",
        [*OURS, "simulate", "--port", str(port), "--spec", str(spec)],
        work / "sim.log",
        env=HERE_ENV,
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    proc.wait_ready(url + "/healthz", timeout=120)
    return proc, url


def ours(work: Path, sim: str, workers: int) -> tuple[float, float, float]:
    raw = yaml.safe_load((ROOT / "config" / "bench.yaml").read_text())
    for entry in raw["model_list"]:
        entry["litellm_params"]["api_base"] = f"{sim}/v1"
    raw["store"] = f"sqlite:///{work / secrets.token_hex(4)}.db"
    config = work / "bench.yaml"
    config.write_text(yaml.safe_dump(raw))
    port = free_port()
    argv = [*OURS, "serve", "--config", str(config), "--port", str(port)]
    url = f"http://127.0.0.1:{port}"
    body = {"model": "bench/reviewers", "messages": QUESTION}
    with Proc(f"ours-{workers}", [*argv, "--workers", str(workers)], work / "ours.log",
              env=HERE_ENV, cwd=ROOT) as proc:  # fmt: skip
        return timed_start(proc, f"{url}/healthz", (f"{url}/v1/chat/completions", body, {}))


def proxy(work: Path, sim: str) -> tuple[float, float, float]:
    config = work / "proxy.yaml"
    config.write_text(
        "model_list:\n"
        f"  - model_name: m1\n"
        f'    litellm_params: {{model: openai/sim-m1, api_base: "{sim}/v1", api_key: sim}}\n'
        "litellm_settings: {num_retries: 0, request_timeout: 60, telemetry: false}\n"
    )
    key = "sk-" + secrets.token_hex(24)
    port = free_port()
    argv = [str(venv_bin("proxy", "litellm")), "--config", str(config)]
    argv += ["--host", "127.0.0.1", "--port", str(port)]
    env = {**OFFLINE_ENV, "LITELLM_MASTER_KEY": key, "LITELLM_DONT_SHOW_FEEDBACK_BOX": "true"}
    url = f"http://127.0.0.1:{port}"
    body = {"model": "m1", "messages": QUESTION}
    with Proc("litellm-proxy", argv, work / "proxy.log", env=env, cwd=work) as proc:
        ask = (f"{url}/chat/completions", body, {"Authorization": f"Bearer {key}"})
        return timed_start(proc, f"{url}/health/liveliness", ask)


IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+(\d+) \|\s*(\S+)$")


def imports(argv: list[str], cwd: Path) -> tuple[float, int, float | None]:
    """(wall seconds, modules imported, litellm's cumulative import seconds or None) of a
    command run with `-X importtime`."""
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **HERE_ENV},
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    wall = time.monotonic() - began
    found = [m for m in map(IMPORT_LINE.match, done.stderr.splitlines()) if m]
    litellm = next((int(m[1]) / 1e6 for m in found if m[2] == "litellm"), None)
    return wall, len(found), litellm


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} s ({min(values):.1f}–{max(values):.1f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-proxy", action="store_true")
    args = parser.parse_args()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average: {load}; cores: {os.cpu_count()}")
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as folder:
        work = Path(folder)
        (work / "config").mkdir()
        for name in ("bench.yaml", "simulate.yaml"):
            (work / "config" / name).write_text((ROOT / "config" / name).read_text())
        print("\n| command | wall | modules | litellm imported |\n| --- | --- | --- | --- |")
        gone = "http://127.0.0.1:9"  # nothing listens: the client commands stop at the first call
        for label, argv in [
            ("`import litellm`", ["-c", "import litellm"]),
            ("`import gateway.app`", ["-c", "import gateway.app"]),
            ("`--help`", [*OURS[1:], "--help"]),
            ("`check-config`", [*OURS[1:], "check-config"]),
            ("`keys list`", [*OURS[1:], "keys", "list"]),
            ("`verdict`", [*OURS[1:], "verdict", "p1.member1", "--useful", "--url", gone]),
            ("`status`", [*OURS[1:], "status", "--url", gone]),
            ("`ask`", [*OURS[1:], "ask", "reviewers", "hi", "--url", gone]),
        ]:
            wall, count, litellm = imports(argv, work)
            said = "no" if litellm is None else f"yes, {litellm:.1f} s of it"
            print(f"| {label} | {wall:.1f} s | {count} | {said} |")
        sim, sim_url = start_sim(work)
        with sim:
            rows = {"ours, `serve --workers 1`": lambda: ours(work, sim_url, 1),
                    "ours, `serve --workers 2`": lambda: ours(work, sim_url, 2)}  # fmt: skip
            if not args.no_proxy:
                rows["LiteLLM proxy, `litellm --config`"] = lambda: proxy(work, sim_url)
            print("\n| | first health 200 | first answer | CPU to health |")
            print("| --- | --- | --- | --- |")
            for label, start in rows.items():
                runs = [start() for _ in range(args.runs)]
                health, answer, cpu = (list(column) for column in zip(*runs, strict=True))
                print(f"| {label} | {spread(health)} | {spread(answer)} | {spread(cpu)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
