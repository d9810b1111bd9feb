"""What pgbarrier's DuckDB lock-down refuses, as PostgreSQL's 42501 (or 53200).

Rules this module keeps:

* What the lock-down of :mod:`pgbarrier.backends.duckdb_config` refuses is 42501 in
  PostgreSQL's shape (:func:`refusal`): a file or directory outside the allowed ones
  is ``permission denied to read file "x"`` (``write`` for COPY ... TO and EXPORT),
  with a HINT naming ``--allow-path``; the path is shown only when the client wrote
  it (DuckDB's own directories, such as its extension directory, are not revealed);
  INSTALL/LOAD, persistent secrets and a locked setting (``permission denied to set
  parameter "x"``; 42704 ``unrecognized configuration parameter`` for a name DuckDB
  does not have) likewise. COPY FROM STDIN / TO STDOUT never reach DuckDB (the session runs
  them, :mod:`pgbarrier.session.copy`); a COPY of ``/dev/stdin`` or ``/dev/stdout`` that does
  (DuckDB would use the server process's own streams) is 0A000. DuckDB's out-of-memory
  error is 53200 ``out of memory`` with DuckDB's text as DETAIL.
"""

from __future__ import annotations

import re

import duckdb

from pgbarrier.errors import PgError

_FILE_DENIED = re.compile(r'Cannot access (file|directory) "(.*)" - file system operations '
                          r"are disabled by configuration")
_LOCKED = re.compile(r'Cannot (?:change|reset) configuration option "(.*)" - the configuration '
                     r"has been locked")
_WRITES = re.compile(r"^\s*EXPORT\b|^\s*COPY\b.*\bTO\s+'", re.I | re.S)
_LITERAL = re.compile(r"'((?:[^']|'')*)'")
_COPY_FROM = re.compile(r"^\s*COPY\b[^(]*\bFROM\s+'", re.I | re.S)

_EXT_HINT = ("pgbarrier loads the extensions it uses (icu, json, parquet) itself; a client "
             "cannot install or load others.")


def refusal(exc: BaseException, message: str, sql: str | None) -> PgError | None:
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


def _denied(message: str, hint: str) -> PgError:
    return PgError.by_sqlstate("42501")(message, hint=hint, sqlstate="42501")
