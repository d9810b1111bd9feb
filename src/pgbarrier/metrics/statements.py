"""Statement counts and durations, recorded per session without a lock, summed at scrape.

The relay's hot path pays for one statement (or one relayed batch) a ``bisect`` into the
duration buckets and three list-element increments: no lock, no dict built, no label
lookup. This is why the statement metrics are not prometheus_client Counters (whose
``labels(...)`` and ``inc()`` take locks). Rules this module keeps:

* A :class:`SessionStatements` belongs to one session, and a session is driven by one
  thread at a time (server/connection.py), so its increments need no lock. A scrape reads
  them from another thread: it may see a statement's count before its bucket, never a
  count that goes down.
* :class:`StatementTotals` holds the live sessions' stats and, per database, what ended
  sessions added (folded in at :meth:`StatementTotals.close` under the same lock a scrape
  takes, so a session is counted exactly once).
* Routes (the ``route`` label): ``relayed`` (a statement that reaches the data backend as
  the client wrote it: route kind PLAIN), ``local`` (answered by pgbarrier's own code: its
  own settings, ``rw_catalog`` reads), ``control`` (pgbarrier's control statements).
* ``sqlstate_class`` is the first two characters of the SQLSTATE, ``00`` for success.
"""

from __future__ import annotations

import threading
from bisect import bisect_left

__all__ = ["BOUNDS", "CONTROL", "LOCAL", "RELAYED", "ROUTES", "SessionStatements",
           "StatementTotals"]

RELAYED, LOCAL, CONTROL = 0, 1, 2
#: label values, indexed by the route numbers above
ROUTES = ("relayed", "local", "control")
#: duration buckets (seconds, upper bounds; +Inf is implicit), a statement's usual range
BOUNDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
          10.0, 30.0)


class SessionStatements:
    """One session's (or, folded, one database's) statement counts; see module rules."""

    __slots__ = ("database", "ok", "errors", "buckets", "sums")

    def __init__(self, database: str) -> None:
        self.database = database
        #: successes per route
        self.ok = [0, 0, 0]
        #: (route, sqlstate class) -> failures
        self.errors: dict[tuple[int, str], int] = {}
        #: per route: non-cumulative bucket counts, the last one +Inf
        self.buckets = [[0] * (len(BOUNDS) + 1) for _ in ROUTES]
        self.sums = [0.0, 0.0, 0.0]

    def ok_one(self, route: int, seconds: float) -> None:
        self.ok[route] += 1
        self.buckets[route][bisect_left(BOUNDS, seconds)] += 1
        self.sums[route] += seconds

    def ok_many(self, route: int, count: int, seconds: float) -> None:
        """``count`` statements of one batch that took ``seconds`` in all (one observation)."""
        self.ok[route] += count
        self.buckets[route][bisect_left(BOUNDS, seconds)] += 1
        self.sums[route] += seconds

    def failed(self, route: int, sqlstate: str, seconds: float) -> None:
        key = (route, sqlstate[:2])
        self.errors[key] = self.errors.get(key, 0) + 1
        self.buckets[route][bisect_left(BOUNDS, seconds)] += 1
        self.sums[route] += seconds

    def add(self, other: SessionStatements) -> None:
        for r in range(len(ROUTES)):
            self.ok[r] += other.ok[r]
            self.sums[r] += other.sums[r]
            mine, theirs = self.buckets[r], other.buckets[r]
            for i, n in enumerate(theirs):
                mine[i] += n
        for key, n in dict(other.errors).items():
            self.errors[key] = self.errors.get(key, 0) + n


class StatementTotals:
    """Every session's statement stats of one App (see module rules)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[SessionStatements] = set()
        self._ended: dict[str, SessionStatements] = {}

    def open(self, database: str) -> SessionStatements:
        stats = SessionStatements(database)
        with self._lock:
            self._live.add(stats)
        return stats

    def close(self, stats: SessionStatements) -> None:
        with self._lock:
            if stats in self._live:
                self._live.discard(stats)
                self._ended.setdefault(stats.database, SessionStatements(stats.database)).add(stats)

    def by_database(self) -> dict[str, SessionStatements]:
        """A summed copy per database (a scrape)."""
        with self._lock:
            out: dict[str, SessionStatements] = {}
            for stats in (*self._ended.values(), *self._live):
                out.setdefault(stats.database, SessionStatements(stats.database)).add(stats)
            return out
