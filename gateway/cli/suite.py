"""`bench-gateway suite run`: start a suite run in a running gateway and wait for it, a bar of
tasks asked on a terminal (contract §20), then each model's figures.

A client of the gateway, as `bench-gateway models` is: the run happens inside the gateway (its
limits, cooldowns and records), so leaving this command does not stop it."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from gateway.mcp.remote import RemoteGateway
from gateway.suite import follow
from gateway.suite.figures import totals

POLL_S = 0.5
FOLLOW_WAIT_S = 10.0  # a follow-up starts at once when its run ends; longer: none will


def add_command(
    command: Callable[[str, str, str], argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    suite = command(
        "suite",
        "run the suite of known-answer tasks in a running gateway and show each model's figures",
        "bench-gateway suite run --models glm,deepseek --quick\n  bench-gateway suite drafts\n"
        "  bench-gateway suite approve --all",
    )
    suite.add_argument("action", choices=["run", "drafts", "approve", "reject"])
    suite.add_argument("draft", nargs="?", help="the draft to approve or reject")
    suite.add_argument("--all", action="store_true", help="approve every draft waiting")
    suite.add_argument("--models", help="comma-separated models (default every model)")
    suite.add_argument("--tasks", help="comma-separated task ids (default every task)")
    suite.add_argument(
        "--quick",
        action="store_true",
        help="the quick set (suite.quick tasks), then its follow-up (docs/suite.md)",
    )
    return suite


def check(args: argparse.Namespace) -> str | None:
    """What is missing from (or too much on) the command line, if anything."""
    if args.action in ("approve", "reject") and not (args.draft or args.all):
        return f"{args.action} needs a draft's id" + (
            " or --all" if args.action == "approve" else ""
        )
    if args.all and (args.action != "approve" or args.draft):
        return "--all goes with approve alone"
    if args.action in ("run", "drafts") and args.draft:
        return f"{args.action} takes no draft id"
    return None


def request_of(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {"quick": bool(args.quick)}
    for name in ("models", "tasks"):
        given = getattr(args, name)
        if given:
            body[name] = [part.strip() for part in given.split(",") if part.strip()]
    return body


async def run(gateway: RemoteGateway, args: argparse.Namespace) -> int:
    if args.action == "drafts":
        return print_drafts(await gateway.suite_drafts())
    if args.action in ("approve", "reject"):
        state = "approved" if args.action == "approve" else "rejected"
        ids = [d["id"] for d in await gateway.suite_drafts()] if args.all else [args.draft]
        for draft in ids:
            print(f"{draft}: {(await gateway.decide_draft(draft, args.action))['state']}")
        if not ids:
            print(f"no draft waits to be {state}")
        return 0
    run_id = await gateway.run_suite(request_of(args))
    print(f"suite run {run_id} started", file=sys.stderr)
    done = await _wait(gateway, run_id)
    runs = [done, *(await _follow_ups(gateway, done) if args.quick else [])]
    models: list[str] = []
    for each in runs:
        for note in each.get("notes") or []:
            print(f"note: {note}", file=sys.stderr)
        said = f"suite run {each['id']} {each['state']}: {each['asked']} asked, "
        print(said + f"{each['answered']} answered" + (" (follow-up)" if each is not done else ""))
        models += [m for m in each["models"] if m not in models]
    figures = (await gateway.suite())["models"]
    for line in figure_lines({alias: figures.get(alias, {}) for alias in models}):
        print(line)
    return 0 if all(each["state"] == "done" for each in runs) else 1


async def _follow_ups(gateway: RemoteGateway, first: dict[str, Any]) -> list[dict[str, Any]]:
    """The follow-up runs a quick set leads to (gateway/suite/follow.py), each waited for in
    turn while the last one's notes say another follows."""
    found: list[dict[str, Any]] = []
    last, seen = first, {first["id"]}
    while any(note.startswith(follow.LEADS) for note in last.get("notes") or []):
        following = await _next_follow_up(gateway, first["id"], seen)
        if following is None:
            break
        seen.add(following["id"])
        last = await _wait(gateway, following["id"])
        found.append(last)
    return found


async def _next_follow_up(
    gateway: RemoteGateway, origin: str, seen: set[str]
) -> dict[str, Any] | None:
    """The next follow-up of *origin* once it starts (it does as soon as the lock is free);
    None when another run holds the lock, or none starts within FOLLOW_WAIT_S: the gateway's
    log says why, and the schedule asks the rest."""
    said = follow.FOLLOWS.format(origin=origin)
    waited = 0.0
    while waited < FOLLOW_WAIT_S:
        runs: list[dict[str, Any]] = (await gateway.suite())["runs"]
        for row in runs:
            if row["id"] not in seen and (row.get("notes") or [""])[0] == said:
                return row
        if any(row["state"] == "running" and row["id"] not in seen for row in runs):
            return None
        await asyncio.sleep(POLL_S)
        waited += POLL_S
    return None


async def _wait(gateway: RemoteGateway, run_id: str) -> dict[str, Any]:
    console = Console(file=sys.stderr)
    columns = (TextColumn("suite"), BarColumn(), MofNCompleteColumn(), TextColumn("asked"))
    with Progress(*columns, console=console, disable=not console.is_terminal) as bar:
        shown = bar.add_task("suite", total=None)
        while True:
            runs: list[dict[str, Any]] = (await gateway.suite())["runs"]
            found = next((r for r in runs if r["id"] == run_id), None)
            if found is not None:
                bar.update(shown, total=found["total"], completed=found["asked"])
                if found["state"] != "running":
                    return found
            await asyncio.sleep(POLL_S)


def print_drafts(drafts: list[dict[str, Any]]) -> int:
    if not drafts:
        print("no draft waits (verdicts' real/false claims become drafts)")
    for d in drafts:
        first = d["code"].strip().splitlines()[0][:60] if d["code"].strip() else ""
        truth = "TRUE " if d["truth"] else "FALSE"
        print(f"{d['id']}  {truth}  {d['claim'][:70]!r}  (call {d['call']}; asked: {first!r})")
    return 0


def figure_lines(models: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    """One line per model and shape: found/of, false alarms, confidently wrong, accuracy."""
    lines = [f"{'model':<16} {'shape':<10} {'found':>7} {'false alarms':>13} "
             f"{'conf. wrong':>12} {'accuracy':>9}"]  # fmt: skip
    for alias, shapes in models.items():
        if not shapes:
            lines.append(f"{alias:<16} {'-':<10} (no answer scored)")
        for shape, f in sorted(shapes.items()):
            accuracy = "-" if f["accuracy"] is None else f"{f['accuracy']:.0%}"
            lines.append(
                f"{alias:<16} {shape:<10} {f['found']:>3}/{f['of']:<3} {f['false_alarms']:>13} "
                f"{f['confidently_wrong']:>12} {accuracy:>9}"
            )
    return lines


def summary(shapes: dict[str, dict[str, Any]]) -> str:
    """A model's suite figures over every shape, for `bench-gateway models`: found 3/5 · 1
    false alarm · 2 confidently wrong (or -: nothing scored)."""
    total = totals(shapes)
    if total is None:
        return "-"
    return (
        f"found {total['found']}/{total['of']} · {total['false_alarms']} false alarm(s) · "
        f"{total['confidently_wrong']} confidently wrong"
    )
