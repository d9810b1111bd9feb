"""The data-plane interface: what pgbarrier needs from DuckDB or PostgreSQL.

Rules this module keeps:

* A backend knows nothing about barriers, epochs or pause state; it runs SQL.
* One :class:`BackendSession` per client connection; it is used by one thread
  at a time, except :meth:`BackendSession.interrupt`, which another thread may
  call to cancel the running statement (it then fails with 57014).
* Errors leave as :class:`pgbarrier.errors.PgError` with the nearest SQLSTATE.
* ``describe`` learns a statement's result shape without executing it;
  ``describe_statement`` also infers the type OIDs of its ``$n`` parameters
  (the ones the client left unspecified, OID 0), still without executing. A
  backend that cannot tell a shape without running the statement (DuckDB's ``DML
  ... RETURNING``) raises :class:`NeedsExecution`; the session then sends the
  RowDescription with Execute.
* Parameters arrive either as Python values (``list``) or, for a backend whose
  ``bind_params`` keeps them so (PostgreSQL), as the client's own Bind bytes with
  their formats and type OIDs (:class:`WireParams`), relayed as they are.
* Where the backends differ the session asks a method, never a flag: each backend
  answers for itself (``bind_params``, ``binary_format``, ``copies_here``,
  ``opens_implicit_transaction``, ``function_call_refused``, ``relayed_upstream``); the
  defaults here are those of a backend that runs in process and returns Python values.
* ``execute``'s ``result_formats`` are the client's Bind result formats; a
  backend that relays rows may return them in binary (``Result.raw_format ==
  1``) when every column was asked in binary.
* The client's start-up settings (:class:`~pgbarrier.sql.startup_params.StartupSettings`,
  ``options`` read as PostgreSQL reads it) reach ``connect`` (an upstream logs in with
  them) and ``apply_startup`` (a backend that emulates them applies them as ``SET``).
* ``REPORTED_PARAMETERS`` are the names PostgreSQL 15 reports with ParameterStatus
  (``GUC_REPORT``); a backend with ``reported_parameters`` (an upstream) tells the
  session their values in force, and the client is told those.
* A *batch view* holds the rows of its query as of its last (re)fresh; readers
  see the old rows or the new ones, never a half-done refresh. A *view* is
  always current. DuckDB keeps a batch view as a table swapped in one
  transaction; PostgreSQL as a real materialized view.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from buenavista.core import Connection, Session

from pgbarrier.errors import FeatureNotSupported, PgError, QueryCanceled
from pgbarrier.pgproto import types as pgt
from pgbarrier.result import Column, Result

if TYPE_CHECKING:
    from pgbarrier.backends.pg_relay import Upstream
    from pgbarrier.pgproto.encodings import ClientEncoding
    from pgbarrier.sql.startup_params import StartupSettings

#: what PostgreSQL 15 reports with ParameterStatus (its GUC_REPORT settings)
REPORTED_PARAMETERS = (
    "application_name", "client_encoding", "DateStyle", "default_transaction_read_only",
    "in_hot_standby", "integer_datetimes", "IntervalStyle", "is_superuser", "server_encoding",
    "server_version", "session_authorization", "standard_conforming_strings", "TimeZone")


class RefreshCancel:
    """Lets another thread interrupt a backend refresh while it runs (a DROP during a refresh).

    The backend binds the function that interrupts its query for as long as the
    query runs; :meth:`cancel` calls it. A refresh that was cancelled before or
    while it ran fails with 57014 and leaves the old result in place.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._interrupt: Callable[[], None] | None = None
        self.cancelled = False

    def bind(self, interrupt: Callable[[], None]) -> None:
        with self._lock:
            self._interrupt = interrupt
        self.check()

    def unbind(self) -> None:
        with self._lock:
            self._interrupt = None

    def check(self) -> None:
        """Raise 57014 when cancelled (the backend calls this before committing)."""
        if self.cancelled:
            raise QueryCanceled()

    def cancel(self) -> None:
        with self._lock:
            self.cancelled = True
            interrupt = self._interrupt
        if interrupt is not None:
            interrupt()


class NeedsExecution(Exception):
    """The row shape cannot be known without running the statement (DML ... RETURNING)."""


class PassThrough(Exception):
    """Raised by the control plane when, under a name's lock, a statement turns out to be
    the backend's own after all (upstream: the name stopped being a batch-refresh view
    between the routing check and the lock, a concurrent DROP and CREATE): the caller
    sends the text to the backend session unchanged, as it would have."""


