"""Calendar schedules: five-field cron expressions and the next slot after an instant.

A leaf beside :mod:`pgbarrier.errors` (it imports nothing else of pgbarrier): the grammar
(:mod:`pgbarrier.sql.statements`, which must not import ``jobs/``) checks expressions with
it, and a job's schedule (:meth:`pgbarrier.jobs.registry.BatchRefreshJob.due_after_ms`)
finds its slots with it.

Pure: no clock, no I/O, no pgbarrier state; :func:`parse` reads an expression,
:func:`zone` a time zone name, :meth:`CronSchedule.next_after` answers "when is the first
slot strictly after this instant". Rules it keeps (issue 29, item 6):

* Five fields separated by blanks: minute (0-59), hour (0-23), day of month (1-31), month
  (1-12 or ``JAN``-``DEC``), day of week (0-7, 0 and 7 both Sunday, or ``SUN``-``SAT``);
  names are case-insensitive and may stand wherever a number may (``MON-FRI``). Each field
  is a comma-separated list of ``*``, ``n``, ``a-b``, each optionally ``/step`` (a positive
  step; ``n/step`` means ``n-max/step``, as cronie reads it). A range must not run
  backwards. Also the macros ``@yearly`` (``@annually``), ``@monthly``, ``@weekly``,
  ``@daily`` (``@midnight``) and ``@hourly``.
* Day of month and day of week, as Vixie cron (and so cronie and pg_cron) combine them:
  when either field starts with ``*`` (``*/2`` too), a day must match both (so only the
  other one restricts); when neither does, a day matching either one is a slot
  (``0 0 1,15 * MON``: the 1st, the 15th and every Monday).
* An expression that can never fire (``0 0 30 2 *``, ``0 0 31 4,6,9,11 *``) is refused.
* Any other malformed text is :class:`CronError`, naming the field that is wrong
  (``minute``, ``hour``, ``day-of-month``, ``month``, ``day-of-week``) or the count of
  fields; callers answer 22023 (:func:`check`).
* Time zones are IANA names read with :mod:`zoneinfo` (``Europe/Berlin``, ``UTC``; matched
  case-insensitively and kept in the database's spelling); a slot is a wall-clock time in
  that zone. The default zone is UTC (pg_cron's default is GMT).
* Daylight saving time, as Vixie cron / cronie and pg_cron treat a clock that jumps by
  less than three hours:

  - a *fixed-time* expression (neither the minute nor the hour field starts with ``*``)
    whose wall-clock slot falls in a skipped hour (spring forward) runs once, at the jump
    (Europe/Berlin ``30 2 * * *`` on the last Sunday of March runs at 03:00 CEST); several
    skipped slots collapse into that one run. In a repeated hour (fall back) it runs once,
    at the first occurrence (02:30 CEST, not again at 02:30 CET).
  - a *wildcard* expression (minute or hour field starts with ``*``: ``*/15 * * * *``,
    ``0 * * * *``) follows the clock: slots in a skipped hour do not exist and are not
    run, and each real instant of a repeated hour whose wall-clock time matches is a slot,
    so an hourly expression stays hourly in elapsed time (it runs at 02:00 CEST and at
    02:00 CET).
"""

from __future__ import annotations

import datetime as dt
import functools
import zoneinfo
from dataclasses import dataclass

from pgbarrier.errors import InvalidParameterValue

__all__ = ["CronError", "CronSchedule", "FIELDS", "check", "parse", "zone"]

UTC = dt.timezone.utc

#: (name, lowest, highest) of the five fields, in order
FIELDS: tuple[tuple[str, int, int], ...] = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day-of-month", 1, 31),
    ("month", 1, 12),
    ("day-of-week", 0, 7),
)

