"""The PostgreSQL type of an expression as written, for messages that name argument types.

Rules this module keeps:

* :func:`arg_type` types an expression the way PostgreSQL's parser sees it before choosing
  a function: an integer literal is ``integer`` (``bigint``, ``numeric`` when larger), a
  decimal one ``numeric``, a string literal and NULL ``unknown``, a cast its type (in
  PostgreSQL's words: ``character varying``, ``timestamp with time zone``), a column the
  type of its table's column (through the range table, :mod:`.scopes`); anything else is
  ``unknown`` (a choice: sqlglot cannot type it without the catalog).
"""

from __future__ import annotations

import re

from sqlglot import exp

from pgbarrier.backends.duckdb_errors import carets, scopes
from pgbarrier.backends.duckdb_errors.answer import Ctx
from pgbarrier.backends.duckdb_errors.names import pg_type


_SQL_TYPES = {
    "INT": "integer", "BIGINT": "bigint", "SMALLINT": "smallint", "TEXT": "text",
    "VARCHAR": "character varying", "CHAR": "character", "DECIMAL": "numeric",
    "DOUBLE": "double precision", "FLOAT": "real", "BOOLEAN": "boolean", "DATE": "date",
    "TIMESTAMP": "timestamp without time zone", "TIMESTAMPTZ": "timestamp with time zone",
    "TIME": "time without time zone", "INTERVAL": "interval", "JSON": "json",
    "JSONB": "jsonb", "UUID": "uuid", "VARBINARY": "bytea", "BLOB": "bytea",
}


def _sql_type(dt: exp.DataType) -> str:
    if dt.this == exp.DataType.Type.ARRAY and dt.expressions:
        return _sql_type(dt.expressions[0]) + "[]"
    return _SQL_TYPES.get(dt.this.name, dt.this.name.lower())


def arg_type(arg: exp.Expr, levels: list[list[scopes.Rte]]) -> str:
    if isinstance(arg, exp.Paren):
        return arg_type(arg.this, levels)
    if isinstance(arg, exp.Literal):
        if arg.is_string:
            return "unknown"
        text = arg.this
        if re.fullmatch(r"\d+", text):
            n = int(text)
            return "integer" if n < 2 ** 31 else "bigint" if n < 2 ** 63 else "numeric"
        return "numeric"
    if isinstance(arg, exp.Array) and arg.expressions:
        inner = arg_type(arg.expressions[0], levels)
        return ("text" if inner == "unknown" else inner) + "[]"
    if isinstance(arg, exp.Null):
        return "unknown"
    if isinstance(arg, exp.Boolean):
        return "boolean"
    if isinstance(arg, exp.Neg):
        return arg_type(arg.this, levels)
    if isinstance(arg, exp.Cast) and isinstance(arg.args.get("to"), exp.DataType):
        return _sql_type(arg.args["to"])
    if isinstance(arg, exp.Column) and isinstance(arg.this, exp.Identifier):
        name = scopes._folded(arg.this) or arg.name
        qual = arg.table or None
        for level in levels:
            for rte in level:
                if (qual is None or rte.name == qual) and name in rte.types:
                    return pg_type(rte.types[name])
    return "unknown"


def item_type(ctx: Ctx, toks: tuple[carets.Tok, ...], a: int, b: int) -> str:
    from sqlglot import parse_one

    text = (ctx.sql or "")[toks[a].start:toks[b - 1].end]
    try:
        node = parse_one(text, read="postgres")
    except Exception:  # noqa: BLE001 - an item sqlglot cannot read has no known type
        return "unknown"
    levels, _ = scopes.range_tables(ctx.sql, "\x00", None, None, ctx.columns)
    return arg_type(node, levels)
