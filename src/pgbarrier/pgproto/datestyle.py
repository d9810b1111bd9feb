"""DateStyle and IntervalStyle: PostgreSQL's text output of dates, timestamps and intervals
in every style, and the settings' own rules.

Rules this module keeps:

* :func:`parse_datestyle` is PostgreSQL's ``check_datestyle``: a comma-separated list of
  a style (``ISO``, ``SQL``, ``Postgres``, ``German``) and an order (``DMY``/``Euro``/
  ``European``, ``MDY``/``US``/``NonEuro``/``NonEuropean``, ``YMD``), either may be left
  out (it keeps the current one; ``German`` alone means ``German, DMY``), two different
  styles or orders are an error. The result is PostgreSQL's canonical ``Style, ORDER``.
* :func:`text_encoder` gives the text output of ``date``, ``timestamp``, ``timestamptz``
  and ``interval`` values for a session's styles, as PostgreSQL 15's ``EncodeDateOnly``,
  ``EncodeDateTime`` and ``EncodeInterval`` write them, or None for the default (``ISO``
  and ``postgres``: :mod:`pgbarrier.pgproto.types` writes those). A ``timestamptz``
  carries its zone (the session's): the SQL, Postgres and German styles name it by its
  abbreviation (``JST``, ``PST``, ``UTC``), as PostgreSQL does. Years before 1 AD are
  out of scope (Python's dates have none).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any



class DateStyleError(ValueError):
    """A DateStyle value PostgreSQL refuses: its message and DETAIL (22023 for the caller)."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail

STYLES = {"iso": "ISO", "sql": "SQL", "postgres": "Postgres", "german": "German"}
ORDERS = {"dmy": "DMY", "euro": "DMY", "european": "DMY", "mdy": "MDY", "us": "MDY",
          "noneuro": "MDY", "noneuropean": "MDY", "ymd": "YMD"}
INTERVAL_STYLES = ("postgres", "postgres_verbose", "sql_standard", "iso_8601")
DEFAULT_DATESTYLE = "ISO, MDY"

_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def parse_datestyle(value: str, current: str = DEFAULT_DATESTYLE) -> str:
    """PostgreSQL's canonical DateStyle for ``SET DateStyle = value`` (see module rules)."""
    style = order = None
    for raw in value.split(","):
        word = raw.strip().strip('"').lower()
        if word in STYLES:
            if style is not None and STYLES[word] != style:
                raise _conflict(value)
            style = STYLES[word]
        elif word in ORDERS:
            if order is not None and ORDERS[word] != order:
                raise _conflict(value)
            order = ORDERS[word]
        elif word == "default":
            style, order = style or "ISO", order or "MDY"
        else:
            raise DateStyleError(f'invalid value for parameter "DateStyle": "{value}"',
                                 f'Unrecognized key word: "{raw.strip()}".')
    old_style, _, old_order = current.partition(", ")
    if order is None:
        order = "DMY" if style == "German" else old_order or "MDY"
    return f"{style or old_style or 'ISO'}, {order}"


def _conflict(value: str) -> DateStyleError:
    return DateStyleError(f'invalid value for parameter "DateStyle": "{value}"',
                          'Conflicting "datestyle" specifications.')


def _frac(us: int) -> str:
    return f".{us:06d}".rstrip("0") if us else ""


def _hms(v: dt.datetime | dt.time) -> str:
    return f"{v.hour:02d}:{v.minute:02d}:{v.second:02d}{_frac(v.microsecond)}"


def _offset(off: dt.timedelta | None) -> str:
    seconds = int((off or dt.timedelta(0)).total_seconds())
    sign = "+" if seconds >= 0 else "-"
    h, rem = divmod(abs(seconds), 3600)
    m, s = divmod(rem, 60)
    return f"{sign}{h:02d}" + (f":{m:02d}" if m or s else "") + (f":{s:02d}" if s else "")


def _zone(v: dt.datetime, spaced: bool) -> str:
    """The zone as PostgreSQL prints it after a non-ISO timestamp: its abbreviation, else
    the numeric offset."""
    name = v.tzname()  # tzdata's, numeric ones ("-03") included, as PostgreSQL prints them
    if name and not name.startswith("UTC+") and not name.startswith("UTC-"):
        return " " + name
    return (" " if spaced else "") + _offset(v.utcoffset())


def date_text(v: dt.date, style: str, order: str) -> str:
    y, m, d = f"{v.year:04d}", f"{v.month:02d}", f"{v.day:02d}"
    if style == "SQL":
        return f"{d}/{m}/{y}" if order == "DMY" else f"{m}/{d}/{y}"
    if style == "German":
        return f"{d}.{m}.{y}"
    if style == "Postgres":
        return f"{d}-{m}-{y}" if order == "DMY" else f"{m}-{d}-{y}"
    return f"{y}-{m}-{d}"


def timestamp_text(v: dt.datetime, style: str, order: str) -> str:
    aware = v.tzinfo is not None
    if style == "Postgres":
        day = f"{v.day:02d}"
        mon = _MONTHS[v.month - 1]
        when = f"{day} {mon}" if order == "DMY" else f"{mon} {day}"
        out = f"{_DAYS[v.weekday()]} {when} {_hms(v)} {v.year:04d}"
        return out + _zone(v, True) if aware else out
    if style in ("SQL", "German"):
        out = f"{date_text(v.date(), style, order)} {_hms(v)}"
        return out + _zone(v, False) if aware else out
    out = f"{v.year:04d}-{v.month:02d}-{v.day:02d} {_hms(v)}"
    return out + _offset(v.utcoffset()) if aware else out


