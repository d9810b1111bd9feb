"""Interval result columns with their months, as PostgreSQL keeps them.

DuckDB's Python API hands an ``INTERVAL`` over as a ``timedelta``, with the months folded
into 30-day days: ``interval '1 month 2 days'`` would reach the client as ``32 days``.
DuckDB's own text of an interval keeps the three fields (``1 year 2 months 2 days
03:04:05``), and it is a spelling PostgreSQL's interval input (and
:func:`pgbarrier.pgproto.types.parse_interval`) reads. Rules this module keeps:

* Only a result whose description has a top-level ``INTERVAL`` column pays anything; the
  check is on the description DuckDB gives after ``execute`` (no parse of the statement).
* Such a result of a query that has no side effects (a ``SELECT``/``WITH``/``VALUES``/
  ``TABLE``/``FROM`` statement that calls no sequence function) is run again as
  ``SELECT c1, CAST(c2 AS VARCHAR), ... FROM (<query>) AS q(c1, c2, ...)``, its pending
  first result discarded unread, and the text of each interval is read into a
  :class:`~pgbarrier.pgproto.types.Interval` (months, days and microseconds apart, as
  PostgreSQL keeps ``-2 days +01:00:00``), which the wire encodes in text and binary as
  PostgreSQL does.
* Anything else (``INSERT ... RETURNING`` an interval, an ``INTERVAL[]`` column) keeps
  DuckDB's ``timedelta`` (months as 30 days).
* The columnar path (``duckdb_batches``) runs such a query as :func:`parts_query`
  instead: each interval column as a struct of its three fields
  (:data:`pgbarrier.pgproto.columnar.INTERVAL_PARTS`, int64 each, by DuckDB's
  ``datepart``), which the columnar writers print a column at a time. Not DuckDB's
  Arrow interval: that holds the time in nanoseconds in an int64, which wraps past
  2,562,047 hours (PostgreSQL's intervals reach 2,562,047,788).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pgbarrier.pgproto import types as pgt

__all__ = ["interval_indexes", "months_query", "months_rows", "parts_query"]


def interval_indexes(description: Sequence[Sequence[Any]] | None) -> tuple[int, ...]:
    """Positions of the top-level ``INTERVAL`` columns of a DuckDB cursor description."""
    return tuple(i for i, d in enumerate(description or ()) if str(d[1]) == "INTERVAL")


def months_query(sql: str, width: int, intervals: tuple[int, ...]) -> str:
    """``sql`` (a side-effect-free query of ``width`` columns) with its interval columns
    as DuckDB's text of them."""
    body = sql.rstrip().rstrip(";")
    names = [f"c{i}" for i in range(width)]
    cols = ", ".join(f"CAST({n} AS VARCHAR)" if i in intervals else n
                     for i, n in enumerate(names))
    return f"SELECT {cols} FROM ({body}\n) AS _pgb_months({', '.join(names)})"


def parts_query(sql: str, width: int, intervals: tuple[int, ...]) -> str:
    """``sql`` (a side-effect-free query of ``width`` columns) with each interval column as
    ``{months, days, micros}``: exact for every interval DuckDB holds (the hours times
    3,600,000,000 fit an int64 as the microseconds do)."""
    body = sql.rstrip().rstrip(";")
    names = [f"c{i}" for i in range(width)]

    def parts(n: str) -> str:
        return (f"{{'months': datepart('year', {n}) * 12 + datepart('month', {n}), "
                f"'days': datepart('day', {n}), "
                f"'micros': datepart('hour', {n}) * 3600000000 "
                f"+ datepart('minute', {n}) * 60000000 + datepart('microseconds', {n})}} AS {n}")
    cols = ", ".join(parts(n) if i in intervals else n for i, n in enumerate(names))
    return f"SELECT {cols} FROM ({body}\n) AS _pgb_parts({', '.join(names)})"


def months_rows(fetch: Callable[[int], list[tuple[Any, ...]]], intervals: tuple[int, ...]
                ) -> Callable[[int], list[tuple[Any, ...]]]:
    """``fetch`` of a :func:`months_query` result, its interval texts decoded."""
    def decoded(n: int) -> list[tuple[Any, ...]]:
        rows = fetch(n)
        out = []
        for row in rows:
            values = list(row)
            for i in intervals:
                if values[i] is not None:
                    values[i] = pgt.parse_interval(values[i])
            out.append(tuple(values))
        return out
    return decoded
