"""``generate_series`` in a select list: one row per value, typed as PostgreSQL types it.

Rules this module keeps:

* sqlglot writes a select-list ``generate_series(...)`` (PostgreSQL's set-returning call)
  as DuckDB's ``unnest(generate_series(...))``: one row per value
  (:data:`TRANSLATED`: a statement holding one is generated for DuckDB).
* It is cast to ``integer`` when every argument is an ``integer`` literal, as PostgreSQL
  types it (DuckDB's values are ``bigint``; other arguments keep that). Dates step as
  ``timestamptz`` (:mod:`.datetimes`).
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect.typeof import Context

__all__ = ["TRANSLATED", "in_select_list", "rewrite"]

#: sqlglot's own postgres -> duckdb translation that makes a generated text worth running
TRANSLATED = (exp.ExplodingGenerateSeries,)


def in_select_list(node: exp.Expr) -> bool:
    """``node`` is (inside) an item of a SELECT's list, not a FROM item."""
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, exp.Select):
            return child.arg_key == "expressions"
        if isinstance(parent, (exp.From, exp.Join, exp.Subquery)):
            return False
        child, parent = parent, parent.parent
    return False


def _int4_args(node: exp.Expr) -> bool:
    """Every argument an integer literal PostgreSQL types ``integer``."""
    args = [a for a in node.args.values() if isinstance(a, exp.Expr)]
    return bool(args) and all(
        isinstance(a, exp.Literal) and not a.is_string and a.this.isdigit()
        and int(a.this) < 2**31 or isinstance(a, exp.Neg) and isinstance(a.this, exp.Literal)
        and a.this.this.isdigit() and int(a.this.this) <= 2**31 for a in args)


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if isinstance(node, exp.ExplodingGenerateSeries) and in_select_list(node) \
            and _int4_args(node):
        return exp.Cast(this=node.copy(), to=exp.DataType.build("INT"))
    return None
