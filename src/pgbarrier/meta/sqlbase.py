"""The SQL implementation of :class:`~pgbarrier.meta.store.MetaStore` shared by SQLite and PostgreSQL.

Rules this module keeps:

* Values always travel as parameters (``?`` here, rewritten to ``%s`` for
  psycopg); only the fixed table prefix is put into the SQL text.
* One connection, one lock. Every write is committed before its call returns (a
  caller may acknowledge its client right after), but writes from threads that
  arrive together share one transaction (group commit): the first becomes the
  leader, runs every write waiting at that moment and commits once. With a
  hundred databases' checkpoints (on the barrier collectors) and refresh runs
  writing at once, that is one fsync (SQLite) or one WAL flush (PostgreSQL) per
  batch instead of per write. If a batch fails, it is rolled back and each of
  its writes runs again in its own transaction, so one bad write fails only its
  own caller. Writes are idempotent upserts and deletes, so running one again is
  harmless.
* Refresh history is read a job at a time through its primary key (the newest
  runs of each recorded job, never the whole table) and pruned in batches, each
  its own transaction: a barrier's write waits for one batch at most.
* With a :class:`~pgbarrier.meta.term.TermFence` installed (:meth:`set_fence`, the
  PostgreSQL store of a process elected leader), every write transaction starts with its
  term check; a batch that fails it fails as a whole (:class:`~pgbarrier.meta.term.FencedWrite`
  to each caller), its writes are not tried again one by one.
* :meth:`migrate` applies :data:`~pgbarrier.meta.schema.MIGRATIONS` above the
  recorded version and records the new one, in one transaction.
* **The store failing** (its server gone, a full disk, an I/O error) is a
  :class:`StoreFailure`, a PgError with the SQLSTATE PostgreSQL gives that cause
  (each store's :meth:`_failure` decides: PostgreSQL store unreachable 25006, SQLite
  disk full 53100, I/O error or unwritable 58030): the caller whose statement needed the
  write gets it as an ERROR, never XX000. A batch that fails this way fails as a whole
  (its writes are not tried again one by one against a store that is not there). The
  first failure after a success is logged as one WARNING line, the recovery as one INFO
  line.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import astuple, fields
from typing import Any

from pgbarrier.errors import PgError
from pgbarrier.meta.schema import MIGRATIONS, SCHEMA_VERSION
from pgbarrier.meta.store import DatabaseRecord, JobRecord, RunRecord, ViewRecord
from pgbarrier.meta.term import FencedWrite, TermFence


log = logging.getLogger(__name__)


class MetaStoreError(RuntimeError):
    """The meta store cannot be used (e.g. written by a newer pgbarrier)."""


class StoreFailure(PgError):
    """The meta store failed a read or write for its own reasons (module rules); ERROR for
    the statement that needed it, with the SQLSTATE the store's ``_failure`` chose."""


class _Write:
    """One write waiting for (or done by) a group commit: ``op(cursor)``, or ``single``,
    the one statement (text, values) it is."""

    __slots__ = ("op", "done", "error", "single")

    def __init__(self, op: Callable[[Any], None] | None,
                 single: tuple[str, tuple[Any, ...]] | None = None) -> None:
        self.op = op
        self.done = False
        self.error: BaseException | None = None
        self.single = single

    def run(self, cur: Any) -> None:
        if self.op is not None:
            self.op(cur)
        else:
            cur.execute(*self.single)

    def finish(self, error: BaseException | None) -> None:
        self.error = error
        self.done = True


def _ts(value: dt.datetime | None) -> str | None:
    return None if value is None else value.astimezone(dt.timezone.utc).isoformat()


def _dt(value: Any) -> dt.datetime | None:
    return None if value is None else dt.datetime.fromisoformat(value)


