"""A batch-refresh view's options: what each means, its default, its valid values, and the
delays they make (issue 29, items 3, 4 and 5).

Rules this module keeps (one place decides each option; CREATE's ``WITH (...)`` and
``ALTER MATERIALIZED VIEW v SET / RESET (...)`` both read them from here):

* ``refresh.interval.sec``: seconds between scheduled runs, a positive integer; default
  60 (what ``BATCH REFRESH`` without ``EVERY`` means).
* ``refresh.retry_backoff.sec``: after a failed scheduled run, the next attempt (trigger
  ``retry``) is due ``backoff * 2^(n-1)`` seconds after the failed one, ``n`` the failed
  scheduled runs in a row, capped at the view's interval (a calendar schedule: the time to
  its next slot), and jittered: the delay is drawn
  from ``[d/2, d]`` (AWS's "equal jitter"), from a seed made of the view and the failed
  attempt's epoch, so the same failure gives the same due time after a restart. A positive
  integer; default 10.
* ``refresh.max_failures``: after this many failed scheduled runs in a row (``schedule``,
  ``retry`` or ``catchup``; a manual REFRESH that fails does not count) the view is
  suspended, as ``ALTER MATERIALIZED VIEW v SUSPEND`` would, by ``pgbarrier``, with reason
  ``suspended after N consecutive failures: <last error>`` (Snowflake's rule). 0 never
  suspends. A run that failed because the data backend could not be reached (SQLSTATE
  class 08, or 57P01-57P03) counts for the backoff but does not suspend: an upstream
  outage would otherwise suspend every view and leave them suspended after it. A non-negative integer; default 5. Any successful run (a manual REFRESH too)
  sets the count back to 0.
* ``refresh.jitter.sec``: a run that catches up (the view fell due while pgbarrier was
  down, its database paused or the view suspended) starts at a random moment within this
  many seconds of the catch-up, so views that all fell due do not all start at once. A
  non-negative integer; default 0.
* Values are integers or strings holding one, at most 2147483647; anything else is 22023
  ``invalid value for parameter "k": "v"`` (with a DETAIL saying what is valid), an option
  not listed here 22023 ``unrecognized parameter "k"``. A job keeps ``None`` for an option
  never set (or RESET), and :func:`value` gives its default then.
"""

from __future__ import annotations

import random
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pgbarrier.barrier.epoch import epoch_to_unix_ms
from pgbarrier.errors import InvalidParameterValue
from pgbarrier.sql.statements import DEFAULT_BATCH_REFRESH_SEC, MAX_REFRESH_INTERVAL_SEC

if TYPE_CHECKING:
    from pgbarrier.jobs.registry import BatchRefreshJob

DEFAULT_INTERVAL_SEC = DEFAULT_BATCH_REFRESH_SEC
DEFAULT_RETRY_BACKOFF_SEC = 10
DEFAULT_MAX_FAILURES = 5
DEFAULT_JITTER_SEC = 0
MAX_VALUE = MAX_REFRESH_INTERVAL_SEC
#: who an automatic suspension is by (rw_batch_refresh_jobs.suspended_by)
AUTO_SUSPENDER = "pgbarrier"


@dataclass(frozen=True)
class Option:
    key: str
    #: the BatchRefreshJob field holding it
    field: str
    default: int
    #: the smallest valid value (1: positive, 0: non-negative)
    minimum: int

    def parse(self, text: str, position: int | None = None) -> int:
        """``text`` as this option's value, or 22023 naming it."""
        stripped = text.strip()
        if stripped.isascii() and stripped.isdigit() and \
                self.minimum <= int(stripped) <= MAX_VALUE:
            return int(stripped)
        kind = "a positive" if self.minimum > 0 else "a non-negative"
        raise InvalidParameterValue(
            f'invalid value for parameter "{self.key}": "{text}"', position=position,
            detail=f"{self.key} must be {kind} integer (at most {MAX_VALUE}).")


OPTIONS: dict[str, Option] = {o.key: o for o in (
    Option("refresh.interval.sec", "refresh_interval_sec", DEFAULT_INTERVAL_SEC, 1),
    Option("refresh.retry_backoff.sec", "retry_backoff_sec", DEFAULT_RETRY_BACKOFF_SEC, 1),
    Option("refresh.max_failures", "max_failures", DEFAULT_MAX_FAILURES, 0),
    Option("refresh.jitter.sec", "jitter_sec", DEFAULT_JITTER_SEC, 0),
)}


def option(key: str, position: int | None = None) -> Option:
    """The option named ``key``, or PostgreSQL's 22023 ``unrecognized parameter``."""
    found = OPTIONS.get(key)
    if found is None:
        raise InvalidParameterValue(f'unrecognized parameter "{key}"', position=position)
    return found


def value(job: BatchRefreshJob, key: str) -> int:
    """The option's value for ``job`` (its default when the job never set it)."""
    opt = OPTIONS[key]
    got = getattr(job, opt.field)
    return opt.default if got is None else got


def _unit(*seed: object) -> float:
    """A number in [0, 1) fixed by ``seed`` (the same after a restart)."""
    return random.Random(zlib.crc32(repr(seed).encode())).random()


def retry_delay_ms(job: BatchRefreshJob, failures: int, anchor_epoch: int) -> int:
    """How long after the failed attempt at ``anchor_epoch`` the retry is due, the
    ``failures``-th failed scheduled run in a row (module rules). The cap is the job's
    interval, or for a calendar schedule the time to its next slot."""
    anchor_ms = epoch_to_unix_ms(anchor_epoch)
    interval_ms = max(job.due_after_ms(anchor_ms) - anchor_ms, 1000)
    backoff_ms = value(job, "refresh.retry_backoff.sec") * 1000
    delay = min(interval_ms, backoff_ms * 2 ** min(max(failures - 1, 0), 40))
    return int(delay / 2 + delay / 2 * _unit(job.database, job.name, anchor_epoch))


def jitter_ms(job: BatchRefreshJob) -> int:
    """A catch-up's random delay within the view's ``refresh.jitter.sec``."""
    span = value(job, "refresh.jitter.sec") * 1000
    return int(random.random() * span) if span else 0


def backend_unavailable(sqlstate: str | None) -> bool:
    """Whether a run failed because the data backend could not be reached (class 08, or
    the server shutting down: 57P01-57P03), not because of the view."""
    return sqlstate is not None and (sqlstate.startswith("08") or sqlstate in
                                     ("57P01", "57P02", "57P03"))


def failure_suspends(job: BatchRefreshJob, failures: int, sqlstate: str | None) -> bool:
    """Whether the ``failures``-th failed scheduled run in a row, failing with
    ``sqlstate``, suspends ``job`` (never for an unreachable backend: an outage would
    otherwise suspend every view, and they would stay suspended after it)."""
    limit = value(job, "refresh.max_failures")
    return bool(limit) and failures >= limit and not job.suspended \
        and not backend_unavailable(sqlstate)


def suspend_reason(failures: int, error: str) -> str:
    return f"suspended after {failures} consecutive failures: {error}"
