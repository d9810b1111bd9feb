"""How a client statement is read for the translation: sqlglot's postgres dialect, with the
functions the transforms answer themselves kept as the client wrote them.

Rules this module keeps:

* :class:`PostgresText` is sqlglot's ``Postgres`` except that the functions in :data:`KEPT`
  parse to ``exp.Anonymous`` with their arguments as written: sqlglot maps several of them
  on parsing (``to_char``'s and ``to_timestamp``'s formats to strftime codes,
  ``array_length`` to DuckDB's one-argument size, ``date_part`` to ``EXTRACT``...), and a
  mapping it half-knows would answer differently from PostgreSQL. A kept function no
  transform changes is generated for DuckDB under its own name, as DuckDB runs it.
* :func:`parse` answers the single statement of ``sql``, or None when sqlglot cannot read
  it (DuckDB's own syntax: such a statement keeps its text) or it holds several.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import ParseError, TokenError

__all__ = ["KEPT", "PostgresText", "parse"]

#: functions parsed as written (lower case)
KEPT = frozenset({
    "to_char", "to_timestamp", "to_date", "to_number",
    "date_part", "date_trunc", "make_timestamp", "make_timestamptz", "justify_days",
    "justify_hours", "justify_interval",
    "array_length", "array_to_string", "string_to_array", "array_remove", "array_cat",
    "array_append", "array_prepend", "array_position", "array_positions", "array_replace",
    "array_upper", "array_lower", "array_ndims", "array_dims", "cardinality",
    "json_extract_path", "json_extract_path_text", "jsonb_extract_path",
    "jsonb_extract_path_text",
})


def _kept(name: str):
    return lambda args: exp.Anonymous(this=name, expressions=args)


class PostgresText(Postgres):
    """Postgres, with the :data:`KEPT` functions kept as written."""

    class Parser(Postgres.Parser):
        FUNCTIONS = {**Postgres.Parser.FUNCTIONS,
                     **{name.upper(): _kept(name) for name in KEPT}}
        FUNCTION_PARSERS = {k: v for k, v in Postgres.Parser.FUNCTION_PARSERS.items()
                            if k.lower() not in KEPT}


def parse(sql: str) -> exp.Expr | None:
    """The one statement of ``sql`` as sqlglot reads PostgreSQL, or None."""
    try:
        trees = sqlglot.parse(sql, read=PostgresText)
    except (ParseError, TokenError):
        return None
    if len(trees) != 1 or trees[0] is None:
        return None
    return trees[0]
