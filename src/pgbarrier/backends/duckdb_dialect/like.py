"""``LIKE`` / ``ILIKE`` with PostgreSQL's default escape character, the backslash.

In PostgreSQL a ``LIKE`` pattern without ``ESCAPE`` escapes with ``\\``: ``'a%' LIKE 'a\\%'``
is true, and ORMs escape a user's ``%`` and ``_`` that way (Django's ``contains``,
SQLAlchemy's ``autoescape``). DuckDB's ``LIKE`` has no escape character unless one is
given, so such a pattern matched something else, silently. Rules this module keeps:

* A ``LIKE``, ``NOT LIKE``, ``ILIKE`` or ``NOT ILIKE`` without ``ESCAPE`` gets ``ESCAPE
  '\\'`` when its pattern is a string literal holding a backslash, or is not a literal at
  all (a column, a parameter, an expression: its value may hold one). A literal without
  a backslash means the same either way and is left as it is (DuckDB's fastest ``LIKE``).
* ``LIKE ANY`` / ``ALL`` (an array of patterns) is left as DuckDB reads it.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect.typeof import Context


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if not isinstance(node, (exp.Like, exp.ILike)) or isinstance(node.parent, exp.Escape):
        return None
    pattern = node.expression
    if isinstance(pattern, (exp.Any, exp.All)) or \
            isinstance(pattern, exp.Literal) and pattern.is_string and "\\" not in pattern.name:
        return None
    return exp.Escape(this=node.copy(), expression=exp.Literal.string("\\"))
