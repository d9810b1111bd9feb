"""Session settings pgbarrier keeps itself: ``SET``/``SHOW``/``RESET`` of its own names.

Rules this module keeps:

* ``batch_refresh_when_paused`` is pgbarrier's: ``'error'`` (default) makes a
  batch-refresh create or manual refresh on a paused database fail with 55000;
  ``'wait'`` makes it wait for RESUME, bounded by ``statement_timeout``.
* ``statement_timeout`` is tracked here (PostgreSQL units: ``ms`` default, ``s``,
  ``min``, ``h``, ``d``; 0 means none) and, on a PostgreSQL backend, also sent
  upstream; DuckDB has no such setting, so there pgbarrier alone keeps it.
* ``idle_in_transaction_session_timeout`` and ``idle_session_timeout`` (same units) are
  kept here on both backends and enforced by the server connection's read loop (FATAL 25P03 /
  57P05, as PostgreSQL 15). They are not sent upstream: the upstream would end its own
  connection under pgbarrier instead of telling the client.
* ``TIMEOUTS`` maps each timeout setting to the ``SessionInfo`` field that holds it.
* Start-up settings (a start-up parameter or ``options``' ``-c``) of these names are
  taken as ``SET`` would take them (:func:`apply_startup`; a bad value is the session's
  FATAL 22023). :func:`for_backend` is the one place that says which start-up settings a
  backend gets: all but the ones only pgbarrier keeps (``batch_refresh_when_paused``
  and the idle timeouts); ``statement_timeout`` and ``lock_timeout`` go to both.
* Recognising one of these statements is :func:`pgbarrier.sql.route.route`'s (its
  ``setting``), a cheap scan of the first words, no parse; the names live in
  :mod:`pgbarrier.sql.setting` with that reading.
"""

from __future__ import annotations

import re

from typing import TYPE_CHECKING

from pgbarrier.errors import InvalidParameterValue
from pgbarrier.sql.setting import (
    IDLE_IN_TRANSACTION_TIMEOUT,
    IDLE_SESSION_TIMEOUT,
    LOCK_TIMEOUT,
    OWN_SETTINGS,
    STATEMENT_TIMEOUT,
    WHEN_PAUSED,
    SettingStatement,
)

if TYPE_CHECKING:
    from pgbarrier.control import SessionInfo
    from pgbarrier.sql.startup_params import StartupSettings

__all__ = [
    "IDLE_IN_TRANSACTION_TIMEOUT",
    "IDLE_SESSION_TIMEOUT",
    "LOCK_TIMEOUT",
    "OWN_SETTINGS",
    "STATEMENT_TIMEOUT",
    "TIMEOUTS",
    "WHEN_PAUSED",
    "SettingStatement",
    "apply_startup",
    "for_backend",
    "parse_timeout_ms",
    "parse_when_paused",
    "show_timeout",
]

#: timeout setting -> the SessionInfo field (milliseconds) that holds it
TIMEOUTS = {
    STATEMENT_TIMEOUT: "statement_timeout_ms",
    IDLE_IN_TRANSACTION_TIMEOUT: "idle_in_transaction_timeout_ms",
    IDLE_SESSION_TIMEOUT: "idle_session_timeout_ms",
    LOCK_TIMEOUT: "lock_timeout_ms",
}

_DURATION = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*(us|ms|s|min|h|d)?\s*$",
                       re.I)
_UNIT_MS = {"us": 0.001, "ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
_INT_MAX = 2**31 - 1
#: pgbarrier's own settings no backend is given (see the module rules)
_ONLY_HERE = frozenset({WHEN_PAUSED, IDLE_IN_TRANSACTION_TIMEOUT, IDLE_SESSION_TIMEOUT})


def for_backend(startup: StartupSettings) -> StartupSettings:
    """The start-up settings the backend gets: all but those only pgbarrier keeps."""
    from pgbarrier.sql.startup_params import StartupSettings

    kept = {low: item for low, item in startup.values.items() if low not in _ONLY_HERE}
    return StartupSettings(kept, startup.switches)


def apply_startup(info: SessionInfo, startup: StartupSettings) -> None:
    """Take the start-up values of pgbarrier's own settings into ``info``, as SET would."""
    for low, (_, value) in startup.values.items():
        if low == WHEN_PAUSED:
            info.when_paused = parse_when_paused(value)
        elif low in TIMEOUTS:
            setattr(info, TIMEOUTS[low], parse_timeout_ms(value, low))


def parse_when_paused(value: str) -> str:
    v = value.strip().lower()
    if v in ("default",):
        return "error"
    if v not in ("error", "wait"):
        raise InvalidParameterValue(
            f'invalid value for parameter "{WHEN_PAUSED}": "{value}"',
            hint='Available values: error, wait.')
    return v


def parse_timeout_ms(value: str, name: str = STATEMENT_TIMEOUT) -> int:
    """PostgreSQL's integer-with-unit rule for a millisecond setting: a number (fractions
    and exponents too) with an optional unit (us, ms, s, min, h, d), rounded to whole ms;
    over the int range is ``Value exceeds integer range``, below 0 is outside 0 .. INT_MAX."""
    if value.strip().lower() == "default":
        return 0
    m = _DURATION.match(value)
    if not m:
        # a number with a unit PostgreSQL does not know gets the list of units
        units = re.match(r"\s*[+-]?[\d.]", value) is not None
        raise InvalidParameterValue(f'invalid value for parameter "{name}": "{value}"',
                                    hint='Valid units for this parameter are "us", "ms", "s", '
                                         '"min", "h", and "d".' if units else None)
    ms = round(float(m.group(1)) * _UNIT_MS[(m.group(2) or "ms").lower()])  # rint: to even
    if not -_INT_MAX - 1 <= ms <= _INT_MAX:
        raise InvalidParameterValue(f'invalid value for parameter "{name}": "{value}"',
                                    hint="Value exceeds integer range.")
    if ms < 0:
        raise InvalidParameterValue(
            f'{ms} ms is outside the valid range for parameter "{name}" (0 .. {_INT_MAX})')
    return ms


def show_timeout(ms: int) -> str:
    if ms == 0:
        return "0"
    for unit in ("d", "h", "min", "s"):  # PostgreSQL shows the largest exact unit
        if ms % _UNIT_MS[unit] == 0:
            return f"{ms // _UNIT_MS[unit]}{unit}"
    return f"{ms}ms"
