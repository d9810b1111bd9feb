"""The control plane: pgbarrier's own statements turned into meta commands.

Rules this module keeps:

* ``ALTER DATABASE d PAUSE|RESUME`` and ``FLUSH`` ride a barrier of ``d`` and
  return when it is collected. PAUSE/RESUME are idempotent: repeating one is not
  an error; a NOTICE says nothing changed.
* ``CREATE MATERIALIZED VIEW`` with a refresh interval creates a batch-refresh
  job: its query is validated on the backend first (42P01 for a missing input),
  the create command rides a barrier (55000 while the database is paused, with
  when/by whom and the RESUME hint), the view's snapshot is built on the backend
  and the job becomes idle at its snapshot epoch. Without an interval it is a
  streaming view: a backend view that always shows current data.
* No materialized view may read a batch-refresh view (0A000, RisingWave's rule).
* Waits on the barrier manager end early with 57014 when the session is cancelled.
"""

from __future__ import annotations

import datetime as dt
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pgbarrier.barrier.command import CreateBatchRefreshJob, Flush, Pause, Resume
from pgbarrier.barrier.epoch import epoch_to_datetime
from pgbarrier.errors import (
    DuplicateTable,
    FeatureNotSupported,
    InvalidCatalogName,
    Notice,
    QueryCanceled,
)
from pgbarrier.jobs.registry import BatchRefreshJob, JobRegistry
from pgbarrier.jobs.state import Creating
from pgbarrier.result import Column, Result, command
from pgbarrier.sql import statements as st
from pgbarrier.sql.catalog_rewrite import CatalogTable

if TYPE_CHECKING:
    from pgbarrier.backends.base import Backend, BackendSession
    from pgbarrier.barrier.clock import Clock
    from pgbarrier.barrier.manager import BarrierManager
    from pgbarrier.barrier.notifier import Notifier


@dataclass
class SessionInfo:
    """What the control plane knows of a client session."""

    user: str
    database: str
    application_name: str = ""
    cancelled: bool = False
    #: set when the wait in progress should end: its future finished, or a cancel arrived
    wake: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        self.cancelled = True
        self.wake.set()