_MONTHS = {n: i for i, n in enumerate(
    ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"), 1)}
_DAYS = {n: i for i, n in enumerate(("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"))}
_NAMES = {"month": _MONTHS, "day-of-week": _DAYS}

_MACROS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

#: the longest day count of each month (February counts its leap day)
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
#: how far :meth:`CronSchedule.next_after` looks before giving up (a valid expression fires
#: at least once every 8 years: February 29 skips 2100, never two leap years in a row)
_HORIZON_DAYS = 366 * 9
HORIZON_MS = _HORIZON_DAYS * 86_400_000
#: how far back of an instant's wall-clock time a repeated hour may still hold a later slot
_FOLD_LOOKBACK = dt.timedelta(hours=3)


class CronError(ValueError):
    """A malformed cron expression; ``field`` names the part that is wrong (one of
    :data:`FIELDS`' names, or ``None`` when the count of fields is)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class CronSchedule:
    """A parsed expression: the values each field allows, and whether the day fields and
    the minute/hour fields start with ``*`` (the day rule and the DST rule read them)."""

    expression: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: frozenset[int]
    months: frozenset[int]
    #: 0 = Sunday ... 6 = Saturday (a 7 in the text is read as 0)
    weekdays: frozenset[int]
    dom_star: bool
    dow_star: bool
    #: the minute or the hour field starts with ``*`` (a wildcard job in cron's words)
    wildcard: bool

    # -- matching -------------------------------------------------------------------------

    def day_matches(self, day: dt.date) -> bool:
        if day.month not in self.months:
            return False
        dom = day.day in self.days
        dow = (day.isoweekday() % 7) in self.weekdays
        if self.dom_star or self.dow_star:
            return dom and dow
        return dom or dow

    def wall_times(self, start: dt.datetime) -> _WallTimes:
        """Matching naive wall-clock minutes at or after ``start`` (naive), in order."""
        return _WallTimes(self, start)

    # -- next slot --------------------------------------------------------------------------

    def next_after(self, instant: dt.datetime, tz: dt.tzinfo = UTC) -> dt.datetime | None:
        """The first slot strictly after ``instant`` (aware), as an aware UTC datetime, by
        the module's DST rule; ``None`` when there is none within :data:`_HORIZON_DAYS`."""
        after = instant.astimezone(UTC)
        local = after.astimezone(tz).replace(tzinfo=None, second=0, microsecond=0)
        start = local
        # a wildcard's second pass of a repeated hour has wall-clock times before the
        # instant's own: look back when the clock goes back within the lookback
        if self.wildcard and after.astimezone(tz).utcoffset() != \
                (after + _FOLD_LOOKBACK).astimezone(tz).utcoffset():
            start = local - _FOLD_LOOKBACK
        best: dt.datetime | None = None
        for wall in self.wall_times(start):
            first, second = _instants(wall, tz, self.wildcard)
            if second is not None and second > after and (best is None or second < best):
                best = second
            if first is not None and first > after:
                # the first instants of later walls only grow; a later wall's second
                # instant is later than its own first one
                return first if best is None or first < best else best
        return best


class _WallTimes:
    """Iterator over a schedule's matching wall-clock minutes from ``start`` on."""

    def __init__(self, sched: CronSchedule, start: dt.datetime) -> None:
        self._gen = self._walk(sched, start)

    def __iter__(self) -> _WallTimes:
        return self

    def __next__(self) -> dt.datetime:
        return next(self._gen)

    @staticmethod
    def _walk(sched: CronSchedule, start: dt.datetime):  # type: ignore[no-untyped-def]
        day = start.date()
        last = day + dt.timedelta(days=_HORIZON_DAYS)
        first_day = True
        while day <= last:
            if sched.day_matches(day):
                for h in sched.hours:
                    if first_day and h < start.hour:
                        continue
                    for m in sched.minutes:
                        if first_day and h == start.hour and m < start.minute:
                            continue
                        yield dt.datetime(day.year, day.month, day.day, h, m)
            first_day = False
            day += dt.timedelta(days=1)


def _instants(wall: dt.datetime, tz: dt.tzinfo, wildcard: bool
              ) -> tuple[dt.datetime | None, dt.datetime | None]:
    """The instants (aware UTC) a matching wall-clock minute fires at: (first, second).

    ``first`` is its only instant when it exists once, its earlier one in a repeated hour,
    the jump out of a skipped hour for a fixed-time job and None for a wildcard job there;
    ``second`` is the later instant of a repeated hour, for wildcard jobs only."""
    early = wall.replace(tzinfo=tz, fold=0)
    late = wall.replace(tzinfo=tz, fold=1)
    if early.utcoffset() == late.utcoffset():
        return early.astimezone(UTC), None
    u0, u1 = early.astimezone(UTC), late.astimezone(UTC)
    if u0.astimezone(tz).replace(tzinfo=None) == wall:  # exists twice: a repeated hour
        first, second = min(u0, u1), max(u0, u1)
        return first, (second if wildcard else None)
    if wildcard:  # in a skipped hour: no such time
        return None, None
    return _transition(min(u0, u1), max(u0, u1), tz), None


def _transition(lo: dt.datetime, hi: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    """The first instant in ``(lo, hi]`` whose UTC offset is ``hi``'s (the jump)."""
    after = hi.astimezone(tz).utcoffset()
    while hi - lo > dt.timedelta(seconds=1):
        mid = lo + (hi - lo) / 2
        mid = mid.replace(microsecond=0)
        if mid <= lo:
            break
        if mid.astimezone(tz).utcoffset() == after:
            hi = mid
        else:
            lo = mid
    return hi


# -- parsing ----------------------------------------------------------------------------------

def _number(text: str, field: str, low: int, high: int) -> int:
    names = _NAMES.get(field, {})
    upper = text.upper()
    if upper in names:
        return names[upper]
    if not (text.isascii() and text.isdigit()):
        raise CronError(f'{field} field: "{text}" is not a number'
                        + (" or a name" if names else ""), field)
    value = int(text)
    if not low <= value <= high:
        raise CronError(f"{field} field: {value} is out of range {low}-{high}", field)
    return value


def _field(text: str, field: str, low: int, high: int) -> set[int]:
    values: set[int] = set()
    for item in text.split(","):
        if not item:
            raise CronError(f'{field} field "{text}": empty list item', field)
        body, slash, step_text = item.partition("/")
        step = 1
        if slash:
            if not (step_text.isascii() and step_text.isdigit()) or int(step_text) == 0:
                raise CronError(f'{field} field "{item}": the step must be a positive number',
                                field)
            step = int(step_text)
        if body == "*":
            a, b = low, high
        elif "-" in body:
            left, _, right = body.partition("-")
            a, b = _number(left, field, low, high), _number(right, field, low, high)
            if a > b:
                raise CronError(f'{field} field "{item}": the range runs backwards', field)
        else:
            a = _number(body, field, low, high)
            b = high if slash else a
        values.update(range(a, b + 1, step))
    return values


@functools.lru_cache(maxsize=256)
def parse(expression: str) -> CronSchedule:
    """Read a five-field expression (or a macro); :class:`CronError` when malformed."""
    text = " ".join(expression.split())
    parts = _MACROS.get(text.lower(), text).split(" ") if text else []
    if len(parts) != 5:
        raise CronError(f"a cron expression has 5 fields (minute hour day-of-month month "
                        f"day-of-week), not {len(parts)}")
    sets = [_field(p, name, low, high) for p, (name, low, high) in zip(parts, FIELDS)]
    minutes, hours, days, months, weekdays = sets
    weekdays = {d % 7 for d in weekdays}
    dom_star, dow_star = parts[2].startswith("*"), parts[4].startswith("*")
    if dow_star or not weekdays:  # only the day of month restricts the day
        if not any(d <= _MONTH_DAYS[m - 1] for m in months for d in days):
            raise CronError(f'day-of-month field "{parts[2]}": no such day in month '
                            f'field "{parts[3]}"', "day-of-month")
    return CronSchedule(
        expression=text, minutes=tuple(sorted(minutes)), hours=tuple(sorted(hours)),
        days=frozenset(days), months=frozenset(months), weekdays=frozenset(weekdays),
        dom_star=dom_star, dow_star=dow_star,
        wildcard=parts[0].startswith("*") or parts[1].startswith("*"))


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] + "."


@functools.lru_cache(maxsize=1)
def _zone_names() -> dict[str, str]:
    return {name.lower(): name for name in zoneinfo.available_timezones()}


@functools.lru_cache(maxsize=256)
def zone(name: str) -> zoneinfo.ZoneInfo:
    """The time zone of an IANA name (case-insensitive); ``KeyError`` when unknown."""
    key = _zone_names().get(name.strip().lower())
    if key is None:
        raise KeyError(name)
    return zoneinfo.ZoneInfo(key)


def check(expression: str, timezone: str | None, *, what: str = 'parameter "refresh.cron"',
          zone_what: str = 'parameter "refresh.timezone"', position: int | None = None
          ) -> tuple[str, str]:
    """The expression and zone name as kept (blanks collapsed; the zone as the database
    spells it, UTC when None), or PostgreSQL's 22023 ``invalid value for <what>: "text"``
    whose DETAIL names the field that is wrong (``zone_what`` for an unknown zone, DETAIL
    ``time zone "x" not recognized``, PostgreSQL's words)."""
    try:
        sched = parse(expression)
    except CronError as exc:
        raise InvalidParameterValue(f'invalid value for {what}: "{expression}"',
                                    detail=_sentence(str(exc)), position=position) from None
    if timezone is None:
        return sched.expression, "UTC"
    try:
        tz = zone(timezone)
    except KeyError:
        unknown = f'time zone "{timezone}" not recognized'
        if zone_what == "AT TIME ZONE":  # PostgreSQL's words for its AT TIME ZONE
            raise InvalidParameterValue(unknown, position=position) from None
        raise InvalidParameterValue(f'invalid value for {zone_what}: "{timezone}"',
                                    detail=unknown, position=position) from None
    return sched.expression, tz.key
