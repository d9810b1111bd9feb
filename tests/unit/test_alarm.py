"""The due alarm pokes a database once its due time has come, by the injected clock."""

from __future__ import annotations

import threading

from pgbarrier.barrier.clock import ManualClock
from pgbarrier.jobs.alarm import DueAlarm


def test_alarm_pokes_due_databases_once_and_not_future_ones():
    clock = ManualClock(10_000)
    poked: list[str] = []
    got = threading.Event()

    def poke(db: str) -> None:
        poked.append(db)
        got.set()

    alarm = DueAlarm(clock, poke)
    try:
        alarm.set("later", 10**15)
        alarm.set("now", 9_000)
        alarm.set("now", 9_500)  # same database, both due: one poke
        assert got.wait(10)
        got.clear()
        alarm.set("also", 10_000)
        assert got.wait(10)
    finally:
        alarm.stop()
    assert poked == ["now", "also"]


def test_a_failing_poke_does_not_stop_the_alarm():
    clock = ManualClock(10_000)
    seen = threading.Event()

    def poke(db: str) -> None:
        if db == "bad":
            raise RuntimeError("database dropped")
        seen.set()

    alarm = DueAlarm(clock, poke)
    try:
        alarm.set("bad", 1)
        alarm.set("good", 2)
        assert seen.wait(10)
    finally:
        alarm.stop()
