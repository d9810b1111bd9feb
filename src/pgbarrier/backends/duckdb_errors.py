"""DuckDB exceptions as PostgreSQL errors: nearest SQLSTATE, PostgreSQL's wording.

Rules this module keeps:

* The exception class decides the SQLSTATE family; a few messages are matched
  more precisely (missing / duplicate relation, unique and not-null violations)
  so clients get PostgreSQL's codes ``42P01``, ``42P07``, ``23505``, ``23502``.
* DuckDB's ``Xxx Error:`` prefix is dropped; its ``LINE n:`` caret becomes the
  ErrorResponse position (1-based, in the statement text).
* Constraint violations are PostgreSQL's (23505, 23514, 23503, 23502, names and DETAIL:
  :mod:`pgbarrier.backends.duckdb_constraint_errors`); a division by zero is 22012
  ``division by zero``; the dependency error of re-creating a ``serial`` table that exists
  (its sequence is replaced first, :mod:`pgbarrier.backends.duckdb_dialect`) is 42P07.
* What the lock-down of :mod:`pgbarrier.backends.duckdb_config` refuses is 42501 in
  PostgreSQL's shape (:func:`_refusal`): a file or directory outside the allowed ones
  is ``permission denied to read file "x"`` (``write`` for COPY ... TO and EXPORT),
  with a HINT naming ``--allow-path``; the path is shown only when the client wrote
  it (DuckDB's own directories, such as its extension directory, are not revealed);
  INSTALL/LOAD, persistent secrets and a locked setting (``permission denied to set
  parameter "x"``; 42704 ``unrecognized configuration parameter`` for a name DuckDB
  does not have) likewise. COPY FROM STDIN / TO STDOUT never reach DuckDB (the session runs
  them, :mod:`pgbarrier.session.copy`); a COPY of ``/dev/stdin`` or ``/dev/stdout`` that does
  (DuckDB would use the server process's own streams) is 0A000. DuckDB's out-of-memory error is 53200 ``out of memory``
  with DuckDB's text as DETAIL.
"""

from __future__ import annotations

import re

import duckdb

from pgbarrier.backends.duckdb_constraint_errors import Lookup, constraint_error
from pgbarrier.errors import PgError, QueryCanceled

_CLASS_STATE: list[tuple[type[BaseException], str]] = [
    (duckdb.InterruptException, "57014"),
    (duckdb.ParserException, "42601"),
    (duckdb.CatalogException, "42704"),
    (duckdb.BinderException, "42703"),
    (duckdb.ConstraintException, "23000"),
    (duckdb.ConversionException, "22P02"),
    (duckdb.OutOfRangeException, "22003"),
    (duckdb.InvalidInputException, "22023"),
    (duckdb.TransactionException, "25000"),
    (duckdb.NotImplementedException, "0A000"),
    (duckdb.PermissionException, "42501"),
    (duckdb.DataError, "22000"),
    (duckdb.IntegrityError, "23000"),
    (duckdb.ProgrammingError, "42000"),
]

#: an error the catalog raises itself (privileges.sql's pgb.fail)
_OWN_ERROR = re.compile(r"^pgbarrier:([0-9A-Z]{5}):(.*)$", re.S)

_PATTERNS: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r'^(?:Table|View) with name "?([^"!]+)"? does not exist'), "42P01",
     'relation "{0}" does not exist'),
    (re.compile(r'^(?:Table|View) with name "?([^"!]+)"? already exists'), "42P07",
     'relation "{0}" already exists'),
    (re.compile(r"^Division by zero in expression"), "22012", "division by zero"),
    (re.compile(r"^No function matches the given name and argument types '//\((\"?INTERVAL\"?)"),
     "0A000", "dividing an interval that is not written as one (a cast to interval, an "
              "interval literal) is not supported by pgbarrier on DuckDB"),
    (re.compile(r"^No function matches the given name and argument types '(@>|<@)\(\"?JSON"),
     "0A000", "jsonb containment ({0}) of values not cast to jsonb is not supported by "
              "pgbarrier on DuckDB"),
    (re.compile(r"^FOREIGN KEY constraints cannot use (CASCADE, SET NULL or SET DEFAULT)"),
     "0A000", "foreign keys with ON DELETE / ON UPDATE {0} are not supported by pgbarrier "
              "on DuckDB"),
    (re.compile(r"^Current transaction is aborted"), "25P02",
     "current transaction is aborted, commands ignored until end of transaction block"),
    (re.compile(r'Referenced column "([^"]+)" not found'), "42703", 'column "{0}" does not exist'),
    (re.compile(r"^Scalar Function with name (\S+) does not exist"), "42883",
     "function {0} does not exist"),
    (re.compile(r"^Max expression depth limit of (\d+) exceeded"), "54001",
     "stack depth limit exceeded"),
]

