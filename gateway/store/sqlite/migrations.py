"""Named, append-only schema migrations. Never edit one that has shipped: add the next."""

import sqlite3
import time

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_panels_calls_verdicts",
        """
        CREATE TABLE panels (
            id TEXT PRIMARY KEY,
            created REAL NOT NULL,
            requested_model TEXT NOT NULL,
            collection TEXT NOT NULL,
            shape TEXT NOT NULL,
            shape_by TEXT NOT NULL,
            prompt TEXT NOT NULL,
            key_name TEXT NOT NULL,
            skipped TEXT,
            notes TEXT,
            reserves TEXT
        );
        CREATE TABLE calls (
            id TEXT PRIMARY KEY,
            panel_id TEXT NOT NULL REFERENCES panels(id),
            seat TEXT NOT NULL,
            alias TEXT NOT NULL,
            model TEXT NOT NULL,
            connection TEXT NOT NULL,
            shape TEXT NOT NULL,
            status TEXT NOT NULL,
            error TEXT,
            error_class TEXT,
            seconds REAL,
            first_token_s REAL,
            tokens_in INTEGER,
            tokens_out INTEGER,
            answer TEXT,
            replaces TEXT,
            replaced_by TEXT,
            started REAL NOT NULL,
            finished REAL
        );
        CREATE INDEX calls_by_panel ON calls (panel_id);
        CREATE INDEX calls_by_alias ON calls (alias, started);
        CREATE TABLE verdicts (
            id INTEGER PRIMARY KEY,
            call_id TEXT NOT NULL REFERENCES calls(id),
            useful INTEGER NOT NULL,
            note TEXT,
            "real" TEXT,
            "false" TEXT,
            created REAL NOT NULL,
            key_name TEXT
        );
        CREATE INDEX verdicts_by_call ON verdicts (call_id, id);
        """,
    ),
    (
        "0002_gateway_keys",
        """
        CREATE TABLE gateway_keys (
            name TEXT PRIMARY KEY,
            digest TEXT NOT NULL UNIQUE,
            last4 TEXT NOT NULL,
            collections TEXT,
            rpm INTEGER,
            created REAL NOT NULL,
            last_used REAL,
            revoked REAL
        );
        """,
    ),
    (
        "0003_learned_windows",
        """
        CREATE TABLE learned_windows (
            alias TEXT PRIMARY KEY,
            context_window INTEGER NOT NULL,
            learned REAL NOT NULL
        );
        """,
    ),
    (
        # The dashboard's reads (GET /bench/panels, GET /): newest panels first, a key's own
        # first, and the newest answered seats for the count of owed verdicts.
        "0004_dashboard_indexes",
        """
        CREATE INDEX panels_by_created ON panels (created, id);
        CREATE INDEX panels_by_key_created ON panels (key_name, created, id);
        CREATE INDEX calls_answered_by_started ON calls (started) WHERE status = 'ok';
        """,
    ),
    (
        "0005_learned_limits_and_usage",
        """
        CREATE TABLE learned_limits (
            alias TEXT PRIMARY KEY,
            until REAL NOT NULL,
            why TEXT NOT NULL,
            source TEXT NOT NULL,
            learned REAL NOT NULL
        );
        CREATE INDEX calls_by_started ON calls (started);
        """,
    ),
    (
        "0006_route_turns",
        """
        ALTER TABLE calls ADD COLUMN failed_over TEXT;
        """,
    ),  # Every seat row pays for each index on calls, and more as the table grows: two no read
    # needs go. calls_by_alias (no query looks seats up by model and time) and the answered
    # seats' partial index, which calls_by_started (0005) serves as well: the owed read walks
    # it from the newest and skips what is not ok. IF EXISTS: a replica applying this while
    # another runs waits only for the short lock each DROP takes.
    (
        "0007_seat_indexes_reads_use",
        """
        DROP INDEX IF EXISTS calls_by_alias;
        DROP INDEX IF EXISTS calls_answered_by_started;
        """,
    ),  # A seat's id is `<panel>.<seat>` and a panel's id holds no '.', so the calls' primary key
    # (its autoindex here: calls is a rowid table) already keeps a panel's seats side by side:
    # '/' follows '.' in byte order, and `id >= panel || '.' AND id < panel || '/'` is a range
    # of that index holding exactly them. The reads by panel use that range (with panel_id
    # still compared, so a row breaking the rule is never read for another panel), and the
    # index on panel_id, one more b-tree insert per seat row, goes.
    (
        "0008_panel_seats_by_call_id",
        """
        DROP INDEX IF EXISTS calls_by_panel;
        """,
    ),  # A verdict given on the dashboard's blind page (gateway.blind_judging), before its seat's
    # model was shown: 1. Every earlier verdict was open (0).
    (
        "0009_blind_verdicts",
        """
        ALTER TABLE verdicts ADD COLUMN blind INTEGER NOT NULL DEFAULT 0;
        """,
    ),  # What of each request its model could not be given (hint fields, hosted tools, tools on
    # a panel), named as the client sent them: the record says what X-Bench-Dropped said.
    (
        "0010_dropped_hints",
        """
        ALTER TABLE calls ADD COLUMN dropped TEXT;
        """,
    ),  # Why a failed call failed, its class read from the provider's status and words
    # (gateway/request/failure.py): refused, rate_limited, capacity, timeout, empty, signin,
    # entitlement, paywalled, gone, other. Earlier rows have none (NULL): no class.
    (
        "0011_failure_classes",
        """
        ALTER TABLE calls ADD COLUMN failure TEXT;
        """,
    ),  # Each model's health (contract §18): its record as last judged, kept so a restart
    # seats as before, and every change of its health (benched, retired, restored) as an event.
    (
        "0012_model_health",
        """
        CREATE TABLE model_health (
            alias TEXT PRIMARY KEY, health TEXT NOT NULL, why TEXT, since REAL,
            next_trial REAL, transient INTEGER NOT NULL DEFAULT 0, first_gone REAL,
            gone_class TEXT, backoff REAL NOT NULL DEFAULT 0, last_failure TEXT,
            failed_at REAL, answered_at REAL, by_hand INTEGER NOT NULL DEFAULT 0, changed REAL
        );
        CREATE TABLE health_events (
            alias TEXT NOT NULL, health TEXT NOT NULL, why TEXT, at REAL NOT NULL
        );
        CREATE INDEX health_events_by_alias ON health_events (alias, at);
        """,
    ),  # The suite (contract §20): its runs, every answer as the model gave it (the figures are
    # computed from these, so a corrected key re-scores history), the one-run-at-a-time lock, and
    # what was decided of each draft made from a verdict's claims (approved ones run as tasks).
    (
        "0013_suite",
        """
        CREATE TABLE suite_runs (
            id TEXT PRIMARY KEY, started REAL NOT NULL, finished REAL, state TEXT NOT NULL,
            models TEXT, tasks TEXT, quick INTEGER NOT NULL DEFAULT 0,
            asked INTEGER NOT NULL DEFAULT 0, answered INTEGER NOT NULL DEFAULT 0, notes TEXT
        );
        CREATE TABLE suite_answers (
            id INTEGER PRIMARY KEY, run_id TEXT NOT NULL, task_id TEXT NOT NULL,
            alias TEXT NOT NULL, call_id TEXT, status TEXT NOT NULL, answer TEXT, at REAL NOT NULL
        );
        CREATE INDEX suite_answers_by_alias ON suite_answers (alias, task_id, id);
        CREATE INDEX suite_answers_by_at ON suite_answers (at);
        CREATE TABLE suite_lock (name TEXT PRIMARY KEY, run TEXT NOT NULL, until REAL NOT NULL);
        CREATE TABLE suite_drafts (
            id TEXT PRIMARY KEY, state TEXT NOT NULL, task TEXT NOT NULL, decided REAL NOT NULL
        );
        """,
    ),
)


def migrate(db: sqlite3.Connection) -> None:
    """Apply the named migrations not yet in the migrations table, in order, each in its own
    transaction.

    Each is checked again inside its write lock, so several workers opening one store at once
    apply it exactly once."""
    db.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied REAL)")
    for name, script in MIGRATIONS:
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                db.execute("COMMIT")
                continue
            for statement in script.split(";"):
                if statement.strip():
                    db.execute(statement)
            db.execute("INSERT INTO migrations VALUES (?, ?)", (name, time.time()))
            db.execute("COMMIT")
        except Exception:
            db.execute("ROLLBACK")
            raise
