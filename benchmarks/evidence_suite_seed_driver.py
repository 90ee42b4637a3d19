"""Runs inside the seed's venv (Benchwarmers 0.3.3): its route mode's ranking, asked turn by turn.

Started by benchmarks/evidence_suite_seed.py with BENCHWARMERS_HOME set to a data folder holding
the seed's own records (the llm-style yaml of registered models, suite/tasks/<id>/task.json with
saved answers in output/<alias>.md, metrics/offloads.jsonl). Nothing here ranks anything: each
`order` line calls the seed's `gateway.route_order`, which reads those records itself (verdicts
through `offload.summary`, suite findings through `route.suite_recall`), and each `record` line
writes a seat or its verdict with the seed's `offload.add`, as its gateway's `record_seat` and
`/bench/verdict` do. One JSON line in, one JSON line out.
"""

from __future__ import annotations

import importlib
import json
import random
import sys
from pathlib import Path
from typing import Any


def main() -> int:
    package = Path(next(iter(importlib.import_module("benchwarmers").__path__)))
    for folder in (package / "suite", package / "metrics", package):  # as its gateway.py does
        sys.path.insert(0, str(folder))
    # the seed's modules by their own names (gateway.py is its, not this project's package)
    seed: list[Any] = [importlib.import_module(m) for m in ("gateway", "offload", "route")]
    gateway, offload, route = seed

    for line in sys.stdin:
        ask: dict[str, Any] = json.loads(line)
        out: dict[str, Any] = {}
        if ask["op"] == "seed":
            random.seed(ask["seed"])  # route_order's rotation draws from `random`
        elif ask["op"] == "order":
            state = random.getstate()
            rotate, gateway.ROTATE = gateway.ROTATE, 0.0
            ranked = gateway.route_order(ask["aliases"])  # the order before any rotation
            gateway.ROTATE = rotate
            random.setstate(state)
            out = {"order": gateway.route_order(ask["aliases"]), "ranked": ranked}
        elif ask["op"] == "record":
            offload.add(ask["alias"], ask["task"], ask["useful"], "", call=ask["call"])
        elif ask["op"] == "recall":
            out = {"recall": route.suite_recall()}
        print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