_LINE = re.compile(r"^LINE (\d+): ", re.M)
#: an error of pgbarrier's (error('pgbarrier:SQLSTATE:message')) that DuckDB wrapped, e.g.
#: in a CHECK's failure: ``... (Error: pgbarrier:22001:value too long ...)``
_WRAPPED_OWN = re.compile(r"\(Error: pgbarrier:([0-9A-Z]{5}):(.*)\)\s*$", re.S)

_FILE_DENIED = re.compile(r'Cannot access (file|directory) "(.*)" - file system operations '
                          r"are disabled by configuration")
_LOCKED = re.compile(r'Cannot (?:change|reset) configuration option "(.*)" - the configuration '
                     r"has been locked")
_WRITES = re.compile(r"^\s*EXPORT\b|^\s*COPY\b.*\bTO\s+'", re.I | re.S)
_LITERAL = re.compile(r"'((?:[^']|'')*)'")
_COPY_FROM = re.compile(r"^\s*COPY\b[^(]*\bFROM\s+'", re.I | re.S)


def _refusal(exc: BaseException, message: str, sql: str | None) -> PgError | None:
    """The 42501 (or 53200) for what pgbarrier's DuckDB lock-down refuses, else None."""
    from pgbarrier.backends.duckdb_config import (
        ALLOW_PATH_HINT, SETTING_HINT, known_settings)

    if isinstance(exc, duckdb.OutOfMemoryException):
        return PgError("out of memory", detail=message, sqlstate="53200",
                       hint="The query needs more memory than --duckdb-memory-limit gives "
                            "each database.")
    m = _FILE_DENIED.search(message)
    if m:
        kind, path = m.groups()
        first = (sql or "").lstrip().split(None, 1)[0].upper() if (sql or "").strip() else ""
        if first in ("INSTALL", "LOAD", "FORCE", "UPDATE"):
            return _denied("permission denied to install or load an extension", _EXT_HINT)
        if path in ("/dev/stdin", "/dev/stdout", "/dev/stderr"):
            return PgError(f"COPY {'FROM STDIN' if path == '/dev/stdin' else 'TO STDOUT'} is "
                           "not supported by pgbarrier on DuckDB", sqlstate="0A000",
                           hint="Read and write data files in an --allow-path directory "
                                "(COPY ... FROM/TO 'file', read_csv, read_parquet).")
        verb = "write" if sql and _WRITES.search(sql) and not _COPY_FROM.search(sql) else "read"
        named = [lit for lit in _LITERAL.findall(sql or "") if lit and path.startswith(lit)]
        if not named:  # not a path the client wrote (DuckDB's own directories)
            return _denied(f"permission denied to {verb} a server {kind}", ALLOW_PATH_HINT)
        return _denied(f'permission denied to {verb} {kind} "{max(named, key=len)}"',
                       ALLOW_PATH_HINT)
    if "Loading external extensions is disabled" in message:
        return _denied("permission denied to install or load an extension", _EXT_HINT)
    if "Persistent secrets are disabled" in message:
        return _denied("permission denied to create a persistent secret",
                       "pgbarrier never writes secrets to the server's disk; a temporary "
                       "secret (CREATE SECRET) lasts until the server stops.")
    m = _LOCKED.search(message)
    if m:
        name = m.group(1)
        if name.lower() not in known_settings():
            return PgError(f'unrecognized configuration parameter "{name}"', sqlstate="42704")
        return _denied(f'permission denied to set parameter "{name}"', SETTING_HINT)
    if isinstance(exc, duckdb.PermissionException) or "disabled by configuration" in message:
        return _denied("permission denied: " + message[:1].lower() + message[1:], ALLOW_PATH_HINT)
    return None


