"""Batch-refresh job lifecycle (states as data) and the registry."""

from __future__ import annotations

import datetime as dt

import pytest

from pgbarrier.errors import DuplicateTable, UndefinedTable
from pgbarrier.jobs import state as js
from pgbarrier.jobs.history import RefreshHistory
from pgbarrier.jobs.registry import BatchRefreshJob, JobRegistry, StreamingView

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
E = 1 << 16


def _job(status: js.JobStatus = js.Creating(42 * E)) -> BatchRefreshJob:
    return BatchRefreshJob(name="v", database="dev", definition="CREATE ...", query="SELECT 1",
                           columns=None, refresh_interval_sec=5, status=status,
                           snapshot_epoch=42 * E, created_at=NOW)


def test_lifecycle_happy_path():
    s: js.JobStatus = js.Creating(7 * E)
    s = js.created(s)
    assert s == js.Idle(7 * E) and js.schedule_base_epoch(s) == 7 * E
    s = js.start_refresh(s, 9 * E, run_id=1)
    assert s == js.Refreshing(7 * E, 9 * E, 1) and js.schedule_base_epoch(s) is None
    assert js.last_committed_epoch(s) == 7 * E, "readers keep the last committed result"
    s = js.refresh_committed(s, 1)
    assert s == js.Idle(9 * E)


def test_failed_run_keeps_last_result_and_counts_next_run_from_the_attempt():
    s = js.start_refresh(js.Idle(7 * E), 9 * E, run_id=3)
    s = js.refresh_failed(s, 3, "boom")
    assert s == js.Failed(7 * E, "boom", 9 * E)
    assert js.last_committed_epoch(s) == 7 * E and js.schedule_base_epoch(s) == 9 * E
    s = js.start_refresh(s, 11 * E, run_id=4)
    assert js.refresh_committed(s, 4) == js.Idle(11 * E)


@pytest.mark.parametrize("state, transition", [
    (js.Idle(E), lambda s: js.created(s)),
    (js.Refreshing(E, 2 * E, 1), lambda s: js.start_refresh(s, 3 * E, 2)),
    (js.Creating(E), lambda s: js.start_refresh(s, 3 * E, 2)),
    (js.Refreshing(E, 2 * E, 1), lambda s: js.refresh_committed(s, 99)),
    (js.Idle(E), lambda s: js.refresh_committed(s, 1)),
    (js.Idle(E), lambda s: js.refresh_failed(s, 1, "x")),
    (js.Dropping(), lambda s: js.drop(s)),
    (js.Dropping(), lambda s: js.start_refresh(s, 3 * E, 2)),
])
def test_illegal_transitions_raise_and_change_nothing(state, transition):
    before = state
    with pytest.raises(js.IllegalTransition):
        transition(state)
    assert state == before


def test_registry_reserves_names_and_transitions_under_its_lock():
    reg = JobRegistry()
    reg.reserve("dev", "v")
    with pytest.raises(DuplicateTable):
        reg.reserve("dev", "v")
    reg.reserve("other", "v")  # names are per database
    assert reg.get("dev", "v") is None and not reg.is_job("dev", "v")
    reg.register(_job())
    job = reg.transition("dev", "v", js.created, last_refreshed_at=NOW)
    assert job.status == js.Idle(42 * E) and job.last_refreshed_at == NOW
    with pytest.raises(js.IllegalTransition):
        reg.transition("dev", "v", js.created)
    assert reg.get("dev", "v") == job, "an illegal transition changes nothing"
    with pytest.raises(UndefinedTable):
        reg.transition("dev", "nosuch", js.drop)
    reg.release("dev", "v")
    assert reg.get("dev", "v") is None
    reg.add_streaming(StreamingView("s", "dev", "CREATE ..."))
    with pytest.raises(DuplicateTable):
        reg.reserve("dev", "s")


def test_history_records_each_run_once_with_its_outcome():
    h = RefreshHistory(keep_per_job=2)
    r1 = h.start("dev", "v", "create", E, NOW)
    h.finish(r1, "succeeded", NOW, rows=3)
    r2 = h.start("dev", "v", "schedule", 2 * E, NOW)
    h.finish(r2, "failed", NOW, error="boom")
    r3 = h.start("dev", "v", "manual", 3 * E, NOW)
    runs = h.runs()
    assert [(r.run_id, r.status) for r in runs] == [(r2.run_id, "failed"), (r3.run_id, "running")]
    assert runs[0].error == "boom"


def test_a_refused_drop_puts_the_job_back():
    assert js.undrop(js.drop(js.Idle(E))) == js.Idle(E)
    assert js.undrop(js.drop(js.Failed(E, "x", 2 * E))) == js.Failed(E, "x", 2 * E)
    # its run was cancelled by the drop: back to idle at the last committed epoch
    assert js.undrop(js.drop(js.Refreshing(E, 2 * E, 7))) == js.Idle(E)
    assert js.last_committed_epoch(js.drop(js.Idle(E))) == E
    with pytest.raises(js.IllegalTransition):
        js.undrop(js.Dropping())  # loaded from the meta store: only recovery finishes it
    with pytest.raises(js.IllegalTransition):
        js.undrop(js.Idle(E))
