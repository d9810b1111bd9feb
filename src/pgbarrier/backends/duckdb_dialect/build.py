"""SQL building blocks the transforms share: calls, literals, arithmetic that keeps its
grouping, DuckDB SQL templates.

Rules this module keeps:

* sqlglot writes a binary node's operands as they are, without precedence parentheses, so
  :func:`add`, :func:`sub`, :func:`mul`, :func:`idiv` and :func:`mod` wrap an operand that
  is itself an operation in parentheses: ``mod(sub(m, 1), 3)`` is ``(m - 1) % 3``.
* :func:`template` parses DuckDB SQL text and replaces each unqualified column named in
  ``values`` by (a copy of) its expression: the long DuckDB expressions are written as SQL.
* Subscripts built here are 0-based (sqlglot's convention), written 1-based for DuckDB.
* :func:`raw` carries DuckDB SQL built as text (a template's many cases: an AST of that size
  costs sqlglot seconds to build and write); it is written out as it is.
"""

from __future__ import annotations

from sqlglot import exp, parse_one

__all__ = ["add", "bool_text", "first", "fn", "idiv", "lit", "mod", "mul", "num", "raw", "sub",
           "template"]


def fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def lit(text: str) -> exp.Expr:
    return exp.Literal.string(text)


def num(n: int | str) -> exp.Expr:
    return exp.Literal.number(n)


def _operand(e: exp.Expr | int) -> exp.Expr:
    if isinstance(e, int):
        return num(e) if e >= 0 else exp.Paren(this=num(e))
    if isinstance(e, (exp.Binary, exp.Neg)) and not isinstance(e, exp.Paren):
        return exp.Paren(this=e)
    return e


def add(this: exp.Expr | int, expression: exp.Expr | int) -> exp.Expr:
    return exp.Add(this=_operand(this), expression=_operand(expression))


def sub(this: exp.Expr | int, expression: exp.Expr | int) -> exp.Expr:
    return exp.Sub(this=_operand(this), expression=_operand(expression))


def mul(this: exp.Expr | int, expression: exp.Expr | int) -> exp.Expr:
    return exp.Mul(this=_operand(this), expression=_operand(expression))


def idiv(this: exp.Expr | int, expression: exp.Expr | int) -> exp.Expr:
    """Integer division truncating toward zero (C's, as PostgreSQL's code computes)."""
    return exp.IntDiv(this=_operand(this), expression=_operand(expression))


def mod(this: exp.Expr | int, expression: exp.Expr | int) -> exp.Expr:
    return exp.Mod(this=_operand(this), expression=_operand(expression))


def bool_text(value: exp.Expr) -> exp.Expr:
    """A boolean's text as PostgreSQL's ``boolout`` writes it (``t``/``f``; NULL stays
    NULL): DuckDB's cast to text writes ``true``/``false``."""
    return exp.Case().when(value.copy(), lit("t")).when(exp.Not(this=exp.Paren(
        this=value.copy())), lit("f"))


def first(value: exp.Expr) -> exp.Expr:
    """``value[1]``."""
    return exp.Bracket(this=value, expressions=[num(0)])


def template(sql: str, **values: exp.Expr) -> exp.Expr:
    tree = parse_one(sql, read="duckdb")
    for col in list(tree.find_all(exp.Column)):
        if col.name in values and not col.table:
            col.replace(values[col.name].copy())
    return tree


def raw(sql: str) -> exp.Expr:
    """DuckDB SQL text as a node sqlglot writes out verbatim."""
    return exp.Var(this=sql)
