"""DuckDB exceptions as PostgreSQL errors: PostgreSQL's SQLSTATE, wording, fields and caret.

Rules this package keeps:

* :func:`to_pg_error` answers the :class:`~pgbarrier.errors.PgError` a client sees for a
  DuckDB exception, trying in order: an error pgbarrier raised itself inside DuckDB
  (``pgbarrier:SQLSTATE:message``, from the catalog's ``pgb.fail`` or a CHECK's
  ``error(...)``) found anywhere in DuckDB's text, also inside the ``(Error: ...)`` of a
  failed CHECK and inside a conversion's wrapping: its SQLSTATE and message, no constraint
  fields; the lock-down's refusals (:mod:`.refusals`); constraint violations
  (:mod:`pgbarrier.backends.duckdb_constraint_errors`: 23505, 23503, 23514, 23502 with
  PostgreSQL's names, DETAIL and the ``s``/``t``/``n``/``c`` fields); the dependency error
  of re-creating a ``serial`` table that exists (42P07); then the translation table
  (:mod:`.table`), whose rules each carry statements that raise them. An input error whose
  value is a bind parameter's carries PostgreSQL's Bind CONTEXT (``unnamed portal
  parameter $n = '...'``, PostgreSQL's default of logging no values).
* What no rule matches keeps DuckDB's message (its ``Xxx Error:`` prefix and closing ``!``
  dropped), its caret as the position, and the nearest SQLSTATE of its exception class
  (:data:`_CLASS_STATE`; a binder error is 42703 when it speaks of a column, else 42000); DuckDB's ``Did you mean`` / ``Candidate`` lists are dropped
  (PostgreSQL gives its own hints, or none). Nothing a client can cause is XX000: only
  DuckDB's internal and fatal errors are.
"""

from __future__ import annotations

import logging
import re
from typing import Any

import duckdb

from pgbarrier.backends.duckdb_constraint_errors import Lookup
from pgbarrier.backends.duckdb_errors import carets
from pgbarrier.backends.duckdb_errors.refusals import refusal
from pgbarrier.backends.duckdb_errors.scopes import ColumnsLookup
from pgbarrier.backends.duckdb_failing_row import Query
from pgbarrier.backends.duckdb_errors.answer import Ctx
from pgbarrier.backends.duckdb_errors.table import RULES, Example, Rule
from pgbarrier.errors import PgError, QueryCanceled

__all__ = ["RULES", "Example", "Rule", "to_pg_error"]

log = logging.getLogger(__name__)

_CLASS_STATE: list[tuple[type[BaseException], str]] = [
    (duckdb.InterruptException, "57014"),
    (duckdb.ParserException, "42601"),
    (duckdb.SyntaxException, "42601"),
    (duckdb.CatalogException, "42704"),
    (duckdb.BinderException, "42703"),
    (duckdb.DependencyException, "2BP01"),
    (duckdb.ConstraintException, "23000"),
    (duckdb.ConversionException, "22P02"),
    (duckdb.OutOfRangeException, "22003"),
    (duckdb.TypeMismatchException, "42804"),
    (duckdb.InvalidTypeException, "42804"),
    (duckdb.InvalidInputException, "22023"),
    (duckdb.SequenceException, "2200H"),
    (duckdb.TransactionException, "25000"),
    (duckdb.SerializationException, "40001"),
    (duckdb.NotImplementedException, "0A000"),
    (duckdb.PermissionException, "42501"),
    (duckdb.OutOfMemoryException, "53200"),
    (duckdb.HTTPException, "58030"),
    (duckdb.IOException, "58030"),
    (duckdb.ResourceInUseException, "55006"),
    (duckdb.ConnectionException, "08006"),
    (duckdb.DataError, "22000"),
    (duckdb.IntegrityError, "23000"),
    (duckdb.ProgrammingError, "42000"),
    (duckdb.NotSupportedError, "0A000"),
    (duckdb.OperationalError, "58000"),
]

#: an error pgbarrier raised inside DuckDB: the CHECK wrapper's, else one that starts the
#: message or follows a wrapper's ": " (never one inside a quoted value: a client's data)
_OWN_CHECK = re.compile(r"\(Error: pgbarrier:([0-9A-Z]{5}):(.*)\)\s*$", re.S)
_OWN_ERROR = re.compile(r"(?:^|: )pgbarrier:([0-9A-Z]{5}):(.*)$", re.S)

