"""PostgreSQL functions DuckDB has under another name or not at all.

Rules this module keeps:

* ``every(x)`` is ``bool_and(x)`` (the SQL standard's name PostgreSQL also takes).
* ``btrim(s [, chars])`` and ``initcap(s)``: sqlglot reads them as its ``Trim`` and
  ``Initcap`` and writes DuckDB's equivalents (``trim``; an ``initcap`` built of list
  functions whose word separators are blanks and ASCII punctuation, as PostgreSQL's are
  any character that is not a letter or digit); this module only marks such a call as
  needing that translation (DuckDB has neither name).
* Each name is in the gate (:mod:`.gate`), so a statement without one is not parsed.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect.typeof import Context


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if isinstance(node, exp.Anonymous) and node.name.lower() == "every" and \
            len(node.expressions) == 1:
        return exp.LogicalAnd(this=node.expressions[0].copy())
    if isinstance(node, (exp.Initcap, exp.Trim)):
        return node.copy()  # sqlglot's DuckDB form of it (a trim() is the same either way)
    return None
