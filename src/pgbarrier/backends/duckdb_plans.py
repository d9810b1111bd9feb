"""DuckDB plans a session keeps: a read statement run again runs its prepared plan.

DuckDB parses, binds and plans every text it is given, and for a short statement that is
most of its work (``SELECT 1``: about half of DuckDB's instructions; a BI tool's catalog
query: its view expansions). A session's read statements that come again run as
``EXECUTE`` of a plan ``PREPARE``d on the session's DuckDB connection, as PostgreSQL's
prepared statements keep theirs. Rules this module keeps:

* Only what reads and may run twice to the same effect: one statement whose first word
  is ``SELECT``, ``VALUES`` or ``TABLE``, without parameters (DuckDB's ``EXECUTE`` takes
  no Python parameters), that does not call a sequence function (a failing ``EXECUTE`` is
  run again as its own text, for DuckDB's error with its position; inside a transaction
  block, which the failure aborted, ``EXECUTE``'s own error stands, without a position).
* A text is prepared the second time the session runs it (a one-off text costs nothing),
  and only when its first run took DuckDB less than :data:`PLANNED_BELOW_S`: planning is
  most of a short statement's work, while a long one's plan saves little and holds memory.
  Statements that read pgbarrier's PostgreSQL catalog are never kept (the caller's rule:
  a psql describe query's plan is about 125 KB of views expanded, and it ran no faster
  kept). At most :data:`PLANS` plans are kept, the least recently used dropped
  (``DEALLOCATE``). Texts longer than :data:`PLANNED_TEXT` are never kept.
* DuckDB rebinds a plan by itself when the catalog changed (DDL by any session) or the
  search path did; :meth:`Plans.forget` drops them all where a session setting changed
  (time zone, search path, a DuckDB setting), so nothing planned under other settings runs.
* A text that does not prepare runs as itself (its own error); nothing is kept of it.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from time import perf_counter
from typing import Any

import duckdb

#: plans kept per session
PLANS = 32
#: a text whose first run took DuckDB longer is not planned (generous: a short statement
#: takes well under a millisecond, and tens of them under valgrind, which the benchmark of
#: instructions runs it under)
PLANNED_BELOW_S = 0.05
#: texts remembered as seen once (forgotten all at once past this)
_SEEN = 256
#: the longest text planned
PLANNED_TEXT = 8192
#: first words of the statements planned
PLANNED_WORDS = frozenset({"SELECT", "VALUES", "TABLE"})
_SIDE_EFFECTS = re.compile(r"(?i)(?:nextval|setval|currval|pgb_signal|pg_cancel_backend|"
                           r"pg_terminate_backend)\s*\(")


class Plans:
    """One session's plans: statement text -> the ``EXECUTE`` that runs it; texts seen once
    whose run was short (the candidates)."""

    __slots__ = ("_plans", "_seen", "_count")

    def __init__(self) -> None:
        self._plans: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._seen: set[str] = set()
        self._count = 0

    def run(self, cur: duckdb.DuckDBPyConnection, sql: str, in_block: bool = False) -> None:
        """Run ``sql`` (a planned word's statement, no parameters) on ``cur``; ``in_block``:
        a DuckDB transaction is open (a failing plan has aborted it: its error stands)."""
        plan = self._plans.get(sql)
        if plan is None:
            if sql not in self._seen:
                started = perf_counter()
                cur.execute(sql)
                if perf_counter() - started < PLANNED_BELOW_S:
                    if len(self._seen) >= _SEEN:
                        self._seen.clear()
                    self._seen.add(sql)
                return
            plan = self._plan(cur, sql)
            if plan is None:
                cur.execute(sql)
                return
        else:
            self._plans.move_to_end(sql)
        try:
            cur.execute(plan[0])
        except duckdb.InterruptException:
            raise  # cancelled: never run again
        except duckdb.Error:
            self._drop(cur, sql)
            if in_block:
                raise  # the failure aborted the block: a second run would say only that
            cur.execute(sql)  # DuckDB's error for the text itself, with its position

    def saw(self, sql: str, seconds: float) -> None:
        """``sql`` was run another way (the columnar path, ``duckdb_batches``) in
        ``seconds``: its next run here counts as its second."""
        if sql not in self._plans and seconds < PLANNED_BELOW_S:
            if len(self._seen) >= _SEEN:
                self._seen.clear()
            self._seen.add(sql)

    def _plan(self, cur: duckdb.DuckDBPyConnection, sql: str) -> tuple[str, str] | None:
        """Prepare a text seen once (fast) before; None when it is not to be kept."""
        self._seen.discard(sql)
        if len(sql) > PLANNED_TEXT or _SIDE_EFFECTS.search(sql) is not None:
            return None
        self._count += 1
        name = f"pgbarrier_plan_{self._count}"
        try:
            cur.execute(f"PREPARE {name} AS {sql}")
        except duckdb.Error:
            return None
        if len(self._plans) >= PLANS:
            self._drop(cur, next(iter(self._plans)))
        plan = self._plans[sql] = (f"EXECUTE {name}", name)
        return plan

    def _drop(self, cur: duckdb.DuckDBPyConnection, sql: str) -> None:
        plan = self._plans.pop(sql, None)
        if plan is not None:
            try:
                cur.execute(f"DEALLOCATE {plan[1]}")
            except duckdb.Error:
                pass

    def forget(self, cur: Any) -> None:
        """A session setting changed: no plan made before runs again."""
        if cur is None:
            self._plans.clear()
            return
        while self._plans:
            self._drop(cur, next(iter(self._plans)))
