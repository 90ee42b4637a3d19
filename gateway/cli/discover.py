"""`bench-gateway models discover`: what each connection's provider lists, beside the bench
(contract §19), read straight from the providers (no running gateway needed).

Per connection: the models it serves that the bench does not have (free, context, tools, expiry
where the listing states them), the bench's models the listing lacks (unlisted: a running
gateway does not explore them), and the bench's models that expire within
`lifecycle.expiry_warn_days`. A connection whose listing cannot be read says why in a line; the
rest are still shown. Exit codes: 0 every listing read, 1 one could not be (or the config is
refused), 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import sys
from typing import Any

from gateway.config.settings import Config, ConfigError, load_config
from gateway.upstream.listing import Entry, ListingFailed, match, read_listing
from gateway.upstream.listing_sources import Source, listing_url, provider_and_name, sources

DEFAULT_CONFIG = "config/bench.yaml"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--connection",
        metavar="C",
        help="discover: only this connection; add: what shares its rate limit "
        "(default: api_base's host:port)",
    )
    parser.add_argument("--json", action="store_true", help="discover: print JSON")
    parser.add_argument(
        "--config", help=f"the config file (discover, add, remove; default {DEFAULT_CONFIG})"
    )


def run(args: argparse.Namespace) -> int:
    if args.alias:
        print(f"bench-gateway models discover: unexpected {args.alias!r}", file=sys.stderr)
        return 2
    try:
        config = load_config(args.config or os.environ.get("BENCH_CONFIG") or DEFAULT_CONFIG)
    except ConfigError as exc:
        for problem in exc.problems:
            print(f"bench-gateway models discover: {problem}", file=sys.stderr)
        return 1
    names = sorted({m.connection for m in config.catalog.models})
    if args.connection is not None and args.connection not in names:
        print(
            f"bench-gateway models discover: no connection {args.connection!r} in "
            f"{config.path}; its connections: {', '.join(names)}",
            file=sys.stderr,
        )
        return 2
    found = asyncio.run(discover(config, args.connection))
    if args.json:
        print(json.dumps({"connections": found}, indent=2))
    else:
        for line in text_lines(found):
            print(line)
    return 1 if any(c["error"] for c in found) else 0


async def discover(config: Config, connection: str | None = None) -> list[dict[str, Any]]:
    """Each connection's report, read listings and unread ones alike, in name order."""
    today = datetime.datetime.now(datetime.UTC).date()
    warn = config.lifecycle.expiry_warn_days
    read = sources(config, connection)
    results = await asyncio.gather(*(_read(s) for s in read))
    # every bench model's name at its provider, on any connection: a listing's entry by one
    # of these names is on the bench already
    bench = [provider_and_name(params)[1] for params in config.litellm_params.values()]
    reports = [
        _report(config, s, r, today, warn, bench) for s, r in zip(read, results, strict=True)
    ]
    unread = sorted(
        {
            m.connection
            for m in config.catalog.models
            if connection in (None, m.connection)
            and listing_url(config, m.alias, m.connection) is None
        }
        - {s.connection for s in read}
    )
    reports += [_unread(name) for name in unread]
    return sorted(reports, key=lambda r: str(r["connection"]))


async def _read(source: Source) -> list[Entry] | ListingFailed:
    try:
        return await read_listing(source.url, source.key)
    except ListingFailed as exc:
        return exc


def _report(
    config: Config,
    source: Source,
    result: list[Entry] | ListingFailed,
    today: datetime.date,
    warn: float,
    bench: list[str],
) -> dict[str, Any]:
    report: dict[str, Any] = {"connection": source.connection, "url": source.url, "error": None}
    if isinstance(result, ListingFailed):
        unset = [config.unready[a] for a in source.names if a in config.unready]
        report["error"] = str(result) + (f" (its key: {unset[0]})" if unset else "")
        return report
    matched = {alias: match(name, result) for alias, name in source.names.items()}
    taken = {e.id for e in (match(name, result) for name in bench) if e is not None}
    served = [e for e in result if e.id not in taken]
    served.sort(key=lambda e: (e.free is not True, e.id))
    report["listed"] = len(result)
    report["served"] = [e.as_dict() for e in served]
    report["missing"] = [
        {"alias": a, "name": source.names[a]} for a, e in matched.items() if e is None
    ]
    expiring = []
    for alias, entry in matched.items():
        if entry is None or entry.expires is None:
            continue
        left = (datetime.date.fromisoformat(entry.expires) - today).days
        if left <= warn:
            expiring.append({"alias": alias, "expires": entry.expires, "days": left})
    report["expiring"] = expiring
    return report


def _unread(name: str) -> dict[str, Any]:
    return {
        "connection": name,
        "url": None,
        "error": None,
        "unread": "not a provider known to list its models; `listing: true` on the connection "
        "reads {api_base}/models",
    }


def text_lines(reports: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for report in reports:
        name = report["connection"]
        if report.get("unread"):
            lines += [f"{name}: no listing read ({report['unread']})", ""]
            continue
        if report["error"]:
            lines += [f"{name}: the listing at {report['url']} {report['error']}", ""]
            continue
        lines.append(f"{name}: {report['listed']} models listed at {report['url']}")
        lines.append("  served, not on the bench:" + ("" if report["served"] else " none"))
        lines += [f"    {_described(entry)}" for entry in report["served"]]
        lines.append("  on the bench, not listed:" + ("" if report["missing"] else " none"))
        lines += [f"    {m['alias']} ({m['name']})" for m in report["missing"]]
        lines.append("  expiring soon:" + ("" if report["expiring"] else " none"))
        lines += [f"    {_expiry(e)}" for e in report["expiring"]]
        lines.append("")
    return lines[:-1] if lines else lines


def _described(entry: dict[str, Any]) -> str:
    facts = {True: "free", False: "paid", None: "price ?"}[entry["free"]]
    if entry["context_length"]:
        facts += f", context {entry['context_length']}"
    if entry["tools"] is not None:
        facts += ", tools" if entry["tools"] else ", no tools"
    if entry["expires"]:
        facts += f", expires {entry['expires']}"
    return f"{entry['id']:<40} {facts}"


def _expiry(expiring: dict[str, Any]) -> str:
    days = expiring["days"]
    if days <= 0:
        return f"{expiring['alias']} expired on {expiring['expires']}"
    left = "1 day" if days == 1 else f"{days} days"
    return f"{expiring['alias']} expires on {expiring['expires']} (in {left})"
