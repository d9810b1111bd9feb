"""VALUES lists with PostgreSQL's column names: ``column1``, ``column2``...

DuckDB names the columns of a ``VALUES`` list ``col0``, ``col1``...; PostgreSQL names them
``column1``, ``column2``..., which a client sees as the result's column names (``VALUES
(1, 'a')`` in psql) and which a query may name (``SELECT v.column1 FROM (VALUES (1)) v``).
Rules this module keeps:

* A ``VALUES`` list read as a query gets PostgreSQL's names: one with an alias has the
  alias's column list completed (``AS v`` becomes ``AS v(column1, column2)``, ``AS v(x)``
  of two columns ``AS v(x, column2)``, as PostgreSQL names the rest); one without (a
  statement of its own, ``(VALUES ...)``, a scalar subquery) becomes ``SELECT * FROM
  (VALUES ...) AS "*VALUES*"(column1, ...)`` (PostgreSQL's own name for it), its
  ``ORDER BY`` / ``LIMIT`` / ``OFFSET`` moved to that SELECT.
* An ``INSERT``'s ``VALUES`` is left as it is (its rows go to the table's columns), and the
  gate (:mod:`.gate`) does not parse a statement that starts with ``INSERT`` for this.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect.typeof import Context

#: the name PostgreSQL gives an unnamed VALUES list in a query's range table
_UNNAMED = "*VALUES*"
_MOVED = ("order", "limit", "offset")


def _width(node: exp.Values) -> int:
    first = node.expressions[0] if node.expressions else None
    return len(first.expressions) if isinstance(first, exp.Tuple) else 1


def _names(have: list[exp.Expr], width: int) -> list[exp.Identifier]:
    return [*have, *(exp.to_identifier(f"column{i}") for i in range(len(have) + 1, width + 1))]


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if not isinstance(node, exp.Values) or isinstance(node.parent, exp.Insert) \
            or not node.expressions:
        return None
    width = _width(node)
    alias = node.args.get("alias")
    if alias is not None:
        have = list(alias.columns)
        if len(have) >= width:
            return None
        named = node.copy()
        named.args["alias"].set("columns", _names(have, width))
        return named
    named = node.copy()
    moved = {k: named.args.pop(k) for k in _MOVED if named.args.get(k) is not None}
    named.set("alias", exp.TableAlias(this=exp.to_identifier(_UNNAMED, quoted=True),
                                      columns=_names([], width)))
    select = exp.Select(expressions=[exp.Star()]).from_(named)
    for k, v in moved.items():
        select.set(k, v)
    return select
