"""The simulated upstream on a clock that runs faster than the wall, for benchmarks/churn.py.

Why a runner of its own: `bench-gateway simulate` runs on the wall clock, and a month of churn
must play in minutes. The benchmark names the clock's *origin* (a wall time) and *speed*, so it
can tell the simulator's time from the wall's to the stamp.

    python benchmarks/churn_sim.py --port 8199 --speed 8640 --origin 1764800000 --spec sim.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import uvicorn  # noqa: E402

from simulator import create_sim_app, load_spec  # noqa: E402
from simulator.clock import ScaledClock  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--speed", type=float, required=True)
    parser.add_argument("--origin", type=float, required=True)
    parser.add_argument("--spec", required=True)
    args = parser.parse_args(argv)
    app = create_sim_app(load_spec(args.spec), clock=ScaledClock(args.speed, args.origin))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
