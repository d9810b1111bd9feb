"""A batch-refresh view's options and the delays they make (pgbarrier.jobs.policy)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from pgbarrier.errors import InvalidParameterValue
from pgbarrier.jobs import policy
from pgbarrier.jobs import state as js
from pgbarrier.jobs.registry import BatchRefreshJob

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
JOB = BatchRefreshJob(name="v", database="dev", definition="CREATE ...", query="SELECT 1",
                      columns=None, refresh_interval_sec=600, status=js.Idle(1 << 16),
                      snapshot_epoch=1 << 16, created_at=T0)


def test_defaults_and_values():
    assert [policy.value(JOB, k) for k in policy.OPTIONS] == [600, 10, 5, 0]
    job = replace(JOB, retry_backoff_sec=3, max_failures=0, jitter_sec=7)
    assert [policy.value(job, k) for k in policy.OPTIONS] == [600, 3, 0, 7]


@pytest.mark.parametrize("key,text", [
    ("refresh.retry_backoff.sec", "0"), ("refresh.retry_backoff.sec", "-1"),
    ("refresh.max_failures", "1.5"), ("refresh.jitter.sec", "soon"),
    ("refresh.jitter.sec", "2147483648"), ("refresh.interval.sec", ""),
])
def test_bad_values_are_22023_naming_the_option(key, text):
    with pytest.raises(InvalidParameterValue) as e:
        policy.option(key).parse(text, 12)
    assert e.value.message == f'invalid value for parameter "{key}": "{text}"'
    assert e.value.position == 12


def test_valid_values_and_unknown_options():
    assert policy.option("refresh.max_failures").parse(" 0 ") == 0
    assert policy.option("refresh.jitter.sec").parse("2147483647") == 2147483647
    with pytest.raises(InvalidParameterValue) as e:
        policy.option("refresh.retries", 3)
    assert e.value.message == 'unrecognized parameter "refresh.retries"'


def test_backoff_doubles_with_jitter_is_capped_and_fixed_by_the_attempt():
    delays = [policy.retry_delay_ms(JOB, n, 5 << 16) for n in range(1, 9)]
    for n, delay in enumerate(delays, start=1):
        full = min(600_000, 10_000 * 2 ** (n - 1))
        assert full / 2 <= delay <= full, (n, delay)
    assert delays[-1] <= 600_000, "capped at the interval"
    assert policy.retry_delay_ms(JOB, 3, 5 << 16) == delays[2], "the same after a restart"
    spread = {policy.retry_delay_ms(JOB, 1, e << 16) for e in range(50)}
    assert len(spread) > 10, "jittered across attempts"


def test_failure_limit_suspends_unless_off_suspended_or_the_backend_is_unreachable():
    assert not policy.failure_suspends(JOB, 4, "22P02")
    assert policy.failure_suspends(JOB, 5, "22P02")
    assert not policy.failure_suspends(replace(JOB, max_failures=0), 100, "22P02")
    assert not policy.failure_suspends(replace(JOB, suspended_at=T0), 5, "22P02")
    assert not policy.failure_suspends(JOB, 5, "08006")
    assert not policy.failure_suspends(JOB, 5, "57P01")
    assert policy.suspend_reason(5, "boom") == "suspended after 5 consecutive failures: boom"


def test_catchup_jitter_stays_within_the_span():
    assert policy.jitter_ms(JOB) == 0
    job = replace(JOB, jitter_sec=2)
    assert all(0 <= policy.jitter_ms(job) < 2000 for _ in range(200))