class SqlMetaStore:
    paramstyle = "?"

    def __init__(self, conn: Any, prefix: str = "") -> None:
        self._conn = conn
        self._p = prefix
        self._lock = threading.RLock()
        #: group commit: writes waiting for a leader, and whether a leader is at work
        self._batch_cond = threading.Condition()
        self._pending: list[_Write] = []
        self._leading = False
        #: called with each write's seconds, from the call to its commit (metrics)
        self.on_written: Callable[[float], None] | None = None
        self._fence: TermFence | None = None

    def set_fence(self, fence: TermFence | None) -> None:
        """Check ``fence``'s term in every write transaction from now on (None: no check)."""
        self._fence = fence

    def _fenced(self, cur: Any) -> None:
        if self._fence is not None:
            self._fence.check(cur, self._sql)

    # -- plumbing --------------------------------------------------------------

    def _sql(self, text: str) -> str:
        text = text.replace("{p}", self._p)
        return text if self.paramstyle == "?" else text.replace("?", "%s")

    def _reconnect_if_broken(self) -> None:
        """Before each transaction, under the lock (a hook; SQLite needs nothing)."""

    def _failure(self, exc: BaseException) -> StoreFailure | None:
        """``exc`` (a driver's) as the store's own failure, or None when it is not one (a
        hook: each store knows its driver)."""
        return None

    _failing = False  # a failure was logged; the next success logs the recovery

    def _translated(self, exc: BaseException) -> BaseException:
        failure = self._failure(exc)
        if failure is None:
            return exc
        if not self._failing:
            self._failing = True
            log.warning("the meta store failed (SQLSTATE %s): %s%s", failure.sqlstate,
                        failure.message, f": {failure.detail}" if failure.detail else "")
        return failure

    def _succeeded(self) -> None:
        if self._failing:
            self._failing = False
            log.info("the meta store works again")

    @contextmanager
    def _tx(self) -> Iterator[Any]:
        with self._lock:
            try:
                self._reconnect_if_broken()
                cur = self._conn.cursor()
            except Exception as exc:
                raise self._translated(exc) from None
            try:
                self._begin(cur)
                yield cur
                self._conn.commit()
            except BaseException as exc:
                try:
                    self._conn.rollback()
                except Exception:  # noqa: BLE001 - the connection is gone: nothing to undo
                    pass
                translated = self._translated(exc)
                if translated is exc:
                    raise
                raise translated from None
            finally:
                try:
                    cur.close()
                except Exception:  # noqa: BLE001 - already broken
                    pass
            self._succeeded()

    def _exec(self, sql: str, params: Sequence[Any] = ()) -> None:
        text, values = self._sql(sql), tuple(params)
        self._write(None, (text, values))

    def _write(self, op: Callable[[Any], None] | None,
               single: tuple[str, tuple[Any, ...]] | None = None) -> None:
        """Run ``op(cursor)``, or the one statement ``single`` (see :meth:`_commit_alone`),
        in a committed transaction, shared with concurrent writes."""
        started = time.perf_counter()
        mine = _Write(op, single)
        leader = False
        with self._batch_cond:
            self._pending.append(mine)
            while self._leading and not mine.done:
                self._batch_cond.wait()
            if not mine.done:
                leader, self._leading = True, True
                batch, self._pending = self._pending, []
        if leader:
            try:
                self._commit_batch(batch)
            finally:
                with self._batch_cond:
                    self._leading = False
                    self._batch_cond.notify_all()
        if mine.error is not None:
            raise mine.error
        if self.on_written is not None:
            self.on_written(time.perf_counter() - started)

    #: whether one statement on its own is a durable transaction (:meth:`_commit_alone`)
    autocommits = False

    def _begin(self, cur: Any) -> None:
        """Open the transaction ``_tx`` runs in (a hook: psycopg opens it by itself)."""

    def _commit_alone(self, text: str, values: tuple[Any, ...]) -> None:
        """A write that is one statement, arriving alone and unfenced, as its own implicit
        transaction (stores that ``autocommits``): the same durability as ``_tx`` with one
        call into the driver instead of three (BEGIN, the statement, COMMIT). Each of those
        calls gives up the GIL and takes it back, and a PAUSE waits for this write while
        other sessions keep the GIL busy."""
        with self._lock:
            try:
                self._reconnect_if_broken()
                self._conn.execute(text, values).close()
            except Exception as exc:
                raise self._translated(exc) from None
            self._succeeded()

    def _commit_batch(self, batch: list[_Write]) -> None:
        if len(batch) == 1 and batch[0].single is not None and self.autocommits \
                and self._fence is None:
            try:
                self._commit_alone(*batch[0].single)
            except BaseException as exc:  # noqa: BLE001 - handed to its caller
                batch[0].finish(exc)
            else:
                batch[0].finish(None)
            return
        try:
            with self._tx() as cur:
                self._fenced(cur)
                for w in batch:
                    w.run(cur)
        except (FencedWrite, StoreFailure) as exc:
            for w in batch:
                w.finish(exc)
            return
        except BaseException as exc:
            if len(batch) == 1:
                batch[0].finish(exc)
                return
            for w in batch:  # find the one that failed: each on its own
                try:
                    with self._tx() as cur:
                        self._fenced(cur)
                        w.run(cur)
                except BaseException as exc:  # noqa: BLE001 - handed to its caller
                    w.finish(exc)
                else:
                    w.finish(None)
            return
        for w in batch:
            w.finish(None)

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._tx() as cur:
            cur.execute(self._sql(sql), tuple(params))
            return list(cur.fetchall())

    def _version_in(self, cur: Any) -> int:
        """The schema version the store records (0: none), read in ``cur``'s transaction;
        MetaStoreError when it is newer than this pgbarrier's."""
        cur.execute(self._sql("SELECT value FROM {p}meta_info WHERE key = ?"),
                    ("schema_version",))
        row = cur.fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise MetaStoreError(f"meta store schema version {version} is newer than this "
                                 f"pgbarrier's {SCHEMA_VERSION}")
        return version

    def migrate(self) -> None:
        with self._tx() as cur:
            cur.execute(self._sql(MIGRATIONS[0][0]))
            version = self._version_in(cur)
            for migration in MIGRATIONS[version:]:
                for ddl in migration:
                    cur.execute(self._sql(ddl))
            cur.execute(self._sql(
                "INSERT INTO {p}meta_info (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value"),
                ("schema_version", str(SCHEMA_VERSION)))

    # -- MetaStore ---------------------------------------------------------------

    def schema_version(self) -> int:
        rows = self._query("SELECT value FROM {p}meta_info WHERE key = ?", ("schema_version",))
        return int(rows[0][0]) if rows else 0

    def bootstrapped(self) -> bool:
        return bool(self._query("SELECT value FROM {p}meta_info WHERE key = ?", ("bootstrapped",)))

    def mark_bootstrapped(self) -> None:
        self._exec("INSERT INTO {p}meta_info (key, value) VALUES (?, ?) "
                   "ON CONFLICT (key) DO NOTHING", ("bootstrapped", _ts(dt.datetime.now(dt.timezone.utc))))

    def marked(self, key: str) -> bool:
        return bool(self._query("SELECT value FROM {p}meta_info WHERE key = ?", ("done:" + key,)))

    def mark(self, key: str) -> None:
        self._exec("INSERT INTO {p}meta_info (key, value) VALUES (?, ?) "
                   "ON CONFLICT (key) DO NOTHING",
                   ("done:" + key, _ts(dt.datetime.now(dt.timezone.utc))))

    def load_databases(self) -> list[DatabaseRecord]:
        rows = self._query("SELECT name, paused, paused_at, paused_by, prev_epoch, committed_epoch, "
                           "dropping, pause_reason, resumes_at FROM {p}databases ORDER BY name")
        return [DatabaseRecord(r[0], bool(r[1]), _dt(r[2]), r[3], r[4], r[5], bool(r[6]), r[7],
                               _dt(r[8]))
                for r in rows]

    def put_database(self, rec: DatabaseRecord) -> None:
        self._exec(
            "INSERT INTO {p}databases (name, paused, paused_at, paused_by, prev_epoch, "
            "committed_epoch, pause_reason, resumes_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (name) DO UPDATE SET "
            "paused = excluded.paused, paused_at = excluded.paused_at, "
            "paused_by = excluded.paused_by, prev_epoch = excluded.prev_epoch, "
            "pause_reason = excluded.pause_reason, resumes_at = excluded.resumes_at, "
            "committed_epoch = excluded.committed_epoch",
            (rec.name, rec.paused, _ts(rec.paused_at), rec.paused_by, rec.prev_epoch,
             rec.committed_epoch, rec.pause_reason, _ts(rec.resumes_at)))

    def mark_database_dropping(self, name: str) -> None:
        self._exec("UPDATE {p}databases SET dropping = TRUE WHERE name = ?", (name,))

    def delete_database(self, name: str) -> None:
        statements = [self._sql(f"DELETE FROM {{p}}{table} WHERE {col} = ?")
                      for table, col in (("refresh_history", "database"),
                                         ("batch_refresh_jobs", "database"),
                                         ("streaming_views", "database"), ("databases", "name"))]

        def op(cur: Any) -> None:
            for text in statements:
                cur.execute(text, (name,))
        self._write(op)

    def load_epoch_ceiling(self) -> int | None:
        rows = self._query("SELECT value FROM {p}meta_info WHERE key = ?", ("epoch_ceiling",))
        return int(rows[0][0]) if rows else None

    def put_epoch_ceiling(self, epoch: int, *, lower: bool = False) -> None:
        current = None if lower else self.load_epoch_ceiling()
        if current is not None and current >= epoch:
            return  # only this process writes it (one writer per store): no race to lose
        self._exec("INSERT INTO {p}meta_info (key, value) VALUES (?, ?) "
                   "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                   ("epoch_ceiling", str(epoch)))

    def rename_database(self, old: str, new: str) -> None:
        statements = [self._sql(f"UPDATE {{p}}{table} SET {col} = ? WHERE {col} = ?")
                      for table, col in (("refresh_history", "database"),
                                         ("batch_refresh_jobs", "database"),
                                         ("streaming_views", "database"), ("databases", "name"))]

        def op(cur: Any) -> None:
            for text in statements:
                cur.execute(text, (new, old))
        self._write(op)

    def rename_job(self, database: str, old: str, new: str) -> None:
        statements = [self._sql("UPDATE {p}batch_refresh_jobs SET name = ? "
                                "WHERE database = ? AND name = ?"),
                      self._sql("UPDATE {p}refresh_history SET job = ? "
                                "WHERE database = ? AND job = ?")]

        def op(cur: Any) -> None:
            for text in statements:
                cur.execute(text, (new, database, old))
        self._write(op)

    _JOB_COLS = [f.name for f in fields(JobRecord)]

    def load_jobs(self) -> list[JobRecord]:
        rows = self._query(f"SELECT {', '.join(self._JOB_COLS)} FROM {{p}}batch_refresh_jobs "
                           "ORDER BY database, name")
        out = []
        for r in rows:
            d = dict(zip(self._JOB_COLS, r))
            d["columns"] = None if d["columns"] is None else tuple(json.loads(d["columns"]))
            d["created_at"] = _dt(d["created_at"])
            d["last_refreshed_at"] = _dt(d["last_refreshed_at"])
            d["suspended_at"] = _dt(d["suspended_at"])
            out.append(JobRecord(**d))
        return out

    def put_job(self, rec: JobRecord) -> None:
        values = list(astuple(rec))
        idx = self._JOB_COLS.index
        values[idx("columns")] = None if rec.columns is None else json.dumps(list(rec.columns))
        values[idx("created_at")] = _ts(rec.created_at)
        values[idx("last_refreshed_at")] = _ts(rec.last_refreshed_at)
        values[idx("suspended_at")] = _ts(rec.suspended_at)
        cols = self._JOB_COLS
        updates = ", ".join(f"{c} = excluded.{c}" for c in cols[2:])
        self._exec(f"INSERT INTO {{p}}batch_refresh_jobs ({', '.join(cols)}) VALUES "
                   f"({', '.join('?' for _ in cols)}) ON CONFLICT (database, name) DO UPDATE SET "
                   f"{updates}", values)

    def delete_job(self, database: str, name: str) -> None:
        runs = self._sql("DELETE FROM {p}refresh_history WHERE database = ? AND job = ?")
        job = self._sql("DELETE FROM {p}batch_refresh_jobs WHERE database = ? AND name = ?")

        def op(cur: Any) -> None:
            cur.execute(runs, (database, name))
            cur.execute(job, (database, name))
        self._write(op)

    def load_views(self) -> list[ViewRecord]:
        rows = self._query("SELECT database, name, definition FROM {p}streaming_views "
                           "ORDER BY database, name")
        return [ViewRecord(*r) for r in rows]

    def put_view(self, rec: ViewRecord) -> None:
        self._exec("INSERT INTO {p}streaming_views (database, name, definition) VALUES (?, ?, ?) "
                   "ON CONFLICT (database, name) DO UPDATE SET definition = excluded.definition",
                   (rec.database, rec.name, rec.definition))

    def delete_view(self, database: str, name: str) -> None:
        self._exec("DELETE FROM {p}streaming_views WHERE database = ? AND name = ?",
                   (database, name))

    _RUN_COLS = ('database, job, run_id, "trigger", started_at, target_epoch, status, '
                 'finished_at, "rows", error, sqlstate, duration_ms, node')

    def load_runs(self, per_job: int = 0,
                  since: dt.datetime | None = None) -> list[RunRecord]:
        # one query per recorded job, newest first with a LIMIT: its plan is a backward scan
        # of the primary key (database, job, run_id) whatever the statistics say (right after
        # a bulk load there are none), so start-up reads what it keeps, not what is stored
        where = "database = ? AND job = ?"
        if since is not None:  # a run still marked running is read whatever its age
            where += " AND (started_at >= ? OR status = 'running')"
        limit = f" LIMIT {int(per_job)}" if per_job > 0 else ""
        text = self._sql(f"SELECT {self._RUN_COLS} FROM {{p}}refresh_history WHERE {where} "
                         f"ORDER BY database DESC, job DESC, run_id DESC{limit}")
        out: list[RunRecord] = []
        with self._tx() as cur:
            self._newest_first_plan(cur)
            cur.execute(self._sql("SELECT database, name FROM {p}batch_refresh_jobs "
                                  "ORDER BY database, name"))
            for database, job in list(cur.fetchall()):
                params: list[Any] = [database, job]
                if since is not None:
                    params.append(_ts(since))
                cur.execute(text, tuple(params))
                out.extend(RunRecord(r[0], r[1], r[2], r[3], _dt(r[4]), r[5], r[6], _dt(r[7]),
                                     r[8], r[9], r[10], r[11], r[12])  # type: ignore[arg-type]
                           for r in reversed(cur.fetchall()))
        return out

    def _newest_first_plan(self, cur: Any) -> None:
        """Before ``load_runs``' queries, in their transaction: make the store plan them as
        the backward primary-key scans they are (a hook; SQLite needs nothing)."""

    def prune_runs(self, per_job: int = 0, before: dt.datetime | None = None, *,
                   batch: int = 1000, between: Callable[[], None] | None = None) -> int:
        # each batch is a range delete on an index (the primary key for the count, started_at
        # for the age) up to the batch-th row, found first: no plan depends on statistics
        deleted = 0
        if per_job > 0:
            nth = ("SELECT run_id FROM {p}refresh_history WHERE database = ? AND job = ? "
                   "ORDER BY run_id DESC LIMIT 1 OFFSET ?")
            for database, job in self._query("SELECT database, name FROM {p}batch_refresh_jobs"):
                rows = self._query(nth, (database, job, per_job - 1))
                if rows:
                    key = "database = ? AND job = ? AND run_id < ? AND run_id"
                    deleted += self._delete_batches(
                        "refresh_history", key, (database, job, rows[0][0]), batch, between)
        if before is not None:
            deleted += self._delete_batches(
                "refresh_history", "status <> 'running' AND started_at < ? AND started_at",
                (_ts(before),), batch, between)
        return deleted

    def _delete_batches(self, table: str, where: str, params: tuple[Any, ...], batch: int,
                        between: Callable[[], None] | None) -> int:
        """``DELETE FROM table WHERE <where> <= bound`` a batch at a time, each in its own
        transaction, ``where`` ending in the ordering column; the bound is the batch-th
        smallest value matching, or none for the last batch."""
        column = where.rsplit(" ", 1)[1]
        bound = self._sql(f"SELECT {column} FROM {{p}}{table} WHERE {where} IS NOT NULL "
                          f"ORDER BY {column} LIMIT 1 OFFSET ?")
        last = self._sql(f"DELETE FROM {{p}}{table} WHERE {where} IS NOT NULL")
        upto = self._sql(f"DELETE FROM {{p}}{table} WHERE {where} <= ?")
        total = 0
        while True:
            with self._tx() as cur:
                self._fenced(cur)
                cur.execute(bound, (*params, batch - 1))
                row = cur.fetchone()
                if row is None:
                    cur.execute(last, params)
                else:
                    cur.execute(upto, (*params, row[0]))
                total += max(cur.rowcount, 0)
            if between is not None:
                between()
            if row is None:
                return total

    def put_run(self, rec: RunRecord) -> None:
        self._exec(
            'INSERT INTO {p}refresh_history (database, job, run_id, "trigger", started_at, '
            'target_epoch, status, finished_at, "rows", error, sqlstate, duration_ms, node) '
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (database, job, run_id) DO UPDATE SET status = excluded.status, "
            'finished_at = excluded.finished_at, "rows" = excluded."rows", error = excluded.error, '
            "sqlstate = excluded.sqlstate, duration_ms = excluded.duration_ms",
            (rec.database, rec.job, rec.run_id, rec.trigger, _ts(rec.started_at),
             rec.target_epoch, rec.status, _ts(rec.finished_at), rec.rows, rec.error,
             rec.sqlstate, rec.duration_ms, rec.node))

    def flush(self) -> None:
        with self._lock:
            try:
                self._conn.commit()
            except Exception as exc:  # every write committed already; a store gone is logged
                if self._translated(exc) is exc:
                    raise

    def close(self) -> None:
        with self._lock:
            self._conn.close()
