"""Batch-refresh job lifecycle and registry."""

from __future__ import annotations

import datetime as dt

import pytest

from pgbarrier.errors import DuplicateTable
from pgbarrier.jobs.registry import BatchRefreshJob, JobRegistry
from pgbarrier.jobs.state import Creating, Idle, IllegalTransition, created

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def _job(status=Creating(42 << 16)) -> BatchRefreshJob:
    return BatchRefreshJob(name="v", database="dev", definition="CREATE ...", query="SELECT 1",
                           columns=None, refresh_interval_sec=5, status=status,
                           snapshot_epoch=42 << 16, created_at=NOW)


def test_creating_becomes_idle_at_its_snapshot_epoch():
    assert created(Creating(7 << 16)) == Idle(last_committed_epoch=7 << 16)


def test_illegal_transition_raises_and_changes_nothing():
    idle = Idle(5)
    with pytest.raises(IllegalTransition):
        created(idle)
    assert idle == Idle(5)


def test_registry_reserves_names_and_releases_them():
    reg = JobRegistry()
    reg.reserve("dev", "v")
    with pytest.raises(DuplicateTable):
        reg.reserve("dev", "v")
    reg.reserve("other", "v")  # names are per database
    assert reg.get("dev", "v") is None and not reg.is_job("dev", "v")
    reg.register(_job())
    assert reg.is_job("dev", "v")
    job = reg.mark_created("dev", "v", NOW)
    assert job.status == Idle(42 << 16) and job.last_refreshed_at == NOW
    assert [j.name for j in reg.jobs()] == ["v"]
    reg.release("dev", "v")
    assert reg.get("dev", "v") is None
    reg.reserve("dev", "v")
