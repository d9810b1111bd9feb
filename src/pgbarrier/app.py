"""Assembles one pgbarrier process: backend, barrier manager, jobs, control plane, server.

Everything is injected (clock, backend, meta store), so tests can build an ``App``
with a manual clock or an in-memory backend and drive it without sleeping.

Durable state lives in the meta store (:mod:`pgbarrier.meta`): each
database's pause state is recorded by the checkpoint that changed it (before
the command's issuer hears back) and its epochs as a lease
(:mod:`pgbarrier.meta.checkpoints`), the jobs registry and history record
every change. :meth:`App.start` recovers it (:mod:`pgbarrier.meta.recovery` finishes or
undoes in the store and the backend what a crash cut short and returns the records
restored) and loads those into memory. :meth:`App.stop` flushes and closes it.

Metrics (:mod:`pgbarrier.metrics`): every App has its own registry, and its barrier
collections, refresh runs and meta-store writes are always recorded (rare events). With
``metrics_port`` set, ``/metrics`` is served on the listen host and each session counts
its statements too (only then: the relay's hot path pays nothing when metrics are off).

On a PostgreSQL meta store several processes may run; one leads (:mod:`pgbarrier.leadership`).
So :meth:`App.start` only opens and checks the store and listens; :meth:`_take_office`
(recovery, barrier workers, schedulers) runs when this process is elected, at once on the
SQLite store, and :meth:`_leave_office` when it steps down (the components of a term are
built afresh by :meth:`_build`, so the next term starts from the store alone).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import pwd
import socket
import time
from dataclasses import dataclass

from pgbarrier import __version__
from pgbarrier.backends.base import Backend
from pgbarrier.backends.duckdb import DuckDBBackend
from pgbarrier.backends.duckdb_signals import SessionsHook
from pgbarrier.barrier.clock import Clock, SystemClock
from pgbarrier.barrier.info import DatabaseSnapshot
from pgbarrier.barrier.manager import BarrierManager
from pgbarrier.control import ControlPlane
from pgbarrier.events import EventBus
from pgbarrier.jobs import history as hist
from pgbarrier.jobs.history import HistoryPruner, RefreshHistory
from pgbarrier.jobs.policy import AUTO_SUSPENDER
from pgbarrier.jobs.registry import JobRegistry, StreamingView, job_from_record
from pgbarrier.jobs.scheduler import RefreshScheduler
from pgbarrier.meta import open_meta_store
from pgbarrier.meta.checkpoints import CheckpointRecorder
from pgbarrier.meta.sqlbase import SqlMetaStore
from pgbarrier.metrics import Metrics
from pgbarrier.metrics.collector import DatabaseState, StateCollector
from pgbarrier.metrics.http import MetricsServer
from pgbarrier.meta.recovery import recover
from pgbarrier.meta.store import DatabaseRecord, MetaStore
from pgbarrier.session.session import Session
from pgbarrier.timed_pause import PauseTimer
from pgbarrier.server.auth import ConfigError, check_listen_address, load_authenticator
from pgbarrier.server.connection import STARTUP_TIMEOUT_S
from pgbarrier.server.listener import (
    DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_RESERVED_CONNECTIONS,
    PgBarrierServer,
)
from pgbarrier.server.tls import load_tls

log = logging.getLogger(__name__)

#: what PostgreSQL 15 reports at start-up; server_version must stay parseable (pgjdbc, asyncpg)
#: PostgreSQL's maintenance database, which tools connect to first (``psql -l``,
#: ``createdb``, pgAdmin's and DBeaver's defaults): an ordinary pgbarrier database that
#: recovery adds once per meta store (meta/recovery.py): on DuckDB with its own file,
#: upstream the PostgreSQL's own ``postgres`` (which every PostgreSQL has)
MAINTENANCE_DATABASE = "postgres"

SERVER_PARAMETERS = {
    "server_version": "15.0",
    "server_encoding": "UTF8",
    "client_encoding": "UTF8",
    "DateStyle": "ISO, MDY",
    "IntervalStyle": "postgres",
    "integer_datetimes": "on",
    "standard_conforming_strings": "on",
    "TimeZone": "UTC",
    "is_superuser": "on",
    "default_transaction_read_only": "off",
    "in_hot_standby": "off",
}


#: stepping down, how long a running statement may go on (every meta-store write already
#: fails at once; an upstream read may finish) before it is cancelled
STEP_DOWN_GRACE_S = 1.0


def os_user() -> str:
    """The OS user running pgbarrier, as libpq names it by default (the effective uid's
    name; initdb names PostgreSQL's bootstrap superuser the same way); "" if it has none."""
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except (KeyError, OSError):
        return ""


class ListenError(RuntimeError):
    """The server socket could not be bound (the CLI exits 1); ``__cause__`` says why, and
    ``port`` which port it was when not the server's own (the metrics port)."""

    port: int | None = None


@dataclass
class Config:
    host: str = "127.0.0.1"
    port: int = 4566
    data_dir: str = "./pgbarrier-data"
    #: ``postgresql://...`` keeps the meta state there instead of SQLite in ``data_dir``
    meta_store: str | None = None
    #: an upstream PostgreSQL (``postgresql://user@host:5432/``) instead of DuckDB
    upstream: str | None = None
    #: every upstream session runs as the --upstream DSN's user, not as the client's own
    upstream_force_user: bool = False
    barrier_interval_ms: int = 1000
    checkpoint_frequency: int = 1
    default_database: str = "dev"
    #: ``user:password`` lines; turns authentication on (see :mod:`pgbarrier.server.auth`)
    password_file: str | None = None
    #: ``user:SCRAM-SHA-256$...`` lines (PostgreSQL's rolpassword); SCRAM only
    users_file: str | None = None
    #: scram-sha-256 (default with a password source), md5 or password
    auth_method: str | None = None
    #: allow trust (no password source) on a non-loopback host
    trust_any_host: bool = False
    #: PEM certificate chain and key: SSLRequest gets ``S`` and a TLS handshake
    tls_cert: str | None = None
    tls_key: str | None = None
    #: a frontend message longer than this is 08P01 and closes that connection
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    #: sessions at most; one more is FATAL 53300 (see :mod:`pgbarrier.server.listener`)
    max_connections: int = DEFAULT_MAX_CONNECTIONS
    #: of those, the slots only superusers and the admin CLI may take
    reserved_connections: int = DEFAULT_RESERVED_CONNECTIONS
    #: user names that are superusers (None: the OS user running pgbarrier); with an
    #: upstream running sessions as the client's role, its superusers are too
    superusers: tuple[str, ...] | None = None
    #: start-up and authentication must finish within this many seconds in total
    authentication_timeout_s: float = STARTUP_TIMEOUT_S
    #: plaintext connections are refused (28000); needs tls_cert and tls_key
    require_tls: bool = False
    #: directories DuckDB sessions may read and write data files in (``--allow-path``)
    allow_paths: tuple[str, ...] = ()
    #: upstream databases that exist already and pgbarrier serves (``--adopt-database``)
    adopt_databases: tuple[str, ...] = ()
    #: clients may see and act on the DuckDB instance (``--allow-instance-info``)
    allow_instance_info: bool = False
    #: DuckDB ``memory_limit`` of each database (None: a quarter of the host's RAM)
    duckdb_memory_limit: str | None = None
    #: DuckDB ``threads`` of each database (None: DuckDB's default, the number of cores)
    duckdb_threads: int | None = None
    #: refresh runs kept per job, and for how long (0: no limit); see jobs/history.py
    refresh_history_per_job: int = hist.DEFAULT_PER_JOB
    refresh_history_max_age_s: float = hist.DEFAULT_MAX_AGE_S
    refresh_history_prune_interval_s: float = hist.DEFAULT_PRUNE_INTERVAL_S
    #: statements (batches) that ran at least this long are logged with it (-1: none)
    log_min_duration_statement_ms: int = -1
    #: serve Prometheus metrics on ``host:metrics_port`` (0 picks a free port; None: off)
    metrics_port: int | None = None
    #: on a PostgreSQL meta store: never take office (``--follow-only``, for maintenance)
    follow_only: bool = False
    #: how often a leader checks its leader-lock session (meta/election.py)
    leader_check_interval_s: float = 1.0


class App:
    def __init__(self, config: Config, *, clock: Clock | None = None,
                 backend: Backend | None = None, meta: MetaStore | None = None) -> None:
        self.config = config
        self.clock = clock or SystemClock()
        # a PostgreSQL store is migrated by its leader, once elected (pgbarrier.leadership)
        self.meta = meta or open_meta_store(config.data_dir, config.meta_store,
                                            migrate=not config.meta_store)
        self.backend = backend or self._backend(config)
        self.metrics = Metrics()
        self.server: PgBarrierServer | None = None
        self.metrics_server: MetricsServer | None = None
        self.leadership = None
        #: LISTEN rw_refresh / rw_barrier (pgbarrier.events), carried by the data backend
        self.events = EventBus(self.backend.notify)
        self._build()
        self._wire_metrics()

    def _build(self) -> None:
        """The components of one term in office (nothing runs until :meth:`_take_office`)."""
        config = self.config
        self.checkpoints = CheckpointRecorder(self.meta)
        self.barrier = BarrierManager(self.clock, barrier_interval_ms=config.barrier_interval_ms,
                                      checkpoint_frequency=config.checkpoint_frequency,
                                      on_commit=self._record_commit,
                                      on_collected=self.metrics.barrier_collected)
        # jobs and their history are written through to the meta store
        self.jobs = JobRegistry(self.meta)
        self.history = RefreshHistory(config.refresh_history_per_job, store=self.meta,
                                      max_age_s=config.refresh_history_max_age_s)
        self.history_pruner = HistoryPruner(self.history, config.refresh_history_prune_interval_s)
        self.scheduler = RefreshScheduler(self.jobs, self.history, self.backend, self.barrier,
                                          self.clock)
        self.control = ControlPlane(self.backend, self.barrier, self.jobs, self.clock,
                                    history=self.history, scheduler=self.scheduler,
                                    meta=self.meta)
        self.barrier.add_listener(self.scheduler.on_barrier)
        self.barrier.add_listener(self.control.on_barrier)
        self.control.events = self.events
        self.pause_timer = PauseTimer(self.barrier, self.clock, events=self.events)
        self.barrier.add_listener(self.pause_timer.on_barrier)
        self.history.on_finished = self._observe_run
        self.scheduler.on_suspended = lambda database, view, reason: self.events.barrier_event(
            database, "suspend", AUTO_SUSPENDER, view=view, reason=reason)
        self.scheduler.on_late = self.metrics.refresh_started_late
        if self.leadership is not None:
            self.control.leader_status = self.leadership.catalog_row

    def _wire_metrics(self) -> None:
        """Once per App: the collector reads the components of the term in office."""
        metrics = self.metrics
        if isinstance(self.meta, SqlMetaStore):
            self.meta.on_written = metrics.meta_written
        metrics.registry.register(StateCollector(
            metrics.statements,
            databases=lambda: [DatabaseState(s.name, s.paused, s.committed_epoch)
                               for s in self.barrier.snapshots()],
            connections=lambda: self.server.connection_states() if self.server else [],
            limits=lambda: self.server.limits() if self.server else None,
            jobs=lambda: [(j.database, j.status.name) for j in self.jobs.jobs()],
            suspended=lambda: [j.database for j in self.jobs.jobs() if j.suspended],
            role=lambda: self.control.leader_status()))

    def _observe_run(self, run: hist.RefreshRun) -> None:
        seconds = ((run.finished_at - run.started_at).total_seconds()
                   if run.finished_at is not None and run.status != "skipped" else None)
        self.metrics.refresh_ended(run.database, run.job, run.trigger, run.status, seconds)
        self.events.refresh_finished(run)
    def _record_commit(self, snap: DatabaseSnapshot) -> None:
        """``on_commit``: what a checkpoint must make durable before it is acknowledged
        (its pause state; its epochs as a lease), see :mod:`pgbarrier.meta.checkpoints`.
        Runs on a barrier collector thread, never on the thread that injects barriers, so
        a slow meta store delays only this database's acknowledgements."""
        if not self.barrier.has_database(snap.name):
            return  # dropped meanwhile: do not bring its record back
        self.checkpoints.record(snap)

    @staticmethod
    def _backend(config: Config) -> Backend:
        if config.upstream:
            from pgbarrier.backends.postgres import PostgresBackend

            return PostgresBackend(config.upstream, force_user=config.upstream_force_user)
        from pgbarrier.backends.duckdb_config import DuckDBLimits, default_memory_limit

        return DuckDBBackend(config.data_dir, DuckDBLimits(
            memory_limit=config.duckdb_memory_limit or default_memory_limit(),
            threads=config.duckdb_threads, allow_paths=tuple(config.allow_paths),
            instance_info=config.allow_instance_info))

    def _restore(self) -> None:
        """Recover the meta store and load what it holds into the barrier manager, the
        jobs registry, the refresh history and the scheduler. Recovery leaves the store
        holding exactly these records, so nothing is written again here."""
        restored = recover(self.meta, self.backend,
                           default_database=self.config.default_database,
                           maintenance_database=MAINTENANCE_DATABASE,
                           runs_per_job=self.history.keep_per_job,
                           runs_since=self.history.cutoff())
        for db in restored.databases:
            self.barrier.add_database(db.name, prev_epoch=db.prev_epoch, pause=db.pause,
                                      committed_epoch=db.committed_epoch)
        self._adopt()
        self.history.restore(restored.runs)
        for view in restored.views:
            self.jobs.add_streaming(StreamingView(view.name, view.database, view.definition),
                                    persist=False)
        for rec in restored.jobs:
            job = job_from_record(rec)
            self.jobs.register(job, persist=False)
            self.scheduler.restored(job)  # a slot missed while no one led catches up once

    def _adopt(self) -> None:
        """``--adopt-database``: each named upstream database pgbarrier does not serve yet
        becomes one of its databases (durably, as a CREATE DATABASE would record it); one
        the upstream does not have is logged and skipped (the CLI checked them at start)."""
        for name in self.config.adopt_databases:
            if self.barrier.has_database(name):
                continue
            if not self.backend.has_database(name):
                log.warning('--adopt-database %s: the upstream PostgreSQL has no such '
                            'database; not adopted', name)
                continue
            if self.meta is not None:
                self.meta.put_database(DatabaseRecord(name))
            self.barrier.add_database(name)
            log.info('database "%s" of the upstream PostgreSQL adopted (--adopt-database)',
                     name)

    def new_session(self) -> Session:
        session = Session(self.control, SERVER_PARAMETERS)
        if self.config.metrics_port is not None:
            session.statement_totals = self.metrics.statements
        return session

    def start(self) -> PgBarrierServer:
        """Start serving; raises ``ConfigError`` (before anything starts) for a refused set-up,
        ``ListenError`` when the address cannot be bound."""
        cfg = self.config
        # an upstream that runs sessions as the client's user may ask for its password
        per_user = bool(cfg.upstream) and not cfg.upstream_force_user
        authenticator = load_authenticator(cfg.auth_method, cfg.password_file, cfg.users_file,
                                           keep_passwords=per_user)
        if per_user and cfg.users_file:
            log.warning("--users-file holds SCRAM verifiers, not passwords: its users reach the "
                        "upstream only where it trusts this host for them (pg_hba.conf), or "
                        "with --upstream-force-user")
        check_listen_address(cfg.host, authenticator, trust_any_host=cfg.trust_any_host)
        tls = load_tls(cfg.tls_cert, cfg.tls_key)
        try:
            self.server = PgBarrierServer((self.config.host, self.config.port), self.new_session,
                                          authenticator=authenticator, tls=tls,
                                          max_message_bytes=self.config.max_message_bytes,
                                          max_connections=cfg.max_connections,
                                          authentication_timeout_s=cfg.authentication_timeout_s,
                                          require_tls=cfg.require_tls and tls is not None,
                                          log_min_duration_ms=cfg.log_min_duration_statement_ms,
                                          admit=self._admit,
                                          reserved_connections=cfg.reserved_connections,
                                          superusers=frozenset(
                                              cfg.superusers if cfg.superusers is not None
                                              else (os_user(),)),
                                          superuser_from_backend=per_user,
                                          on_refused=self.metrics.connection_refused)
        except OSError as exc:
            raise ListenError(str(exc)) from exc
        if isinstance(self.backend, DuckDBBackend):  # pg_stat_activity, pg_*_backend
            self.backend.signals.hook = SessionsHook(activity=self.server.activity,
                                                     signal=self.server.signal)
        host, port = self.server.server_address[:2]
        metrics = ""
        if cfg.metrics_port is not None:
            try:
                self.metrics_server = MetricsServer(self.metrics.registry, cfg.host,
                                                    cfg.metrics_port)
            except OSError as exc:
                self.server.server_close()
                err = ListenError(f"metrics port {cfg.metrics_port}: {exc}")
                err.port = cfg.metrics_port
                raise err from exc
            metrics = f", metrics on {self.metrics_server.host}:{self.metrics_server.port}"
        from pgbarrier.meta.postgres import PostgresMetaStore

        if isinstance(self.meta, PostgresMetaStore):
            from pgbarrier.leadership import Leadership

            self.leadership = Leadership(
                self.meta, holder=f"{socket.gethostname()} pid {os.getpid()} on {host}:{port}",
                take_office=self._take_office, leave_office=self._leave_office,
                follow_only=cfg.follow_only, check_interval_s=cfg.leader_check_interval_s)
            self.control.leader_status = self.leadership.catalog_row
            self.leadership.begin()
            role = self.leadership.role.describe()
            if self.leadership.role.name != "leader" and not cfg.upstream and not cfg.follow_only:
                # on DuckDB each process has its own data: a follower taking office would
                # reconcile the shared store with its own files and drop the leader's records
                self.leadership.close()
                self.server.server_close()
                self.server = None
                if self.metrics_server is not None:
                    self.metrics_server.stop()
                    self.metrics_server = None
                raise ConfigError("another pgbarrier process leads the meta store; on DuckDB "
                                  "each process has its own data, so only one may use it "
                                  "(several processes need --upstream)")
        else:
            self._take_office()
            role = "leader (SQLite meta store, single process)"
            since = dt.datetime.now(dt.timezone.utc)
            self._leader_row = lambda: ("leader", None, since, None)
            self.control.leader_status = self._leader_row
        log.info("pgbarrier %s ready: listening on %s:%d%s (%s, databases: %s; "
                 "role: %s)", __version__, host, port, metrics, self._serving(),
                 ", ".join(self.barrier.databases()), role)
        if self.leadership is not None:
            self.leadership.start()
        return self.server

    def _serving(self) -> str:
        """What serves the data, in words, for the ready line."""
        if self.backend.dialect == "postgres":
            from pgbarrier.meta import redact

            dsn = getattr(self.backend, "upstream_dsn", None) or self.config.upstream or ""
            return f"upstream PostgreSQL at {redact(dsn)}"
        where = self.config.data_dir
        if where == ":memory:":
            return "embedded DuckDB in memory (nothing is kept)"
        return f"embedded DuckDB in {os.path.abspath(where)}"

    def _admit(self) -> None:
        if self.leadership is not None:
            self.leadership.admit()

    def _take_office(self) -> None:
        self.history.node = self._node()
        self.events.start()
        self._restore()
        self.barrier.start()
        self.history_pruner.start()
        self.pause_timer.start()  # a deadline that passed while no one led resumes now

    def _node(self) -> str:
        """The name of this process in rw_refresh_history.node: its leader holder name on a
        PostgreSQL meta store, else host, pid and address alike."""
        if self.leadership is not None:
            return self.leadership.holder
        address = ""
        if self.server is not None:
            host, port = self.server.server_address[:2]
            address = f" on {host}:{port}"
        return f"{socket.gethostname()} pid {os.getpid()}{address}"

    def _leave_office(self) -> None:
        """Stepping down: sessions end (57P01; a statement under way gets STEP_DOWN_GRACE_S
        to finish, so one whose write was fenced reports its own 25006 first), barrier
        workers and schedulers stop, and the in-memory state goes (its final epochs are not
        recorded: the store is fenced)."""
        if self.server is not None:
            self.server.end_sessions(STEP_DOWN_GRACE_S)
        self.scheduler.stop(0.0)
        self.history_pruner.stop()
        self.pause_timer.stop()
        self.barrier.stop()
        self._build()

    def stop(self, grace_s: float = 0.0) -> None:
        """Shut down (SIGTERM): new connections are refused at once; running statements
        and refresh runs get ``grace_s`` seconds to finish, then are cancelled; every
        session ends with FATAL 57P01 (see :mod:`pgbarrier.server.listener`). Then the
        barrier scheduler stops (what it injected is collected first), each database's
        highest epoch is recorded, and the meta
        store is flushed and closed."""
        deadline = time.monotonic() + grace_s
        if self.leadership is not None:
            self.leadership.stop()  # no more elections or step-downs
        if self.server is not None:
            self.server.stop_accepting()
            self.server.drain(grace_s)
        self.scheduler.stop(max(0.0, deadline - time.monotonic()))
        self.history_pruner.stop()
        self.pause_timer.stop()
        self.barrier.stop()
        self._record_final_epochs()
        self.events.stop()  # what finished before the stop is still delivered
        self.backend.close()
        self.meta.flush()
        self.meta.close()
        if self.leadership is not None:
            self.leadership.close()  # frees the lock: a follower takes over at once
        if self.server is not None:
            self.server.server_close()
        if self.metrics_server is not None:
            self.metrics_server.stop()

    def _record_final_epochs(self) -> None:
        """After the barrier scheduler stopped: each database's exact state (the highest epoch
        handed out, not the lease ceiling), so a clean restart does not jump ahead."""
        try:
            self.checkpoints.record_final(self.barrier.snapshots())
        except Exception:
            log.exception("recording the databases' last epochs failed")