_SERIAL_TABLE = re.compile(r'depends on sequence "[^"]*"')
_CREATE_TABLE = re.compile(r"(?is)^\s*CREATE OR REPLACE (?:TEMP )?SEQUENCE .*?; CREATE "
                           r"(?:TEMPORARY )?TABLE\s+(?:IF NOT EXISTS\s+)?(?:\S+\.)?(\S+)")
_PREFIX = re.compile(r"^[A-Za-z ]*Error: ")


def own_error(text: str) -> PgError | None:
    """The error pgbarrier raised itself inside DuckDB (``pgbarrier:SQLSTATE:message``,
    with its fields after ``chr(30)`` when it has any)."""
    m = _OWN_CHECK.search(text)
    if m is None:
        m = _OWN_ERROR.search(text.split("\n\nLINE ", 1)[0])
        if m is None:
            return None
        message = m.group(2).split("\n\n", 1)[0]
        if message.endswith(")") and "(Error: pgbarrier:" in text:
            message = message[:-1]
    else:
        message = m.group(2)
    # then, optionally, chr(30) + "X=value" per ErrorResponse field (duckdb_ddl's checks:
    # D detail, H hint, s/t/c/d/n schema, table, column, type and constraint names)
    message, *fields = message.rstrip().split("\x1e")
    err = PgError.by_sqlstate(m.group(1))(message, sqlstate=m.group(1))
    for item in fields:
        key, _, value = item.partition("=")
        if key == "D":
            err.detail = value
        elif key == "H":
            err.hint = value
        elif key:
            err.fields[key] = value
    return err


def to_pg_error(exc: BaseException, sql: str | None = None,
                constraints: Lookup | None = None,
                columns: ColumnsLookup | None = None,
                client_sql: str | None = None, query: Query | None = None,
                params: list[Any] | None = None) -> PgError:
    """The PgError a client should see for a DuckDB exception raised running ``sql``
    (``constraints`` lists the database's constraints, for a violation's names;
    ``columns`` answers tables' columns, for PostgreSQL's hints and argument types;
    ``client_sql`` is the client's text when the dialect translation rewrote it into
    ``sql``: the answer's position is then in the client's text (``client_position``), or
    none; ``query`` runs a read on a connection of its own, for
    a violation's failing row, with the statement's ``params``)."""
    if isinstance(exc, duckdb.InterruptException):
        return QueryCanceled()
    text = str(exc)
    own = own_error(text)
    if own is not None:
        return own
    head = text.split("\n", 1)[0]
    message = _PREFIX.sub("", head, count=1)
    refused = refusal(exc, message, sql)
    if refused is not None:
        return refused
    m = _CREATE_TABLE.match(sql or "") if isinstance(exc, duckdb.DependencyException) else None
    if m and _SERIAL_TABLE.search(text):  # a serial table's sequence is the table's own
        return PgError.by_sqlstate("42P07")(f'relation "{m.group(1).strip(chr(34))}" '
                                            "already exists", sqlstate="42P07")
    message = message.rstrip().rstrip("!")
    position = carets.duckdb_position(text, sql)
    ctx = Ctx(exc, sql, text, message, position, columns, constraints, query, client_sql,
              params=params)
    for rule in RULES:
        if not isinstance(exc, rule.classes):
            continue
        found = rule.pattern.search(message)
        if found is None:
            continue
        try:
            answer = rule.answer(found, ctx)
        except Exception:  # noqa: BLE001 - a rule that cannot answer leaves the next to try
            log.warning("error rule %r failed on %r", rule.name, message, exc_info=True)
            answer = None
        if answer is not None:
            if ctx.param_context is not None and answer.position is None:
                answer.fields.setdefault("W", ctx.param_context)
            if client_sql is not None:
                if not ctx.client_position:
                    answer.position = carets.carried_over(sql, answer.position, client_sql)
                answer.client_position = True  # type: ignore[attr-defined]
            return answer
    state = next((code for cls, code in _CLASS_STATE if isinstance(exc, cls)), "XX000")
    if state == "42703" and "column" not in message.lower():
        state = "42000"  # a binder error no rule knows that is not about a column
    return PgError.by_sqlstate(state)(message, position=position, sqlstate=state)
