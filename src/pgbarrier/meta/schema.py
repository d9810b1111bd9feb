"""Versioned DDL of the meta store, applied at start.

Rules this module keeps:

* :data:`MIGRATIONS` is append-only: migration ``i`` (1-based) moves the
  schema from version ``i - 1`` to ``i``. A released migration is never edited.
* The version reached is recorded in ``meta_info`` (key ``schema_version``);
  a store newer than this code is refused rather than guessed at.
* The DDL is the common subset of SQLite and PostgreSQL; ``{p}`` is the table
  prefix (``schema.`` on PostgreSQL, empty on SQLite). Timestamps are ISO-8601
  text in UTC, epochs BIGINT.
"""

from __future__ import annotations

MIGRATIONS: list[list[str]] = [
    [
        "CREATE TABLE IF NOT EXISTS {p}meta_info (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE IF NOT EXISTS {p}databases (
            name TEXT PRIMARY KEY,
            paused BOOLEAN NOT NULL,
            paused_at TEXT,
            paused_by TEXT,
            prev_epoch BIGINT,
            committed_epoch BIGINT)""",
        """CREATE TABLE IF NOT EXISTS {p}batch_refresh_jobs (
            database TEXT NOT NULL,
            name TEXT NOT NULL,
            definition TEXT NOT NULL,
            query TEXT NOT NULL,
            columns TEXT,
            refresh_interval_sec INTEGER NOT NULL,
            status TEXT NOT NULL,
            snapshot_epoch BIGINT NOT NULL,
            last_committed_epoch BIGINT,
            created_at TEXT NOT NULL,
            last_refreshed_at TEXT,
            target_epoch BIGINT,
            run_id BIGINT,
            failed_epoch BIGINT,
            error TEXT,
            PRIMARY KEY (database, name))""",
        """CREATE TABLE IF NOT EXISTS {p}streaming_views (
            database TEXT NOT NULL,
            name TEXT NOT NULL,
            definition TEXT NOT NULL,
            PRIMARY KEY (database, name))""",
        """CREATE TABLE IF NOT EXISTS {p}refresh_history (
            database TEXT NOT NULL,
            job TEXT NOT NULL,
            run_id BIGINT NOT NULL,
            "trigger" TEXT NOT NULL,
            started_at TEXT NOT NULL,
            target_epoch BIGINT NOT NULL,
            status TEXT NOT NULL,
            finished_at TEXT,
            "rows" BIGINT,
            error TEXT,
            PRIMARY KEY (database, job, run_id))""",
    ],
    # 2: pruning by age (jobs/history.py) finds old runs without reading the whole table;
    # an index is named without the prefix (PostgreSQL puts it in its table's schema)
    [
        "CREATE INDEX IF NOT EXISTS refresh_history_started_at ON {p}refresh_history (started_at)",
    ],
    # 3: DROP DATABASE records its intent first (meta/recovery.py finishes one cut short)
    [
        "ALTER TABLE {p}databases ADD COLUMN dropping BOOLEAN NOT NULL DEFAULT FALSE",
    ],
    # 4: the leader's term (one row, meta/term.py): taking office increments it, every write
    # transaction of a PostgreSQL store checks it (SQLite has the row too, never read)
    [
        """CREATE TABLE IF NOT EXISTS {p}leader (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            term BIGINT NOT NULL,
            holder TEXT,
            since TEXT)""",
        "INSERT INTO {p}leader (id, term) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
    ],
    # 5: ALTER MATERIALIZED VIEW v SUSPEND (issue 29): a suspended view takes no scheduled runs
    [
        "ALTER TABLE {p}batch_refresh_jobs ADD COLUMN suspended_at TEXT",
        "ALTER TABLE {p}batch_refresh_jobs ADD COLUMN suspended_by TEXT",
        "ALTER TABLE {p}batch_refresh_jobs ADD COLUMN suspend_reason TEXT",
    ],
    # 6: ALTER DATABASE d PAUSE [FOR interval] [REASON 'text'] (issue 29): why, and when it
    # resumes by itself
    [
        "ALTER TABLE {p}databases ADD COLUMN pause_reason TEXT",
        "ALTER TABLE {p}databases ADD COLUMN resumes_at TEXT",
    ],
    # 7: calendar schedules (issue 29): BATCH REFRESH CRON '0 3 * * *' [AT TIME ZONE 'tz'];
    # NULL cron: the job runs every refresh_interval_sec
    [
        "ALTER TABLE {p}batch_refresh_jobs ADD COLUMN refresh_cron TEXT",
        "ALTER TABLE {p}batch_refresh_jobs ADD COLUMN refresh_timezone TEXT",
    ],
    # 8: retries, auto-suspend and catch-up (issue 29, items 4, 5, 7): a job's policy
    # (NULL: the default), its run of failed scheduled runs; each run's SQLSTATE, duration
    # and the process that ran it
    [
        "ALTER TABLE {p}batch_refresh_jobs ADD COLUMN retry_backoff_sec INTEGER",
        "ALTER TABLE {p}batch_refresh_jobs ADD COLUMN max_failures INTEGER",
        "ALTER TABLE {p}batch_refresh_jobs ADD COLUMN jitter_sec INTEGER",
        "ALTER TABLE {p}batch_refresh_jobs ADD COLUMN consecutive_failures INTEGER NOT NULL "
        "DEFAULT 0",
        "ALTER TABLE {p}refresh_history ADD COLUMN sqlstate TEXT",
        "ALTER TABLE {p}refresh_history ADD COLUMN duration_ms BIGINT",
        "ALTER TABLE {p}refresh_history ADD COLUMN node TEXT",
    ],
]

SCHEMA_VERSION = len(MIGRATIONS)
