"""The output columns of a DuckDB plan operator, typed as PostgreSQL would type them, and
their widths: what the ``width=`` and ``Output:`` of pgbarrier's EXPLAIN are made of
(:mod:`pgbarrier.backends.duckdb_explain_plan`).

DuckDB's plan names the columns an operator returns (a scan's ``Projections``, a
projection's expressions, ``#i`` for the i-th column of its input) but not their types.
Rules this module keeps:

* A width is PostgreSQL's average width of the type (``get_typavgwidth``): a fixed-length
  type's length (1 bool, 2 int2, 4 int4 / float4 / date / oid, 8 int8 / float8 / time /
  timestamp[tz], 12 timetz, 16 interval / uuid, 64 name); ``numeric(p,s)`` 8 + 2 × (⌈p/4⌉ +
  1) (30 at most for the precisions DuckDB has); 32 for every variable-length type (text,
  varchar, bytea, json, arrays, numeric without precision). A column whose type is not
  known counts 8 (:data:`UNKNOWN_WIDTH`).
* Types come from DuckDB's (:func:`pgbarrier.backends.duckdb_types.pg_type_oid`): a table's
  columns, a ``CAST(x AS T)`` (DuckDB's own casts between its operators, ``CAST(#0 AS
  SMALLINT)`` for compression, keep the column they cast), a literal (an integer is int4, or
  int8 beyond it; a decimal numeric; a string text; ``NULL::T`` T); DuckDB's internal
  (de)compression calls pass their column through. An aggregate or window function is typed
  as PostgreSQL types it: ``count``, ``row_number``, ``rank`` int8; ``sum`` of int2/int4
  int8, of float4/float8/interval the same, else numeric; ``avg`` of a float float8, else
  numeric; ``min``, ``max``, ``first``, ``lag``, ``lead``... their argument's type;
  ``string_agg`` text; ``bool_and``/``bool_or`` bool; ``array_agg``/``list`` an array.
  Anything else is of unknown type.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from pgbarrier.backends.duckdb_types import pg_type_oid
from pgbarrier.pgproto import types as pgt

__all__ = ["REF", "UNKNOWN_WIDTH", "OutCol", "aggregated", "duck_oid", "pg_width",
           "projected", "refs", "typed"]

#: the width an output column counts when its type is unknown
UNKNOWN_WIDTH = 8
#: DuckDB's reference to its input's i-th column
REF = re.compile(r"#(\d+)")

_FIXED_WIDTH = {pgt.BOOL: 1, pgt.CHAR: 1, pgt.INT2: 2, pgt.INT4: 4, pgt.OID: 4, pgt.INT8: 8,
                pgt.FLOAT4: 4, pgt.FLOAT8: 8, pgt.DATE: 4, pgt.TIME: 8, pgt.TIMETZ: 12,
                pgt.TIMESTAMP: 8, pgt.TIMESTAMPTZ: 8, pgt.INTERVAL: 16, pgt.UUID: 16,
                pgt.NAME: 64}
_DECIMAL = re.compile(r"DECIMAL\((\d+),\s*\d+\)", re.I)
_CALL = re.compile(r"\A(\w+)\((.*)\)(?: EXPORT_STATE)?\Z", re.S)
_CAST = re.compile(r"\ACAST\((.*) AS ([A-Z][A-Z0-9_ ]*(?:\(\d+(?:,\s*\d+)?\))?(?:\[\])?)\)\Z",
                   re.S)
_INTERNAL = re.compile(r"\A__internal_(?:de)?compress\w*\((.*)\)\Z", re.S)
_INT_LITERAL = re.compile(r"\A-?\d+\Z")
_NUM_LITERAL = re.compile(r"\A-?(?:\d+\.\d*|\.\d+)(?:e[+-]?\d+)?\Z", re.I)
_TYPED_LITERAL = re.compile(r"\A(?:NULL|'(?:[^']|'')*'|-?[\d.]+)::([A-Z][A-Z0-9_ ]*)\Z")
_SUM = {pgt.INT2: pgt.INT8, pgt.INT4: pgt.INT8, pgt.FLOAT4: pgt.FLOAT4, pgt.FLOAT8: pgt.FLOAT8,
        pgt.INTERVAL: pgt.INTERVAL}
_AS_ARGUMENT = frozenset({"min", "max", "first", "last", "any_value", "arbitrary", "arg_min",
                          "arg_max", "lag", "lead", "first_value", "last_value", "nth_value"})
_FLOAT_STATS = frozenset({"percent_rank", "cume_dist", "stddev", "stddev_samp", "stddev_pop",
                          "variance", "var_samp", "var_pop", "corr"})

Show = Callable[["OutCol"], str]


@dataclass
class OutCol:
    """An output column: its name (or expression text), its relation, PostgreSQL type OID
    (None: unknown) and width."""

    name: str
    qual: str | None = None
    oid: int | None = None
    width: int = UNKNOWN_WIDTH


def pg_width(oid: int | None, duck_type: str | None = None) -> int:
    """PostgreSQL's average width of a value of the type (get_typavgwidth)."""
    if oid is None:
        return UNKNOWN_WIDTH
    fixed = _FIXED_WIDTH.get(oid)
    if fixed is not None:
        return fixed
    if oid == pgt.NUMERIC and duck_type:
        m = _DECIMAL.match(duck_type)
        if m:
            size = 8 + 2 * (math.ceil(int(m.group(1)) / 4) + 1)
            return size if size <= 32 else 32 + (size - 32) // 2
    return 32