class ControlPlane:
    def __init__(self, backend: Backend, barrier: BarrierManager, jobs: JobRegistry,
                 clock: Clock) -> None:
        self.backend = backend
        self.barrier = barrier
        self.jobs = jobs
        self.clock = clock
        self._sessions_lock = threading.Lock()
        self._sessions: set[int] = set()

    # ------------------------------------------------------------------ sessions

    @property
    def dialect(self) -> str:
        return self.backend.dialect

    def database_exists(self, name: str) -> bool:
        return self.barrier.has_database(name)

    def open_session(self, *, user: str, database: str, application_name: str = "") -> SessionInfo:
        info = SessionInfo(user=user, database=database, application_name=application_name)
        with self._sessions_lock:
            self._sessions.add(id(info))
        return info

    def close_session(self, info: SessionInfo) -> None:
        info.cancel()
        with self._sessions_lock:
            self._sessions.discard(id(info))

    def connect_backend(self, database: str, user: str) -> BackendSession:
        return self.backend.connect(database, user)

    def cancel(self, info: SessionInfo) -> None:
        info.cancel()

    # ------------------------------------------------------------------ statements

    @staticmethod
    def statement_name(stmt: st.ControlStatement) -> str:
        if isinstance(stmt, (st.PauseDatabase, st.ResumeDatabase)):
            return "ALTER DATABASE"
        if isinstance(stmt, st.Flush):
            return "FLUSH"
        return "CREATE MATERIALIZED VIEW"

    def describe(self, stmt: st.ControlStatement) -> list[Column] | None:
        """Control statements return no rows."""
        return None

    def execute(self, stmt: st.ControlStatement, info: SessionInfo) -> Result:
        info.cancelled = False
        info.wake.clear()
        if isinstance(stmt, st.PauseDatabase):
            return self._pause_resume(stmt.database, Pause(by=info.user), info, "paused")
        if isinstance(stmt, st.ResumeDatabase):
            return self._pause_resume(stmt.database, Resume(by=info.user), info, "running")
        if isinstance(stmt, st.Flush):
            self._wait(self.barrier.schedule(info.database, Flush()).collected, info)
            return command("FLUSH")
        if isinstance(stmt, st.CreateMaterializedView):
            return self._create_mv(stmt, info)
        raise AssertionError(f"unhandled control statement {stmt!r}")

    def _wait(self, future: Future[Any], info: SessionInfo) -> Any:
        """Wait for a notifier future; 57014 if the session is cancelled first."""
        info.wake.clear()
        future.add_done_callback(lambda _f: info.wake.set())
        if not info.cancelled:
            info.wake.wait()
        if not future.done() and info.cancelled:
            raise QueryCanceled()
        return future.result()

    def _pause_resume(self, database: str, cmd: Pause | Resume, info: SessionInfo,
                      target: str) -> Result:
        if not self.barrier.has_database(database):
            raise InvalidCatalogName(f'database "{database}" does not exist')
        notifier: Notifier = self.barrier.schedule(database, cmd)
        outcome = self._wait(notifier.collected, info)
        notices = []
        if not outcome.changed:
            notices.append(Notice(f'database "{database}" is already {target}, nothing to do'))
        return command("ALTER DATABASE", notices)

    def _relation_taken(self, database: str, name: str) -> bool:
        return self.jobs.get(database, name) is not None or self.backend.relation_exists(database, name)

    def _create_mv(self, stmt: st.CreateMaterializedView, info: SessionInfo) -> Result:
        db = info.database
        tag = "CREATE MATERIALIZED VIEW"
        if self._relation_taken(db, stmt.name):
            if stmt.if_not_exists:
                return command(tag, [Notice(f'relation "{stmt.name}" already exists, skipping',
                                            sqlstate="42P07")])
            raise DuplicateTable(f'relation "{stmt.name}" already exists')
        for upstream in stmt.inputs:
            if self.jobs.is_job(db, upstream.split(".")[-1]):
                raise FeatureNotSupported(
                    "creating streaming jobs on batch refresh materialized views is not supported",
                    detail=f'"{upstream}" is a batch refresh materialized view.')
        # validate the query on the backend: missing inputs are 42P01 before any barrier
        self.backend.describe_query(db, stmt.query)
        if stmt.refresh_interval_sec is None:
            self.backend.create_view(db, stmt.name, stmt.columns, stmt.query)
            return command(tag)

        self.jobs.reserve(db, stmt.name)
        try:
            now = dt.datetime.fromtimestamp(self.clock.now_ms() / 1000, tz=dt.timezone.utc)

            def register(barrier: Any) -> int:
                self.jobs.register(BatchRefreshJob(
                    name=stmt.name, database=db, definition=stmt.definition, query=stmt.query,
                    columns=stmt.columns, refresh_interval_sec=stmt.refresh_interval_sec or 0,
                    status=Creating(barrier.prev_epoch), snapshot_epoch=barrier.prev_epoch,
                    created_at=now))
                return barrier.prev_epoch

            notifier = self.barrier.schedule(db, CreateBatchRefreshJob(name=stmt.name, on_apply=register))
            self._wait(notifier.collected, info)
            self.backend.create_snapshot_table(db, stmt.name, stmt.columns, stmt.query)
            done_at = dt.datetime.fromtimestamp(self.clock.now_ms() / 1000, tz=dt.timezone.utc)
            self.jobs.mark_created(db, stmt.name, done_at)
        except BaseException:
            self.jobs.release(db, stmt.name)
            raise
        return command(tag)

    # ------------------------------------------------------------------ catalog

    def catalog_tables(self) -> dict[str, CatalogTable]:
        """Rows of the ``rw_catalog`` system views, as of now."""
        dbs = [
            (s.name, s.paused, s.paused_at, s.paused_by, s.barrier_interval_ms,
             s.committed_epoch,
             s.committed_at)
            for s in self.barrier.snapshots()
        ]
        jobs = []
        for j in self.jobs.jobs():
            last = getattr(j.status, "last_committed_epoch", None)
            next_at = (j.last_refreshed_at + dt.timedelta(seconds=j.refresh_interval_sec)
                       if j.last_refreshed_at else None)
            jobs.append((j.name, j.database, j.definition, j.refresh_interval_sec, j.status.name,
                         j.snapshot_epoch, last, j.last_refreshed_at, next_at))
        return {
            "rw_databases": CatalogTable(
                columns=(("name", "TEXT"), ("paused", "BOOLEAN"), ("paused_at", "TIMESTAMPTZ"),
                         ("paused_by", "TEXT"), ("barrier_interval_ms", "INTEGER"),
                         ("committed_epoch", "BIGINT"), ("committed_at", "TIMESTAMPTZ")),
                rows=dbs),
            "rw_batch_refresh_jobs": CatalogTable(
                columns=(("name", "TEXT"), ("database", "TEXT"), ("definition", "TEXT"),
                         ("refresh_interval_sec", "INTEGER"), ("status", "TEXT"),
                         ("snapshot_epoch", "BIGINT"), ("last_committed_epoch", "BIGINT"),
                         ("last_refreshed_at", "TIMESTAMPTZ"), ("next_refresh_at", "TIMESTAMPTZ")),
                rows=jobs),
        }

