"""PostgreSQL's result types, values and ``pg_typeof`` for DuckDB's results.

DuckDB types many results differently from PostgreSQL: ``sum(int4)`` is HUGEINT (PostgreSQL:
``bigint``), ``avg(int)`` DOUBLE (``numeric``), ``length()`` BIGINT (``integer``),
``extract`` BIGINT or DOUBLE (``numeric``)... and its ``pg_typeof`` names DuckDB's types.
This package gives each result column PostgreSQL's type in the RowDescription, values to
match (text and binary), and ``pg_typeof`` PostgreSQL's answer:

* :mod:`.pgtypes` PostgreSQL's types and common-type rules, :mod:`.infer` the type of each
  select-list item, :mod:`.numeric` PostgreSQL's numeric scales, :mod:`.evaluate` exact
  values DuckDB cannot compute, :mod:`.plan` the statement's plan (cached) and how the
  DuckDB backend applies it.

The DuckDB backend asks for a plan before a query runs (``SessionCatalog.result_plan``),
runs the plan's text when it has one, and presents the result through it.
"""

from __future__ import annotations

import weakref
from typing import Any

from pgbarrier.backends.duckdb_results.plan import PlanCache, ResultPlan, may_retype, result_plan

__all__ = ["PlanCache", "ResultPlan", "may_retype", "plans_of", "result_plan"]

_CACHES: weakref.WeakKeyDictionary[Any, PlanCache] = weakref.WeakKeyDictionary()


def plans_of(owner: Any) -> PlanCache:
    """The plan cache of one database (``owner``: its schema-generation keeper)."""
    cache = _CACHES.get(owner)
    if cache is None:
        cache = _CACHES.setdefault(owner, PlanCache())
    return cache
