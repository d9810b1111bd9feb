"""Epochs: origin, shift, and the one function where they advance."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from pgbarrier.barrier.clock import ManualClock
from pgbarrier.barrier.epoch import (
    EPOCH_INC,
    EPOCH_ORIGIN_MS,
    epoch_from_unix_ms,
    epoch_to_datetime,
    epoch_to_unix_ms,
    next_epoch,
)
from pgbarrier.barrier.worker import DatabaseBarrierState

T0 = 1_714_564_800_000  # 2024-05-01T12:00:00Z


def test_origin_is_2021_04_01_utc() -> None:
    assert EPOCH_ORIGIN_MS == int(datetime(2021, 4, 1, tzinfo=timezone.utc).timestamp() * 1000)
    assert epoch_from_unix_ms(EPOCH_ORIGIN_MS) == 0
    assert epoch_to_datetime(0) == datetime(2021, 4, 1, tzinfo=timezone.utc)


def test_physical_part_is_shifted_16_bits() -> None:
    assert epoch_from_unix_ms(EPOCH_ORIGIN_MS + 1) == 1 << 16 == EPOCH_INC
    epoch = epoch_from_unix_ms(T0)
    assert epoch == (T0 - EPOCH_ORIGIN_MS) << 16
    assert epoch & 0xFFFF == 0
    assert epoch_to_unix_ms(epoch) == T0
    assert epoch_to_unix_ms(epoch + 0xFFFF) == T0  # low bits are not physical time


def test_epoch_to_datetime_is_aware_utc_and_exact() -> None:
    dt = epoch_to_datetime(epoch_from_unix_ms(T0 + 123))
    assert dt == datetime(2024, 5, 1, 12, 0, 0, 123_000, tzinfo=timezone.utc)
    assert dt.tzinfo is timezone.utc


def test_before_origin_has_no_epoch() -> None:
    with pytest.raises(ValueError):
        epoch_from_unix_ms(EPOCH_ORIGIN_MS - 1)


def test_next_epoch_follows_a_clock_that_moves_forward() -> None:
    prev = epoch_from_unix_ms(T0)
    assert next_epoch(prev, T0 + 1000) == epoch_from_unix_ms(T0 + 1000)


def test_next_epoch_strictly_increases_with_a_standing_clock() -> None:
    epoch = epoch_from_unix_ms(T0)
    seen = [epoch]
    for _ in range(100):
        epoch = next_epoch(epoch, T0)
        seen.append(epoch)
    assert all(b > a for a, b in zip(seen, seen[1:]))
    assert seen[-1] == epoch_from_unix_ms(T0) + 100 * EPOCH_INC


def test_next_epoch_strictly_increases_with_a_clock_going_backwards() -> None:
    clock = ManualClock(T0)
    epoch = epoch_from_unix_ms(T0)
    for step in (-1, -1000, -3_600_000, 5, -10):
        clock.advance(step)
        new = next_epoch(epoch, clock.now_ms())
        assert new > epoch
        epoch = new
    # a clock before the origin is just "behind"
    assert next_epoch(epoch, 0) == epoch + EPOCH_INC


def test_next_epoch_rejects_a_negative_epoch() -> None:
    with pytest.raises(ValueError):
        next_epoch(-1, T0)


def test_restored_database_issues_epochs_above_the_recorded_one() -> None:
    # recorded by a previous run whose clock was an hour ahead of ours
    recorded = epoch_from_unix_ms(T0 + 3_600_000)
    state = DatabaseBarrierState("dev", prev_epoch=recorded)
    first = state.inject(T0)
    second = state.inject(T0)
    assert first.prev_epoch == recorded
    assert recorded < first.curr_epoch < second.curr_epoch
    assert second.prev_epoch == first.curr_epoch
