"""The replicas section of docs/performance.md, from the `replicas` measure's stored results.

Why its own table: the main table puts ours beside rivals; this one puts one deployment of ours
beside another (one gateway of two workers on SQLite and shared memory, two replicas of one
worker on PostgreSQL and Redis), with the per-panel costs docs/scaling.md builds on.
"""

from __future__ import annotations

from typing import Any

from report import fmt, verdict

HEADER = (
    "| measure | goal | one gateway, 2 workers (SQLite + shared memory) "
    "| 2 replicas × 1 worker (PostgreSQL + Redis) | ratio |"
)


def _row(label: str, goal: str, one: str, two: str, ratio: str = "—") -> str:
    return f"| {label} | {goal} | {one or '—'} | {two or '—'} | {ratio or '—'} |"


def table(result: dict[str, Any]) -> list[str]:
    f, o = result["figures"], result.get("options", {})
    one, two, rec = f.get("one", {}), f.get("two", {}), f.get("records", {})
    c, seat = o.get("concurrency", 100), o.get("seat_s", 0.2)
    ratio = f.get("ratio")
    lines = [
        HEADER,
        "|---|---|---|---|---|",
        _row(
            f"Throughput, c={c}, {seat} s seats: fully answered panels/s",
            "≥ 0.9× one gateway, 0 failures",
            fmt(one.get("rate"), 1),
            fmt(two.get("rate"), 1),
            "2 replicas / 1 gateway " + fmt(ratio) + verdict(ratio, 0.9, at_most=False),
        ),
        _row(
            "… panels per CPU-second: the gateway's workers / the replicas with PostgreSQL "
            "and Redis (the rates' ratio were the cores ours alone and all busy)",
            "≥ 0.9× one gateway",
            fmt(f.get("per_cpu_one"), 1),
            fmt(f.get("per_cpu_two"), 1),
            "2 replicas / 1 gateway "
            + fmt(f.get("per_cpu_ratio"))
            + verdict(f.get("per_cpu_ratio"), 0.9, at_most=False),
        ),
        _row(
            "… the same, the replicas alone (PostgreSQL and Redis on machines of their own)",
            "",
            fmt(f.get("per_cpu_one"), 1),
            fmt(f.get("per_cpu_two_gateways"), 1),
            "2 replicas / 1 gateway " + fmt(f.get("per_cpu_ratio_gateways")),
        ),
        _row(
            "… p50 / p95 panel (s)",
            "",
            fmt(one.get("p50")) + " / " + fmt(one.get("p95")),
            fmt(two.get("p50")) + " / " + fmt(two.get("p95")),
        ),
        _row(
            "… failed requests per run (of requests sent)",
            "0",
            fmt(one.get("failed"), 0) + " of " + fmt(one.get("sent"), 0),
            fmt(two.get("failed"), 0) + " of " + fmt(two.get("sent"), 0),
        ),
        _row(
            "… gateway CPU per seat (every gateway process)",
            "",
            fmt(one.get("gateway_ms_per_seat"), 2, " ms"),
            fmt(two.get("gateway_ms_per_seat"), 2, " ms"),
        ),
        _row(
            "… Redis round trips per panel (the live state's counter, `/healthz`)",
            "1 per seating + 1 per seat finish",
            "",
            fmt(two.get("redis_trips")) + " (" + _causes(f) + ")",
        ),
        _row(
            "… the same per seat; EVALSHA calls per panel seen by Redis (`INFO commandstats`)",
            "",
            "",
            fmt(two.get("redis_trips_per_seat")) + "; " + fmt(two.get("redis_evalsha")),
        ),
        _row(
            "… one Lua step: µs inside Redis (`commandstats`); bytes to Redis / from Redis "
            "(its reply, and its publication to every replica; `INFO stats`)",
            "",
            "",
            f"{fmt(two.get('redis_us_per_step'), 0, ' µs')}; "
            f"{fmt(two.get('redis_in_per_step'), 0, ' B')} / "
            f"{fmt(two.get('redis_out_per_step'), 0, ' B')}",
        ),
        _row(
            "… publications per panel (one per step that wrote); explorers swapped per panel "
            "(another replica had just seated them)",
            "",
            "",
            f"{fmt(two.get('redis_publishes'))}; {fmt(two.get('redis_swaps'), 3)}",
        ),
        _row(
            "… Redis CPU per seat (redis-server process)",
            "",
            "",
            fmt(two.get("redis_ms_per_seat"), 3, " ms"),
        ),
        _row(
            "… PostgreSQL statements per panel sent by the gateways (`pg_stat_statements`); "
            "run inside them (foreign-key checks)",
            "",
            "",
            fmt(two.get("pg_statements")) + "; " + fmt(two.get("pg_nested")),
        ),
        _row(
            "… PostgreSQL transactions committed (`pg_stat_database`) and rows stored per panel",
            "",
            "",
            fmt(two.get("pg_commits"))
            + "; "
            + fmt(two.get("pg_rows_stored", two.get("pg_rows_written"))),
        ),
        _row(
            "… PostgreSQL's time executing a panel's statements (`pg_stat_statements`)",
            "",
            "",
            fmt(two.get("pg_exec_ms"), 3, " ms"),
        ),
        _row(
            "… PostgreSQL CPU per seat (postmaster and backends); connections open at the end",
            "",
            "",
            fmt(two.get("pg_ms_per_seat"), 3, " ms") + "; " + fmt(two.get("pg_connections"), 0),
        ),
    ]
    if rec:
        rows = o.get("rows", 1_000_000)

        def pair(key: str, digits: int) -> str:
            return (
                f"{fmt(rec.get(f'empty_{key}'), digits, ' ms')} / "
                f"{fmt(rec.get(f'full_{key}'), digits, ' ms')}"
            )

        def against(key: str) -> str:
            stat = rec.get(f"ratio_{key}")
            return "full/empty " + fmt(stat) + verdict(stat, 1.1, at_most=True)

        lines += [
            _row(
                f"Records: PostgreSQL empty / holding {rows:,} seats; two replicas side by side, "
                "panels one at a time taking turns, 0-latency upstream: median panel",
                "≤ 1.1× empty",
                "",
                pair("ms", 1),
                against("ms"),
            ),
            _row("… the replica's CPU per panel", "≤ 1.1× empty", "", pair("gateway_cpu_ms", 1),
                 against("gateway_cpu_ms")),
            _row(
                "… PostgreSQL's time executing the panel's statements (`pg_stat_statements`)",
                "≤ 1.1× empty",
                "",
                pair("pg_exec_ms", 3),
                against("pg_exec_ms"),
            ),
            _row(
                "… one publication (a step's cells, as each replica hears it): size; per panel",
                "",
                "",
                f"{fmt(rec.get('publication_bytes'), 0, ' B')}; {fmt(rec.get('publications'))}",
            ),
            _row(
                "… start-up, empty / full (s)",
                "(for reference)",
                "",
                f"{fmt(rec.get('empty_startup_s'), 2, ' s')} / "
                f"{fmt(rec.get('full_startup_s'), 2, ' s')}",
            ),
        ]  # fmt: skip
    fan = f.get("fan_in") or {}
    if fan:
        lines.append(
            _row(
                f"Fan-in: publications replayed to one idle replica ({fan.get('rate')}/s for "
                f"{fan.get('seconds')} s): CPU per publication of the replica hearing it; of "
                "Redis (its PUBLISH, delivered to that one); of Redis per subscriber more "
                f"({fan.get('listeners')} `redis-cli` subscribers added)",
                "",
                "",
                f"{fmt(fan.get('gateway_us'), 1, ' µs')}; "
                f"{fmt(fan.get('redis_publish_us'), 1, ' µs')}; "
                f"{fmt(fan.get('redis_delivery_us'), 2, ' µs')}",
            )
        )
    return lines


