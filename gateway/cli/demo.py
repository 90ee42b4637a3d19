"""`bench-gateway demo`: the whole product, offline, in one command.

It starts the simulated upstream and a gateway on the shipped demo config, asks one real panel
through the official OpenAI SDK, prints every seat's answer with its call id, and keeps serving.
Its simulated models answer from the prompt (simulator/reading.py), so their answers overlap
and differ as a panel's do.
Its records live in a temporary folder that goes when the demo does (Ctrl-C or SIGTERM too).
"""

from __future__ import annotations

import io
import signal
import sys
import tempfile
import textwrap
import threading
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from gateway.config.settings import Config, parse_config
from gateway.serve import process
from gateway.serve.ports import PortInUse, free_port
from gateway.serve.server import ServerThread

PROMPT = "Review this change: fetch() now retries forever on any error. Anything wrong?"


def demo_config(sim_url: str, store_dir: Path) -> Config:
    text = resources.files("gateway.cli").joinpath("demo.yaml").read_text(encoding="utf-8")
    raw = yaml.safe_load(text.replace("{SIM}", sim_url))
    raw["store"] = f"sqlite:///{store_dir / 'records.db'}"
    return parse_config(raw, base=store_dir)


def run_demo(port: int, *, once: bool = False) -> int:
    process.own()
    # line by line, on a terminal or not: what it prints is for pasting (or reading, by a script)
    # as soon as it is printed, not when a buffer fills
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)
    # SIGTERM ends the demo as Ctrl-C does: servers stopped, temporary folder removed
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as folder:
        try:
            return _demo(port, Path(folder), once)
        except PortInUse as exc:
            print(f"bench-gateway: {exc.advice('demo')}", file=sys.stderr)
            return 1


def _demo(port: int, store_dir: Path, once: bool) -> int:
    import openai

    from gateway.app import create_app
    from simulator import create_sim_app, load_spec

    spec = load_spec(str(resources.files("gateway.cli").joinpath("demo_simulate.yaml")))
    with ServerThread(create_sim_app(spec), port=free_port()) as sim:
        config = demo_config(f"{sim.url}/v1", store_dir)
        with ServerThread(create_app(config), port=port) as gateway:
            process.tune_the_collector()  # both servers are up: freeze what start-up built
            base = f"{gateway.url}/v1"
            print(f"Bench Gateway demo: simulated upstream at {sim.url}, gateway at {base}")
            print(f"Dashboard: {gateway.url}/  (open it to see the panel and judge its seats)")
            print(f"Records: {store_dir / 'records.db'} (removed when the demo ends)\n")
            client = openai.OpenAI(base_url=base, api_key="local", max_retries=0, timeout=60)
            raw = client.chat.completions.with_raw_response.create(
                model="bench/reviewers",
                messages=[{"role": "user", "content": PROMPT}],
                extra_headers={"X-Panel-Shape": "review"},
            )
            show(raw.parse(), gateway.url)
            client.close()
            if once:
                return 0
            print(f"\nServing on {base}, the dashboard at {gateway.url}/. Try also:")
            print(f"  curl -s {base}/models\n  curl -s {gateway.url}/bench/models")
            print("Ctrl-C stops the demo.")
            try:
                threading.Event().wait()
            except KeyboardInterrupt:
                print("\nstopping")
    return 0


def show(completion: Any, url: str) -> None:
    bench = completion.model_extra["bench"]
    print(
        f"panel {bench['panel']} · bench/{bench['collection']} · shape {bench['shape']} "
        f"({bench['shape_by']})\n"
    )
    for seat in bench["seats"]:
        print(
            f"── {seat['seat']} — {seat['alias']} ({seat['connection']}) · {seat['status']} · "
            f"{seat['seconds']:.2f} s · call {seat['call']}"
        )
        said = seat["answer"] or seat["error"] or ""
        print(textwrap.indent(said, "   ") + "\n")  # every line of it under its seat
    first = bench["seats"][0]["call"]
    print("Send a verdict on any call id, then read its record, e.g.:")
    print(
        f"  curl -s {url}/bench/verdict -H 'Content-Type: application/json' "
        f'-d \'{{"call": "{first}", "useful": true}}\''
    )
    print(f"  curl -s {url}/bench/calls/{first}")