_EXT_HINT = ("pgbarrier loads the extensions it uses (icu, json, parquet) itself; a client "
             "cannot install or load others.")


def _denied(message: str, hint: str) -> PgError:
    return PgError.by_sqlstate("42501")(message, hint=hint, sqlstate="42501")


def _position(text: str, sql: str | None) -> int | None:
    m = _LINE.search(text)
    if not m or sql is None:
        return None
    caret_line = text[m.end():].split("\n", 2)
    if len(caret_line) < 2:
        return None
    col = caret_line[1].find("^") - len(m.group(0))
    if col < 0:
        return None
    line_no = int(m.group(1))
    lines = sql.split("\n")
    if line_no > len(lines):
        return None
    return sum(len(line) + 1 for line in lines[: line_no - 1]) + col + 1


_SYSTEM_SUGGESTION = re.compile(r'"(?:pg_|duckdb_|pgbarrier_catalog|information_schema|'
                                r'main\.pg_|pg_catalog\.)|Candidate macros', re.I)


_SERIAL_TABLE = re.compile(r'depends on sequence "[^"]*"')
_CREATE_TABLE = re.compile(r"(?is)^\s*CREATE OR REPLACE (?:TEMP )?SEQUENCE .*?; CREATE "
                           r"(?:TEMPORARY )?TABLE\s+(?:IF NOT EXISTS\s+)?(?:\S+\.)?(\S+)")


def _own(code: str, text: str) -> PgError:
    """pgbarrier's own error raised in SQL (``error('pgbarrier:SQLSTATE:message')``, then
    optionally ``chr(30)`` + ``X=value`` per ErrorResponse field: ``D`` detail, ``H`` hint,
    ``s``/``t``/``c``/``d``/``n`` schema, table, column, type and constraint names)."""
    message, *fields = text.split("\x1e")
    err = PgError.by_sqlstate(code)(message, sqlstate=code)
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
                constraints: Lookup | None = None) -> PgError:
    """The PgError a client should see for a DuckDB exception (``constraints`` lists the
    database's constraints, for a constraint violation's names: see
    :mod:`pgbarrier.backends.duckdb_constraint_errors`)."""
    if isinstance(exc, duckdb.InterruptException):
        return QueryCanceled()
    text = str(exc)
    head = text.split("\n", 1)[0]
    message = head.split(": ", 1)[1] if ": " in head and head.split(": ", 1)[0].endswith("Error") else head
    refused = _refusal(exc, message, sql)
    if refused is not None:
        return refused
    wrapped = _WRAPPED_OWN.search(text)
    if wrapped is not None:  # pgbarrier's own error() inside DuckDB's (a length check)
        return _own(*wrapped.groups())
    if isinstance(exc, duckdb.ConstraintException):
        violated = constraint_error(message, sql, constraints)
        if violated is not None:
            return violated
    m = _CREATE_TABLE.match(sql or "") if isinstance(exc, duckdb.DependencyException) else None
    if m and _SERIAL_TABLE.search(text):  # a serial table's sequence is the table's own
        return PgError.by_sqlstate("42P07")(f'relation "{m.group(1).strip(chr(34))}" '
                                            "already exists", sqlstate="42P07")
    detail_lines = [ln for ln in text.split("\n")[1:] if ln and not ln.startswith("LINE ")
                    and not ln.strip().startswith("^")]
    hint = detail_lines[0] if detail_lines and detail_lines[0].startswith(("Did you mean", "Candidate")) else None
    if hint is not None and _SYSTEM_SUGGESTION.search(hint):
        hint = None  # DuckDB's guess from its own or pgbarrier's catalog views misleads
    own = _OWN_ERROR.match(message)
    if own is not None:  # the catalog's pgb.fail: PostgreSQL's SQLSTATE and message
        return _own(own.group(1), own.group(2))
    state = "XX000"
    for cls, code in _CLASS_STATE:
        if isinstance(exc, cls):
            state = code
            break
    for pattern, code, template in _PATTERNS:
        m = pattern.search(message)
        if m:
            state, message = code, template.format(*m.groups())
            break
    message = message.rstrip("!")
    return PgError.by_sqlstate(state)(message, hint=hint, position=_position(text, sql), sqlstate=state)
