"""pgbarrier's Prometheus metrics: one registry per App, served on ``--metrics-port``.

A leaf package (it imports no other pgbarrier subpackage): the parts that record events
are handed this package's objects, and the state read at scrape time comes through
callables the App passes in (:class:`~pgbarrier.metrics.collector.StateCollector`).

* Events are recorded where they happen: a barrier's inject-to-collect time
  (``pgbarrier_barrier_collect_seconds``, ``pgbarrier_barriers_total``), a refresh run's
  end (``pgbarrier_refresh_runs_total``, ``pgbarrier_refresh_duration_seconds``), a
  scheduled run's start (``pgbarrier_refresh_lateness_seconds``), a meta-store write
  (``pgbarrier_meta_write_seconds``), a connection refused at start-up
  (``pgbarrier_connections_refused_total{reason}``) and each statement
  (:mod:`.statements`, summed at scrape time).
* Gauges are read at scrape time from the live state (connections, the connection
  limits and slots used, pause states, committed epochs, jobs by status): nothing is
  updated on each change.
* The registry is the App's own (never prometheus_client's global one), so several Apps
  in one process do not collide; the process collector's ``process_*`` metrics are in it.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.process_collector import ProcessCollector

from pgbarrier.metrics.statements import StatementTotals

__all__ = ["Metrics", "REFUSAL_REASONS"]

#: why a connection is refused at start-up (pgbarrier.server.listener)
REFUSAL_REASONS = ("too_many_clients", "reserved_connections", "connections_served",
                   "not_leader", "startup_timeout")

#: barrier inject-to-collect and meta-store writes: milliseconds, mostly
_FAST = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: refresh runs and their lateness: from milliseconds to many minutes
_SLOW = (0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0,
         1800.0, 3600.0)


class Metrics:
    """One App's registry and the event metrics recorded into it."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        reg = self.registry
        ProcessCollector(registry=reg)
        self.statements = StatementTotals()
        self.barrier_collect = Histogram(
            "pgbarrier_barrier_collect_seconds",
            "Time from a barrier's injection to the end of its collection (durable "
            "checkpoint write, acknowledgement, listeners)", buckets=_FAST, registry=reg)
        self.barriers = Counter(
            "pgbarrier_barriers", "Barriers collected, by database and kind (barrier, "
            "checkpoint)", ["database", "kind"], registry=reg)
        self.refresh_runs = Counter(
            "pgbarrier_refresh_runs", "Batch-refresh runs ended, by database, view, trigger "
            "(schedule, manual, create, vanished) and status (succeeded, failed, cancelled)",
            ["database", "view", "trigger", "status"], registry=reg)
        self.refresh_duration = Histogram(
            "pgbarrier_refresh_duration_seconds", "Batch-refresh run durations, start to end",
            buckets=_SLOW, registry=reg)
        self.refresh_lateness = Histogram(
            "pgbarrier_refresh_lateness_seconds", "Scheduled batch-refresh runs: start time "
            "minus due time", buckets=_SLOW, registry=reg)
        self.refusals = Counter(
            "pgbarrier_connections_refused", "Connections refused at start-up, by reason: "
            "too_many_clients, reserved_connections and connections_served (53300), "
            "not_leader (57P03), startup_timeout (closed)", ["reason"], registry=reg)
        for reason in REFUSAL_REASONS:  # every reason has a series from the start
            self.refusals.labels(reason)
        self.meta_write = Histogram(
            "pgbarrier_meta_write_seconds", "Meta-store writes, from the call to its commit "
            "(group commits included)", buckets=_FAST, registry=reg)

    # -- event hooks (plain callables, handed to the parts that record them) --

    def barrier_collected(self, database: str, kind: str, seconds: float) -> None:
        self.barrier_collect.observe(seconds)
        self.barriers.labels(database, kind).inc()

    def refresh_ended(self, database: str, view: str, trigger: str, status: str,
                      seconds: float | None) -> None:
        self.refresh_runs.labels(database, view, trigger, status).inc()
        if seconds is not None:
            self.refresh_duration.observe(max(seconds, 0.0))

    def refresh_started_late(self, seconds: float) -> None:
        self.refresh_lateness.observe(max(seconds, 0.0))

    def connection_refused(self, reason: str) -> None:
        self.refusals.labels(reason).inc()

    def meta_written(self, seconds: float) -> None:
        self.meta_write.observe(seconds)
