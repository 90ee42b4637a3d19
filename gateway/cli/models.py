"""`bench-gateway models`: each model's health, and retiring or restoring one by hand
(contract §18), as a client of a running gateway; `add` and `remove` edit the config file
(gateway/cli/add.py)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from gateway.cli import add as add_cli
from gateway.cli import discover
from gateway.cli.suite import summary
from gateway.mcp.remote import RemoteGateway

EDITS = ("add", "remove")  # these edit the config file, no gateway needed (gateway/cli/add.py)


def add_command(
    command: Callable[[str, str, str], argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    models = command(
        "models",
        "models with their health; retire or restore one by hand (the dashboard's admin); add "
        "or remove one in the config file",
        "bench-gateway models\n  bench-gateway models retire glm --why 'withdrawn upstream'\n"
        "  bench-gateway models restore glm\n"
        "  bench-gateway models discover --connection openrouter",
    )
    actions = ["list", "retire", "restore", "discover", *EDITS]  # discover.py, add.py
    models.add_argument("action", nargs="?", choices=actions, default="list")
    models.add_argument("alias", nargs="?", help="the model to retire, restore, add or remove")
    models.add_argument("--why", help="why it is retired (retire)")
    discover.add_arguments(models)  # --connection and --config, which add shares
    add_cli.add_arguments(models)
    return models


def check(args: argparse.Namespace) -> str | None:
    """What is missing from the command line, if anything."""
    if args.action in ("retire", "restore") and not args.alias:
        return f"{args.action} needs the model's alias"
    if args.action == "retire" and not (args.why or "").strip():
        return "retire needs --why TEXT"
    if args.action == "list" and args.alias:
        return f"unknown action {args.alias!r}: list, retire or restore"
    return None


async def run(gateway: RemoteGateway, args: argparse.Namespace) -> int:
    if args.action == "retire":
        print_changed(await gateway.retire(args.alias, args.why.strip()))
    elif args.action == "restore":
        print_changed(await gateway.restore(args.alias))
    else:
        print_models(await gateway.models())
    return 0


def print_changed(row: dict[str, Any]) -> None:
    print(
        f"{row['alias']}: {row['health']}"
        + (f" ({row['health_why']})" if row.get("health_why") else "")
    )


def print_models(models: list[dict[str, Any]]) -> None:
    now = time.time()
    print(f"{'model':<16} {'connection':<20} {'health':<8} why")
    for m in models:
        why = m.get("health_why") or ""
        trial = m.get("next_trial")
        if m.get("health") == "benched" and trial:
            why = f"{why} (next trial in {max(trial - now, 0):.0f} s)"
        if m.get("suite"):  # its suite figures, once any answer was scored (contract §20)
            why = f"{why}  [suite: {summary(m['suite'])}]".strip()
        print(
            f"{m['alias']:<16} {m.get('connection') or '-':<20} {m.get('health') or 'ok':<8} {why}"
        )


def action_lines(health: dict[str, Any]) -> list[str]:
    """`status`'s first lines: the actions a person should take, if any."""
    actions = health.get("actions") or []
    if not actions:
        return []
    return ["action needed:", *(f"  - {text}" for text in actions)]