class DropsMaterializedViews(Exception):
    """Raised by a backend session when a client's statement (``DROP TABLE ...
    CASCADE``, ``DROP SCHEMA ... CASCADE``) would drop pgbarrier's materialized views
    ``names`` (pgbarrier's names): the backend never drops them behind the control
    plane's back. Nothing has run yet. The caller has the control plane drop them (their
    jobs durably), then calls ``resume()``, which carries out the rest of the statement as
    it was decided (its NOTICEs and tag)."""

    def __init__(self, names: list[str], resume: Any) -> None:
        super().__init__(", ".join(names))
        self.names = names
        self.resume = resume


@dataclass(frozen=True)
class WireParams:
    """Bind parameters as the client sent them: bytes, per-value format, per-value type OID."""

    values: tuple[bytes | None, ...]
    formats: tuple[int, ...]
    oids: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.values)


class BackendSession(Session, abc.ABC):
    """One client's connection to one database of the data plane."""

    #: the client session's BackendKeyData process id (set by the wire session at start-up)
    process_id: int = 0

    # -- where backends differ: each answers for itself (the defaults: in process)

    def relayed_upstream(self) -> Upstream | None:
        """The upstream socket the session relays client messages to as bytes
        (:mod:`pgbarrier.session.relay`), or None: every message takes the full path."""
        return None

    def bind_params(self, wire: WireParams, decode: Callable[[], list[Any]]
                    ) -> list[Any] | WireParams:
        """What ``execute`` gets for a Bind's parameters: ``decode()``'s Python values, or
        the client's bytes as they came (``wire``) for a backend that passes them on."""
        return decode()

    def binary_format(self, type_oid: int, all_binary: bool) -> int:
        """The format a column the client asked in binary goes out in (``all_binary``:
        every column was asked so): binary where pgbarrier can encode the type, else text."""
        return 1 if pgt.supports_binary(type_oid) else 0

    def copies_here(self, sql: str) -> bool:
        """Whether COPY ``sql`` runs in pgbarrier (``copy_in``, the session's COPY
        sub-protocol) rather than as a statement of the backend. None does by default."""
        return False

    def opens_implicit_transaction(self, sql: str) -> bool:
        """Whether the session opens a backend transaction before ``sql`` (a statement of
        the extended protocol outside a block, not pgbarrier's), to commit at Sync: the
        extended protocol's implicit transaction. None does by default."""
        return False

    def function_call_refused(self, oid: int) -> PgError:
        """The error for a FunctionCall (libpq's fast path) on the full path: no function
        has an OID here, PostgreSQL's own 42883."""
        return PgError(f"function with OID {oid} does not exist", sqlstate="42883")

    def copy_in(self, table: str, columns: list[str], own_transaction: bool) -> Any:
        """A loader for COPY ``table`` FROM STDIN (see :mod:`pgbarrier.backends.duckdb_copy`)."""
        raise PgError("COPY FROM STDIN is not supported by this backend", sqlstate="0A000")

    @abc.abstractmethod
    def execute(self, sql: str, params: list[Any] | WireParams | None = None,
                result_formats: tuple[int, ...] = ()) -> Result: ...

    @abc.abstractmethod
    def describe(self, sql: str, params: list[Any] | WireParams | None = None
                 ) -> list[Column] | None:
        """Row shape of ``sql`` (None: no row set), without running it (or
        :class:`NeedsExecution` when only running it can tell)."""

    def describe_statement(self, sql: str, param_oids: tuple[int, ...] = ()
                           ) -> tuple[list[int], list[Column] | None]:
        """Parameter type OIDs (the client's non-zero ``param_oids`` kept, the rest inferred;
        one per ``$n``) and row shape of ``sql``, without running it."""
        return list(param_oids), self.describe(sql, None)

    def param_types(self, sql: str, param_oids: tuple[int, ...]) -> list[int]:
        """Like ``describe_statement``'s parameter types, without the row shape."""
        return list(param_oids)

    def apply_startup(self, startup: StartupSettings) -> None:
        """Apply the client's start-up settings once the session is open."""

    def reported_parameters(self) -> dict[str, str]:
        """Values in force of the ``REPORTED_PARAMETERS`` this backend keeps (none here)."""
        return {}

    def sql_cursor_columns(self, name: str) -> list[Column] | None:
        """The columns of the SQL cursor (``DECLARE``) ``name`` the backend session keeps
        itself, or None: SQL cursors and protocol portals share their names."""
        return None

    def remember_setting(self, name: str, shown: str) -> None:
        """One of pgbarrier's own settings (a timeout) is now ``shown``: a backend that
        answers ``current_setting`` / ``pg_settings`` itself keeps the value for them."""

    @abc.abstractmethod
    def interrupt(self) -> None: ...

    @abc.abstractmethod
    def close(self) -> None: ...

    def output_styles(self) -> tuple[str, str] | None:
        """(DateStyle, IntervalStyle) text results are printed in when pgbarrier prints
        them and they are not the default (``ISO, MDY`` and ``postgres``); None: default."""
        return None

    def client_encoding(self) -> ClientEncoding | None:
        """The client encoding pgbarrier converts this session's text to and from, kept up
        to date by the backend's settings (:mod:`pgbarrier.pgproto.encodings`); None: the
        backend converts it itself (an upstream PostgreSQL) or it is always UTF8."""
        return None

    def on_notification(self, wake: Callable[[], None]) -> None:
        """Where the backend keeps LISTEN/NOTIFY itself (DuckDB, :mod:`duckdb_notify`):
        ``wake`` is called (any thread, never blocking) when a notification arrives for
        :meth:`take_notifications`. An upstream PostgreSQL sends its own NotificationResponse
        messages, relayed as bytes: nothing is kept here."""

    def take_notifications(self) -> list[tuple[int, str, str]]:
        """Notifications received since the last take: (sender's process id, channel,
        payload), oldest first."""
        return []

    # buenavista's Session seam
    def execute_sql(self, sql: str, params: Any = None) -> Result:
        return self.execute(sql, params)


