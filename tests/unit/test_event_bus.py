"""The event bus (pgbarrier.events) and DuckDB's LISTEN/NOTIFY mailboxes (duckdb_notify):
bounded, never blocking the publisher, PostgreSQL's transaction rules."""

from __future__ import annotations

import datetime as dt
import threading
import time

import pytest

from pgbarrier import events
from pgbarrier.backends import duckdb_notify
from pgbarrier.backends.duckdb_notify import Hub
from pgbarrier.errors import PgError
from pgbarrier.jobs.history import RefreshRun

T0 = dt.datetime(2026, 12, 3, 10, 0, tzinfo=dt.timezone.utc)


def _run(**changes) -> RefreshRun:
    base = dict(database="dev", job="v", run_id=7, trigger="schedule", started_at=T0,
                target_epoch=123 << 16, status="failed",
                finished_at=T0 + dt.timedelta(milliseconds=1500), rows=None,
                error="invalid input syntax for type integer: \"x\"")
    base.update(changes)
    return RefreshRun(**base)


def test_refresh_payload_fields():
    assert events.refresh_payload(_run()) == {
        "database": "dev", "view": "v", "run_id": 7, "trigger": "schedule",
        "status": "failed", "sqlstate": None, "rows": None, "duration_ms": 1500.0,
        "epoch": 123 << 16}
    ok = events.refresh_payload(_run(status="succeeded", rows=3, error=None))
    assert (ok["status"], ok["rows"], ok["sqlstate"]) == ("succeeded", 3, None)
    assert events.refresh_payload(_run(error="failed (SQLSTATE 22P02)"))["sqlstate"] == "22P02"


def test_refresh_payload_reads_sqlstate_and_duration_when_the_run_has_them():
    class WithFields:
        def __init__(self, run: RefreshRun) -> None:
            self.__dict__.update(run.__dict__)
            self.sqlstate, self.duration_ms = "42P01", 12.5

    got = events.refresh_payload(WithFields(_run()))
    assert (got["sqlstate"], got["duration_ms"]) == ("42P01", 12.5)


def test_barrier_payload():
    assert events.barrier_payload("dev", "pause", "alice", reason="load",
                                  resumes_at=T0) == {
        "database": "dev", "view": None, "event": "pause", "by": "alice", "reason": "load",
        "resumes_at": "2026-12-03T10:00:00+00:00"}


def test_publish_never_blocks_and_drops_the_oldest_when_full():
    entered, release = threading.Event(), threading.Event()
    delivered: list[tuple[str, str, str]] = []

    def carrier(database: str, channel: str, text: str) -> None:
        entered.set()
        release.wait(30)
        delivered.append((database, channel, text))

    bus = events.EventBus(carrier, capacity=3)
    bus.start()
    try:
        bus.publish("dev", "c", {"n": 0})
        assert entered.wait(30), "the carrier took the first event"
        started = time.monotonic()
        for n in range(1, 6):  # 1 and 2 are dropped: the queue keeps 3, 4, 5
            bus.publish("dev", "c", {"n": n})
        assert time.monotonic() - started < 5, "publish did not wait for the carrier"
        assert bus.dropped == 2
    finally:
        release.set()
        bus.stop()
    assert [text for _d, _c, text in delivered] == \
        ['{"n": 0}', '{"n": 3}', '{"n": 4}', '{"n": 5}']


def test_a_failing_carrier_loses_one_event_not_the_bus():
    delivered: list[str] = []
    done = threading.Event()

    def carrier(database: str, channel: str, text: str) -> None:
        if text == '{"n": 1}':
            raise PgError("upstream down", sqlstate="08006")
        delivered.append(text)
        if text == '{"n": 2}':
            done.set()

    bus = events.EventBus(carrier)
    bus.start()
    try:
        for n in range(3):
            bus.publish("dev", "c", {"n": n})
        assert done.wait(30)
    finally:
        bus.stop()
    assert delivered == ['{"n": 0}', '{"n": 2}']


# -- DuckDB's LISTEN / NOTIFY --------------------------------------------------------------


def _box(hub: Hub, pid: int, database: str = "dev"):
    return hub.mailbox(database, lambda: pid)


def test_notify_reaches_listeners_of_the_channel_and_database_only():
    hub = Hub()
    a, b, elsewhere = _box(hub, 1), _box(hub, 2), _box(hub, 3, "other")
    woken = []
    a.wake = lambda: woken.append("a")
    a.listen("c", in_block=False)
    b.listen("d", in_block=False)
    elsewhere.listen("c", in_block=False)
    b.notify("c", "hi", in_block=False)
    assert a.take() == [(2, "c", "hi")] and woken == ["a"]
    assert b.take() == [] and elsewhere.take() == []
    a.notify("c", "me", in_block=False)
    assert a.take() == [(1, "c", "me")], "the sender hears itself"


def test_block_actions_take_effect_at_commit_and_never_after_rollback():
    hub = Hub()
    a, b = _box(hub, 1), _box(hub, 2)
    a.listen("c", in_block=True)
    b.notify("c", "before", in_block=False)
    assert a.take() == [], "not listening before the commit"
    a.transaction_ended(committed=True)
    b.notify("c", "x", in_block=True)
    b.notify("c", "x", in_block=True)
    b.notify("c", "y", in_block=True)
    assert a.take() == []
    b.transaction_ended(committed=True)
    assert a.take() == [(2, "c", "x"), (2, "c", "y")], "identical ones once, in order"
    b.notify("c", "z", in_block=True)
    b.transaction_ended(committed=False)
    a.unlisten(None, in_block=True)
    a.transaction_ended(committed=False)
    b.notify("c", "still", in_block=False)
    assert a.take() == [(2, "c", "still")], "the rolled-back NOTIFY and UNLISTEN * are gone"
    a.unlisten(None, in_block=False)
    b.notify("c", "gone", in_block=False)
    assert a.take() == []


def test_the_inbox_is_bounded_and_drops_the_oldest(monkeypatch):
    monkeypatch.setattr(duckdb_notify, "INBOX_NOTIFICATIONS", 3)
    hub = Hub()
    a, b = _box(hub, 1), _box(hub, 2)
    a.listen("c", in_block=False)
    for n in range(5):
        b.notify("c", str(n), in_block=False)
    assert [p for _pid, _c, p in a.take()] == ["2", "3", "4"]
    assert a.dropped == 2


@pytest.mark.parametrize("sql,message", [
    ("LISTEN", 'syntax error at end of input'),
    ("LISTEN a b", 'syntax error at or near "b"'),
    ("NOTIFY a, b", 'syntax error at or near "b"'),
    ('LISTEN ""', 'zero-length delimited identifier at or near """"'),
])
def test_statement_syntax(sql, message):
    with pytest.raises(PgError) as e:
        duckdb_notify.run(sql, sql.split()[0], _box(Hub(), 1), in_block=False)
    assert (e.value.sqlstate, e.value.message) == ("42601", message)
