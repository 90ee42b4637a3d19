"""The comparative benchmark of issue 6: our gateway against LiteLLM's proxy, Benchwarmers 0.3.3
(the seed gateway it replaces) and a bare litellm loop, on one machine, over loopback only.

    .venv/bin/python benchmarks/compare.py                 # everything, full sizes
    .venv/bin/python benchmarks/compare.py --quick         # smaller sizes, 2 runs
    .venv/bin/python benchmarks/compare.py --only fanout,perseat --runs 5
    .venv/bin/python benchmarks/compare.py --only scale --scale-panels 300 --scale-seat-s 10
    .venv/bin/python benchmarks/compare.py --profile       # also py-spy our gateway
    .venv/bin/python benchmarks/compare.py --render        # only rewrite the doc from results
    .venv/bin/python benchmarks/compare.py --only replicas # PostgreSQL + Redis replicas
    .venv/bin/python benchmarks/compare.py --only route    # route mode's turn against litellm
    .venv/bin/python benchmarks/compare.py --only direct   # the direct reader against litellm's

Why one command: a performance claim nobody can re-run is an anecdote. This sets up the rivals
in their own venvs under benchmarks/.venvs/ (from PyPI; nothing of theirs is copied into the
repository), starts the simulated upstream, runs each measure several times, and writes
docs/performance.md with the medians, the spread and the command. Results are kept per measure
in benchmarks/.out/results.json, so ``--only`` refreshes those rows and keeps the others.

Every request loop is bounded in count and time; every process is stopped in a ``finally``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import direct_cost  # noqa: E402
import measure_cost  # noqa: E402
import measure_records  # noqa: E402
import measure_speed  # noqa: E402
import replicas  # noqa: E402
import replicas_report  # noqa: E402
import route_turn  # noqa: E402
from context import Ctx  # noqa: E402
from render_doc import ORDER, render  # noqa: E402
from report import render_table  # noqa: E402
from setup_envs import ensure  # noqa: E402

OUT = HERE / ".out"
RESULTS = OUT / "results.json"
DOC = HERE.parent / "docs" / "performance.md"
MEASURES = {
    "fanout": (measure_speed.fanout, ()),
    "perseat": (measure_cost.perseat, ("proxy", "seed")),
    "throughput": (measure_speed.throughput, ("seed",)),
    "scale": (measure_speed.scale, ()),
    "records": (measure_records.records, ()),
    "startup": (measure_cost.startup, ("proxy", "seed")),
    "replicas": (replicas.replicas, ()),
    "route": (route_turn.route, ()),
    "direct": (direct_cost.direct, ()),
}
NEEDS = {"fanout": ("seed",)}


def _workers(value: str) -> int:
    return (os.cpu_count() or 1) if value == "auto" else int(value)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes and 2 runs")
    parser.add_argument("--runs", type=int, help="runs per measure (default 3, quick 2)")
    parser.add_argument("--only", help=f"comma-separated subset of: {','.join(MEASURES)}")
    parser.add_argument("--scale-panels", type=int, help="concurrent panels (default 1000)")
    parser.add_argument("--scale-seat-s", type=float, help="seat latency for scale (default 30)")
    parser.add_argument("--record-rows", type=int, help="seats pre-filled (default 1,000,000)")
    parser.add_argument("--load-seconds", type=float, help="throughput window per level")
    parser.add_argument("--profile", action="store_true", help="py-spy our gateway (0-latency)")
    parser.add_argument(
        "--ours-workers",
        type=_workers,
        default="auto",
        help="run our gateway as `serve --workers N|auto` (default auto: one per core, as plain"
        " `serve` does)",
    )
    parser.add_argument(
        "--no-doc",
        action="store_true",
        help="do not rewrite docs/performance.md (results.json is still updated)",
    )
    parser.add_argument("--render", action="store_true", help="only rewrite the doc from results")
    parser.add_argument("--keep-work", action="store_true", help="keep logs/stores in .out/")
    return parser


def _load_results() -> dict:
    try:
        return json.loads(RESULTS.read_text())
    except (OSError, ValueError):
        return {}


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so every `finally` stops the processes it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    only = args.only if args.only is not None else ",".join(MEASURES)  # --only= : none
    chosen = [m.strip() for m in only.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in MEASURES]
    if unknown or (args.runs is not None and args.runs < 1):
        print(f"unknown measure(s) {unknown}; known: {', '.join(MEASURES)}", file=sys.stderr)
        return 2
    if args.render:
        results = _load_results()
        _write_doc(render(results, results.get(ORDER[0], {}).get("command", "?")))
        print(f"wrote {DOC} from {RESULTS}")
        return 0
    os.environ["BENCH_OURS_WORKERS"] = str(args.ours_workers)  # read by targets.start_ours
    work = OUT / time.strftime("run-%Y%m%d-%H%M%S")
    work.mkdir(parents=True, exist_ok=True)
    ctx = Ctx.make(
        work,
        args.runs,
        args.quick,
        scale_panels=args.scale_panels,
        scale_seat_s=args.scale_seat_s,
        record_rows=args.record_rows,
        seconds_per_load=args.load_seconds,
    )
    command = "python benchmarks/compare.py" + (" " + shlex.join(argv or sys.argv[1:])).rstrip()
    ctx.log(
        f"measures: {', '.join(chosen)}; runs {ctx.runs}; {'quick' if args.quick else 'full'}"
        f"; scratch {work}"
    )
    for env in sorted({e for m in chosen for e in MEASURES[m][1] + NEEDS.get(m, ())}):
        ensure(env)
    results = _load_results()
    failed: list[str] = []
    try:
        for name in chosen:
            ctx.notes, ctx.background = [], []
            ctx.log(f"== {name} ==")
            began = time.monotonic()
            try:
                measured = MEASURES[name][0](ctx)
            except Exception as exc:  # one broken measure must not lose the others
                ctx.log(f"{name} FAILED: {type(exc).__name__}: {exc}")
                failed.append(f"{name}: {type(exc).__name__}: {exc}")
                continue
            if name not in ("route", "direct"):  # (measured on one worker each)
                measured.setdefault("options", {})["ours_workers"] = args.ours_workers
            measured.update(
                mode="quick" if args.quick else "full",
                runs=ctx.runs,
                when=time.strftime("%Y-%m-%d %H:%M"),
                seconds=round(time.monotonic() - began),
                notes=ctx.notes,
                background=[round(b, 3) for b in ctx.background],
                command=command,
            )
            results[name] = measured
            RESULTS.write_text(json.dumps(results, indent=1))
            ctx.log(f"{name} done in {measured['seconds']} s")
        if args.profile:
            from profile_ours import profile

            results["_profile"] = profile(ctx) | {"mode": time.strftime("%Y-%m-%d %H:%M")}
            RESULTS.write_text(json.dumps(results, indent=1))
    finally:
        measure_cost.cleanup(ctx)
        if not args.keep_work and not failed:
            shutil.rmtree(work, ignore_errors=True)
    if any(k in ORDER for k in chosen):
        print("\n".join(render_table({k: v for k, v in results.items() if k in chosen})))
    if "replicas" in chosen and "replicas" in results:
        print("\n".join(replicas_report.table(results["replicas"])))
    if not args.no_doc and any(k in results for k in (*ORDER, "replicas")):
        DOC.parent.mkdir(parents=True, exist_ok=True)
        _write_doc(render(results, command))
        ctx.log(f"wrote {DOC}")
    for line in failed:
        print(f"FAILED {line} (logs kept in {work})", file=sys.stderr)
    return 1 if failed else 0


KEPT = re.compile(r"(?ms)^<!-- (\S+): begin -->$.*?^<!-- \1: end -->$")


def _write_doc(text: str) -> None:
    """The page, keeping the sections other scripts write into it (benchmarks/formats.py's),
    each between its `<!-- <script>: begin -->` and `<!-- <script>: end -->` lines."""
    old = DOC.read_text() if DOC.exists() else ""
    kept = "".join(f"\n\n{found.group(0)}" for found in KEPT.finditer(old))
    DOC.write_text(text.rstrip("\n") + kept + "\n")


if __name__ == "__main__":
    sys.exit(main())
