"""DuckDB's type names, as its error messages spell them, in PostgreSQL's words.

Rules this module keeps:

* :func:`pg_type` answers ``format_type``'s name of a DuckDB type as a message shows it
  (``INT32``/``INTEGER`` -> ``integer``, ``VARCHAR`` -> ``text``, ``DECIMAL(5,2)`` ->
  ``numeric``, ``TIMESTAMP WITH TIME ZONE`` -> ``timestamp with time zone``, ``INTEGER[]``
  -> ``integer[]``); DuckDB's literal types are PostgreSQL's: an ``INTEGER_LITERAL`` is an
  ``integer``, a ``STRING_LITERAL`` (and ``NULL``) is ``unknown``. A name it does not know
  is DuckDB's, lower-cased.
* :func:`input_type` answers the name PostgreSQL's input functions use in ``invalid input
  syntax for type X`` (the short ``timestamp``, ``time``; otherwise :func:`pg_type`).
* :func:`range_name` answers the word of ``smallint out of range`` / ``integer out of
  range`` / ``bigint out of range`` for DuckDB's integer types.
"""

from __future__ import annotations

import re

_TYPES = {
    "INT8": "tinyint", "TINYINT": "tinyint",
    "INT16": "smallint", "SMALLINT": "smallint",
    "INT32": "integer", "INTEGER": "integer", "INTEGER_LITERAL": "integer",
    "INT64": "bigint", "BIGINT": "bigint",
    "INT128": "numeric", "HUGEINT": "numeric", "UINT8": "smallint", "UTINYINT": "smallint",
    "UINT16": "integer", "USMALLINT": "integer", "UINT32": "bigint", "UINTEGER": "bigint",
    "UINT64": "numeric", "UBIGINT": "numeric", "UHUGEINT": "numeric", "BIGNUM": "numeric",
    "DECIMAL": "numeric", "NUMERIC": "numeric",
    "FLOAT": "real", "REAL": "real", "FLOAT4": "real",
    "DOUBLE": "double precision", "FLOAT8": "double precision",
    "BOOL": "boolean", "BOOLEAN": "boolean",
    "VARCHAR": "text", "STRING": "text", "TEXT": "text",
    "STRING_LITERAL": "unknown", "NULL": "unknown", '"NULL"': "unknown",
    "BLOB": "bytea", "BYTEA": "bytea",
    "DATE": "date",
    "TIME": "time without time zone",
    "TIME WITH TIME ZONE": "time with time zone", "TIMETZ": "time with time zone",
    "TIMESTAMP": "timestamp without time zone",
    "TIMESTAMP_S": "timestamp without time zone", "TIMESTAMP_MS": "timestamp without time zone",
    "TIMESTAMP_NS": "timestamp without time zone",
    "TIMESTAMP WITH TIME ZONE": "timestamp with time zone",
    "TIMESTAMPTZ": "timestamp with time zone",
    "INTERVAL": "interval", "UUID": "uuid", "JSON": "json", "BIT": "bit",
}

#: the short names of PostgreSQL's input functions' messages, where they differ
_INPUT = {"time without time zone": "time", "timestamp without time zone": "timestamp",
          "time with time zone": "time with time zone"}

_RANGE = {"INT16": "smallint", "SMALLINT": "smallint", "INT32": "integer",
          "INTEGER": "integer", "INT64": "bigint", "BIGINT": "bigint"}

_DECIMAL = re.compile(r"^(?:DECIMAL|NUMERIC)\s*\(\s*\d+\s*,\s*\d+\s*\)$", re.I)


def pg_type(duck: str) -> str:
    """PostgreSQL's name of DuckDB type ``duck`` (as a DuckDB message writes it)."""
    name = duck.strip()
    if name.endswith("[]"):
        return pg_type(name[:-2]) + "[]"
    if _DECIMAL.match(name):
        return "numeric"
    upper = name.upper()
    if upper in _TYPES:
        return _TYPES[upper]
    if upper.startswith(("STRUCT", "MAP", "UNION")):
        return "record"
    if upper.startswith(("VARCHAR", "CHAR")):
        return "text"
    return name.lower()


def input_type(duck: str) -> str:
    """The type name of PostgreSQL's ``invalid input syntax for type X`` for ``duck``."""
    name = pg_type(duck)
    return _INPUT.get(name, name)


def range_name(duck: str) -> str | None:
    """``smallint``/``integer``/``bigint`` for DuckDB's integer types, else None."""
    return _RANGE.get(duck.strip().upper())
