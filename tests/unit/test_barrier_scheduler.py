"""The barrier scheduler: every database on a fixed number of threads; durable work off the
injecting thread, in order per database; a slow database does not hold up the others."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from pgbarrier.barrier import (
    BarrierInfo,
    BarrierManager,
    CreateBatchRefreshJob,
    Custom,
    DatabaseSnapshot,
    Flush,
    ManualClock,
    Pause,
)
from pgbarrier.barrier.notifier import Notifier
from pgbarrier.barrier.scheduler import DEFAULT_COLLECTORS
from pgbarrier.errors import InternalError, ObjectNotInPrerequisiteState

T0 = 1_714_564_800_000  # 2024-05-01T12:00:00Z
WAIT = 10.0


class Gate:
    """Blocks ``on_commit`` of one database until opened (test-only: a slow meta store)."""

    def __init__(self, database: str) -> None:
        self.database = database
        self.entered = threading.Event()
        self.open = threading.Event()

    def __call__(self, snap: DatabaseSnapshot) -> None:
        if snap.name == self.database and not self.open.is_set():
            self.entered.set()
            assert self.open.wait(WAIT)


@pytest.fixture
def gate() -> Iterator[Gate]:
    g = Gate("slow")
    yield g
    g.open.set()  # never leave a collector blocked


def test_threads_do_not_grow_with_databases() -> None:
    before = threading.active_count()
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000)
    for i in range(300):
        mgr.add_database(f"db{i}")
    mgr.start()
    try:
        assert len(mgr.threads()) == 1 + DEFAULT_COLLECTORS
        assert threading.active_count() - before == 1 + DEFAULT_COLLECTORS
        notifiers = [mgr.schedule(f"db{i}", Flush()) for i in range(300)]
        assert all(isinstance(n.wait(WAIT), int) for n in notifiers)
    finally:
        mgr.stop()
    assert not any(t.is_alive() for t in mgr.threads())


def test_a_slow_commit_of_one_database_does_not_delay_another(gate: Gate) -> None:
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, on_commit=gate)
    mgr.add_database("slow")
    mgr.add_database("fast")
    mgr.start()
    try:
        stuck = mgr.schedule("slow", Pause(by="alice"))
        assert gate.entered.wait(WAIT)
        stuck.wait_started(WAIT)  # injected at once; only its durable write waits
        for _ in range(5):
            assert mgr.flush("fast", timeout=WAIT) > 0
        assert not stuck.collected.done()  # not acknowledged before its write
        also = mgr.schedule("slow", Flush())  # injected, collected after the first
        also.wait_started(WAIT)
        gate.open.set()
        assert stuck.wait(WAIT).changed is True
        assert also.wait(WAIT) == also.wait_started(0).prev_epoch
    finally:
        mgr.stop()


def test_periodic_barriers_wait_while_one_is_being_collected(gate: Gate) -> None:
    fast_barriers = threading.Event()
    counted: list[BarrierInfo] = []

    def listener(info: BarrierInfo) -> None:
        if info.database == "fast":
            counted.append(info)
            if len(counted) >= 20:
                fast_barriers.set()

    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=1, on_commit=gate)
    mgr.add_listener(listener)
    mgr.add_database("slow")
    mgr.add_database("fast")
    mgr.start()
    try:
        assert gate.entered.wait(WAIT)  # slow's first periodic barrier is being collected
        assert fast_barriers.wait(WAIT)  # 20 intervals went by for "fast"
        with mgr._scheduler._cond:
            slow = mgr._scheduler._dbs["slow"]
            assert slow.state.barrier_count == 1  # no pile-up behind the slow write
        gate.open.set()
        assert mgr.flush("slow", timeout=WAIT) > 0
    finally:
        mgr.stop()


def test_on_collect_runs_off_the_injecting_thread_after_on_commit() -> None:
    events: list[tuple[str, str, int]] = []

    def on_commit(snap: DatabaseSnapshot) -> None:
        events.append(("commit", threading.current_thread().name, snap.committed_epoch or 0))

    def apply(info: BarrierInfo) -> str:
        events.append(("apply", threading.current_thread().name, info.prev_epoch))
        return "from apply"

    def collect(info: BarrierInfo) -> str:
        events.append(("collect", threading.current_thread().name, info.prev_epoch))
        return "from collect"

    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, on_commit=on_commit)
    mgr.add_database("dev")
    mgr.start()
    try:
        n = mgr.schedule("dev", Custom("both", apply, on_collect=collect))
        assert n.wait(WAIT) == "from collect"
        only = mgr.schedule("dev", Custom("apply only", apply))
        assert only.wait(WAIT) == "from apply"
    finally:
        mgr.stop()
    epoch = n.wait_started(0).prev_epoch
    assert [(e[0], e[2]) for e in events[:3]] == [
        ("apply", epoch), ("commit", epoch), ("collect", epoch)]
    assert events[0][1] == "pgbarrier-barrier"
    assert events[1][1].startswith("pgbarrier-collect-")
    assert events[2][1] == events[1][1]


def test_a_failing_on_collect_fails_its_command_and_the_barrier_stays() -> None:
    def boom(info: BarrierInfo) -> object:
        raise InternalError("meta store is down")

    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000)
    mgr.add_database("dev")
    mgr.start()
    try:
        n = mgr.schedule("dev", Custom("write", on_collect=boom))
        with pytest.raises(InternalError, match="meta store is down"):
            n.wait(WAIT)
        info = n.wait_started(0)
        assert mgr.snapshot("dev").committed_epoch == info.prev_epoch
        assert mgr.flush("dev", timeout=WAIT) == info.curr_epoch
    finally:
        mgr.stop()


def test_a_failed_commit_skips_on_collect() -> None:
    calls: list[BarrierInfo] = []

    def on_commit(snap: DatabaseSnapshot) -> None:
        if not calls:
            raise InternalError("meta store is down")

    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, on_commit=on_commit)
    mgr.add_database("dev")
    mgr.start()
    try:
        n = mgr.schedule("dev", Custom("write", on_collect=calls.append))
        with pytest.raises(InternalError):
            n.wait(WAIT)
        assert calls == []
        calls.append(n.wait_started(0))  # from now on on_commit succeeds
        assert mgr.schedule("dev", Custom("write", on_collect=calls.append)).wait(WAIT) is None
        assert len(calls) == 2
    finally:
        mgr.stop()


def test_a_pause_whose_record_failed_is_undone_in_memory() -> None:
    """Issue 28: the meta store refusing a PAUSE's record (a full disk) fails the PAUSE, and
    nothing shows it: the database is running, and the next checkpoint records running."""
    from pgbarrier.errors import PgError

    recorded: list[bool] = []
    failing = threading.Event()
    failing.set()

    def on_commit(snap: DatabaseSnapshot) -> None:
        if failing.is_set():
            raise PgError("could not write to the meta store", sqlstate="53100")
        recorded.append(snap.paused)

    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, on_commit=on_commit)
    mgr.add_database("dev")
    mgr.start()
    try:
        with pytest.raises(PgError) as info:
            mgr.pause("dev", "alice", timeout=WAIT)
        assert info.value.sqlstate == "53100"
        assert not mgr.snapshot("dev").paused
        failing.clear()
        mgr.schedule("dev", Flush()).wait(WAIT)
        assert recorded == [False]
        mgr.pause("dev", "alice", timeout=WAIT)
        assert mgr.snapshot("dev").paused and recorded[-1] is True
    finally:
        mgr.stop()


def test_create_job_refused_while_paused_runs_no_callback() -> None:
    calls: list[BarrierInfo] = []
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000)
    mgr.add_database("dev")
    mgr.start()
    try:
        mgr.pause("dev", "alice", timeout=WAIT)
        n = mgr.schedule("dev", CreateBatchRefreshJob("mv", calls.append, calls.append))
        with pytest.raises(ObjectNotInPrerequisiteState):
            n.wait(WAIT)
        mgr.resume("dev", "alice", timeout=WAIT)
        m = mgr.schedule("dev", CreateBatchRefreshJob("mv", on_collect=lambda i: i.prev_epoch))
        assert m.wait(WAIT) == m.wait_started(0).prev_epoch
    finally:
        mgr.stop()
    assert calls == []


def test_commands_keep_arrival_order_per_database() -> None:
    seen: dict[str, list[int]] = {"a": [], "b": []}
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000)
    mgr.add_database("a")
    mgr.add_database("b")
    notifiers = []
    for i in range(50):  # queued before start: one barrier each, in order, once running
        for db in ("a", "b"):
            notifiers.append(mgr.schedule(db, Custom(
                "note", lambda _info, db=db, i=i: seen[db].append(i),
                on_collect=lambda _info, i=i: i)))
    mgr.start()
    try:
        assert [n.wait(WAIT) for n in notifiers] == [i for i in range(50) for _ in "ab"]
    finally:
        mgr.stop()
    assert seen == {"a": list(range(50)), "b": list(range(50))}
    epochs = [n.wait_started(0).curr_epoch for n in notifiers[::2]]
    assert epochs == sorted(set(epochs))


def test_requested_checkpoints_are_injected_at_once() -> None:
    kinds: list[str] = []
    two = threading.Event()

    def listener(info: BarrierInfo) -> None:
        kinds.append(info.kind)
        if len(kinds) == 2:
            two.set()

    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, checkpoint_frequency=5)
    mgr.add_listener(listener)
    mgr.add_database("dev")
    mgr.request_checkpoints("nope", 2)  # unknown database: only a hint, ignored
    mgr.start()
    try:
        mgr.request_checkpoints("dev", 2)
        assert two.wait(WAIT)
        assert kinds == ["checkpoint", "checkpoint"]
    finally:
        mgr.stop()
    mgr.request_checkpoints("dev", 1)  # stopped: ignored


def test_remove_database_waits_for_its_barrier_being_collected(gate: Gate) -> None:
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, on_commit=gate)
    mgr.add_database("slow")
    mgr.start()
    try:
        n = mgr.schedule("slow", Flush())
        assert gate.entered.wait(WAIT)
        queued = threading.Event()
        removed = threading.Event()

        def remove() -> None:
            queued.set()
            mgr.remove_database("slow")
            removed.set()

        t = threading.Thread(target=remove)
        t.start()
        assert queued.wait(WAIT)
        assert not n.collected.done()
        gate.open.set()
        t.join(WAIT)
        assert removed.is_set()
        assert n.wait(0) > 0  # it was collected before remove returned
        assert not mgr.has_database("slow")
    finally:
        mgr.stop()


def test_a_command_for_an_idle_database_runs_on_its_issuers_thread() -> None:
    threads: list[str] = []

    def on_commit(snap: DatabaseSnapshot) -> None:
        threads.append(threading.current_thread().name)

    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, on_commit=on_commit)
    mgr.add_database("dev")
    mgr.start()
    try:
        assert mgr.pause("dev", "alice", timeout=WAIT).changed is True
        assert mgr.resume("dev", "alice", timeout=WAIT).changed is True
        assert mgr.flush("dev", timeout=WAIT) > 0
        # schedule() (the issuer does not wait) still hands over to the scheduler's threads
        mgr.schedule("dev", Flush()).wait(WAIT)
    finally:
        mgr.stop()
    me = threading.current_thread().name
    assert threads[:3] == [me, me, me]
    assert threads[3].startswith("pgbarrier-collect-")


def test_a_command_for_a_busy_database_waits_its_turn_on_the_collectors(gate: Gate) -> None:
    order: list[str] = []

    def note(name: str):
        def on_collect(info: BarrierInfo) -> str:
            order.append(name)
            return threading.current_thread().name
        return on_collect

    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, on_commit=gate)
    mgr.add_database("slow")
    mgr.start()
    try:
        first = mgr.schedule("slow", Custom("first", lambda i: None, on_collect=note("first")))
        assert gate.entered.wait(WAIT)  # its durable write is held: the database is busy
        done = threading.Event()
        second: list[object] = []

        def run_second() -> None:
            second.append(mgr.run("slow", Custom("second", lambda i: None,
                                                 on_collect=note("second"))).wait(WAIT))
            done.set()

        t = threading.Thread(target=run_second, name="issuer")
        t.start()
        assert not done.wait(0.2) and order == []  # queued behind the first, not run inline
        gate.open.set()
        assert first.wait(WAIT).startswith("pgbarrier-collect-")
        assert done.wait(WAIT)
        t.join(WAIT)
        assert order == ["first", "second"]
        assert str(second[0]).startswith("pgbarrier-collect-")
    finally:
        mgr.stop()


def test_commands_arriving_while_one_runs_inline_follow_it_in_order() -> None:
    order: list[str] = []
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000)
    mgr.add_database("dev")
    later: list[Notifier] = []

    def first_collect(info: BarrierInfo) -> None:
        order.append("first")
        # submitted while the first is being collected on this (the issuer's) thread
        later.append(mgr.schedule("dev", Custom("later", lambda i: None,
                                                on_collect=lambda i: order.append("later"))))
        later.append(mgr.run("dev", Custom("run", lambda i: None,
                                           on_collect=lambda i: order.append("run"))))

    mgr.start()
    try:
        mgr.run("dev", Custom("first", lambda i: None, on_collect=first_collect)).wait(WAIT)
        for n in later:
            n.wait(WAIT)
    finally:
        mgr.stop()
    assert order == ["first", "later", "run"]


def test_a_listener_dropping_the_database_it_collects_inline_does_not_deadlock() -> None:
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000)
    mgr.add_database("dev")
    dropped = threading.Event()

    def listener(info: BarrierInfo) -> None:
        if not dropped.is_set():  # the flush's barrier (no periodic one comes in 10 s)
            dropped.set()
            mgr.remove_database("dev")

    mgr.add_listener(listener)
    mgr.start()
    try:
        mgr.flush("dev", timeout=WAIT)
        assert dropped.is_set() and not mgr.has_database("dev")
    finally:
        mgr.stop()