class Backend(Connection, abc.ABC):
    """A data plane holding one database per pgbarrier database."""

    #: sqlglot dialect of the SQL this backend runs (for AST rewrites)
    dialect: str = "postgres"

    @abc.abstractmethod
    def ensure_database(self, name: str, owner: str | None = None, new: bool = False) -> None:
        """Make sure ``name`` exists in the data plane (idempotent); a database it creates
        belongs to ``owner`` where the backend has roles. ``new``: a client's CREATE
        DATABASE, where a database the data plane has already (but pgbarrier does not
        serve) is PostgreSQL's 42P04, never adopted silently."""

    def has_database(self, name: str) -> bool:
        """Whether the data plane has database ``name`` (served by pgbarrier or not)."""
        return False

    def require_owner(self, database: str, kind: str, name: str, user: str) -> None:
        """42501 ``must be owner of <kind> <name>`` unless ``user`` may alter or drop
        relation ``name`` of ``database`` (``kind``: ``materialized view`` or ``view``).
        A backend without roles (DuckDB) lets every user."""

    def require_database_right(self, action: str, name: str, user: str,
                               session: BackendSession | None = None) -> None:
        """42501 unless ``user`` may ``action`` (``create``, ``alter`` or ``drop``) database
        ``name``, as PostgreSQL decides (CREATEDB for create; ownership otherwise). With the
        client's ``session`` the check is its current role's, as PostgreSQL's (``SET ROLE``
        and ``SET SESSION AUTHORIZATION`` count). A backend without roles lets every user."""

    def create_database_in_session(self, session: BackendSession, name: str, options: str,
                                   options_at: int) -> None:
        """``CREATE DATABASE name options`` run in the client's ``session`` (``options``:
        the client's text, from its 1-based ``options_at``, for error positions)."""
        raise FeatureNotSupported("CREATE DATABASE options are not supported")

    def current_role(self, session: BackendSession) -> str | None:
        """The client's current role in ``session`` (``current_user``: after SET ROLE), for
        what it creates to be owned as PostgreSQL would own it; None without roles."""
        return None

    def rename_database(self, old: str, new: str, session: BackendSession | None = None) -> None:
        """``ALTER DATABASE old RENAME TO new`` in the data plane (nobody is connected to
        ``old``; with the client's ``session`` where the backend judges the client's rights)."""
        raise FeatureNotSupported("ALTER DATABASE ... RENAME TO is not supported")

    @abc.abstractmethod
    def drop_database(self, name: str) -> None:
        """Remove ``name`` and its data from the data plane (no sessions may be open)."""

    @abc.abstractmethod
    def connect(self, database: str, user: str, password: str | None = None,
                startup: StartupSettings | None = None) -> BackendSession:
        """``user``'s session on ``database``; ``password`` is the one the client
        authenticated with, when pgbarrier knows it (an upstream may want it); ``startup``:
        the client's start-up settings the backend should get (an upstream logs in with
        them, so it validates and applies them itself)."""

    @abc.abstractmethod
    def relation_exists(self, database: str, name: str) -> bool: ...

    @abc.abstractmethod
    def create_batch_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                          query: str, owner: str | None = None,
                          cancel: RefreshCancel | None = None, *,
                          storage: tuple[tuple[str, str], ...] = (), with_data: bool = True,
                          session: BackendSession | None = None) -> int:
        """Atomically create batch view ``name`` holding the rows of ``query``;
        returns the row count. ``owner`` (the creating client) owns it and its query
        runs with ``owner``'s privileges, where the backend has roles. ``cancel``
        interrupts it from another thread (57014, nothing created). ``storage`` (WITH
        (...), USING, TABLESPACE clauses) and ``with_data`` False are for a backend that
        has them (the control plane refuses them before any other); with the client's
        ``session``, a backend whose views live with the client's session creates it
        there (its search_path; its role owns it), and others ignore it."""

    @abc.abstractmethod
    def refresh_batch_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                           query: str, cancel: RefreshCancel | None = None) -> int:
        """Replace the rows of batch view ``name`` by those ``query`` returns now, atomically
        (readers see the old rows until it commits); returns the new row count.
        ``cancel`` interrupts it from another thread (57014, old rows kept).
        ``columns`` and ``query`` are the view's definition (a backend that stores the
        definition itself, like PostgreSQL, ignores them)."""

    @abc.abstractmethod
    def drop_batch_view(self, database: str, name: str) -> None:
        """Drop batch view ``name`` and its rows; nothing when it does not exist."""

    @abc.abstractmethod
    def create_view(self, database: str, name: str, columns: tuple[str, ...] | None,
                    query: str, owner: str | None = None) -> None:
        """Create view ``name`` over ``query``: always current (a streaming view), owned
        by ``owner`` where the backend has roles."""

    @abc.abstractmethod
    def drop_view(self, database: str, name: str) -> None:
        """Drop view ``name``; nothing when it does not exist."""

    def relation_name(self, session: BackendSession, name: str) -> str | None:
        """pgbarrier's name (:mod:`pgbarrier.sql.relnames`) of the relation ``name`` means
        in the client's ``session`` (its search_path), or None when there is none."""
        return None

    def creation_name(self, session: BackendSession, name: str) -> str:
        """pgbarrier's name for a relation the client's ``session`` creates as ``name``
        (an unqualified name goes to its current schema)."""
        return name

    def plan_view_drop(self, session: BackendSession, name: str, cascade: bool) -> Any:
        """Before pgbarrier's materialized view ``name`` is dropped: what else goes with
        it (a backend whose catalog keeps dependencies itself, PostgreSQL, answers None
        and drops its dependents itself). Raises PostgreSQL's 2BP01 when ``cascade`` is
        false and something depends on it; else a plan with ``notices``, the other
        pgbarrier views to drop first (``pgbarrier_views``) and ``statements`` to run
        after (:meth:`run_statements`)."""
        return None

    def run_statements(self, session: BackendSession, statements: list[str]) -> None:
        """Run a plan's ``statements`` in one transaction in the client's ``session``."""

    def relation_kind(self, session: BackendSession, name: str) -> str | None:
        """PostgreSQL's relkind of the relation ``name`` means in the client's ``session``
        (``r``, ``v``, ``m``, ``S``...), None when there is none or the backend does not
        say (it answers for itself)."""
        return None

    def bind_query(self, session: BackendSession, query: str) -> str:
        """A view's ``query`` as it must be kept to mean what it means in the client's
        ``session`` when it runs later elsewhere (a backend that binds names itself at
        CREATE, as PostgreSQL, answers ``query``)."""
        return query

    def relations_read(self, database: str, inputs: frozenset[str],
                       session: BackendSession | None = None) -> list[tuple[str, ...]]:
        """What the relations ``inputs`` read through plain views, from the backend's own
        catalog: for each relation that is not a plain view, reached from an input that
        is one, the shortest chain ``(input, view, ..., relation)``. A relation of the
        default schema is named bare, another ``schema.name``. Names that are no
        relation are skipped. With the client's ``session`` the inputs resolve with its
        search_path and each that exists is reported as a chain of one too. A backend that
        cannot see into views answers ``[]``."""
        return []

    @abc.abstractmethod
    def describe_query(self, database: str, query: str) -> list[Column]:
        """Validate ``query`` (42P01 for a missing relation...) and return its columns."""

    def describe_view_query(self, database: str, query: str,
                            session: BackendSession | None = None) -> list[Column] | None:
        """:meth:`describe_query` of a view being created by the client of ``session``; a
        backend whose views live with the client's session reads it there (its
        search_path, its privileges)."""
        return self.describe_query(database, query)

    @abc.abstractmethod
    def notify(self, database: str, channel: str, payload: str) -> None:
        """pgbarrier's own notification (:mod:`pgbarrier.events`) to the sessions of
        ``database`` listening on ``channel``, as PostgreSQL's NOTIFY delivers one. Called
        from the event bus's thread; may block (an upstream round trip) and raise."""

    @abc.abstractmethod
    def close(self) -> None: ...

    # buenavista's Connection seam: sessions are opened per database via connect()
    def new_session(self) -> Session:
        return self.connect("dev", "root")