def duck_oid(duck_type: str) -> int:
    """PostgreSQL's type OID for a DuckDB type name."""
    return pg_type_oid(duck_type.upper())


def typed(name: str, duck_type: str, qual: str | None = None) -> OutCol:
    """A column of a DuckDB type."""
    oid = duck_oid(duck_type)
    return OutCol(name, qual, oid, pg_width(oid, duck_type))


def refs(text: str, cols: list[OutCol], show: Show) -> str:
    """``#i`` in DuckDB's text named after column i of the input."""
    return REF.sub(lambda m: show(cols[int(m.group(1))])
                   if int(m.group(1)) < len(cols) else m.group(0), text)


def projected(item: str, cols: list[OutCol], used: set[int], show: Show) -> OutCol:
    """A projection's item (DuckDB's text) as an output column; ``used`` records which input
    columns named items took (the k-th ``a`` is the k-th input column called ``a``)."""
    item = item.strip()
    m = REF.fullmatch(item)
    if m and int(m.group(1)) < len(cols):
        used.add(int(m.group(1)))
        return cols[int(m.group(1))]
    m = _INTERNAL.match(item)
    if m:
        return projected(m.group(1), cols, used, show)
    m = _CAST.match(item)
    if m:
        inner = m.group(1).strip()
        if REF.fullmatch(inner):  # DuckDB's own re-typing between its operators
            return projected(inner, cols, used, show)
        col = typed(f"({refs(inner, cols, show)})::{m.group(2).lower()}", m.group(2))
        return col
    same = [i for i, c in enumerate(cols) if c.name == item]
    if same:
        index = next((i for i in same if i not in used), same[0])
        used.add(index)
        return cols[index]
    if _INT_LITERAL.match(item):
        oid = pgt.INT4 if abs(int(item)) < 2 ** 31 else pgt.INT8
        return OutCol(item, None, oid, pg_width(oid))
    if _NUM_LITERAL.match(item):
        return OutCol(item, None, pgt.NUMERIC, 32)
    if item.startswith("'") and item.endswith("'"):
        return OutCol(item, None, pgt.TEXT, 32)
    if item.upper() in ("TRUE", "FALSE"):
        return OutCol(item.lower(), None, pgt.BOOL, 1)
    m = _TYPED_LITERAL.match(item)
    if m:
        return typed(item, m.group(1))
    return OutCol(refs(item, cols, show))


def aggregated(item: str, cols: list[OutCol], show: Show) -> OutCol:
    """An aggregate or window function (DuckDB's text) as an output column."""
    text = refs(item.strip(), cols, show)
    m = _CALL.match(item.strip().split(" OVER ")[0])
    oid: int | None = None
    if m:
        fn, args = m.group(1).lower(), m.group(2)
        first = REF.match(args.replace("DISTINCT ", "").strip())
        arg = cols[int(first.group(1))] if first and int(first.group(1)) < len(cols) else None
        arg_oid = arg.oid if arg is not None else None
        if fn in ("count", "count_star", "row_number", "rank", "dense_rank", "ntile"):
            oid = pgt.INT8
        elif fn in ("sum", "sum_no_overflow"):
            oid = _SUM.get(arg_oid or 0, pgt.NUMERIC)
        elif fn in ("avg", "mean"):
            oid = pgt.FLOAT8 if arg_oid in (pgt.FLOAT4, pgt.FLOAT8) else \
                pgt.INTERVAL if arg_oid == pgt.INTERVAL else pgt.NUMERIC
        elif fn in _AS_ARGUMENT:
            if arg is not None:
                return OutCol(text, None, arg.oid, arg.width)
        elif fn in ("string_agg", "group_concat", "listagg"):
            oid = pgt.TEXT
        elif fn in ("bool_and", "bool_or", "every"):
            oid = pgt.BOOL
        elif fn in _FLOAT_STATS:
            oid = pgt.FLOAT8 if arg_oid in (pgt.FLOAT4, pgt.FLOAT8, None) else pgt.NUMERIC
        elif fn in ("list", "array_agg"):
            oid = pgt.TEXT  # an array: 32, as any variable-length type
    return OutCol(text, None, oid, pg_width(oid))
