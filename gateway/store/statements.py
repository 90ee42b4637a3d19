"""Every statement both stores run, written once: `Statements(dialect)` holds them in the words
of one engine (gateway/store/dialect.py: its parameter mark and the few ways it differs).

`SQLITE` and `POSTGRES` are each engine's. Each store runs them its own way (SQLite on its
writer thread, PostgreSQL through its pool), reading rows with gateway/store/rows.py. What only
one engine has stays with it: PostgreSQL's batched INSERT of whole columns (postgres/batch.py),
SQLite's checks of its file (sqlite/file.py), and each engine's migrations.
"""

from __future__ import annotations

from gateway.store.dialect import POSTGRES as POSTGRES_DIALECT
from gateway.store.dialect import SQLITE as SQLITE_DIALECT
from gateway.store.dialect import Dialect
from gateway.store.rows import CALL_FIELDS, FIELDS, KEY_FIELDS, PANEL_FIELDS, VERDICT_FIELDS

OWED_HORIZON = 2_000  # the newest answered seats the owed count looks at
VERDICTS_KEPT = 10  # a call's newest verdicts kept (its history, bounded)

# Seats that are not a panel's answers to judge: a merger's, and a suite task's (contract §20:
# scored from its key, never owed a verdict, and not counted as seated in a panel).
_NOT_JUDGED = "('merger', 'suite')"
# A seat is owed a verdict when it answered and nobody judged it.
_OWED_SEAT = (
    f"c.status = 'ok' AND c.seat NOT IN {_NOT_JUDGED} "
    "AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.call_id = c.id)"
)
_VERDICT_COLUMNS = ", ".join(f'"{name}"' for name in VERDICT_FIELDS)
_KEY_COLUMNS = ", ".join(KEY_FIELDS)
_PAGE_SEAT_COLUMNS = (
    "c.id, c.panel_id, c.seat, c.alias, c.connection, c.status, c.error, c.seconds, c.answer, "
    "c.replaces, c.replaced_by, c.started"
)


def columns(fields: tuple[str, ...], alias: str = "") -> str:
    return ", ".join(f'{alias}"{name}"' for name in fields)


