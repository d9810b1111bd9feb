"""One exception hierarchy keyed by SQLSTATE.

Rules this module keeps:

* Every failure a client can see is a :class:`PgError` (or becomes one through
  :func:`as_pg_error`), so the wire layer can always send a full ErrorResponse:
  severity, SQLSTATE, message, and detail / hint / position when known.
* A subclass is registered for its SQLSTATE (``PgError.by_sqlstate``), the way
  psycopg's ``errors.py`` does it, so code can raise by name and tests can
  look classes up by code.
* ``position`` is a 1-based character offset into the statement text the
  client sent, as in PostgreSQL's ``P`` field.
"""

from __future__ import annotations

from typing import ClassVar


class PgError(Exception):
    """A PostgreSQL-style error: SQLSTATE, message and optional fields."""

    sqlstate: ClassVar[str] = "XX000"
    severity: ClassVar[str] = "ERROR"
    _registry: ClassVar[dict[str, type[PgError]]] = {}

    def __init__(
        self,
        message: str,
        *,
        detail: str | None = None,
        hint: str | None = None,
        position: int | None = None,
        sqlstate: str | None = None,
        severity: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail
        self.hint = hint
        self.position = position
        if sqlstate is not None:
            self.sqlstate = sqlstate  # type: ignore[misc]
        if severity is not None:
            self.severity = severity  # type: ignore[misc]
        #: the other ErrorResponse fields, by their one-letter code, as PostgreSQL sent
        #: them (``W`` context, ``s``/``t``/``c``/``d``/``n`` schema, table, column, type
        #: and constraint names, ``p``/``q`` internal position and query, ``F``/``L``/``R``)
        self.fields: dict[str, str] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        code = cls.__dict__.get("sqlstate")
        if code:
            PgError._registry.setdefault(code, cls)

    @classmethod
    def by_sqlstate(cls, code: str) -> type[PgError]:
        """The registered class for ``code``, or ``PgError`` itself."""
        return cls._registry.get(code, PgError)

    def with_position_offset(self, offset: int) -> PgError:
        """Shift ``position`` by ``offset`` characters (statement inside a longer query)."""
        if self.position is not None:
            self.position += offset
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.sqlstate}: {self.message!r})"


class Fatal(PgError):
    """Base for errors that end the connection (severity FATAL)."""

    severity: ClassVar[str] = "FATAL"


class SuccessfulCompletion(PgError):
    sqlstate = "00000"


class ProtocolViolation(Fatal):
    sqlstate = "08P01"


class MalformedMessage(PgError):
    """08P01 for a known message whose body does not parse: PostgreSQL's ``pq_getmsg*``
    errors are ERROR, not FATAL (the connection stays; the extended protocol skips to Sync)."""

    sqlstate = "08P01"


class FeatureNotSupported(PgError):
    sqlstate = "0A000"


class InvalidParameterValue(PgError):
    sqlstate = "22023"


class DataException(PgError):
    sqlstate = "22000"


class ActiveSqlTransaction(PgError):
    sqlstate = "25001"


class InFailedSqlTransaction(PgError):
    sqlstate = "25P02"

    def __init__(self, message: str | None = None, **kw: object) -> None:
        super().__init__(
            message
            or "current transaction is aborted, commands ignored until end of transaction block",
            **kw,  # type: ignore[arg-type]
        )


class InvalidPassword(Fatal):
    sqlstate = "28P01"


class InvalidAuthorizationSpecification(Fatal):
    sqlstate = "28000"


class InvalidCatalogName(PgError):
    """3D000: the database does not exist."""

    sqlstate = "3D000"


class SyntaxError(PgError):  # noqa: A001 - named after the SQLSTATE condition
    sqlstate = "42601"


class UndefinedTable(PgError):
    sqlstate = "42P01"


class UndefinedObject(PgError):
    sqlstate = "42704"


class DuplicateTable(PgError):
    sqlstate = "42P07"


class DuplicateDatabase(PgError):
    sqlstate = "42P04"


class DuplicateObject(PgError):
    sqlstate = "42710"


class ObjectNotInPrerequisiteState(PgError):
    """55000: e.g. a batch-refresh job on a paused database."""

    sqlstate = "55000"


class ObjectInUse(PgError):
    sqlstate = "55006"


class LockNotAvailable(PgError):
    sqlstate = "55P03"


class QueryCanceled(PgError):
    sqlstate = "57014"

    def __init__(self, message: str | None = None, **kw: object) -> None:
        super().__init__(message or "canceling statement due to user request", **kw)  # type: ignore[arg-type]


class AdminShutdown(Fatal):
    sqlstate = "57P01"


class CannotConnectNow(Fatal):
    """57P03: what a PostgreSQL standby says; a follower pgbarrier process (leadership.py)."""

    sqlstate = "57P03"


class ReadOnlySqlTransaction(PgError):
    sqlstate = "25006"


class TooManyConnections(Fatal):
    sqlstate = "53300"


class InternalError(PgError):
    sqlstate = "XX000"


class CharacterNotInRepertoire(PgError):
    """22021: bytes that are no character of their encoding (an ERROR; the connection
    stays)."""

    sqlstate = "22021"


class UntranslatableCharacter(PgError):
    """22P05: a character with no equivalent in the encoding it must be converted to."""

    sqlstate = "22P05"


class DuplicateCursor(PgError):
    """42P03: a Bind naming a portal that is still open."""

    sqlstate = "42P03"


class IdleInTransactionTimeout(Fatal):
    sqlstate = "25P03"


class IdleSessionTimeout(Fatal):
    sqlstate = "57P05"


class Notice:
    """A NoticeResponse to send before the command's result (severity NOTICE)."""

    __slots__ = ("message", "detail", "hint", "sqlstate", "severity")

    def __init__(
        self,
        message: str,
        *,
        detail: str | None = None,
        hint: str | None = None,
        sqlstate: str = "00000",
        severity: str = "NOTICE",
    ) -> None:
        self.message = message
        self.detail = detail
        self.hint = hint
        self.sqlstate = sqlstate
        self.severity = severity

    def __repr__(self) -> str:
        return f"Notice({self.message!r})"


def as_pg_error(exc: BaseException) -> PgError:
    """Turn any exception into a PgError (unknown ones become XX000).

    A statement nested too deeply for pgbarrier's parser (Python's recursion limit)
    is PostgreSQL's 54001 ``stack depth limit exceeded``: the client's doing, not a bug.
    """
    if isinstance(exc, PgError):
        return exc
    if isinstance(exc, RecursionError):
        return PgError("stack depth limit exceeded", sqlstate="54001",
                       hint="The statement is nested too deeply; simplify it.")
    return InternalError(f"internal error: {exc}")
