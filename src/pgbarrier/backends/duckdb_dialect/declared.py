"""Declared types DuckDB does not keep as PostgreSQL does: lengths, numeric, precisions.

Rules this module keeps (the rules of the types themselves are their modules'):

* ``CREATE TABLE`` columns declared ``varchar(n)`` / ``char(n)`` / ``bit(n)`` get
  pgbarrier's check (:func:`length_checks`, :mod:`pgbarrier.backends.duckdb_ddl.lengths`).
* An explicit cast to ``varchar(n)`` / ``char(n)`` cuts (and pads a ``char(n)`` result
  column) as PostgreSQL's does (:func:`rewrite`, ``lengths.cast``).
* An unconstrained ``numeric`` / ``decimal`` is :data:`pgbarrier.backends.duckdb_numeric.
  STORAGE`; a number literal cast to it keeps its own width and scale
  (``duckdb_numeric.literal_type``).
* ``timestamptz(p)``, ``time(p)``, ``timetz(p)`` lose the precision DuckDB refuses; the
  catalog records it and output rounds to it.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from pgbarrier.backends.duckdb_ddl import lengths
from pgbarrier.backends.duckdb_numeric import STORAGE as NUMERIC_STORAGE, literal_type

__all__ = ["length_checks", "rewrite"]

_T = exp.DataType.Type
#: time types DuckDB refuses a precision on
_NO_PRECISION = (_T.TIMESTAMPTZ, _T.TIME, _T.TIMETZ)
#: types a length may be declared on (a bit(n) cast is DuckDB's own)
_LENGTHS = (_T.VARCHAR, _T.NVARCHAR, _T.CHAR, _T.NCHAR, _T.BPCHAR)


def length_checks(tree: exp.Expr) -> bool:
    """The columns of a ``CREATE TABLE`` that declare a length get pgbarrier's check."""
    if not isinstance(tree, exp.Create) or tree.kind != "TABLE" or \
            not isinstance(tree.this, exp.Schema):
        return False
    fired = False
    for col in tree.this.expressions:
        kind = col.args.get("kind") if isinstance(col, exp.ColumnDef) else None
        if not isinstance(kind, exp.DataType):
            continue
        check = lengths.column_check(exp.to_identifier(col.name, quoted=True).sql("duckdb"),
                                     kind)
        if check is not None:
            col.append("constraints", exp.ColumnConstraint(kind=exp.CheckColumnConstraint(
                this=sqlglot.parse_one(check, read="duckdb"))))
            fired = True
    return fired


def _result_column(node: exp.Expr) -> bool:
    """``node`` is a SELECT list item itself (perhaps aliased): its value is a result."""
    parent = node.parent
    if isinstance(parent, exp.Alias):
        node, parent = parent, parent.parent
    return isinstance(parent, exp.Select) and node.arg_key == "expressions"


def rewrite(node: exp.Expr, ctx: object = None) -> exp.Expr | None:
    if isinstance(node, exp.DataType) and node.this in _NO_PRECISION and node.expressions:
        return exp.DataType(this=node.this)
    if isinstance(node, exp.DataType) and node.this == _T.DECIMAL and not node.expressions:
        cast = node.parent
        literal = cast.this if isinstance(cast, exp.Cast) and node.arg_key == "to" else None
        exact = literal_type(literal) if literal is not None else None
        if exact is None and isinstance(literal, exp.Literal) and literal.is_string:
            return None  # no number: DuckDB's own cast fails on it, as PostgreSQL's does
        return exp.DataType.build(exact or NUMERIC_STORAGE, dialect="duckdb")
    if isinstance(node, exp.Cast) and isinstance(node.args.get("to"), exp.DataType) and \
            node.args["to"].this in _LENGTHS:
        return lengths.cast(node, _result_column(node))
    return None
