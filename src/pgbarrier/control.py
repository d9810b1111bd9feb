"""The control plane: pgbarrier's own statements turned into meta commands.

Rules this module keeps:

* ``ALTER DATABASE d PAUSE|RESUME`` and ``FLUSH`` ride a barrier of ``d`` and
  return when it is collected. PAUSE/RESUME are idempotent: repeating one is not
  an error; a NOTICE says nothing changed. ``PAUSE [FOR interval] [REASON 'text']``
  records its reason and deadline with the pause (a PAUSE of a paused database replaces
  them, with a NOTICE); :mod:`pgbarrier.timed_pause` resumes it at the deadline.
* ``CREATE MATERIALIZED VIEW`` with a refresh interval creates a batch-refresh
  job: its query is validated on the backend first (42P01 for a missing input),
  the create command rides a barrier (55000 while the database is paused, with
  when/by whom and the RESUME hint), the view's snapshot is built on the backend
  and the job becomes idle at its snapshot epoch. Without an interval it is a
  streaming view on DuckDB: a backend view that always shows current data.
* Upstream (PostgreSQL), a materialized view without a refresh interval is PostgreSQL's
  own: :meth:`ControlPlane.passes_through` enforces RisingWave's rule below and the
  statement is relayed as written, like ``REFRESH`` / ``DROP MATERIALIZED VIEW`` of any
  name that is not a batch-refresh view. A batch-refresh view is created in the client's
  own upstream session (its search_path, its current role owns it; pgbarrier names it
  ``v``, or ``schema.v`` outside ``public``), with the storage clauses and ``WITH [NO]
  DATA`` it was written with; its refreshes run on the refresh pool as its owner
  (PostgreSQL's ``REFRESH``). ``DROP ... CASCADE`` of one drops its dependents upstream.
* What a backend cannot honour is refused here, at the clause's position: on DuckDB
  storage clauses (22023 ``unrecognized parameter`` for a ``WITH`` option, 0A000 for
  ``USING``/``TABLESPACE``), ``WITH NO DATA``, ``DROP`` of several names or ``CASCADE``;
  on any backend ``REFRESH ... WITH NO DATA`` of a batch-refresh view (0A000).
* ``REFRESH MATERIALIZED VIEW`` runs a refresh now and returns once it has
  committed (55000 while paused); ``DROP MATERIALIZED VIEW`` removes job and data.
* RisingWave's rules: no materialized view may read a batch-refresh view, and
  ``ALTER MATERIALIZED VIEW ... AS`` is refused on one (0A000, RisingWave's words).
* With ``batch_refresh_when_paused = 'wait'`` a create or manual refresh on a
  paused database waits for RESUME instead of failing; every wait here ends with
  57014 when the session is cancelled or its ``statement_timeout`` runs out.
* CREATE, DROP and REFRESH of one view name take turns (:mod:`pgbarrier.jobs.namelocks`,
  PostgreSQL's relation locks): a second statement waits for the first (55P03 past
  ``lock_timeout``, 57014 past ``statement_timeout`` or on a cancel), then finds
  the name as the first left it (42P07, 42P01). No statement sees another's
  half-done work, so none answers XX000 because of another session.
* A DROP of a view that is being created cancels the create (its client gets
  57014 and the view is not created) and then succeeds: a DROP never waits
  behind a first snapshot, and the name is free afterwards.
* All or nothing across a crash: the durable intent is written before the
  backend is touched (a batch-refresh job ``creating``/``dropping``, a
  streaming view's record before its backend view) and recovery finishes or
  undoes it (:mod:`pgbarrier.meta.recovery`). A create that fails after its
  backend object exists drops that object before forgetting the job.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pgbarrier.backends.base import PassThrough, RefreshCancel
from pgbarrier.barrier.command import CreateBatchRefreshJob, Flush, Pause, Resume
from pgbarrier.barrier.info import BarrierInfo
from pgbarrier.barrier.pause import Paused, PauseState, Running
from pgbarrier.sql.colnames import duplicate_column, postgres_names
from pgbarrier.sql.relnames import in_database
from pgbarrier.errors import (
    DuplicateDatabase,
    DuplicateTable,
    FeatureNotSupported,
    InvalidCatalogName,
    Notice,
    ObjectInUse,
    ObjectNotInPrerequisiteState,
    PgError,
    QueryCanceled,
    UndefinedTable,
)
from pgbarrier.jobs import policy
from pgbarrier.jobs import state as js
from pgbarrier.jobs import testpoint
from pgbarrier.jobs.namelocks import NameLocks
from pgbarrier.jobs.history import RefreshHistory
from pgbarrier.jobs.registry import BatchRefreshJob, JobRegistry, StreamingView
from pgbarrier.jobs.scheduler import RefreshScheduler
from pgbarrier.logs import session_fields
from pgbarrier.meta.store import DatabaseRecord
from pgbarrier.result import Column, Result, command, rowset
from pgbarrier.sql import statements as st
from pgbarrier.sql.grammar import ControlStatement
from pgbarrier import view_control
from pgbarrier.sql.catalog_rewrite import CatalogTable
from pgbarrier.pgproto import types as pgt

if TYPE_CHECKING:
    from pgbarrier.sql.startup_params import StartupSettings
    from pgbarrier.sql.view_options import ViewOptions
    from pgbarrier.sql.view_suspend import ResumeView, SuspendView
    from pgbarrier.backends.base import Backend, BackendSession
    from pgbarrier.barrier.clock import Clock
    from pgbarrier.barrier.manager import BarrierManager
    from pgbarrier.events import EventBus
    from pgbarrier.meta.store import MetaStore


#: pg_stat_activity's wait_event_type / wait_event while a statement waits for RESUME
RESUME_WAIT = ("IPC", "BarrierResume")

#: guards the making of a session's ``wake`` Event
_WAKE_MADE = threading.Lock()


@dataclass(eq=False)
class SessionInfo:
    """What the control plane knows of a client session."""

    user: str
    database: str
    application_name: str = ""
    #: the process id of the session's BackendKeyData (its pid in logs)
    process_id: int = 0
    when_paused: str = "error"
    statement_timeout_ms: int = 0
    #: bounds a wait for another session's DDL on the same view name (55P03)
    lock_timeout_ms: int = 0
    #: the idle timeouts (session.settings), enforced by the server connection (server/connection.py)
    idle_in_transaction_timeout_ms: int = 0
    idle_session_timeout_ms: int = 0
    cancelled: bool = False
    deadline: float | None = None
    #: the backend work running for this session's statement (a first snapshot), if any
    running: RefreshCancel | None = None
    #: ``(wait_event_type, wait_event)`` while a statement waits (pg_stat_activity):
    #: ``("IPC", "BarrierResume")`` while it waits for RESUME in 'wait' mode
    wait_event: tuple[str, str] | None = None
    #: ``wake``, made on first use (an Event is a KB: most sessions never wait)
    _wake: threading.Event | None = field(default=None, repr=False)

    @property
    def wake(self) -> threading.Event:
        """Set when the wait in progress should end: its event happened, or a cancel
        arrived. One Event per session, whichever thread asks first."""
        event = self._wake
        if event is None:
            with _WAKE_MADE:
                event = self._wake
                if event is None:
                    event = self._wake = threading.Event()
        return event

    def cancel(self) -> None:
        self.cancelled = True
        self.wake.set()
        running = self.running
        if running is not None:
            running.cancel()

    def begin_statement(self) -> None:
        self.cancelled = False
        if self._wake is not None:  # none made: nobody waited, nothing to clear
            self._wake.clear()
        self.deadline = (time.monotonic() + self.statement_timeout_ms / 1000
                         if self.statement_timeout_ms else None)


log = logging.getLogger(__name__)

#: how long a cancelled create still waits for its barrier command to land
_LAND_S = 30.0


#: PostgreSQL's HINT for a DROP of the wrong kind, by the relation's kind
_DROP_HINTS = {"r": "Use DROP TABLE to remove a table.", "v": "Use DROP VIEW to remove a view.",
               "S": "Use DROP SEQUENCE to remove a sequence.",
               "i": "Use DROP INDEX to remove an index."}


def _pause_words(state: PauseState) -> str:
    """``: reason; it resumes at ...`` for a log line, from a pause state."""
    if not isinstance(state, Paused):
        return ""
    words = f": {state.reason}" if state.reason else ""
    if state.resumes_at is not None:
        words += f"; it resumes at {state.resumes_at.isoformat()}"
    return words


class ControlPlane:
    def __init__(self, backend: Backend, barrier: BarrierManager, jobs: JobRegistry,
                 clock: Clock, *, history: RefreshHistory | None = None,
                 scheduler: RefreshScheduler | None = None,
                 meta: MetaStore | None = None) -> None:
        self.meta = meta
        self.backend = backend
        self.barrier = barrier
        self.jobs = jobs
        self.clock = clock
        self.history = history or RefreshHistory()
        self.scheduler = scheduler or RefreshScheduler(jobs, self.history, backend, barrier, clock)
        self._lock = threading.Lock()
        self._sessions_changed = threading.Condition(self._lock)
        self._sessions: dict[str, set[int]] = {}
        self._resume_waiters: dict[str, set[SessionInfo]] = {}
        #: CREATE / DROP / REFRESH of one (database, view name) take turns
        self.name_locks = NameLocks()
        #: ``rw_leader``'s one row: (role, term, since, holder); the App sets it (a lone
        #: process on SQLite leads with no term)
        self.leader_status: Callable[[], tuple[Any, ...]] = lambda: ("leader", None, None, None)
        #: ``rw_barrier`` events of PAUSE / RESUME and view SUSPEND / RESUME (the App sets it)
        self.events: EventBus | None = None
        # a backend that has a catalog of its own (DuckDB's pg_catalog) lists rw_catalog
        backend.set_system_views({name: table.columns
                                  for name, table in self.catalog_tables().items()})

    # ------------------------------------------------------------------ sessions

    @property
    def dialect(self) -> str:
        return self.backend.dialect

    def database_exists(self, name: str) -> bool:
        return self.barrier.has_database(name)

    def unserved_database_hint(self, name: str) -> str | None:
        """For a database pgbarrier does not serve: how to serve it, when the upstream
        has it (``\\l`` lists the upstream's databases); else None."""
        try:
            if not self.backend.has_database(name):
                return None
        except PgError:  # the upstream is not there: the plain 3D000 says enough
            return None
        return (f'The upstream PostgreSQL has database "{name}", but pgbarrier does not '
                f"serve it: start pgbarrier with --adopt-database {name}.")

    def open_session(self, *, user: str, database: str, application_name: str = "",
                     process_id: int = 0) -> SessionInfo:
        info = SessionInfo(user=user, database=database, application_name=application_name,
                           process_id=process_id)
        with self._lock:
            self._sessions.setdefault(database, set()).add(id(info))
        return info

    def close_session(self, info: SessionInfo) -> None:
        info.cancel()
        with self._lock:
            self._sessions.get(info.database, set()).discard(id(info))
            self._sessions_changed.notify_all()

    def connect_backend(self, database: str, user: str, password: str | None = None,
                        startup: StartupSettings | None = None) -> BackendSession:
        """``user``'s backend session; ``password``: what the client authenticated with;
        ``startup``: the client's start-up settings the backend gets."""
        return self.backend.connect(database, user, password, startup)

    def cancel(self, info: SessionInfo) -> None:
        info.cancel()

    def on_barrier(self, info: BarrierInfo) -> None:
        """Barrier listener: wake sessions waiting for ``info.database`` to resume."""
        if info.paused:
            return
        with self._lock:
            waiters = self._resume_waiters.pop(info.database, set())
        for waiter in waiters:
            waiter.wake.set()

    # ------------------------------------------------------------------ waiting

    def _block(self, info: SessionInfo) -> None:
        """Wait for ``info.wake``; 57014 on cancel or when the statement timeout runs out."""
        if not info.cancelled:
            timeout = None if info.deadline is None else max(0.0, info.deadline - time.monotonic())
            if not info.wake.wait(timeout):
                raise QueryCanceled("canceling statement due to statement timeout")
        if info.cancelled:
            raise QueryCanceled()

    def _wait(self, future: Future[Any], info: SessionInfo) -> Any:
        """Wait for a notifier or run future (cancellable, bounded by statement_timeout)."""
        info.wake.clear()
        future.add_done_callback(lambda _f: info.wake.set())
        if not future.done():
            self._block(info)
        return future.result()

    def _wait_landed(self, future: Future[Any], info: SessionInfo) -> Any:
        """``_wait`` for a command that registers state when it applies: a cancel (or the
        statement timeout) still lets it land, for up to ``_LAND_S``, so the caller's
        clean-up sees what it registered instead of leaving it behind."""
        try:
            return self._wait(future, info)
        except QueryCanceled:
            try:
                future.result(timeout=_LAND_S)
            except Exception:  # noqa: BLE001 - the cancel is the statement's outcome
                pass
            raise

    def _wait_for_resume(self, database: str, info: SessionInfo) -> None:
        info.wake.clear()
        with self._lock:
            self._resume_waiters.setdefault(database, set()).add(info)
        try:
            if self.barrier.snapshot(database).paused:
                info.wait_event = RESUME_WAIT
                self._block(info)
        finally:
            info.wait_event = None
            with self._lock:
                self._resume_waiters.get(database, set()).discard(info)

    def _unless_paused(self, info: SessionInfo, database: str, action: Any) -> Any:
        """Run ``action``; in 'wait' mode a 55000 (paused) waits for RESUME and retries."""
        while True:
            try:
                return action()
            except ObjectNotInPrerequisiteState:
                if info.when_paused != "wait":
                    raise
            self._wait_for_resume(database, info)

    # ------------------------------------------------------------------ statements

    # each statement carries its facts (pgbarrier.sql.grammar); these read them

    @staticmethod
    def statement_name(stmt: ControlStatement) -> str:
        return stmt.TAG

    @staticmethod
    def allowed_in_transaction(stmt: ControlStatement) -> bool:
        return stmt.IN_TRANSACTION

    def describe(self, stmt: ControlStatement) -> list[Column] | None:
        shape = stmt.DESCRIBE
        return None if shape is None else [Column(n, oid) for n, oid in shape]

    def _name(self, info: SessionInfo, name: str, session: BackendSession | None) -> str:
        """pgbarrier's name of the view ``name`` means to the client (resolved with the
        session's search_path; as written when there is no such relation)."""
        name = in_database(name, info.database)
        if session is not None:
            return self.backend.relation_name(session, name) or name
        return name

    def _ours(self, database: str, name: str) -> bool:
        return (self.jobs.get(database, name) is not None
                or self.jobs.streaming_view(database, name) is not None)

    def is_ours(self, info: SessionInfo, name: str, session: BackendSession | None) -> bool:
        """Whether ``name`` (as the client wrote it) is one of pgbarrier's views."""
        return self._ours(info.database, self._name(info, name, session))

    def passes_through(self, stmt: ControlStatement, info: SessionInfo,
                       session: BackendSession | None) -> bool:
        """Whether ``stmt`` is PostgreSQL's own, for the caller to relay unchanged
        (a backend with materialized views of its own only; see the module rules and each
        statement's ``passes_through``)."""
        if not self.backend.has_own_materialized_views() or session is None:
            return False
        return stmt.passes_through(self, info, session)

    def create_passes_through(self, stmt: st.CreateMaterializedView, info: SessionInfo,
                              session: BackendSession) -> bool:
        """A CREATE without a refresh interval is PostgreSQL's own upstream, once checked
        against RisingWave's rule (0A000 when it reads a batch-refresh view)."""
        if stmt.refresh_interval_sec is not None:
            return False
        info.begin_statement()
        self._check_inputs(info.database, stmt.inputs, session)
        return True

    def execute(self, stmt: ControlStatement, info: SessionInfo,
                session: BackendSession | None = None) -> Result:
        info.begin_statement()
        return stmt.run(self, info, session)

    # -- statement handlers (each statement's ``run`` calls one) ---------------

    def pause_database(self, stmt: st.PauseDatabase, info: SessionInfo,
                       session: BackendSession | None) -> Result:
        resumes_at_ms = None if stmt.for_ms is None else self.clock.now_ms() + stmt.for_ms
        return self._pause_resume(stmt.database, Pause(by=info.user, reason=stmt.reason,
                                                       resumes_at_ms=resumes_at_ms),
                                  info, "paused", session)

    def resume_database(self, stmt: st.ResumeDatabase, info: SessionInfo,
                        session: BackendSession | None) -> Result:
        return self._pause_resume(stmt.database, Resume(by=info.user), info, "running", session)

    def flush(self, info: SessionInfo) -> Result:
        self._wait(self.barrier.run(info.database, Flush()).collected, info)
        return command("FLUSH")

    def refresh_mv(self, stmt: st.RefreshMaterializedView, info: SessionInfo,
                   session: BackendSession | None) -> Result:
        if stmt.with_data is False:
            raise FeatureNotSupported(
                "REFRESH MATERIALIZED VIEW ... WITH NO DATA is not supported",
                detail="A pgbarrier refresh always recomputes the view from a consistent "
                       "snapshot.", hint="Omit WITH NO DATA.", position=stmt.with_at)
        return self._refresh_mv(self._name(info, stmt.name, session), info)

    def show_materialized_views(self, info: SessionInfo) -> Result:
        db = info.database
        for job in self.jobs.jobs(db):  # the registry follows the backend (issue 14)
            self.scheduler.forget_vanished(db, job.name, lambda f: self._wait(f, info))
        names = sorted([j.name for j in self.jobs.jobs(db)]
                       + [v.name for v in self.jobs.streaming_views(db)])
        return rowset([Column("Name", pgt.TEXT)], [(n,) for n in names], "SHOW")

    def show_databases(self, info: SessionInfo) -> Result:
        return rowset([Column("Name", pgt.TEXT)], [(n,) for n in self.barrier.databases()],
                      "SHOW")

    def alter_mv_name(self, stmt: st.AlterMaterializedViewName, info: SessionInfo,
                      session: BackendSession | None) -> Result:
        db = info.database
        name = self._name(info, stmt.name, session)
        if self.jobs.get(db, name) is not None and session is not None:
            new = self.backend.view_name_after(name, stmt.action, stmt.target)
            if new is not None:  # the backend renames it
                return self._rename_mv(dataclasses.replace(stmt, name=name), new, info,
                                       session)
        if self.jobs.get(db, name) is not None:
            kind = "batch refresh"
        elif self.jobs.streaming_view(db, name) is not None:
            kind = "streaming"
        else:
            raise PassThrough()  # not pgbarrier's: the backend's own statement
        raise FeatureNotSupported(
            f"ALTER MATERIALIZED VIEW ... {stmt.action} is not supported for {kind} "
            "materialized views",
            detail=f'"{name}" is one of pgbarrier\'s views, which keep the name they were '
                   "created with.",
            hint="Drop it and create it again under the new name.")

    def suspend_view(self, stmt: SuspendView, info: SessionInfo,
                     session: BackendSession | None) -> Result:
        return view_control.suspend(self, stmt, info, session)

    def resume_view(self, stmt: ResumeView, info: SessionInfo,
                    session: BackendSession | None) -> Result:
        return view_control.resume(self, stmt, info, session)

    def set_view_options(self, stmt: ViewOptions, info: SessionInfo,
                         session: BackendSession | None) -> Result:
        return view_control.set_options(self, stmt, info, session)

    def resolve_name(self, info: SessionInfo, name: str, session: BackendSession | None) -> str:
        """pgbarrier's name of the view ``name`` means to the client."""
        return self._name(info, name, session)

    def name_lock(self, info: SessionInfo, name: str, kind: str) -> Any:
        """CREATE / DROP / REFRESH / ALTER of one view name take turns."""
        return self._name_lock(info, name, kind)

    def alter_mv(self, stmt: st.AlterMaterializedViewAs, info: SessionInfo,
                 session: BackendSession | None) -> Result:
        return self._alter_mv(dataclasses.replace(
            stmt, name=self._name(info, stmt.name, session)), info)

    # -- databases -----------------------------------------------------------

    def _pause_resume(self, database: str, cmd: Pause | Resume, info: SessionInfo,
                      target: str, session: BackendSession | None = None) -> Result:
        if not self.barrier.has_database(database):
            raise InvalidCatalogName(f'database "{database}" does not exist')
        # ALTER DATABASE is the owner's (PostgreSQL's rule; DuckDB has no roles)
        self.backend.require_database_right("alter", database, info.user, session)
        outcome = self._wait(self.barrier.run(database, cmd).collected, info)
        notices = []
        state = outcome.state
        if (outcome.changed or outcome.replaced) and self.events is not None:
            paused = state if isinstance(state, Paused) else None
            self.events.barrier_event(
                database, "pause" if target == "paused" else "resume", info.user,
                reason=paused.reason if paused else None,
                resumes_at=paused.resumes_at if paused else None)
        if outcome.changed:
            log.info('database "%s" %s by %s%s', database,
                     "paused" if target == "paused" else "resumed", info.user,
                     _pause_words(state),
                     extra={"event": "pause" if target == "paused" else "resume",
                            **session_fields(info), "database": database})
        elif outcome.replaced:
            notices.append(Notice(f'database "{database}" is already paused; its deadline '
                                  "and reason are replaced"))
            log.info('database "%s" pause replaced by %s%s', database, info.user,
                     _pause_words(state), extra={"event": "pause", **session_fields(info),
                                                 "database": database})
        else:
            notices.append(Notice(f'database "{database}" is already {target}, nothing to do'))
        return command("ALTER DATABASE", notices)

    def create_database(self, stmt: st.CreateDatabase, info: SessionInfo,
                         session: BackendSession | None = None) -> Result:
        name = stmt.name
        if stmt.options is not None:
            self.backend.refuse_database_options(stmt.options, stmt.options_at or 1, session)
        if self.barrier.has_database(name):
            raise DuplicateDatabase(f'database "{name}" already exists')
        self.backend.require_database_right("create", name, info.user, session)
        if stmt.options is not None:
            assert session is not None
            # PostgreSQL's own options, judged by PostgreSQL in the client's session (its
            # rules for OWNER, TEMPLATE, ENCODING... as the client's current role)
            self.backend.create_database_in_session(session, name, stmt.options,
                                                    stmt.options_at or 1)
        else:
            owner = (self.backend.current_role(session) if session is not None else None) \
                or info.user
            self.backend.ensure_database(name, owner=owner, new=True)
        if self.meta is not None:
            self.meta.put_database(DatabaseRecord(name))  # durable before it is acknowledged
        self.barrier.add_database(name)
        return command("CREATE DATABASE")

    def drop_database(self, stmt: st.DropDatabase, info: SessionInfo,
                       session: BackendSession | None = None) -> Result:
        name = stmt.name
        if not self.barrier.has_database(name):
            if stmt.if_exists:
                return command("DROP DATABASE",
                               [Notice(f'database "{name}" does not exist, skipping')])
            raise InvalidCatalogName(f'database "{name}" does not exist')
        self.backend.require_database_right("drop", name, info.user, session)
        if name == info.database:
            raise ObjectInUse("cannot drop the currently open database")
        # PostgreSQL's FORCE, where the backend's drop below ends the other sessions (each
        # client gets PostgreSQL's FATAL 57P01 at once): nobody to count or wait for
        ends_others = stmt.force and self.backend.ends_sessions_on_drop()
        others = 0 if ends_others else self._others(name)
        if others and stmt.force:
            raise FeatureNotSupported(
                "DROP DATABASE ... WITH (FORCE) is not supported while other sessions use "
                "the database on the embedded DuckDB backend",
                detail=f"There {'is' if others == 1 else 'are'} {others} other "
                       f"session{'' if others == 1 else 's'} using the database.",
                hint="End those sessions, then drop the database.")
        if others:
            raise ObjectInUse(f'database "{name}" is being accessed by other users',
                              detail=f"There {'is' if others == 1 else 'are'} {others} other "
                                     f"session{'' if others == 1 else 's'} using the database.")
        # all or nothing across a crash: the intent first, the backend, then the record
        # (recovery finishes a drop it finds marked, see meta/recovery.py)
        if self.meta is not None:
            self.meta.mark_database_dropping(name)
        testpoint.reached("drop-database:after-intent")
        for job in self.jobs.jobs(name):  # their tables go with the backend database
            self.scheduler.drop(name, job.name, lambda f: self._wait(f, info), backend=False)
        for view in self.jobs.streaming_views(name):
            self.jobs.remove_streaming(name, view.name)
        self.barrier.remove_database(name)
        self.backend.drop_database(name)
        testpoint.reached("drop-database:after-backend")
        if self.meta is not None:
            self.meta.delete_database(name)
        return command("DROP DATABASE")

    def _others(self, name: str, wait: bool = True) -> int:
        """How many sessions use database ``name``, after giving sessions that are
        disconnecting up to 5 s to go (as PostgreSQL does) when ``wait``."""
        with self._lock:
            if wait:
                self._sessions_changed.wait_for(lambda: not self._sessions.get(name), timeout=5)
            return len(self._sessions.get(name, ()))

    def rename_database(self, stmt: st.RenameDatabase, info: SessionInfo,
                         session: BackendSession | None = None) -> Result:
        """PostgreSQL's checks in its order, then the backend's rename, then pgbarrier's
        record (its pause state and epochs go with the name). A database with batch-refresh
        or streaming views is refused (0A000): their jobs are keyed by the database's name
        and rename is not built for them. A crash between the backend's rename and the
        record's leaves the record under the old name (recovery then creates an empty
        database of that name; the data is under the new one)."""
        old, new = stmt.name, stmt.new_name
        if not self.barrier.has_database(old):
            raise InvalidCatalogName(f'database "{old}" does not exist')
        self.backend.require_database_right("alter", old, info.user, session)
        if self.barrier.has_database(new):
            raise DuplicateDatabase(f'database "{new}" already exists')
        if old == info.database:
            raise FeatureNotSupported("current database cannot be renamed")
        if self.jobs.jobs(old) or self.jobs.streaming_views(old):
            raise FeatureNotSupported(
                "ALTER DATABASE ... RENAME TO is not supported for a database with batch "
                "refresh or streaming materialized views",
                detail=f'Database "{old}" has pgbarrier materialized views, which are '
                       "recorded under its name.",
                hint="Drop them, rename the database, then create them again.")
        others = self._others(old)
        if others:
            raise ObjectInUse(f'database "{old}" is being accessed by other users',
                              detail=f"There {'is' if others == 1 else 'are'} {others} other "
                                     f"session{'' if others == 1 else 's'} using the database.")
        snap = self.barrier.snapshot(old)
        self.backend.rename_database(old, new, session)
        self.barrier.remove_database(old)
        if self.meta is not None:
            self.meta.rename_database(old, new)
        pause: PauseState = Paused(at=snap.paused_at or dt.datetime.now(dt.timezone.utc),
                                   by=snap.paused_by or info.user, reason=snap.pause_reason,
                                   resumes_at=snap.resumes_at) if snap.paused else Running()
        self.barrier.add_database(new, prev_epoch=snap.prev_epoch, pause=pause,
                                  committed_epoch=snap.committed_epoch)
        return command("ALTER DATABASE")

    # -- materialized views --------------------------------------------------

    def _relation_taken(self, database: str, name: str) -> bool:
        return (self.jobs.get(database, name) is not None
                or self.jobs.streaming_view(database, name) is not None
                or self.backend.relation_exists(database, name))

    def _check_inputs(self, database: str, inputs: frozenset[str],
                      session: BackendSession | None = None) -> None:
        """RisingWave's rule, directly or through any chain of plain views (resolved by
        the backend's own catalog; upstream in the client's session, so with its
        search_path): no materialized view reads a batch-refresh view."""
        resolved = session is not None  # every name is pgbarrier's own
        if resolved:
            chains = sorted(self.backend.relations_read(database, inputs, session=session),
                            key=len)
        else:
            chains = [(name,) for name in sorted(inputs)]
            chains += sorted(self.backend.relations_read(database, inputs), key=len)
        for chain in chains:
            batch = chain[-1].split(".")[-1] if len(chain) == 1 and not resolved else chain[-1]
            if self.jobs.is_job(database, batch):
                detail = f'"{chain[-1]}" is a batch refresh materialized view.'
                if len(chain) > 1:
                    views = ", ".join(f'"{v}"' for v in chain[:-1])
                    detail += (f" The query reads it through view{'s' if len(chain) > 2 else ''}"
                               f" {views} ({' -> '.join(chain)}).")
                raise FeatureNotSupported(
                    "creating streaming jobs on batch refresh materialized views is not supported",
                    detail=detail)

    def _name_lock(self, info: SessionInfo, name: str, kind: str) -> Any:
        return self.name_locks.hold((info.database, name), info, kind, info.lock_timeout_ms)

    def create_mv(self, stmt: st.CreateMaterializedView, info: SessionInfo,
                   session: BackendSession | None = None) -> Result:
        # what the backend cannot honour of PostgreSQL's grammar, before anything else
        self.backend.refuse_view_clauses(stmt.storage, stmt.storage_at, stmt.with_data,
                                         stmt.with_data_at)
        # the policy options (jobs/policy.py): 22023 before anything is done
        options = view_control.option_values([(k, v) for k, v, _ in stmt.refresh_options],
                                             [at for _, _, at in stmt.refresh_options])
        if (named := in_database(stmt.name, info.database)) != stmt.name:
            stmt = dataclasses.replace(stmt, name=named)
        if session is not None:
            name = self.backend.creation_name(session, stmt.name)
            query = self.backend.bind_query(session, stmt.query)
            if name != stmt.name or query != stmt.query:
                stmt = dataclasses.replace(stmt, name=name, query=query)
        with self._name_lock(info, stmt.name, "create"):
            return self._create_mv_locked(stmt, info, session, options)

    def _create_mv_locked(self, stmt: st.CreateMaterializedView, info: SessionInfo,
                          session: BackendSession | None = None,
                          options: dict[str, Any] | None = None) -> Result:
        db = info.database
        tag = "CREATE MATERIALIZED VIEW"
        if self.jobs.get(db, stmt.name) is not None:  # its view may be gone (by cascade)
            self.scheduler.forget_vanished(db, stmt.name, lambda f: self._wait(f, info))
        if self._relation_taken(db, stmt.name):
            if stmt.if_not_exists:
                return command(tag, [Notice(f'relation "{stmt.name}" already exists, skipping',
                                            sqlstate="42P07")])
            raise DuplicateTable(f'relation "{stmt.name}" already exists')
        self._check_inputs(db, stmt.inputs, session)
        # validate the query on the backend: missing inputs are 42P01 before any barrier
        described = self.backend.describe_view_query(db, stmt.query, session)
        repeated = duplicate_column(stmt.columns or postgres_names(
            stmt.query, len(described or ())) or ())
        if repeated is not None:  # PostgreSQL's 42701, before any barrier
            raise repeated
        if stmt.refresh_interval_sec is None:
            view = StreamingView(stmt.name, db, stmt.definition)
            self.jobs.reserve(db, stmt.name)
            try:
                self.jobs.intend_streaming(view)  # durable before the backend has it
                try:
                    testpoint.reached("create-streaming:after-intent")
                    if info.cancelled:
                        raise QueryCanceled()
                    self.backend.create_view(db, stmt.name, stmt.columns, stmt.query,
                                             owner=info.user)
                except BaseException:
                    self.jobs.abandon_streaming(db, stmt.name)
                    raise
                testpoint.reached("create-streaming:after-backend")
                self.jobs.add_streaming(view, persist=False)
            finally:
                self.jobs.release(db, stmt.name)
            return command(tag)

        self.jobs.reserve(db, stmt.name)
        built = False
        try:
            created_at = self.scheduler.now()

            def register(barrier: BarrierInfo) -> int:
                self.jobs.register(BatchRefreshJob(
                    name=stmt.name, database=db, definition=stmt.definition, query=stmt.query,
                    columns=stmt.columns, refresh_interval_sec=stmt.refresh_interval_sec or 0,
                    status=js.Creating(barrier.prev_epoch), snapshot_epoch=barrier.prev_epoch,
                    created_at=created_at, refresh_cron=stmt.refresh_cron,
                    refresh_timezone=stmt.refresh_timezone,
                    **(options or {})))
                return barrier.prev_epoch

            # the job's record is a durable write: collected off the barrier thread
            cmd = CreateBatchRefreshJob(name=stmt.name, on_collect=register)
            self._unless_paused(info, db, lambda: self._wait_landed(
                self.barrier.schedule(db, cmd).collected, info))
            testpoint.reached("create:after-intent")  # recorded "creating"
            # the first snapshot runs as the creating client: it owns the view
            # cancellable by the client (CancelRequest, statement_timeout, a DROP): 57014
            info.running = running = RefreshCancel()
            try:
                if info.cancelled:
                    raise QueryCanceled()
                # upstream in the client's session: its search_path, its role owns it
                rows = self.backend.create_batch_view(
                    db, stmt.name, stmt.columns, stmt.query, owner=info.user, cancel=running,
                    storage=stmt.storage, with_data=stmt.with_data is not False,
                    session=session)
                built = True
            finally:
                info.running = None
            testpoint.reached("create:after-backend")
            job = self.jobs.get(db, stmt.name)
            if job is None:  # only DROP DATABASE gets past the name lock, and it waits for us
                raise UndefinedTable(f'materialized view "{stmt.name}" does not exist')
            self.scheduler.created(job, rows)
            log.info('batch refresh job "%s" created in database "%s" by %s (%s)',
                     stmt.name, db, info.user, job.schedule_text,
                     extra={"event": "job_created", **session_fields(info)})
        except BaseException:
            cleaned = True
            if built:  # the backend has it: drop it first, then the "creating" record
                try:
                    self.backend.drop_batch_view(db, stmt.name)
                except Exception as exc:  # noqa: BLE001 - the record stays for DROP / recovery
                    log.warning("could not drop the backend object of a failed create of %s.%s:"
                                " %s", db, stmt.name, exc)
                    cleaned = False
            if cleaned:
                self.jobs.release(db, stmt.name)
            raise
        return command(tag)

    def _refresh_mv(self, name: str, info: SessionInfo) -> Result:
        with self._name_lock(info, name, "refresh"):
            return self._refresh_mv_locked(name, info)

    def _refresh_mv_locked(self, name: str, info: SessionInfo) -> Result:
        db = info.database
        tag = "REFRESH MATERIALIZED VIEW"
        if self.jobs.get(db, name) is None:
            if (self.backend.has_own_materialized_views()
                    and self.jobs.streaming_view(db, name) is None):
                raise PassThrough()  # PostgreSQL's own (a race made it so): its answer
            if self.jobs.streaming_view(db, name) is not None:
                return command(tag, [Notice(
                    f'materialized view "{name}" is a streaming view and always current, '
                    "nothing to refresh")])
            if self.backend.relation_exists(db, name):
                raise PgError(f'"{name}" is not a materialized view', sqlstate="42809")
            raise UndefinedTable(f'relation "{name}" does not exist')
        if self.scheduler.forget_vanished(db, name, lambda f: self._wait(f, info)):
            raise UndefinedTable(f'relation "{name}" does not exist')  # PostgreSQL's answer
        self.backend.require_owner(db, "materialized view", name, info.user)
        def running(cancel: RefreshCancel | None) -> None:
            # the client's cancel and statement_timeout reach the refresh query
            info.running = cancel
            if cancel is not None and info.cancelled:
                cancel.cancel()

        run = self._unless_paused(info, db, lambda: self.scheduler.refresh(
            db, name, lambda f: self._wait(f, info), on_run=running))
        if run.status == "failed":  # recorded, but the backend's error did not come back
            raise PgError(run.error or "refresh failed", sqlstate="XX000",
                          detail=f'refresh run {run.run_id} of "{name}" failed; the view keeps '
                                 "its last committed result.")
        return command(tag)

    def drop_mv(self, stmt: st.DropMaterializedView, info: SessionInfo,
                 session: BackendSession | None = None) -> Result:
        if len(stmt.names) > 1:
            raise FeatureNotSupported(
                "DROP MATERIALIZED VIEW with more than one name is not supported",
                detail=None if not self.backend.has_own_materialized_views() else
                "One of them is a batch refresh materialized view.",
                hint="Drop one materialized view per statement.", position=stmt.second_at)
        name = self._name(info, stmt.name, session)
        if name != stmt.name:
            stmt = dataclasses.replace(stmt, name=name, names=(name,))
        with self._name_lock(info, stmt.name, "drop") as cancelled_create:
            return self._drop_mv_locked(stmt, info, cancelled_create, session)

    def _drop_mv_locked(self, stmt: st.DropMaterializedView, info: SessionInfo,
                        cancelled_create: bool, session: BackendSession | None = None
                        ) -> Result:
        """Drop one of pgbarrier's views. Where the backend keeps no dependencies itself
        (DuckDB: ``Backend.plan_view_drop``), PostgreSQL's rules come first: 2BP01 when
        something depends on it, and with CASCADE the other pgbarrier views that do are
        dropped before it, and the backend's own dependents after it."""
        db, name = info.database, stmt.name
        tag = "DROP MATERIALIZED VIEW"
        batch = self.jobs.get(db, name) is not None
        streaming = not batch and self.jobs.streaming_view(db, name) is not None
        plan = None
        if (batch or streaming) and session is not None:
            plan = self.backend.plan_view_drop(session, name, stmt.cascade)
            if plan is not None:
                self.drop_views([n for n in plan.pgbarrier_views if n != name], info)
        notices = list(plan.notices) if plan is not None else []
        if batch:
            self.backend.require_owner(db, "materialized view", name, info.user)
            # dropping (durable), its backend table, then the job: see RefreshScheduler.drop
            self.scheduler.drop(db, name, lambda f: self._wait(f, info),
                                cascade=stmt.cascade and plan is None)
            log.info('batch refresh job "%s" dropped from database "%s" by %s', name, db,
                     info.user, extra={"event": "job_dropped", **session_fields(info)})
        elif streaming:
            # a streaming view is a plain view upstream; its record goes after it
            self.backend.require_owner(db, "view", name, info.user)
            self.backend.drop_view(db, name)
            testpoint.reached("drop-streaming:after-backend")
            self.jobs.remove_streaming(db, name)
        if batch or streaming:
            if plan is not None and session is not None:
                self.backend.run_statements(session, plan.statements)
            return command(tag, notices)
        if cancelled_create:  # this DROP cancelled the view's create: nothing is left of it
            return command(tag)
        if self.backend.has_own_materialized_views():
            raise PassThrough()  # PostgreSQL's own (a race made it so): its answer
        kind = self.backend.relation_kind(session, stmt.name) if session is not None else None
        if kind is not None:  # PostgreSQL's answer for a relation of another kind
            raise PgError(f'"{name.rpartition(".")[2]}" is not a materialized view',
                          sqlstate="42809", hint=_DROP_HINTS.get(kind))
        if stmt.if_exists:
            return command(tag, [Notice(f'materialized view "{name}" does not exist, skipping')])
        raise UndefinedTable(f'materialized view "{name}" does not exist')

    def drop_views(self, names: list[str], info: SessionInfo,
                   session: BackendSession | None = None) -> None:
        """Drop pgbarrier's materialized views ``names`` (pgbarrier's names) as ``DROP
        MATERIALIZED VIEW IF EXISTS`` does, for a client statement whose CASCADE reaches
        them (the backend's ``DropsMaterializedViews``)."""
        for name in names:
            self.drop_mv(st.DropMaterializedView(name=name, if_exists=True, names=(name,)),
                          info, None)

    def _rename_mv(self, stmt: st.AlterMaterializedViewName, new: str, info: SessionInfo,
                   session: BackendSession) -> Result:
        """Upstream, ``ALTER MATERIALIZED VIEW v RENAME TO w`` / ``SET SCHEMA s`` of a
        batch-refresh view: PostgreSQL renames it in the client's session (its rules:
        owner, the target schema's CREATE right, a free name) and the job follows under
        pgbarrier's name for the result, ``new`` (see :meth:`RefreshScheduler.rename`)."""
        db, old = info.database, stmt.name

        def rename() -> None:
            self.backend.alter_view_name(session, old, stmt.action, stmt.target)

        with contextlib.ExitStack() as locks:
            for name in sorted({old, new}):  # one order, so two renames cannot deadlock
                locks.enter_context(self._name_lock(info, name, "alter"))
            if self.jobs.get(db, old) is None:
                raise PassThrough()  # dropped meanwhile: PostgreSQL's own answer
            if new == old:  # PostgreSQL's answer: its 42P07, or a no-op (SET SCHEMA to its own)
                rename()
                return command("ALTER MATERIALIZED VIEW")
            self.scheduler.rename(db, old, new, lambda f: self._wait(f, info), rename)
        return command("ALTER MATERIALIZED VIEW")

    def _alter_mv(self, stmt: st.AlterMaterializedViewAs, info: SessionInfo) -> Result:
        db = info.database
        if self.jobs.get(db, stmt.name) is not None:
            raise FeatureNotSupported(
                "ALTER MATERIALIZED VIEW is not supported for batch refresh materialized views")
        if self.jobs.streaming_view(db, stmt.name) is not None:
            raise FeatureNotSupported("ALTER MATERIALIZED VIEW ... AS is not supported yet",
                                      hint="Drop the view and create it again.")
        raise UndefinedTable(f'materialized view "{stmt.name}" does not exist')

    # ------------------------------------------------------------------ catalog

    def catalog_tables(self) -> dict[str, CatalogTable]:
        """Rows of the ``rw_catalog`` system views, as of now."""
        dbs = [(s.name, s.paused, s.paused_at, s.paused_by, s.barrier_interval_ms,
                s.committed_epoch, s.committed_at, s.pause_reason, s.resumes_at)
               for s in self.barrier.snapshots()]
        jobs = []
        for j in self.jobs.jobs():
            due = self.scheduler.next_due_ms(j.database, j.name)
            next_at = None if due is None else dt.datetime.fromtimestamp(due / 1000, dt.timezone.utc)
            every = j.refresh_interval_sec if j.refresh_cron is None else None
            jobs.append((j.name, j.database, j.definition, every,
                         j.shown_status, j.snapshot_epoch, js.last_committed_epoch(j.status),
                         j.last_refreshed_at, next_at, j.suspended, j.suspended_at,
                         j.suspended_by, j.suspend_reason, j.refresh_cron, j.refresh_timezone,
                         j.last_refreshed_at,
                         j.consecutive_failures,
                         policy.value(j, "refresh.retry_backoff.sec"),
                         policy.value(j, "refresh.max_failures"),
                         policy.value(j, "refresh.jitter.sec")))
        history = [(r.job, r.database, r.run_id, r.trigger, r.started_at, r.finished_at,
                    r.duration_ms, r.target_epoch, r.status, r.rows, r.error, r.sqlstate, r.node)
                   for r in self.history.runs()]
        return {
            "rw_databases": CatalogTable(
                columns=(("name", "TEXT"), ("paused", "BOOLEAN"), ("paused_at", "TIMESTAMPTZ"),
                         ("paused_by", "TEXT"), ("barrier_interval_ms", "INTEGER"),
                         ("committed_epoch", "BIGINT"), ("committed_at", "TIMESTAMPTZ"),
                         ("pause_reason", "TEXT"), ("resumes_at", "TIMESTAMPTZ")),
                rows=dbs),
            "rw_batch_refresh_jobs": CatalogTable(
                columns=(("name", "TEXT"), ("database", "TEXT"), ("definition", "TEXT"),
                         ("refresh_interval_sec", "INTEGER"), ("status", "TEXT"),
                         ("snapshot_epoch", "BIGINT"), ("last_committed_epoch", "BIGINT"),
                         ("last_refreshed_at", "TIMESTAMPTZ"), ("next_refresh_at", "TIMESTAMPTZ"),
                         ("suspended", "BOOLEAN"), ("suspended_at", "TIMESTAMPTZ"),
                         ("suspended_by", "TEXT"), ("suspend_reason", "TEXT"),
                         ("refresh_cron", "TEXT"), ("refresh_timezone", "TEXT"),
                         ("last_success_at", "TIMESTAMPTZ"), ("consecutive_failures", "INTEGER"),
                         ("retry_backoff_sec", "INTEGER"), ("max_failures", "INTEGER"),
                         ("jitter_sec", "INTEGER")),
                rows=jobs),
            "rw_refresh_history": CatalogTable(
                columns=(("job", "TEXT"), ("database", "TEXT"), ("run_id", "BIGINT"),
                         ("trigger", "TEXT"),
                         ("started_at", "TIMESTAMPTZ"), ("finished_at", "TIMESTAMPTZ"),
                         ("duration_ms", "BIGINT"),
                         ("target_epoch", "BIGINT"), ("status", "TEXT"), ("rows", "BIGINT"),
                         ("error", "TEXT"), ("sqlstate", "TEXT"), ("node", "TEXT")),
                rows=history),
            "rw_leader": CatalogTable(
                columns=(("role", "TEXT"), ("term", "BIGINT"), ("since", "TIMESTAMPTZ"),
                         ("holder", "TEXT")),
                rows=[self.leader_status()]),
        }