class Statements:
    def __init__(self, dialect: Dialect) -> None:
        d = self.dialect = dialect
        m, t = d.mark, d.text
        owner = f"({t} IS NULL OR p.key_name = {m})"  # (the owner twice: owner, owner)
        # Writes of panels and seats, and of a verdict: a new row, earlier ones kept.
        self.insert = {table: self.insert_into(table, fields) for table, fields in FIELDS.items()}
        self.insert_skipping = {
            table: self.insert_into(table, fields, skipping=True)
            for table, fields in FIELDS.items()
        }
        self.insert_verdict = f"INSERT INTO verdicts ({_VERDICT_COLUMNS}) VALUES " + d.marks(
            len(VERDICT_FIELDS)
        )
        # After each new verdict, the call's verdicts older than its newest VERDICTS_KEPT go
        # (call, call, VERDICTS_KEPT); the current verdict is the newest, so it always stays.
        self.prune_verdicts = (
            f"DELETE FROM verdicts WHERE call_id = {m} AND id <= (SELECT id FROM verdicts "
            f"WHERE call_id = {m} ORDER BY id DESC LIMIT 1 OFFSET {m})"
        )
        # Verdicts: the call must be the owner's (call, owner, owner); its current verdict.
        self.owned_call = (
            f"SELECT 1 FROM calls c JOIN panels p ON p.id = c.panel_id "
            f"WHERE c.id = {m} AND {owner}{d.lock_call}"
        )
        self.current_verdict = (
            'SELECT useful, note, "real", "false", created, blind FROM verdicts '
            f"WHERE call_id = {m} ORDER BY id DESC LIMIT 1"
        )
        # Reads by primary key, filtered by the panel's key name in the same indexed lookup:
        # another key's record costs what an unknown one does and is never loaded.
        self.panel = (
            f"SELECT {columns(PANEL_FIELDS)} FROM panels "
            f"WHERE id = {m} AND ({t} IS NULL OR key_name = {m})"
        )
        self.seats = (  # (panel, panel, panel)
            f"SELECT {columns(CALL_FIELDS, 'c.')} FROM calls c WHERE {self.seat_range(t)} "
            f"ORDER BY c.started, c.{d.order}"
        )
        self.call = (  # (call, owner, owner)
            f"SELECT {columns(CALL_FIELDS, 'c.')}, p.collection AS collection, "
            "p.key_name AS caller FROM calls c "
            f"JOIN panels p ON p.id = c.panel_id WHERE c.id = {m} AND {owner}"
        )
        self.owed = (  # (owner, owner, limit)
            "SELECT c.id AS call, c.panel_id AS panel, c.seat, c.alias, c.finished, "
            "p.collection FROM calls c JOIN panels p ON p.id = c.panel_id "
            f"WHERE c.status = 'ok' AND c.seat NOT IN {_NOT_JUDGED} AND {owner} "
            "AND NOT EXISTS (SELECT 1 FROM verdicts v WHERE v.call_id = c.id) "
            f"ORDER BY c.started DESC LIMIT {m}"
        )
        # Standings: per alias, and per (alias, shape) of each seat's current verdict.
        answered = d.count_if("status = 'ok'")
        self.seated = (
            f"SELECT alias, COUNT(*) AS seated, {answered} AS answered, "
            f"MAX(started) AS last_seated FROM calls WHERE seat NOT IN {_NOT_JUDGED} GROUP BY alias"
        )
        self.judged = (
            "SELECT c.alias, c.shape, SUM(v.useful) AS useful, COUNT(*) AS judged, "
            "SUM(v.blind) AS blind_judged, SUM(v.useful * v.blind) AS blind_useful "
            "FROM verdicts v JOIN calls c ON c.id = v.call_id "
            "WHERE v.id IN (SELECT MAX(id) FROM verdicts GROUP BY call_id) "
            "GROUP BY c.alias, c.shape"
        )
        # The usage, read from the calls themselves (a seat not called, `cooling`, spent none).
        self.day_counts = (  # (since)
            "SELECT alias, connection, COUNT(*) AS calls FROM calls "
            f"WHERE started >= {m} AND status != 'cooling' GROUP BY alias, connection"
        )
        b, errors = d.bytewise, d.count_if("c.status NOT IN ('ok', 'empty')")
        self.usage = (  # (time zone, start, end, owner, owner)
            f"SELECT {d.day('c.started')} AS day, c.alias, c.connection, p.key_name AS key, "
            "COUNT(*) AS calls, "
            f"{d.integer.format('COALESCE(SUM(c.tokens_in), 0)')} AS tokens_in, "
            f"{d.integer.format('COALESCE(SUM(c.tokens_out), 0)')} AS tokens_out, "
            f"{errors} AS errors "
            "FROM calls c JOIN panels p ON p.id = c.panel_id "
            f"WHERE c.started >= {m} AND c.started < {m} AND c.status != 'cooling' AND {owner} "
            "GROUP BY 1, c.alias, c.connection, p.key_name "
            f"ORDER BY 1, c.alias{b}, c.connection{b}, p.key_name{b}"
        )
        # Gateway keys (only a key's SHA-256 is stored), and what is learned from providers.
        self.insert_key = (
            "INSERT INTO gateway_keys (name, digest, last4, collections, rpm, created) VALUES "
            f"{d.marks(6)} ON CONFLICT DO NOTHING"
        )
        self.revoke_key = (
            f"UPDATE gateway_keys SET revoked = {m} WHERE name = {m} AND revoked IS NULL"
        )
        self.keys = f"SELECT {_KEY_COLUMNS} FROM gateway_keys ORDER BY created"
        self.key_by_digest = (
            f"SELECT {_KEY_COLUMNS} FROM gateway_keys WHERE digest = {m} AND revoked IS NULL"
        )
        self.touch_key = f"UPDATE gateway_keys SET last_used = {m} WHERE name = {m}"
        self.learn_window = (  # only ever lower
            f"INSERT INTO learned_windows VALUES {d.marks(3)} ON CONFLICT (alias) DO UPDATE SET "
            f"context_window = {d.least}(learned_windows.context_window, "
            "excluded.context_window), learned = excluded.learned"
        )
        self.learned_windows = "SELECT alias, context_window FROM learned_windows"
        self.learn_limit = (
            f"INSERT INTO learned_limits VALUES {d.marks(5)} ON CONFLICT (alias) DO UPDATE "
            "SET until = excluded.until, why = excluded.why, source = excluded.source, "
            "learned = excluded.learned"
        )
        self.learned_limits = (
            f"SELECT alias, until, why, source FROM learned_limits WHERE until > {m}"
        )
        # The dashboard's reads (gateway/store/pages.py says why each stays fast).
        self.cursor = (  # (before, owner, owner)
            f"SELECT created, id FROM panels WHERE id = {m} AND ({t} IS NULL OR key_name = {m})"
        )
        self.change_marker = (
            f"SELECT (SELECT MAX({d.order}) FROM panels) AS panels, "
            f"(SELECT MAX({d.order}) FROM calls) AS calls, "
            "(SELECT MAX(id) FROM verdicts) AS verdicts"
        )

    def seat_range(self, panel: str) -> str:
        """The condition that a call `c` is a seat of the panel *panel* (an SQL expression), read
        as a range of the calls' primary key: a seat's id is `<panel>.<seat>` and '/' follows '.'
        in byte order, so the ids from `<panel>.` up to `<panel>/` hold the panel's seats, side
        by side in the key's b-tree. `panel_id` is compared as well: the gateway's panel ids
        hold no '.', but were one `<panel>.x`, its seats would be in that range too."""
        same = self.dialect.same
        return f"c.id >= {panel} || '.' AND c.id < {panel} || '/' AND c.panel_id {same} {panel}"

    def verdict_states(self, count: int) -> str:
        """Each of *count* calls' status and whether it was judged (the calls, owner, owner)."""
        m, t = self.dialect.mark, self.dialect.text
        return (
            "SELECT c.id, c.status, EXISTS (SELECT 1 FROM verdicts v WHERE v.call_id = c.id) "
            "AS judged FROM calls c JOIN panels p ON p.id = c.panel_id "
            f"WHERE {self.dialect.among('c.id', count)} AND ({t} IS NULL OR p.key_name = {m})"
        )

    def panels_page(self, *, owner: bool, before: bool, owed: bool) -> str:
        """A page of panels, newest first: (owner if *owner*, created and id of the cursor if
        *before*, the limit)."""
        m = self.dialect.mark
        where = []
        if owner:
            where.append(f"p.key_name = {m}")
        if before:
            where.append(f"(p.created, p.id) < ({m}, {m})")
        if owed:
            where.append(
                f"EXISTS (SELECT 1 FROM calls c WHERE {self.seat_range('p.id')} AND {_OWED_SEAT})"
            )
        sql = f"SELECT {columns(PANEL_FIELDS, 'p.')} FROM panels p"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return sql + f" ORDER BY p.created DESC, p.id DESC LIMIT {m}"

    def seats_of(self, count: int) -> str:
        """Every seat of *count* panels (a range of the calls' primary key per panel), each
        with its latest verdict (rows.seat_view); the ids as `dialect.ids` makes them."""
        with_, from_ = self.dialect.wanted(count)
        return (
            f"{with_}SELECT {_PAGE_SEAT_COLUMNS}, v.useful AS v_useful, v.note AS v_note, "
            f"v.blind AS v_blind FROM {from_} calls c ON {self.seat_range('w.id')} "
            "LEFT JOIN verdicts v ON v.id = (SELECT MAX(id) FROM verdicts WHERE call_id = c.id) "
            f"ORDER BY c.started, c.{self.dialect.order}"
        )

    def owed_count(self, owner: bool) -> str:
        """Answered and owed among the newest OWED_HORIZON answered seats (owner if *owner*,
        the horizon)."""
        m = self.dialect.mark
        join = f" JOIN panels p ON p.id = c.panel_id AND p.key_name = {m}" if owner else ""
        newest = (
            f"SELECT c.id, c.seat FROM calls c{join} WHERE c.status = 'ok' "
            f"ORDER BY c.started DESC LIMIT {m}"
        )
        owed = self.dialect.count_if(
            f"c.seat NOT IN {_NOT_JUDGED} AND NOT EXISTS "
            "(SELECT 1 FROM verdicts v WHERE v.call_id = c.id)"
        )
        return f"SELECT COUNT(*) AS answered, {owed} AS owed FROM ({newest}) c"

    def insert_into(self, table: str, fields: tuple[str, ...], *, skipping: bool = False) -> str:
        """An INSERT of *fields* into *table*; *skipping* a row already there (its key)."""
        start, end = self.dialect.skipping if skipping else ("INSERT", "")
        marks = self.dialect.marks(len(fields))
        return f"{start} INTO {table} ({columns(fields)}) VALUES {marks}{end}"


SQLITE = Statements(SQLITE_DIALECT)
POSTGRES = Statements(POSTGRES_DIALECT)
