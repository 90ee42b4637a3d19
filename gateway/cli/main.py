"""The `bench-gateway` command: serve (gateway/cli/serve.py), demo, simulate, check-config, keys;
and the client commands (ask, verdict, status, mcp) from gateway/cli/client.py.

Exit codes: 0 ok, 1 failed (reason on stderr), 2 bad usage.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path
from typing import TextIO

from gateway.cli import client as client_cli
from gateway.cli import models as models_cli
from gateway.config.settings import ConfigError, load_config
from gateway.serve import process
from gateway.serve.ports import PortInUse, bound_socket, url_of

DEFAULT_CONFIG = "config/bench.yaml"

EXAMPLES = """examples:
  bench-gateway demo                      # offline: simulated upstream + gateway + one panel
  bench-gateway serve --config config/bench.yaml --port 8123
  bench-gateway simulate --port 8199 --spec config/simulate.yaml
  bench-gateway check-config --config config/bench.yaml
  bench-gateway keys create ci-bot --collections reviewers --rpm 30
  git diff | bench-gateway ask reviewers 'Review this diff.'  # answers on stdout, seats on stderr
  bench-gateway verdict p1a2b3c4d5e6.member1 --useful   # a call id from ask's seat table
  claude mcp add bench -- bench-gateway mcp            # the bench's tools for an agent
  bench-gateway store copy --from sqlite:///data/records.db --to postgresql://u:p@db/bench
"""


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("bench-gateway")
    except PackageNotFoundError:  # run from a tree that was never installed
        return "unknown (not installed)"


def _config_path(given: str | None) -> str:
    return given or os.environ.get("BENCH_CONFIG") or DEFAULT_CONFIG


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bench-gateway",
        description="A self-hosted, OpenAI-compatible panel gateway for LLMs.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"bench-gateway {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str, example: str) -> argparse.ArgumentParser:
        return commands.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=f"example:\n  {example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )

    serve = command("serve", "run the gateway", "bench-gateway serve --config config/bench.yaml")
    serve.add_argument("--config", help=f"config file (default {DEFAULT_CONFIG} or $BENCH_CONFIG)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8123)
    serve.add_argument(
        "--workers",
        type=_workers_flag,
        help="worker processes sharing one record store and one board of cooldowns, rpm caps "
        "and rotation: a number, or auto for one per core (default gateway.workers, else auto)",
    )

    demo = command(
        "demo",
        "offline demo: simulated upstream, a gateway and one real panel request",
        "bench-gateway demo --once",
    )
    demo.add_argument("--port", type=int, default=8123, help="the gateway's port (default 8123)")
    demo.add_argument("--once", action="store_true", help="exit after the first panel")

    simulate = command(
        "simulate",
        "run the simulated OpenAI-compatible upstream on its own",
        "bench-gateway simulate --port 8199 --spec config/simulate.yaml",
    )
    simulate.add_argument("--host", default="127.0.0.1")
    simulate.add_argument("--port", type=int, default=8199)
    simulate.add_argument("--spec", help="YAML/JSON file of per-model behaviours")

    check = command(
        "check-config",
        "validate a config and print what it defines",
        "bench-gateway check-config --config config/bench.yaml",
    )
    check.add_argument("--config", help=f"config file (default {DEFAULT_CONFIG} or $BENCH_CONFIG)")

    keys = command(
        "keys",
        "create, list and revoke gateway keys (kept in the record store)",
        "bench-gateway keys create ci-bot --collections reviewers --rpm 30",
    )
    keys.add_argument("action", choices=["create", "list", "revoke"])
    keys.add_argument("name", nargs="?", help="the key's name (create, revoke)")
    keys.add_argument("--collections", help="comma-separated collections it may use (default all)")
    keys.add_argument("--rpm", type=int, help="requests per minute it may send")
    keys.add_argument("--config", help=f"config file (default {DEFAULT_CONFIG} or $BENCH_CONFIG)")
    client_cli.add_commands(command)

    store = command(
        "store",
        "copy records from a SQLite store into PostgreSQL, or back (again: only what is new)",
        "bench-gateway store copy --from sqlite:///data/records.db --to postgresql://u:p@db/bench",
    )
    store.add_argument("action", choices=["copy"])
    store.add_argument(
        "--from", dest="source", required=True, metavar="sqlite:///PATH|postgresql://..."
    )
    store.add_argument(
        "--to", dest="target", required=True, metavar="postgresql://...|sqlite:///PATH"
    )
    return parser


def _workers_flag(text: str) -> int | str:
    if text == "auto":
        return text
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected a number of at least 1 or auto, got {text!r}")
    return count


def main(argv: list[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()
    except BrokenPipeError:
        # whoever read the output stopped reading (`check-config | head`): it has what it
        # wanted, so no error; the rest goes nowhere (nor fails again at exit)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


def _main(argv: list[str] | None) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not client_cli.takes_late_prompt(args, extra):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "models" and args.action in models_cli.EDITS:
        process.set_environment()  # the probe calls the model through litellm's seam
        from gateway.cli.add import run as run_edit

        return run_edit(args, _config_path(args.config))
    if args.command in client_cli.COMMANDS:  # clients of a running gateway: no litellm here
        return client_cli.run(args)
    process.set_environment()  # before any command can import litellm
    try:
        if args.command == "check-config":
            return check_config(_config_path(args.config))
        if args.command == "serve":
            from gateway.cli.serve import serve

            return serve(_config_path(args.config), args.host, args.port, args.workers)
        if args.command == "simulate":
            return simulate(args.host, args.port, args.spec)
        if args.command == "store":
            from gateway.store.copy import run_copy

            return run_copy(args.source, args.target)
        if args.command == "keys":
            from gateway.cli.keys import run_keys

            # the providers' secrets are not needed to manage keys: left unresolved
            return run_keys(load_config(_config_path(args.config), secrets=False), args)
        if args.command == "demo":
            from gateway.cli.demo import run_demo

            return run_demo(args.port, once=args.once)
    except ConfigError as exc:
        _print_problems(exc, sys.stderr)
        return 1
    except PortInUse as exc:
        print(f"bench-gateway: {exc.advice(args.command)}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as exc:
        print(f"bench-gateway: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    return 2


def check_config(path: str, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Validate *path* and print what it defines (or every problem with its path): 0 or 1."""
    from gateway.upstream.providers import check_providers

    out, err = out or sys.stdout, err or sys.stderr
    try:
        config = load_config(path)
        check_providers(config)
    except ConfigError as exc:
        _print_problems(exc, err)
        return 1
    catalog = config.catalog

    def say(line: str) -> None:
        print(line, file=out)

    say(f"config {Path(path)} is valid")
    for alias, why in config.unready.items():
        print(f"warning: model {alias}: {why}; it is benched until it is", file=err)
    for warning in config.warnings:
        print(f"warning: {warning}", file=err)
    for note in config.notes:
        say(note)
    say(f"store: {config.store}")
    say(f"state: {config.state or 'in this gateway (shared memory between its workers)'}")
    say("gateway:")
    for key, value in config.gateway.model_dump().items():
        say(f"  {key}: {_as_yaml(value)}")
    say("lifecycle:")
    for key, value in config.lifecycle.model_dump().items():
        say(f"  {key}: {_as_yaml(value)}")
    say("models:")
    for m in catalog.models:
        extra = " ad-hoc" if m.ad_hoc else ""
        caps = "".join(
            f" {name}={table[m.alias]}"
            for name, table in (("rpm", config.model_rpm), ("rpd", config.model_rpd))
            if m.alias in table
        )
        say(
            f"  {m.alias:<20} {m.served:<36} connection={m.connection} role={m.role} "
            f"family={m.family}{caps}{extra}"
        )
    say("connections:")
    for name in sorted({m.connection for m in catalog.models}):
        spec = config.connections.get(name)
        facts = (
            f" rpm={_as_yaml(spec.rpm)} rpd={_as_yaml(spec.rpd)} "
            f"preferred={_as_yaml(spec.preferred)} cool_together={_as_yaml(spec.cool_together)}"
            if spec
            else ""
        )
        say(f"  {name}{facts}")
    say("shapes:")
    for name, roles in catalog.shapes:
        say(f"  {name:<12} {', '.join(roles)}")
    say("collections:")
    for c in catalog.collections:
        say(
            f"  bench/{c.name:<16} members={', '.join(c.members)} shape={c.shape or 'general'}"
            f" reply={c.reply}  {c.description}"
        )
    return 0


