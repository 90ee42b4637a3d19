"""Turning measured runs into figures and the markdown table of docs/performance.md.

Why a module of its own: every figure is the median of several runs with the run-to-run spread
beside it, and every ratio is taken run by run (ours and the rival measured in the same run,
on the same machine state) before its median is taken. Keeping that arithmetic in one place
keeps it the same for every row.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable

COLUMNS = ("proxy", "seed", "bare", "ours")
HEADER = "| measure | goal | LiteLLM proxy | Benchwarmers 0.3.3 | bare litellm | ours | ratio |"


def summary(values: Iterable[float | None]) -> dict | None:
    got = [float(v) for v in values if v is not None]
    if not got:
        return None
    return {
        "median": statistics.median(got),
        "min": min(got),
        "max": max(got),
        "n": len(got),
        "runs": got,
    }


def ratios(numerators: list, denominators: list) -> dict | None:
    """Run-by-run ratios (pairs where both were measured), summarised."""
    return summary(a / b for a, b in zip(numerators, denominators, strict=False) if a and b)


def _num(value: float, digits: int) -> str:
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.{digits}f}"


def fmt(stat: dict | None, digits: int = 2, unit: str = "") -> str:
    if stat is None:
        return "—"
    text = _num(stat["median"], digits) + unit
    if stat["n"] > 1:
        text += f" ({_num(stat['min'], digits)}–{_num(stat['max'], digits)})"
    return text


def verdict(stat: dict | None, limit: float, *, at_most: bool) -> str:
    if stat is None:
        return ""
    met = stat["median"] <= limit if at_most else stat["median"] >= limit
    return " ✅" if met else " ❌"


def row(label: str, goal: str, cells: dict, ratio: str = "") -> str:
    values = [cells.get(c, "—") or "—" for c in COLUMNS]
    return "| " + " | ".join([label, goal, *values, ratio or "—"]) + " |"


def render_table(results: dict) -> list[str]:
    """The comparison table, one or more rows per measure that has results."""
    lines = [HEADER, "|" + "---|" * 7]
    for name in (
        "fanout", "perseat", "throughput", "scale", "records", "startup", "route", "direct"
    ):  # fmt: skip
        found = results.get(name)
        if found:
            lines += _ROWS[name](found["figures"], found.get("options", {}))
    return lines


def _fanout(f: dict, o: dict) -> list[str]:
    label = (
        f"Fan-out: panel wall time ÷ slowest seat ({o.get('seats', 5)} seats × {o.get('seat_s')} s)"
    )
    cells = {"seed": fmt(f.get("seed"), 3), "ours": fmt(f.get("ours"), 3)}
    if f.get("bare_five"):
        cells["bare"] = fmt(f.get("bare_five"), 3) + " (five calls at once)"
    ratio = fmt(f.get("ours"), 3) + verdict(f.get("ours"), 1.05, at_most=True)
    out = [row(label, "≤ 1.05", cells, ratio)]
    if f.get("bare_one"):
        out.append(
            row(
                "… one seat asked alone through litellm, same upstream (the floor of any panel)",
                "(for reference)",
                {"bare": fmt(f.get("bare_one"), 3)},
                "ours / one seat alone " + fmt(f.get("ours_vs_one"), 3),
            )
        )
    if f.get("cpu_busy") and f.get("cpu_idle"):
        cpu = fmt(f.get("cpu_busy"), 2, " ms") + " / " + fmt(f.get("cpu_idle"), 2, " ms")
        out.append(
            row(
                "… litellm's CPU per call, one at a time: back to back / waiting "
                f"{o.get('seat_s')} s between calls, as a panel's seats do",
                "(for reference)",
                {"bare": cpu},
            )
        )
    return out


def _mode(streamed) -> str:
    return {True: "seats streamed", False: "seats not streamed"}.get(streamed, "seat mode unknown")


def _perseat(f: dict, o: dict) -> list[str]:
    ms = lambda key: fmt(f.get(key), 2, " ms")  # noqa: E731
    return [
        row(
            "CPU per seat call, 0-latency upstream (proxy: per request; bare: same call mode)",
            "ours ≤ 0.5× proxy",
            {"proxy": ms("proxy"), "seed": ms("seed"), "bare": ms("bare_same"), "ours": ms("ours")},
            "ours/proxy "
            + fmt(f.get("ours_vs_proxy"))
            + verdict(f.get("ours_vs_proxy"), 0.5, at_most=True),
        ),
        row(
            f"… ours (default config: {_mode(o.get('ours_streamed'))}) vs the bare litellm loop "
            "making the same calls",
            "ours ≤ 1.3× bare",
            {"bare": ms("bare_same"), "ours": ms("ours")},
            "ours/bare "
            + fmt(f.get("ours_vs_bare"))
            + verdict(f.get("ours_vs_bare"), 1.3, at_most=True),
        ),
        row(
            f"… ours with `{o.get('variant')}` ({_mode(o.get('variant_streamed'))}) vs bare "
            "in that mode",
            "(for reference)",
            {"bare": ms("bare_other"), "ours": ms("ours_variant")},
            "ours/bare " + fmt(f.get("variant_vs_bare")),
        ),
    ]


def _throughput(f: dict, o: dict) -> list[str]:
    out = []
    goals = {20: 1.0, 100: 1.5}
    for c in o.get("concurrency", (20, 100)):
        key = f"c{c}"
        seed, ours = f.get(f"seed_{key}", {}), f.get(f"ours_{key}", {})
        goal = goals.get(c, 1.0)
        ratio = fmt(f.get(f"ratio_{key}")) + verdict(f.get(f"ratio_{key}"), goal, at_most=False)
        out.append(
            row(
                f"Throughput, c={c}, {o.get('seat_s')} s seats: fully answered panels/s",
                f"≥ {goal:g}× seed, 0 failures",
                {"seed": fmt(seed.get("rate"), 1), "ours": fmt(ours.get("rate"), 1)},
                "ours/seed " + ratio,
            )
        )
        out.append(
            row(
                f"… c={c}: p50 / p95 / slowest panel (s)",
                "",
                {
                    k: " / ".join(fmt(v.get(q), 2) for q in ("p50", "p95", "slowest"))
                    for k, v in (("seed", seed), ("ours", ours))
                },
            )
        )
        fails = ours.get("failed")
        mark = "" if fails is None else (" ✅" if fails["max"] == 0 else " ❌")
        out.append(
            row(
                f"… c={c}: failed requests per run (of requests sent)",
                "0",
                {
                    "seed": fmt(seed.get("failed"), 0) + " of " + fmt(seed.get("sent"), 0),
                    "ours": fmt(fails, 0) + " of " + fmt(ours.get("sent"), 0),
                },
                "ours" + mark,
            )
        )
    return out


def _scale(f: dict, o: dict) -> list[str]:
    n, seat = o.get("panels"), o.get("seat_s")
    if not f.get("answered"):
        return []
    return [
        row(
            f"Scale: {n:,} concurrent 5-seat panels, {seat:g} s seats: fully answered",
            f"{n:,}",
            {"ours": fmt(f.get("answered"), 0)},
        ),
        row(
            "… p50 / p99 panel latency (s)",
            f"p99 ≤ {1.3 * seat:g} s",
            {"ours": fmt(f.get("p50"), 1) + " / " + fmt(f.get("p99"), 1)},
            "p99/seat " + fmt(f.get("p99_ratio")) + verdict(f.get("p99_ratio"), 1.3, at_most=True),
        ),
        row(
            "… peak RSS of the gateway (MB); most seat calls open at once at the upstream",
            "",
            {
                "ours": fmt(f.get("peak_rss_mb"), 0)
                + " MB; "
                + fmt(f.get("upstream_peak"), 0)
                + f" of {5 * n:,}"
            },
        ),
    ]


def _records(f: dict, o: dict) -> list[str]:
    rows = o.get("rows", 1_000_000)
    return [
        row(
            "Panel latency, 0-latency upstream, empty store (ms)",
            "",
            {"ours": fmt(f.get("empty_ms"), 1, " ms")},
        ),
        row(
            f"… with {rows:,} seats already in the store (ms)",
            "≤ 1.1× empty",
            {"ours": fmt(f.get("full_ms"), 1, " ms")},
            "full/empty " + fmt(f.get("ratio")) + verdict(f.get("ratio"), 1.1, at_most=True),
        ),
        row(
            f"… start-up with {rows:,} seats in the store (s)",
            "(for reference)",
            {"ours": fmt(f.get("full_startup_s"), 2, " s")},
        ),
    ]


def _startup(f: dict, o: dict) -> list[str]:
    cells = {k: fmt(f.get(k), 2, " s") for k in ("proxy", "seed", "ours")}
    ratio = fmt(f.get("ours"), 2, " s") + verdict(f.get("ours"), 5.0, at_most=True)
    return [row("Start-up: launch to first 200 on its health route (s)", "≤ 5 s", cells, ratio)]


def _route(f: dict, o: dict) -> list[str]:
    ms = lambda key, digits=2: fmt(f.get(key), digits, " ms")  # noqa: E731
    over = lambda key: "+" + fmt(f.get(key), 1, " ms")  # noqa: E731
    return [
        row(
            f"Route turn (`bench/<c>:route`, one {o.get('latency_s')} s member): wall time ÷ a "
            "direct litellm call to the member",
            "≤ 1.05",
            {"bare": ms("direct_ms", 1), "ours": ms("route_ms", 1)},
            fmt(f.get("wall_ratio"), 3) + verdict(f.get("wall_ratio"), 1.05, at_most=True),
        ),
        row(
            "… gateway CPU per plain turn ÷ the bare litellm call's (a script's "
            "`litellm.acompletion`, own process, same calls)",
            "≤ 1.2× bare",
            {"bare": ms("bare_cpu_ms"), "ours": ms("gw_cpu_ms")},
            "ours/bare " + fmt(f.get("cpu_ratio")) + verdict(f.get("cpu_ratio"), 1.2, at_most=True),
        ),
        row(
            "… litellm driven as the gateway drives it (uvloop, inline set-up, shared session): "
            "CPU per call",
            "(for reference)",
            {"bare": ms("driven_cpu_ms")},
            "ours/that " + fmt(f.get("cpu_vs_driven")),
        ),
        row(
            "… CPU per streamed turn (every chunk relayed) ÷ the bare litellm call streamed",
            "(for reference)",
            {"bare": ms("bare_stream_cpu_ms"), "ours": ms("gw_stream_cpu_ms")},
            "ours/bare " + fmt(f.get("stream_cpu_ratio")),
        ),
        row(
            "… time to first text of a streamed turn, over the member's own "
            f"({fmt(f.get('ttfb_member_ms'), 1, ' ms')})",
            "≤ +10 ms",
            {
                "bare": f"litellm alone {over('ttfb_litellm_over_ms')}; as the gateway drives "
                f"it {over('ttfb_litellm_as_gateway_over_ms')}",
                "ours": over("ttfb_route_over_ms"),
            },
            over("ttfb_route_over_ms") + verdict(f.get("ttfb_route_over_ms"), 10, at_most=True),
        ),
        row(
            "… one more HTTP hop: a relay with nothing in it (uvicorn and aiohttp passing bytes)",
            "(for reference)",
            {"bare": over("ttfb_relay_over_ms")},
        ),
    ]


def _direct(f: dict, o: dict) -> list[str]:
    ms = lambda key, digits=3: fmt(f.get(key), digits, " ms")  # noqa: E731
    chunks = o.get("chunks_per_turn")
    return [
        row(
            "Direct reader (`upstream_reader: direct`): CPU per panel seat ÷ a bare "
            "`litellm.acompletion` call, same run",
            "≤ 0.25× bare",
            {"bare": ms("bare_seat_ms"), "ours": ms("direct_seat_ms")},
            "ours/bare "
            + fmt(f.get("direct_seat_vs_bare"), 3)
            + verdict(f.get("direct_seat_vs_bare"), 0.25, at_most=True),
        ),
        row(
            "… the same gateway reading through litellm (`upstream_reader: litellm`)",
            "(for reference)",
            {"bare": ms("bare_seat_ms"), "ours": ms("litellm_seat_ms")},
            "ours/bare " + fmt(f.get("litellm_seat_vs_bare"), 3),
        ),
        row(
            f"… CPU per relayed chunk of a streamed route turn ({chunks} chunks) ÷ bare "
            "litellm's per streamed chunk",
            "≤ 0.15× bare",
            {"bare": ms("bare_chunk_ms", 4), "ours": ms("direct_chunk_ms", 4)},
            "ours/bare "
            + fmt(f.get("direct_chunk_vs_bare"), 3)
            + verdict(f.get("direct_chunk_vs_bare"), 0.15, at_most=True),
        ),
        row(
            "… the same through litellm's reader",
            "(for reference)",
            {"bare": ms("bare_chunk_ms", 4), "ours": ms("litellm_chunk_ms", 4)},
            "ours/bare " + fmt(f.get("litellm_chunk_vs_bare"), 3),
        ),
        row(
            "… time to first text of a streamed route turn (0-latency member): direct vs "
            "litellm's reader",
            "no worse",
            {"ours": f"{ms('direct_ttft_ms', 1)} vs {ms('litellm_ttft_ms', 1)}"},
            "direct/litellm "
            + fmt(f.get("ttft_direct_vs_litellm"), 2)
            + verdict(f.get("ttft_direct_vs_litellm"), 1.0, at_most=True),
        ),
    ]


_ROWS = {
    "fanout": _fanout,
    "perseat": _perseat,
    "throughput": _throughput,
    "scale": _scale,
    "records": _records,
    "startup": _startup,
    "route": _route,
    "direct": _direct,
}
