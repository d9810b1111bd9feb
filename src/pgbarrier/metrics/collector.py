"""The scrape-time collector: gauges read from the live state, and the statement totals.

Nothing here is updated when the state changes; each scrape asks the App's callables
(barrier manager snapshots, the job registry, the listener's connections) and sums the
sessions' statement stats (:mod:`.statements`). Every database gets every connection
state and every job status as a series (0 when there is none), so a dashboard's panels
and an alert's ``== 0`` have a series to read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from pgbarrier.metrics.statements import BOUNDS, ROUTES, StatementTotals

__all__ = ["CONNECTION_STATES", "JOB_STATUSES", "DatabaseState", "StateCollector"]

#: pg_stat_activity's names for a client connection's state
CONNECTION_STATES = ("active", "idle", "idle in transaction")
#: a batch-refresh job's statuses (jobs/state.py)
JOB_STATUSES = ("creating", "idle", "refreshing", "failed", "dropping")


class DatabaseState(NamedTuple):
    name: str
    paused: bool
    committed_epoch: int | None


class StateCollector(Collector):
    """See the module docstring. Each callable is called once per scrape."""

    def __init__(self, statements: StatementTotals, *,
                 databases: Callable[[], Iterable[DatabaseState]],
                 connections: Callable[[], Iterable[tuple[str, str]]],
                 jobs: Callable[[], Iterable[tuple[str, str]]],
                 role: Callable[[], tuple[Any, ...]] | None = None,
                 suspended: Callable[[], Iterable[str]] | None = None,
                 limits: Callable[[], dict[str, int] | None] | None = None) -> None:
        self._statements = statements
        #: the listener's connection limits and their use (PgBarrierServer.limits)
        self._limits = limits
        #: (role, term, since, holder) of the process (rw_leader's row; issue 17)
        self._role = role
        self._databases = databases
        self._connections = connections
        self._jobs = jobs
        #: the database of each suspended batch-refresh view (ALTER ... SUSPEND)
        self._suspended = suspended

    def describe(self) -> list[Any]:
        return []  # collected fresh each scrape; nothing to check names against up front

    def collect(self) -> Iterable[Any]:
        dbs = list(self._databases())
        names = [d.name for d in dbs]
        paused = GaugeMetricFamily("pgbarrier_database_paused",
                                   "1 while the database is paused (PAUSE), else 0",
                                   labels=["database"])
        epoch = GaugeMetricFamily("pgbarrier_committed_epoch",
                                  "The database's last committed epoch", labels=["database"])
        for d in dbs:
            paused.add_metric([d.name], 1.0 if d.paused else 0.0)
            if d.committed_epoch is not None:
                epoch.add_metric([d.name], float(d.committed_epoch))
        yield paused
        yield epoch
        yield _by_database("pgbarrier_client_connections",
                           "Client connections past start-up, by database and state",
                           "state", CONNECTION_STATES, names, self._connections())
        yield _by_database("pgbarrier_batch_refresh_jobs",
                           "Batch-refresh jobs, by database and status",
                           "status", JOB_STATUSES, names, self._jobs())
        if self._suspended is not None:
            suspended = GaugeMetricFamily(
                "pgbarrier_batch_refresh_jobs_suspended",
                "Batch-refresh views suspended (ALTER MATERIALIZED VIEW ... SUSPEND), by database",
                labels=["database"])
            counts = dict.fromkeys(names, 0)
            for db in self._suspended():
                counts[db] = counts.get(db, 0) + 1
            for db, n in sorted(counts.items()):
                suspended.add_metric([db], float(n))
            yield suspended
        yield from self._statement_families()
        limits = self._limits() if self._limits is not None else None
        if limits is not None:
            yield from _limit_families(limits)
        if self._role is not None:
            yield from self._role_families()

    def _role_families(self) -> Iterable[Any]:
        role, term, since, _holder = self._role()
        leader = GaugeMetricFamily("pgbarrier_leader", "1 while this process leads its meta "
                                   "store (takes barriers and refreshes), else 0 (a follower)")
        leader.add_metric([], 1.0 if role == "leader" else 0.0)
        yield leader
        if term is not None:
            yield GaugeMetricFamily("pgbarrier_leader_term", "The term this process holds or "
                                    "last saw on its PostgreSQL meta store", value=float(term))
        if since is not None:
            yield GaugeMetricFamily("pgbarrier_role_since_seconds", "When this process took "
                                    "its present role (Unix time)", value=since.timestamp())

    def _statement_families(self) -> Iterable[Any]:
        totals = self._statements.by_database()
        count = CounterMetricFamily(
            "pgbarrier_statements", "Client statements ended, by database, route (relayed, "
            "local, control) and SQLSTATE class (00: success)",
            labels=["database", "route", "sqlstate_class"])
        buckets = [[0] * (len(BOUNDS) + 1) for _ in ROUTES]
        sums = [0.0] * len(ROUTES)
        for db, stats in sorted(totals.items()):
            for r, route in enumerate(ROUTES):
                count.add_metric([db, route, "00"], float(stats.ok[r]))
                sums[r] += stats.sums[r]
                for i, n in enumerate(stats.buckets[r]):
                    buckets[r][i] += n
            for (r, cls), n in sorted(stats.errors.items()):
                count.add_metric([db, ROUTES[r], cls], float(n))
        yield count
        hist = HistogramMetricFamily(
            "pgbarrier_statement_duration_seconds", "Client statement durations by route "
            "(a relayed extended-protocol batch is one observation)", labels=["route"])
        for r, route in enumerate(ROUTES):
            cumulative, running = [], 0
            for bound, n in zip((*map(_le, BOUNDS), "+Inf"), buckets[r]):
                running += n
                cumulative.append((bound, float(running)))
            hist.add_metric([route], cumulative, sum_value=sums[r])
        yield hist


#: the listener's limits as gauges: (name, key in PgBarrierServer.limits(), help)
_LIMITS = (
    ("pgbarrier_max_connections", "max_connections",
     "--max-connections: sessions at most, those authenticating included"),
    ("pgbarrier_reserved_connections", "reserved_connections",
     "--reserved-connections: of those, the slots kept for superusers and the admin CLI"),
    ("pgbarrier_connection_slots_used", "slots_used",
     "Sessions holding one of the --max-connections slots (authenticating included)"),
    ("pgbarrier_connections_served_max", "max_served",
     "Connections served at once at most, start-ups included (2 * max_connections + 10)"),
    ("pgbarrier_connections_served", "served",
     "Connections served now, start-ups included"),
)


def _limit_families(limits: dict[str, int]) -> Iterable[Any]:
    for name, key, doc in _LIMITS:
        yield GaugeMetricFamily(name, doc, value=float(limits[key]))


def _le(bound: float) -> str:
    return repr(float(bound))


def _by_database(name: str, doc: str, label: str, values: tuple[str, ...],
                 databases: list[str], items: Iterable[tuple[str, str]]) -> GaugeMetricFamily:
    counts = {(db, v): 0 for db in databases for v in values}
    for db, value in items:
        counts[(db, value)] = counts.get((db, value), 0) + 1
    family = GaugeMetricFamily(name, doc, labels=["database", label])
    for (db, value), n in sorted(counts.items()):
        family.add_metric([db, value], float(n))
    return family
