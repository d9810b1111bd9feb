"""Epochs: RisingWave's 64-bit logical timestamps.

Rules this module keeps:

* An epoch is ``physical_ms << 16`` where ``physical_ms`` counts milliseconds
  since :data:`EPOCH_ORIGIN_MS` (2021-04-01T00:00:00Z); the low 16 bits of an
  epoch made here are zero, except when :func:`next_epoch` has to step past a
  clock that stands still or went backwards (then it adds ``1 << 16``, which
  keeps the low bits zero too).
* :func:`next_epoch` is the ONE place epochs advance. Its result is strictly
  greater than the previous epoch whatever the clock says; it checks that and
  raises ``AssertionError`` otherwise (also under ``python -O``).
* Times before the origin have no epoch (``ValueError`` from
  :func:`epoch_from_unix_ms`); :func:`next_epoch` treats such a clock reading
  as "behind" and steps past ``prev``.
"""

from __future__ import annotations

from datetime import datetime

from pgbarrier.barrier.clock import datetime_from_unix_ms

#: Unix milliseconds of 2021-04-01T00:00:00Z, the epoch origin.
EPOCH_ORIGIN_MS: int = 1_617_235_200_000
#: Bits below the physical part of an epoch.
EPOCH_PHYSICAL_SHIFT_BITS: int = 16
#: The smallest step between two epochs (one physical millisecond).
EPOCH_INC: int = 1 << EPOCH_PHYSICAL_SHIFT_BITS
#: Epochs fit in an unsigned 64-bit integer.
MAX_EPOCH: int = (1 << 64) - 1


def epoch_from_unix_ms(ms: int) -> int:
    """The epoch of unix time ``ms``: ``(ms - EPOCH_ORIGIN_MS) << 16``."""
    if ms < EPOCH_ORIGIN_MS:
        raise ValueError(f"unix time {ms} ms is before the epoch origin {EPOCH_ORIGIN_MS} ms")
    return (ms - EPOCH_ORIGIN_MS) << EPOCH_PHYSICAL_SHIFT_BITS


def epoch_to_unix_ms(epoch: int) -> int:
    """The unix milliseconds of ``epoch``'s physical part."""
    if epoch < 0:
        raise ValueError(f"epoch {epoch} is negative")
    return (epoch >> EPOCH_PHYSICAL_SHIFT_BITS) + EPOCH_ORIGIN_MS


def epoch_to_datetime(epoch: int) -> datetime:
    """The physical time of ``epoch`` as an aware UTC datetime."""
    return datetime_from_unix_ms(epoch_to_unix_ms(epoch))


def next_epoch(prev: int, now_unix_ms: int) -> int:
    """The epoch after ``prev`` at wall time ``now_unix_ms``.

    ``max(epoch_from_unix_ms(now_unix_ms), prev + (1 << 16))``: it follows the
    clock when the clock is ahead of ``prev`` and otherwise steps one physical
    millisecond past ``prev``, so it is strictly greater than ``prev`` even when
    the clock stands still or goes backwards.
    """
    if prev < 0:
        raise ValueError(f"epoch {prev} is negative")
    physical = epoch_from_unix_ms(now_unix_ms) if now_unix_ms >= EPOCH_ORIGIN_MS else 0
    result = max(physical, prev + EPOCH_INC)
    if not result > prev:  # explicit so that it holds under python -O
        raise AssertionError(f"epoch must increase: {result} <= {prev}")
    if result > MAX_EPOCH:
        raise AssertionError(f"epoch overflow: {result} > {MAX_EPOCH}")
    return result
