"""The shell's client commands: `ask`, `verdict`, `status` and `mcp`, against a running gateway.

A person at a shell should not need curl: `bench-gateway ask reviewers < question.md` prints the
answers on stdout (so they pipe on) and the seat table with every call id on stderr. On a
terminal each seat appears the moment it finishes, under a live line of seats done and the
slowest still thinking: a panel waits on its slowest seat, and seeing which one it is tells you
whether to wait. Exit codes: 0 ok, 1 refused or failed (the gateway's message on stderr),
2 bad usage, 3 no gateway answering.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from gateway.cli import discover
from gateway.cli import models as models_cli
from gateway.cli import suite as suite_cli
from gateway.mcp.remote import Refused, RemoteGateway, Unreachable, settings
from gateway.records.usage import usage_lines

COMMANDS = ("ask", "verdict", "status", "mcp", "models", "suite")
USAGE, REFUSED, UNREACHABLE = 2, 1, 3
CONNECTION = "--url/--key default to $BENCH_GATEWAY_URL (else http://127.0.0.1:8123) and "
CONNECTION += "$BENCH_GATEWAY_KEY"


class UsageError(Exception):
    pass


def add_commands(command: Callable[[str, str, str], argparse.ArgumentParser]) -> None:
    """Register the client commands with the `bench-gateway` parser's *command* helper."""
    ask = command(
        "ask",
        "ask a panel from the shell: answers on stdout, the seat table on stderr",
        "git diff | bench-gateway ask reviewers 'Review this diff.'\n"
        "  bench-gateway ask reviewers -f question.md --shape review --with deepseek,glm\n"
        "  bench-gateway ask reviewers 'Is this right?' --json | jq .bench.seats",
    )
    ask.add_argument("collection", help="the collection to ask (bench/<name> or <name>)")
    ask.add_argument(
        "prompt", nargs="?", help="the prompt (-f FILE, then piped stdin, appended after it)"
    )
    ask.add_argument("-f", "--file", help="read the prompt from FILE (appended after PROMPT)")
    ask.add_argument("--shape", help="the panel's shape (review, design, ...)")
    ask.add_argument("--merged", action="store_true", help="one merged answer")
    ask.add_argument("--with", dest="nominees", help="models to seat as explorers: a,b")
    ask.add_argument("--system", help="a system message for every seat")
    ask.add_argument("--json", action="store_true", help="print the full reply as JSON")
    verdict = command(
        "verdict",
        "judge a seat's answer by its call id",
        "bench-gateway verdict p1a2b3c4d5e6.member1 --useful --note 'found the bug'",
    )
    verdict.add_argument("call", help="the call id from the seat table")
    judged = verdict.add_mutually_exclusive_group(required=True)
    judged.add_argument("--useful", dest="useful", action="store_true", default=None)
    judged.add_argument("--not-useful", dest="useful", action="store_false")
    verdict.add_argument("--note", help="why, in a sentence")
    status = command(
        "status",
        "models, cooldowns, rpm use and the verdicts you owe",
        "bench-gateway status",
    )
    mcp = command(
        "mcp",
        "MCP over stdio: the bench's tools for an agent, as a client of a running gateway",
        "claude mcp add bench -- bench-gateway mcp",
    )
    mcp.add_argument(
        "--verbose",
        action="store_true",
        help="log every request to the gateway on stderr (else $BENCH_LOG_LEVEL, else warnings)",
    )
    models = models_cli.add_command(command)
    suite = suite_cli.add_command(command)
    for parser in (ask, verdict, status, mcp, models, suite):
        parser.add_argument("--url", help="the gateway (default $BENCH_GATEWAY_URL or :8123)")
        parser.add_argument("--key", help="a gateway key (default $BENCH_GATEWAY_KEY)")
        parser.epilog = f"{parser.epilog}\n\n{CONNECTION}"


def takes_late_prompt(args: argparse.Namespace, extra: list[str]) -> bool:
    """`ask core --json 'the prompt'`: argparse leaves a prompt that follows a flag unparsed."""
    if args.command != "ask" or args.prompt is not None or len(extra) != 1:
        return False
    if extra[0].startswith("-"):
        return False
    args.prompt = extra[0]
    return True


