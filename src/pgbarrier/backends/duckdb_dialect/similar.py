"""``SIMILAR TO`` with PostgreSQL's pattern language.

DuckDB reads a ``SIMILAR TO`` pattern as a regular expression (``'abc' SIMILAR TO '%b%'`` is
false there: ``%`` is no wildcard); PostgreSQL reads the SQL standard's patterns, which it
turns into a regular expression (``similar_escape`` in its ``regexp.c``). Rules this module
keeps:

* A pattern written as a string literal (and an ``ESCAPE`` literal, when there is one) is
  turned into PostgreSQL's regular expression here, and DuckDB matches that: ``%`` is
  ``.*``, ``_`` is ``.``, ``(`` opens a group that captures nothing, a bracket expression
  ``[...]`` is kept as it is, ``.``, ``^``, ``$`` and ``\\`` (when it is not the escape)
  stand for themselves, the escape character (``\\`` by default, none for ``ESCAPE ''``)
  makes the next character literal; ``|``, ``*``, ``+``, ``?``, ``{m,n}`` keep their
  meaning. The whole value must match.
* A pattern that is not a literal (a column, a parameter) is left as DuckDB reads it: a
  known difference.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect.typeof import Context


def regex(pattern: str, escape: str | None = "\\") -> str:
    """PostgreSQL's regular expression for the ``SIMILAR TO`` pattern ``pattern``."""
    out = ["^(?:"]
    after_escape = in_class = False
    for ch in pattern:
        if after_escape:
            out.append("\\" + ch)
            after_escape = False
        elif escape and ch == escape:
            after_escape = True
        elif in_class:
            out.append("\\\\" if ch == "\\" else ch)
            in_class = ch != "]"
        elif ch == "[":
            out.append(ch)
            in_class = True
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        elif ch == "(":
            out.append("(?:")
        elif ch in "\\.^$":
            out.append("\\" + ch)
        else:
            out.append(ch)
    out.append(")$")
    return "".join(out)


def _literal(node: exp.Expr | None) -> str | None:
    return node.name if isinstance(node, exp.Literal) and node.is_string else None


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if isinstance(node, exp.Escape) and isinstance(node.this, exp.SimilarTo):
        similar, escape = node.this, _literal(node.expression)
        if escape is None or len(escape) > 1:
            return None  # PostgreSQL's 22025 for a longer one: DuckDB's error stands
        pattern = _literal(similar.expression)
        if pattern is None:
            return None
        return exp.SimilarTo(this=similar.this.copy(),
                             expression=exp.Literal.string(regex(pattern, escape or None)))
    if isinstance(node, exp.SimilarTo) and not isinstance(node.parent, exp.Escape):
        pattern = _literal(node.expression)
        if pattern is None:
            return None
        return exp.SimilarTo(this=node.this.copy(), expression=exp.Literal.string(regex(pattern)))
    return None
