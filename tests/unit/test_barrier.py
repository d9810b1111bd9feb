"""Barrier manager: pause state, the pure per-database core, notifiers, the worker thread.

No test sleeps: the core runs on a ManualClock; thread tests wait on futures
(with a timeout only as a guard against hanging) and on events.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone

import pytest

from pgbarrier.barrier import (
    BarrierInfo,
    BarrierManager,
    CreateBatchRefreshJob,
    Custom,
    DatabaseBarrierState,
    DatabaseSnapshot,
    Flush,
    ManualClock,
    Notifier,
    Pause,
    Paused,
    PauseResult,
    Resume,
    Running,
    SystemClock,
    epoch_from_unix_ms,
    epoch_to_datetime,
    paused_error,
)
from pgbarrier.barrier import pause as pause_sm
from pgbarrier.errors import (
    AdminShutdown,
    DuplicateDatabase,
    InternalError,
    InvalidCatalogName,
    ObjectNotInPrerequisiteState,
    PgError,
)

T0 = 1_714_564_800_000  # 2024-05-01T12:00:00Z
AT0 = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
WAIT = 5.0  # guard against hangs only; every wait below resolves without it


def new_state(freq: int = 1, **kw: object) -> DatabaseBarrierState:
    return DatabaseBarrierState(
        "dev", prev_epoch=epoch_from_unix_ms(T0), checkpoint_frequency=freq, **kw  # type: ignore[arg-type]
    )


def state_key(s: DatabaseBarrierState) -> tuple[object, ...]:
    return (s.prev_epoch, s.barrier_count, s.barriers_since_checkpoint, s.pause_state,
            s.committed_epoch, s.last_barrier)


# -- clock ----------------------------------------------------------------------


def test_manual_clock_moves_only_when_told_and_may_go_backwards() -> None:
    clock = ManualClock(T0)
    assert clock.now_ms() == T0
    assert clock.advance(250) == T0 + 250
    clock.set(T0 - 10)
    assert clock.now_ms() == T0 - 10


def test_system_clock_is_unix_ms() -> None:
    before = time.time_ns() // 1_000_000
    now = SystemClock().now_ms()
    assert before <= now <= time.time_ns() // 1_000_000


# -- pause state machine ------------------------------------------------------------


def test_pause_running_database() -> None:
    state, changed = pause_sm.pause(Running(), AT0, "alice")
    assert changed is True
    assert state == Paused(at=AT0, by="alice")


def test_pause_is_idempotent_and_keeps_original_at_and_by() -> None:
    first, _ = pause_sm.pause(Running(), AT0, "alice")
    again, changed = pause_sm.pause(first, datetime(2030, 1, 1, tzinfo=timezone.utc), "bob")
    assert changed is False
    assert again is first


def test_resume_transitions() -> None:
    assert pause_sm.resume(Paused(at=AT0, by="alice")) == (Running(), True)
    assert pause_sm.resume(Running()) == (Running(), False)


def test_pause_states_are_frozen() -> None:
    with pytest.raises(AttributeError):
        Paused(at=AT0, by="a").by = "b"  # type: ignore[misc]


# -- the pure core: periodic barriers and checkpoints -------------------------------------


def test_periodic_barriers_advance_epochs_and_commit_prev_epoch_every_barrier() -> None:
    clock = ManualClock(T0)
    state = new_state(freq=1)
    start = state.prev_epoch
    infos = []
    for _ in range(3):
        clock.advance(1000)
        infos.append(state.inject(clock.now_ms()))
    assert [i.kind for i in infos] == ["checkpoint"] * 3
    assert infos[0].prev_epoch == start
    assert infos[0].curr_epoch == epoch_from_unix_ms(T0 + 1000)
    for a, b in zip(infos, infos[1:]):
        assert b.prev_epoch == a.curr_epoch
    assert state.committed_epoch == infos[-1].prev_epoch
    assert state.prev_epoch == infos[-1].curr_epoch
    assert state.barrier_count == 3
    snap = state.snapshot()
    assert snap.committed_at == epoch_to_datetime(infos[-1].prev_epoch)


def test_checkpoint_frequency_three() -> None:
    clock = ManualClock(T0)
    state = new_state(freq=3)
    infos: list[BarrierInfo] = []
    committed: list[int | None] = []
    for _ in range(7):
        infos.append(state.inject(clock.advance(1000)))
        committed.append(state.committed_epoch)
    assert [i.kind for i in infos] == ["barrier", "barrier", "checkpoint"] * 2 + ["barrier"]
    c1, c2 = infos[2].prev_epoch, infos[5].prev_epoch
    assert committed == [None, None, c1, c1, c1, c2, c2]


def test_flush_forces_a_checkpoint_and_returns_committed_epoch() -> None:
    clock = ManualClock(T0)
    state = new_state(freq=3)
    clock.advance(1000)
    state.inject(clock.now_ms())  # plain barrier, nothing committed
    assert state.committed_epoch is None
    info = state.inject(clock.now_ms(), Flush())
    assert info.kind == "checkpoint"
    assert state.last_result == state.committed_epoch == info.prev_epoch
    # the periodic count restarts after a forced checkpoint
    kinds = [state.inject(clock.advance(1000)).kind for _ in range(3)]
    assert kinds == ["barrier", "barrier", "checkpoint"]


def test_a_standing_clock_still_moves_epochs() -> None:
    state = new_state()
    a = state.inject(T0)
    b = state.inject(T0)
    c = state.inject(T0 - 5000)
    assert a.curr_epoch < b.curr_epoch < c.curr_epoch


def test_state_rejects_bad_configuration() -> None:
    with pytest.raises(ValueError):
        new_state(freq=0)
    with pytest.raises(ValueError):
        DatabaseBarrierState("dev", prev_epoch=10, committed_epoch=11)


# -- the pure core: commands -----------------------------------------------------------


def test_pause_command_records_at_and_by_and_is_idempotent() -> None:
    clock = ManualClock(T0)
    state = new_state(freq=3)
    info = state.inject(clock.now_ms(), Pause(by="alice"))
    assert info.paused is True
    assert info.kind == "checkpoint"  # commands commit what they changed
    assert state.last_result == PauseResult(changed=True, state=Paused(at=AT0, by="alice"))

    clock.advance(60_000)
    state.inject(clock.now_ms(), Pause(by="bob"))
    assert state.last_result == PauseResult(changed=False, state=Paused(at=AT0, by="alice"))
    snap = state.snapshot()
    assert (snap.paused, snap.paused_at, snap.paused_by) == (True, AT0, "alice")


def test_barriers_keep_flowing_while_paused() -> None:
    clock = ManualClock(T0)
    state = new_state()
    state.inject(clock.now_ms(), Pause(by="alice"))
    before = state.prev_epoch
    info = state.inject(clock.advance(1000))
    assert info.paused is True
    assert info.curr_epoch > before
    assert state.committed_epoch == info.prev_epoch


def test_resume_command() -> None:
    state = new_state(pause=Paused(at=AT0, by="alice"))
    info = state.inject(T0, Resume(by="bob"))
    assert info.paused is False
    assert state.last_result == PauseResult(changed=True, state=Running())
    state.inject(T0, Resume(by="bob"))
    assert state.last_result == PauseResult(changed=False, state=Running())


def test_create_batch_refresh_job_rejected_while_paused_and_nothing_changes() -> None:
    clock = ManualClock(T0)
    state = new_state()
    state.inject(clock.now_ms(), Pause(by="alice"))
    calls: list[BarrierInfo] = []
    before = state_key(state)

    clock.advance(1000)
    with pytest.raises(ObjectNotInPrerequisiteState) as ei:
        state.inject(clock.now_ms(), CreateBatchRefreshJob("mv1", calls.append))
    err = ei.value
    assert err.sqlstate == "55000"
    assert err.message == "cannot create batch refresh job while database barrier is paused"
    assert err.detail == 'database "dev" was paused at 2024-05-01 12:00:00+00 by alice'
    assert err.hint == "Resume the database with ALTER DATABASE dev RESUME, then retry."
    assert calls == []
    assert state_key(state) == before


def test_create_batch_refresh_job_accepted_after_resume() -> None:
    clock = ManualClock(T0)
    state = new_state()
    state.inject(clock.now_ms(), Pause(by="alice"))
    state.inject(clock.advance(1000), Resume(by="alice"))
    calls: list[BarrierInfo] = []

    def register(info: BarrierInfo) -> str:
        calls.append(info)
        return f"job at {info.prev_epoch}"

    info = state.inject(clock.advance(1000), CreateBatchRefreshJob("mv1", register))
    assert calls == [info]
    assert info.paused is False and info.kind == "checkpoint"
    assert state.last_result == f"job at {info.prev_epoch}"
    assert state.committed_epoch == info.prev_epoch


def test_on_apply_failure_changes_nothing() -> None:
    state = new_state()
    state.inject(T0)
    before = state_key(state)

    def boom(info: BarrierInfo) -> object:
        raise ObjectNotInPrerequisiteState("nope")

    with pytest.raises(ObjectNotInPrerequisiteState):
        state.inject(T0 + 1000, Custom("boom", boom))
    assert state_key(state) == before


def test_custom_command_with_its_own_paused_error() -> None:
    state = new_state(pause=Paused(at=AT0, by="carol"))
    refuse = Custom(
        "refresh v",
        on_apply=lambda info: "refreshed",
        requires_unpaused_error=lambda db, p: paused_error(
            'cannot refresh materialized view "v" while database barrier is paused', db, p
        ),
    )
    with pytest.raises(ObjectNotInPrerequisiteState) as ei:
        state.inject(T0, refuse)
    assert ei.value.detail == 'database "dev" was paused at 2024-05-01 12:00:00+00 by carol'
    # a custom command without requires_unpaused_error applies while paused
    seen: list[bool] = []
    state.inject(T0, Custom("drop job", on_apply=lambda info: seen.append(info.paused)))
    assert seen == [True]


def test_custom_command_may_ride_a_plain_barrier() -> None:
    state = new_state(freq=3)
    info = state.inject(T0, Custom("note", on_apply=lambda info: 42, checkpoint=False))
    assert info.kind == "barrier"
    assert state.last_result == 42
    assert state.committed_epoch is None


# -- notifiers ----------------------------------------------------------------------


def _info() -> BarrierInfo:
    return BarrierInfo("dev", 1 << 16, 2 << 16, "checkpoint", False)


def test_notifier_two_phases() -> None:
    n = Notifier("dev", Flush())
    assert not n.started.done() and not n.collected.done()
    n.notify_started(_info())
    assert n.wait_started(0) == _info()
    assert not n.collected.done()
    n.notify_collected(7)
    assert n.wait(0) == 7
    n.notify_failed(InternalError("late"))  # ignored once resolved
    assert n.wait(0) == 7


def test_notifier_started_may_succeed_while_collected_fails() -> None:
    n = Notifier("dev")
    n.notify_started(_info())
    n.notify_failed(InternalError("commit failed"))
    assert n.wait_started(0) == _info()
    with pytest.raises(InternalError):
        n.wait(0)


def test_notifier_failure_fails_both_and_non_pg_errors_become_pg_errors() -> None:
    n = Notifier("dev")
    n.notify_failed(RuntimeError("boom"))
    with pytest.raises(PgError) as ei:
        n.wait(0)
    assert ei.value.sqlstate == "XX000"
    with pytest.raises(PgError):
        n.wait_started(0)


def test_notifier_cannot_be_cancelled_by_its_waiter() -> None:
    n = Notifier("dev")
    assert n.collected.cancel() is False
    n.notify_collected(1)
    assert n.wait(0) == 1


def test_dropped_notifier_fails_with_admin_shutdown() -> None:
    n = Notifier("dev")
    n.notify_dropped()
    with pytest.raises(AdminShutdown) as ei:
        n.wait(0)
    assert ei.value.sqlstate == "57P01"
    assert "barrier worker" in ei.value.message and "stopped" in ei.value.message


def test_wait_times_out_only_when_asked() -> None:
    with pytest.raises(TimeoutError):
        Notifier("dev").wait(0)


# -- the worker thread and the manager ------------------------------------------------------


@pytest.fixture
def manager() -> Iterator[BarrierManager]:
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000)
    mgr.add_database("dev", prev_epoch=epoch_from_unix_ms(T0))
    mgr.start()
    yield mgr
    mgr.stop()


def test_pause_resume_round_trip_injects_at_once(manager: BarrierManager) -> None:
    start = manager.snapshot("dev").prev_epoch
    p = manager.schedule("dev", Pause(by="alice"))
    r = manager.schedule("dev", Resume(by="alice"))
    assert p.wait(WAIT) == PauseResult(changed=True, state=Paused(at=AT0, by="alice"))
    assert r.wait(WAIT) == PauseResult(changed=True, state=Running())
    pi, ri = p.wait_started(0), r.wait_started(0)
    # the first and second barrier since start: no periodic barrier (10 s) in between
    assert pi.prev_epoch == start
    assert ri.prev_epoch == pi.curr_epoch
    assert (pi.paused, ri.paused) == (True, False)
    snap = manager.snapshot("dev")
    assert snap.prev_epoch == ri.curr_epoch
    assert snap.committed_epoch == ri.prev_epoch
    assert snap.paused is False


def test_manager_conveniences(manager: BarrierManager) -> None:
    assert manager.pause("dev", "alice", timeout=WAIT).changed is True
    again = manager.pause("dev", "bob", timeout=WAIT)
    assert again == PauseResult(changed=False, state=Paused(at=AT0, by="alice"))
    snap = manager.snapshot("dev")
    assert (snap.paused, snap.paused_by, snap.paused_at) == (True, "alice", AT0)
    committed = manager.flush("dev", timeout=WAIT)
    assert committed == manager.snapshot("dev").committed_epoch
    assert manager.resume("dev", "alice", timeout=WAIT).changed is True
    assert manager.resume("dev", "alice", timeout=WAIT).changed is False


def test_flush_via_thread_returns_its_barriers_prev_epoch(manager: BarrierManager) -> None:
    n = manager.schedule("dev", Flush())
    committed = n.wait(WAIT)
    assert committed == n.wait_started(0).prev_epoch


def test_create_job_rejected_via_thread(manager: BarrierManager) -> None:
    manager.pause("dev", "alice", timeout=WAIT)
    n = manager.schedule("dev", CreateBatchRefreshJob("mv", lambda info: None))
    with pytest.raises(ObjectNotInPrerequisiteState):
        n.wait(WAIT)
    with pytest.raises(ObjectNotInPrerequisiteState):
        n.wait_started(0)


def test_unknown_database_is_3d000(manager: BarrierManager) -> None:
    for call in (
        lambda: manager.schedule("nope", Flush()),
        lambda: manager.snapshot("nope"),
        lambda: manager.remove_database("nope"),
    ):
        with pytest.raises(InvalidCatalogName) as ei:
            call()
        assert ei.value.sqlstate == "3D000"
        assert ei.value.message == 'database "nope" does not exist'


def test_databases_add_remove_and_duplicate(manager: BarrierManager) -> None:
    manager.add_database("b")
    assert manager.databases() == ["b", "dev"]
    assert manager.has_database("b")
    with pytest.raises(DuplicateDatabase):
        manager.add_database("b")
    assert manager.flush("b", timeout=WAIT) > 0  # started at once: manager is running
    assert [s.name for s in manager.snapshots()] == ["b", "dev"]
    manager.remove_database("b")
    assert not manager.has_database("b")


def test_restore_from_persisted_state() -> None:
    recorded = epoch_from_unix_ms(T0 + 3_600_000)  # ahead of our clock
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, checkpoint_frequency=3)
    mgr.add_database("dev", prev_epoch=recorded, pause=Paused(at=AT0, by="alice"),
                     committed_epoch=recorded - (5 << 16))
    snap = mgr.snapshot("dev")
    assert snap == DatabaseSnapshot(
        name="dev", paused=True, paused_at=AT0, paused_by="alice", barrier_interval_ms=10_000,
        checkpoint_frequency=3, prev_epoch=recorded, committed_epoch=recorded - (5 << 16),
        committed_at=epoch_to_datetime(recorded - (5 << 16)),
    )
    mgr.start()
    try:
        n = mgr.schedule("dev", Flush())
        assert n.wait(WAIT) == recorded
        assert n.wait_started(0).curr_epoch > recorded
    finally:
        mgr.stop()


def test_on_commit_and_listeners() -> None:
    commits: list[DatabaseSnapshot] = []
    infos: list[BarrierInfo] = []
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, on_commit=commits.append)
    mgr.add_listener(infos.append)
    mgr.add_database("dev")
    mgr.start()
    try:
        n = mgr.schedule("dev", Pause(by="alice"))
        n.wait(WAIT)
        assert commits[-1].paused is True  # persisted before the issuer heard back
        assert commits[-1].committed_epoch == n.wait_started(0).prev_epoch
        mgr.flush("dev", timeout=WAIT)  # listeners run after notifying: a later barrier
        assert infos[0] == n.wait_started(0)  # proves the first one was delivered
    finally:
        mgr.stop()


def test_on_commit_failure_fails_that_command_but_not_the_worker() -> None:
    fail = threading.Event()
    fail.set()

    def on_commit(snap: DatabaseSnapshot) -> None:
        if fail.is_set():
            fail.clear()
            raise InternalError("meta store is down")

    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000, on_commit=on_commit)
    mgr.add_database("dev")
    mgr.start()
    try:
        n = mgr.schedule("dev", Flush())
        with pytest.raises(InternalError, match="meta store is down"):
            n.wait(WAIT)
        assert isinstance(n.wait_started(0), BarrierInfo)  # it did get its barrier
        assert mgr.flush("dev", timeout=WAIT) > 0  # the thread lives on
    finally:
        mgr.stop()


def test_non_pg_exception_from_on_apply_becomes_xx000(manager: BarrierManager) -> None:
    def boom(info: BarrierInfo) -> object:
        raise KeyError("x")

    n = manager.schedule("dev", Custom("boom", boom))
    with pytest.raises(PgError) as ei:
        n.wait(WAIT)
    assert ei.value.sqlstate == "XX000"
    assert manager.flush("dev", timeout=WAIT) > 0


def test_stop_fails_pending_notifiers_of_a_worker_never_started() -> None:
    mgr = BarrierManager(ManualClock(T0))
    mgr.add_database("dev")
    pending = [mgr.schedule("dev", Pause(by="a")), mgr.schedule("dev", Flush())]
    mgr.stop()
    for n in pending:
        with pytest.raises(AdminShutdown):
            n.wait(0)
        with pytest.raises(AdminShutdown):
            n.wait_started(0)
    # after stop, new commands fail at once, also for databases added later
    with pytest.raises(AdminShutdown):
        mgr.schedule("dev", Flush()).wait(0)
    mgr.add_database("late")
    with pytest.raises(AdminShutdown):
        mgr.schedule("late", Flush()).wait(0)
    assert mgr.snapshot("dev").name == "dev"  # snapshots stay readable


def test_stop_fails_commands_queued_behind_the_running_barrier() -> None:
    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=10_000)
    mgr.add_database("dev", prev_epoch=epoch_from_unix_ms(T0))
    entered, release = threading.Event(), threading.Event()

    def blocker(info: BarrierInfo) -> str:  # test-only: a real on_apply never blocks
        entered.set()
        release.wait(WAIT)
        return "done"

    mgr.start()
    first = mgr.schedule("dev", Custom("block", blocker))
    assert entered.wait(WAIT)
    queued = mgr.schedule("dev", Flush())
    mgr._scheduler.request_stop()  # stop requested while the barrier is in progress
    release.set()
    mgr.stop()
    assert not any(t.is_alive() for t in mgr.threads())
    assert first.wait(0) == "done"  # the barrier in progress finished
    with pytest.raises(AdminShutdown):
        queued.wait(0)
    with pytest.raises(AdminShutdown):
        mgr.schedule("dev", Flush()).wait(0)


def test_periodic_barriers_flow_without_commands() -> None:
    seen: list[BarrierInfo] = []
    two = threading.Event()

    def listener(info: BarrierInfo) -> None:
        seen.append(info)
        if len(seen) >= 2:
            two.set()

    mgr = BarrierManager(ManualClock(T0), barrier_interval_ms=1, checkpoint_frequency=2)
    mgr.add_listener(listener)
    mgr.add_database("dev")
    mgr.start()
    try:
        assert two.wait(WAIT)
    finally:
        mgr.stop()
    assert seen[1].prev_epoch == seen[0].curr_epoch  # the clock stands still, epochs do not
    assert [i.kind for i in seen[:2]] == ["barrier", "checkpoint"]


def test_remove_database_fails_its_pending_commands() -> None:
    mgr = BarrierManager(ManualClock(T0))
    mgr.add_database("dev")
    n = mgr.schedule("dev", Flush())
    mgr.remove_database("dev")
    with pytest.raises(AdminShutdown):
        n.wait(0)
    assert mgr.databases() == []
