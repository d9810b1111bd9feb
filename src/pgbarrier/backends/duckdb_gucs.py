"""PostgreSQL's user-settable settings that DuckDB has no use for, checked as PostgreSQL checks them.

Drivers and tools SET ``synchronous_commit``, ``work_mem``, ``jit``, ``row_security``...
at connect or around their work; DuckDB has none of them. Rules this module keeps:

* The settings are PostgreSQL 15's with ``context = 'user'`` (:mod:`pgbarrier.backends.pg_user_settings`),
  minus those :mod:`pgbarrier.backends.duckdb_settings` or :mod:`pgbarrier.session.settings`
  keep with their own rules. They are accepted, remembered per session, shown back
  (``SHOW``, ``current_setting``, ``pg_settings``) and change nothing in DuckDB.
* A value is checked and shown as PostgreSQL does (:func:`check`): booleans (``on``, ``of``,
  ``yes``, ``1``... shown ``on``/``off``; else ``parameter "x" requires a Boolean value``);
  enums case-insensitively (an enum with ``on``/``off`` also takes the boolean spellings;
  else ``invalid value`` with HINT ``Available values: ...``); integers and reals with
  PostgreSQL's units (``B``/``kB``/``MB``/``GB``/``TB``, ``us``/``ms``/``s``/``min``/``h``/``d``),
  range-checked (``10 kB is outside the valid range for parameter "work_mem" (64 .. 2147483647)``)
  and shown in the largest unit that divides them (``65536`` kB is ``64MB``); strings as given.
  Every bad value is 22023. A list given to a setting that is not one is 22023
  ``SET x takes only one argument``.
"""

from __future__ import annotations

import math
import re
from typing import NamedTuple

from pgbarrier.backends.pg_user_settings import ROWS
from pgbarrier.errors import InvalidParameterValue


class Guc(NamedTuple):
    name: str
    vartype: str
    default: str
    unit: str
    min: str
    max: str
    enumvals: str
    category: str
    description: str


#: lower-case name -> setting (callers drop the names they keep themselves)
GUCS: dict[str, Guc] = {r[0].lower(): Guc(*r) for r in ROWS}

_TRUE = ("on", "true", "yes", "1")
_FALSE = ("off", "false", "no", "0")
_MEMORY = (("TB", 1024 ** 4), ("GB", 1024 ** 3), ("MB", 1024 ** 2), ("kB", 1024), ("B", 1))
_TIME = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000), ("s", 1000), ("ms", 1),
         ("us", 0.001))
_BASE = {"B": ("B", 1), "kB": ("B", 1024), "8kB": ("B", 8192), "MB": ("B", 1024 ** 2),
         "us": ("ms", 0.001), "ms": ("ms", 1), "s": ("ms", 1000), "min": ("ms", 60_000)}
_NUMBER = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-z]*)\s*\Z")
_MEMORY_HINT = 'Valid units for this parameter are "B", "kB", "MB", "GB", and "TB".'
_TIME_HINT = 'Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".'


def parse_bool(text: str) -> str | None:
    """PostgreSQL's parse_bool: ``on``/``off`` (unique prefixes of true/false/yes/no, ``on``,
    ``off``, ``1``, ``0``), else None."""
    low = text.strip().lower()
    if not low:
        return None
    if low in ("1", "on") or (low[0] in "ty" and ("true".startswith(low) or "yes".startswith(low))):
        return "on"
    if low in ("0", "of", "off") or (low[0] in "fn" and ("false".startswith(low)
                                                          or "no".startswith(low))):
        return "off"
    return None


def _g(v: float) -> str:
    """C's ``%g``."""
    return f"{v:g}"


def _in_base(guc: Guc, text: str) -> float:
    """The value of ``text`` in the setting's unit (22023 with PostgreSQL's hint if not a
    number with a unit it takes)."""
    m = _NUMBER.match(text)
    bad = InvalidParameterValue(f'invalid value for parameter "{guc.name}": "{text}"')
    if m is None:
        raise bad
    number, unit = float(m.group(1)), m.group(2)
    if not unit:
        return number
    if not guc.unit:
        raise bad
    kind, per_base = _BASE[guc.unit]
    table = dict(_MEMORY if kind == "B" else _TIME)
    if unit not in table:
        bad.hint = _MEMORY_HINT if kind == "B" else _TIME_HINT
        raise bad
    return number * table[unit] / per_base


def _show_number(guc: Guc, value: float) -> str:
    """SHOW's text: in the largest unit that divides the value (PostgreSQL's
    convert_*_from_base_unit), plain below 1 or without a unit."""
    integer = guc.vartype == "integer"
    if not guc.unit or value <= 0:
        return str(int(value)) if integer else _g(value)
    kind, per_base = _BASE[guc.unit]
    base = value * per_base
    for unit, mult in (_MEMORY if kind == "B" else _TIME):
        scaled = base / mult
        if mult <= per_base or abs(scaled - round(scaled)) < 1e-9 * max(1.0, abs(scaled)):
            return f"{round(scaled) if integer or scaled == round(scaled) else _g(scaled)}{unit}"
    return _g(value) + guc.unit


def check(guc: Guc, raw: str, value: str) -> str:
    """The value SHOW gives after ``SET guc = raw`` (``value``: raw's text unquoted)."""
    if guc.vartype != "string" and _top_level_comma(raw):
        raise InvalidParameterValue(f"SET {guc.name} takes only one argument")
    if guc.vartype == "bool":
        shown = parse_bool(value)
        if shown is None:
            raise InvalidParameterValue(f'parameter "{guc.name}" requires a Boolean value')
        return shown
    if guc.vartype == "enum":
        options = guc.enumvals.split(",")
        low = value.strip().lower()
        for option in options:
            if option.lower() == low:
                return option
        if "on" in options and "off" in options and parse_bool(value) is not None:
            return parse_bool(value)  # type: ignore[return-value]
        raise InvalidParameterValue(f'invalid value for parameter "{guc.name}": "{value}"',
                                    hint="Available values: " + ", ".join(options) + ".")
    if guc.vartype in ("integer", "real"):
        number = _in_base(guc, value)
        if guc.vartype == "integer":
            if not math.isfinite(number) or abs(number) > 2 ** 31:
                raise InvalidParameterValue(
                    f'invalid value for parameter "{guc.name}": "{value}"',
                    hint="Value exceeds integer range.")
            number = float(round(number))
        low, high = float(guc.min), float(guc.max)
        if not low <= number <= high:
            unit = f" {guc.unit}" if guc.unit else ""
            if guc.vartype == "integer":
                raise InvalidParameterValue(
                    f'{int(number)}{unit} is outside the valid range for parameter "{guc.name}" '
                    f"({int(low)} .. {int(high)})")
            raise InvalidParameterValue(
                f'{_g(number)}{unit} is outside the valid range for parameter "{guc.name}" '
                f"({_g(low)} .. {_g(high)})")
        return _show_number(guc, number)
    return value


def _top_level_comma(raw: str) -> bool:
    return "," in re.sub(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"", "", raw)


def base_value(guc: Guc, shown: str) -> str:
    """``pg_settings.setting``: a number in the setting's own unit (``65536`` for work_mem's
    ``64MB``), anything else as SHOW gives it."""
    if guc.vartype not in ("integer", "real") or not guc.unit:
        return shown
    number = _in_base(guc, shown)
    return str(round(number)) if guc.vartype == "integer" else _g(number)