def _causes(f: dict[str, Any]) -> str:
    causes = (f.get("two_detail") or {}).get("redis_by_cause") or {}
    return ", ".join(f"{cause} {n:.2f}" for cause, n in causes.items()) + " in the last run"


def section(result: dict[str, Any]) -> list[str]:
    f, o = result["figures"], result.get("options", {})
    busy = result.get("background") or [0]
    statements = (f.get("two_detail") or {}).get("pg_top") or []
    lines = [
        "## Several replicas: PostgreSQL + Redis against one gateway",
        "",
        f"Two `bench-gateway serve --workers 1` replicas on one PostgreSQL and one Redis, the "
        f"load client sending panels to each in turn (round robin, as a load balancer would), "
        f"against one `serve --workers 2` on SQLite and shared memory; same simulator, same "
        "config (eight models on eight connections, a collection of three members, so each "
        "panel also seats two explorers from the other five; no rpm caps), "
        f"{o.get('seat_s')} s seats, "
        f"c={o.get('concurrency')} for {o.get('seconds')} s after a warm-up, the two alternated "
        "run by run. Everything, PostgreSQL and Redis included, shares this machine's 2 cores. "
        "PostgreSQL runs with `synchronous_commit=off` (fsync on), the durability SQLite's WAL "
        "with `synchronous=NORMAL` gives the default store. Per-panel counts run from before "
        "the first request to after the last answer; rates count only the window. "
        "docs/scaling.md works from these figures.",
        "",
        *table(result),
        "",
        f"- `replicas`: `{result.get('command', '?')}`, {result['mode']}, {result['runs']} "
        f"run(s), {result['when']}, {result.get('seconds', '?')} s; machine busy with other "
        f"work before a run: up to {100 * max(busy):.0f} %; "
        + ", ".join(f"{k}={v}" for k, v in o.items()),
    ]
    if statements:
        lines += ["", "Statements per panel in the last run (`pg_stat_statements`):", ""]
        lines += [
            f"- {n:.2f} × `{query}…`" + ("" if sent else " (run inside an insert)")
            for query, sent, n in statements
        ]
    notes = result.get("notes") or []
    if notes:
        lines += ["", "Notes from the runs:", ""] + [f"- {note}" for note in notes]
    return lines + [""]


def missed(result: dict[str, Any] | None) -> list[str]:
    if not result:
        return []
    f = result["figures"]
    out = []
    ratio = f.get("ratio")
    if ratio and ratio["median"] < 0.9:
        out.append(f"- replicas: 2 replicas / 1 gateway {fmt(ratio)} against ≥ 0.9")
    per_cpu = f.get("per_cpu_ratio")
    if per_cpu and per_cpu["median"] < 0.9:
        out.append(
            f"- replicas: panels per CPU-second, 2 replicas with PostgreSQL and Redis / 1 gateway "
            f"{fmt(per_cpu)} against ≥ 0.9 (the replicas alone: "
            f"{fmt(f.get('per_cpu_ratio_gateways'))}): sharing costs each seat CPU in the "
            "replica and in the two services"
        )
    records = f.get("records") or {}
    for key, what in (
        ("ms", "panel time"),
        ("gateway_cpu_ms", "replica CPU per panel"),
        ("pg_exec_ms", "PostgreSQL time per panel"),
    ):
        stat = records.get(f"ratio_{key}")
        if stat and stat["median"] > 1.1:
            out.append(f"- replicas: {what}, PostgreSQL full/empty {fmt(stat)} against ≤ 1.1")
    failed = (f.get("two") or {}).get("failed")
    if failed and failed["max"] > 0:
        out.append(f"- replicas: {fmt(failed, 0)} failed requests per run (goal 0)")
    return out