def run(args: argparse.Namespace) -> int:
    url, key = settings(args.url, args.key)
    if args.command == "mcp":
        from gateway.mcp.stdio import run_stdio
        from gateway.mcp.tools import LOG_LEVELS

        level = "INFO" if args.verbose else os.environ.get("BENCH_LOG_LEVEL", "WARNING").upper()
        if level not in LOG_LEVELS:
            print(
                f"bench-gateway mcp: BENCH_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, "
                f"got {level!r}",
                file=sys.stderr,
            )
            return USAGE
        return run_stdio(url, key, level)
    try:
        if args.command == "ask":
            body, headers = ask_request(args)
            return asyncio.run(_with(url, key, lambda gw: ask(gw, body, headers, args.json)))
        if args.command == "models" and args.action == "discover":  # reads the providers, not us
            return discover.run(args)
        if args.command == "models":
            missing = models_cli.check(args)
            if missing:
                raise UsageError(missing)
            return asyncio.run(_with(url, key, lambda gw: models_cli.run(gw, args)))
        if args.command == "suite":
            missing = suite_cli.check(args)
            if missing:
                raise UsageError(missing)
            return asyncio.run(_with(url, key, lambda gw: suite_cli.run(gw, args)))
        if args.command == "verdict":
            judged = {"call": args.call, "useful": args.useful}
            if args.note is not None:
                judged["note"] = args.note
            return asyncio.run(_with(url, key, lambda gw: verdict(gw, judged)))
        return asyncio.run(_with(url, key, status))
    except UsageError as exc:
        print(f"bench-gateway {args.command}: {exc}", file=sys.stderr)
        return USAGE
    except Unreachable as exc:
        print(
            f"bench-gateway: {exc} Start one (bench-gateway demo, or serve), or name yours with "
            "--url or $BENCH_GATEWAY_URL.",
            file=sys.stderr,
        )
        return UNREACHABLE
    except Refused as exc:
        print(f"bench-gateway: {exc.message}", file=sys.stderr)
        if exc.bench:
            print_seats(exc.bench)
        return REFUSED


async def _with(url: str, key: str | None, work: Callable[[RemoteGateway], Any]) -> int:
    gateway = RemoteGateway(url, key)
    try:
        return int(await work(gateway))
    finally:
        await gateway.close()


def ask_request(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, str]]:
    """The chat body and headers for `ask`: the prompt is the argument, then the file, then
    what is piped in, each that is given (piped input is never dropped for an argument)."""
    from gateway.mcp.panel_text import chat_request

    parts = [args.prompt] if args.prompt else []
    if args.file:
        try:
            with open(args.file, encoding="utf-8") as handle:
                parts.append(handle.read())
        except (OSError, UnicodeError) as exc:
            raise UsageError(f"cannot read {args.file}: {exc}") from None
    if not sys.stdin.isatty():  # `git diff | ask reviewers 'Review this diff.'`: both go
        parts.append(sys.stdin.read())
    prompt = "\n\n".join(p for p in parts if p.strip())
    if not prompt:
        raise UsageError("no prompt: give PROMPT, -f FILE, or pipe it on stdin")
    nominees = [n.strip() for n in (args.nominees or "").split(",") if n.strip()]
    return chat_request(
        args.collection, prompt, args.system, args.shape, args.merged, nominees or None
    )


async def ask(
    gateway: RemoteGateway, body: dict[str, Any], headers: dict[str, str], as_json: bool
) -> int:
    from gateway.cli.progress import LiveSeats

    with LiveSeats(sys.stderr) as live:
        reply = await gateway.ask(body, headers, live.seated, live.finished)
    if as_json:
        print(json.dumps(reply, indent=2, ensure_ascii=False))
    else:
        print(reply["choices"][0]["message"]["content"])
    print_seats(reply["bench"])
    return 0


def print_seats(bench: dict[str, Any]) -> None:
    from gateway.mcp.panel_text import judgeable, seat_table

    print(seat_table(bench), file=sys.stderr)
    owed = judgeable(bench)
    if owed:
        # a line to paste as it is (no `|`: it would pipe into a command named --not-useful)
        print("judge a seat with:", file=sys.stderr)
        print(f"  bench-gateway verdict {owed[0]} --useful  # or --not-useful", file=sys.stderr)


async def verdict(gateway: RemoteGateway, judged: dict[str, Any]) -> int:
    answer = await gateway.verdict(judged)
    word = "recorded" if answer.get("recorded") else "unchanged (the same verdict was recorded)"
    print(f"verdict on {judged['call']}: {word}")
    return 0


async def status(gateway: RemoteGateway) -> int:
    models = await gateway.models()
    owed = await gateway.pending()
    now = time.time()
    for line in models_cli.action_lines(await gateway.health()):  # first: what to do
        print(line)
    print(f"gateway {gateway.url}")
    print(f"{'model':<16} {'connection':<12} {'role':<10} seated answered useful/judged  rpm  now")
    for m in models:
        n = {k: m.get(k) or 0 for k in ("seated", "answered", "useful", "judged", "rpm_used")}
        cooling = m.get("cooling_until")
        state = f"cooling {cooling - now:.0f} s ({m.get('cooling_why')})" if cooling else "ready"
        if m.get("health") in ("benched", "retired"):
            state = f"{m['health']} ({m.get('health_why')})"
        print(
            f"{m['alias']:<16} {m.get('connection') or '-':<12} {m.get('role') or '-':<10} "
            f"{n['seated']:>6} {n['answered']:>8} {n['useful']:>6}/{n['judged']:<6} "
            f"{n['rpm_used']:>4}  {state}"
        )
    calls = owed.get("owed") or []
    print(f"owed verdicts: {len(calls)}{'+' if len(calls) >= 50 else ''}")
    for row in calls[:10]:
        print(f"  {row['call']}  {row['alias']}  ({row['collection']})")
    for line in usage_lines(await gateway.usage()):
        print(line)
    return 0