def _fields(v: Any) -> tuple[int, int, int]:
    """(months, days, microseconds) of an interval value (pgproto.types.Interval or a
    timedelta, whose days and time share one sign)."""
    if isinstance(v, dt.timedelta):
        negative = v < dt.timedelta(0)
        a = -v if negative else v
        days, us = a.days, a.seconds * 1_000_000 + a.microseconds
        return (0, -days, -us) if negative else (0, days, us)
    return v.months, v.days, v.microseconds


def _split_time(us: int) -> tuple[int, int, int, int]:
    a = abs(us)
    h, rest = divmod(a, 3_600_000_000)
    m, rest = divmod(rest, 60_000_000)
    s, frac = divmod(rest, 1_000_000)
    return h, m, s, frac


def _seconds(sec: int, frac: int, fill: bool) -> str:
    """PostgreSQL's AppendSeconds of absolute values (``fill``: two digits)."""
    return (f"{sec:02d}" if fill else str(sec)) + _frac(frac)


def interval_text(v: Any, style: str) -> str:
    """PostgreSQL's ``EncodeInterval`` for ``postgres_verbose``, ``sql_standard`` and
    ``iso_8601``."""
    months, mday, us = _fields(v)
    year, mon = int(months / 12), months - 12 * int(months / 12)  # C's truncation
    h, mi, sec, frac = _split_time(us)
    sign = -1 if us < 0 else 1
    hour, minute = sign * h, sign * mi
    if style == "iso_8601":
        if not (months or mday or us):
            return "PT0S"
        out = "P" + "".join(f"{n}{u}" for n, u in ((year, "Y"), (mon, "M"), (mday, "D")) if n)
        if us:
            out += "T" + "".join(f"{n}{u}" for n, u in ((hour, "H"), (minute, "M")) if n)
            if sec or frac:
                out += ("-" if us < 0 else "") + _seconds(sec, frac, False) + "S"
        return out
    if style == "sql_standard":
        has_negative = months < 0 or mday < 0 or us < 0
        has_positive = months > 0 or mday > 0 or us > 0
        has_year_month, has_day_time = months != 0, bool(mday or us)
        standard = not (has_negative and has_positive) and not (has_year_month and has_day_time)
        if not has_negative and not has_positive:
            return "0"
        if not standard:
            ys = "-" if months < 0 else "+"
            ds = "-" if mday < 0 else "+"
            ts = "-" if us < 0 else "+"
            return (f"{ys}{abs(year)}-{abs(mon)} {ds}{abs(mday)} {ts}{h}:{mi:02d}:"
                    + _seconds(sec, frac, True))
        lead = "-" if has_negative else ""
        if has_year_month:
            return f"{lead}{abs(year)}-{abs(mon)}"
        if mday:
            return f"{lead}{abs(mday)} {h}:{mi:02d}:" + _seconds(sec, frac, True)
        return f"{lead}{h}:{mi:02d}:" + _seconds(sec, frac, True)
    # postgres_verbose: "@ 1 year 2 mons 3 days 4 hours 5 mins 6 secs", negatives as "ago"
    out = "@"
    is_zero, is_before = True, False
    for value, unit in ((year, "year"), (mon, "mon"), (mday, "day"), (hour, "hour"),
                        (minute, "min")):
        if value == 0:
            continue
        if is_zero:
            is_before, value = value < 0, abs(value)
        elif is_before:
            value = -value
        out += f" {value} {unit}{'' if value == 1 else 's'}"
        is_zero = False
    if sec or frac:
        out += " "
        if us < 0:
            if is_zero:
                is_before = True
            elif not is_before:
                out += "-"
        elif is_before:
            out += "-"
        out += _seconds(sec, frac, False) + (" sec" if sec == 1 and not frac else " secs")
        is_zero = False
    if is_zero:
        out += " 0"
    if is_before:
        out += " ago"
    return out


def text_encoder(type_oid: int, datestyle: str, intervalstyle: str
                 ) -> Callable[[Any], bytes] | None:
    """The text output of one ``type_oid`` in these styles; None where it is the default
    (``ISO`` dates, ``postgres`` intervals) or the type has no style."""
    from pgbarrier.pgproto import types as pgt  # the type oids (types imports nothing of this)

    style, _, order = datestyle.partition(", ")
    if type_oid in (pgt.DATE, pgt.TIMESTAMP, pgt.TIMESTAMPTZ) and style != "ISO":
        if type_oid == pgt.DATE:
            return lambda v: (date_text(v, style, order) if isinstance(v, dt.date)
                              else pgt.to_text(v)).encode()
        return lambda v: (timestamp_text(v, style, order) if isinstance(v, dt.datetime)
                          else pgt.to_text(v)).encode()
    if type_oid == pgt.INTERVAL and intervalstyle != "postgres":
        return lambda v: (interval_text(v, intervalstyle)
                          if isinstance(v, (dt.timedelta, pgt.Interval)) else pgt.to_text(v)).encode()
    return None
