"""PostgreSQL's unconstrained ``numeric`` on DuckDB.

PostgreSQL's ``numeric`` without precision keeps any value exactly and prints it with the
scale it has. DuckDB has no such type: a plain ``DECIMAL`` is ``DECIMAL(18,3)``, so
``1.23456`` became ``1.235`` — data lost on the way in. Rules this module keeps:

* An unconstrained ``numeric`` / ``decimal`` (a column, a cast) is stored as
  :data:`STORAGE`, ``DECIMAL(38,10)``: 28 digits before the point, 10 after. A value with
  more fractional digits is rounded to 10 (PostgreSQL keeps them all); one with more
  than 28 integer digits is PostgreSQL's ``22003 numeric field overflow``. The catalog
  shows the column as ``numeric`` (:mod:`pgbarrier.backends.pgcatalog.declared`).
* Such a value is printed without the trailing zeros of the storage scale
  (:func:`natural_converter` on the row path, ``pgproto.columnar`` on the columnar one:
  a ``DECIMAL(38,s)``, ``s`` >= 10, sent as ``numeric`` without a modifier), text and
  binary alike: ``1.5`` prints ``1.5``, not
  ``1.5000000000``. A value written with trailing zeros (``10.00``) prints as ``10``:
  PostgreSQL keeps each value's own scale, DuckDB keeps none.
* A literal cast to ``numeric`` (``1.50::numeric``, ``'2.5'::numeric``) keeps its digits
  and its scale, as PostgreSQL's does: it becomes a ``DECIMAL`` of exactly its width and
  scale (:func:`literal_type`), so it prints ``1.50`` and its arithmetic has PostgreSQL's
  scales (DuckDB adds scales as PostgreSQL does).
* Which results are such values is read from DuckDB's result type: a ``DECIMAL(38,s)``
  with ``s`` of 10 or more is only ever made from :data:`STORAGE` (DuckDB types a
  literal ``1.50`` as ``DECIMAL(3,2)``, which keeps its scale, as PostgreSQL's), and the
  column is sent as ``numeric`` without a type modifier.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from pgbarrier.pgproto import types as pgt
from pgbarrier.pgproto.types import natural_numeric as natural

__all__ = ["STORAGE", "literal_type", "natural", "natural_converter"]

#: DuckDB's type for PostgreSQL's unconstrained numeric
STORAGE = "DECIMAL(38,10)"
_WIDE = re.compile(r"DECIMAL\(38,\s*(\d+)\)\Z")
_NUMBER = re.compile(r"\s*[+-]?(\d*)(?:\.(\d*))?\s*\Z")

Rows = Callable[[list[tuple[Any, ...]]], list[tuple[Any, ...]]]


def literal_type(node: Any) -> str | None:
    """``DECIMAL(p,s)`` holding the number literal ``node`` exactly with its own scale (a
    sqlglot number or string literal, or its negation), None for anything else or a
    number too wide for DuckDB."""
    from sqlglot import exp

    if isinstance(node, exp.Neg):
        node = node.this
    if not isinstance(node, exp.Literal):
        return None
    m = _NUMBER.match(node.this)
    if m is None or not (m.group(1) or m.group(2)):
        return None
    whole, frac = m.group(1).lstrip("0"), m.group(2) or ""
    width = max(len(whole) + len(frac), len(frac) + 1, 1)
    if width > 38:
        return None
    return f"DECIMAL({width},{len(frac)})"


def natural_converter(duck_types: Sequence[Any], columns: Sequence[Any],
                      skip: frozenset[int] = frozenset()) -> Rows | None:
    """A converter of result rows printing the unconstrained numerics among ``columns``
    (whose DuckDB types are ``duck_types``; not those in ``skip``, whose values are
    PostgreSQL's already) without their storage zeros; None when there are none."""
    indexes = [i for i, (t, c) in enumerate(zip(duck_types, columns))
               if i not in skip and c.type_oid == pgt.NUMERIC and c.type_modifier == -1
               and (m := _WIDE.match(str(t))) is not None and int(m.group(1)) >= 10]
    if not indexes:
        return None

    def convert(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
        out = []
        for row in rows:
            values = list(row)
            for i in indexes:
                values[i] = natural(values[i])
            out.append(tuple(values))
        return out
    return convert