def _as_yaml(value: object) -> str:
    """A setting as it would be written in the file: true, null, [a, b]."""
    if isinstance(value, bool) or value is None:
        return {True: "true", False: "false", None: "null"}[value]
    if isinstance(value, list):
        return "[" + ", ".join(map(str, value)) + "]"
    return str(value)


def _print_problems(exc: ConfigError, err: TextIO) -> None:
    print(f"bench-gateway: the config has {len(exc.problems)} problem(s):", file=err)
    for problem in exc.problems:
        print(f"  - {problem}", file=err)


def simulate(host: str, port: int, spec_path: str | None) -> int:
    """The simulated upstream on its own, logging its URL once it listens (a busy port: one
    line, before any work) and one line per request."""
    process.own()
    sock = bound_socket(host, port)

    from gateway.serve.access_log import AccessLog
    from gateway.serve.server import run_server
    from simulator import create_sim_app, load_spec

    log = logging.getLogger("bench.simulator")
    log.addFilter(_simulator_line)  # its lines told apart from a gateway's in one terminal
    spec = load_spec(spec_path) if spec_path else None
    app = create_sim_app(spec)
    app.add_middleware(AccessLog, gateway=False, logger=log)
    models = [m for m in app.state.sim.behaviours if m != "*"]

    def listening() -> None:
        log.info("Simulated upstream on %s/v1", url_of(host, port))
        log.info(
            "  spec: %s (models: %s)",
            spec_path or "none, every model answers",
            ", ".join(models) or "any name",
        )

    # uvicorn re-raises a captured SIGTERM once it has stopped: a no-op handler makes it exit 0
    signal.signal(signal.SIGTERM, lambda *_: None)
    return run_server(app, sock, listening, log_level="warning", access_log=False)


def _simulator_line(record: logging.LogRecord) -> bool:
    """`[simulator]` before each of the simulator's lines: run beside `serve` in one terminal
    (the README's `simulate &`), both log `POST /v1/chat/completions 200` in the same format."""
    if not str(record.msg).startswith("[simulator] "):
        record.msg = f"[simulator] {record.msg}"
    return True


if __name__ == "__main__":
    sys.exit(main())
