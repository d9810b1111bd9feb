"""jobs/cron.py: five-field cron expressions and their next slot (issue 29, item 6)."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from pgbarrier.errors import InvalidParameterValue
from pgbarrier.cron import CronError, check, parse, zone

UTC = dt.timezone.utc
BERLIN = zone("Europe/Berlin")
NEW_YORK = zone("America/New_York")


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


def nxt(expr: str, after: dt.datetime, tz: dt.tzinfo = UTC) -> dt.datetime:
    slot = parse(expr).next_after(after, tz)
    assert slot is not None
    return slot


def local(expr: str, after: dt.datetime, tz: dt.tzinfo) -> str:
    """The next slot as local wall-clock text with its UTC offset."""
    return nxt(expr, after, tz).astimezone(tz).isoformat()


def slots(expr: str, after: dt.datetime, n: int, tz: dt.tzinfo = UTC) -> list[str]:
    out = []
    for _ in range(n):
        after = nxt(expr, after, tz)
        out.append(after.astimezone(tz).isoformat())
    return out


# -- parsing ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("expr", "field", "words"), [
    ("", None, "5 fields"),
    ("* * * *", None, "not 4"),
    ("0 * * * * *", None, "not 6"),
    ("60 * * * *", "minute", "60 is out of range 0-59"),
    ("-1 * * * *", "minute", '"" is not a number'),
    ("a * * * *", "minute", '"a" is not a number'),
    ("MON * * * *", "minute", '"MON" is not a number'),
    ("1.5 * * * *", "minute", '"1.5" is not a number'),
    ("* 24 * * *", "hour", "24 is out of range 0-23"),
    ("* * 0 * *", "day-of-month", "0 is out of range 1-31"),
    ("* * 32 * *", "day-of-month", "32 is out of range 1-31"),
    ("* * * 0 *", "month", "0 is out of range 1-12"),
    ("* * * 13 *", "month", "13 is out of range 1-12"),
    ("* * * FOO *", "month", '"FOO" is not a number or a name'),
    ("* * * * 8", "day-of-week", "8 is out of range 0-7"),
    ("* * * * SUNDAY", "day-of-week", '"SUNDAY" is not a number or a name'),
    ("*/0 * * * *", "minute", "the step must be a positive number"),
    ("*/x * * * *", "minute", "the step must be a positive number"),
    ("*/ * * * *", "minute", "the step must be a positive number"),
    ("5-1 * * * *", "minute", "the range runs backwards"),
    ("* * * * FRI-MON", "day-of-week", "the range runs backwards"),
    ("1,,2 * * * *", "minute", "empty list item"),
    ("1, * * * *", "minute", "empty list item"),
    ("* 1-2-3 * * *", "hour", '"2-3" is not a number'),
    ("0 0 30 2 *", "day-of-month", "no such day"),
    ("0 0 31 4,6,9,11 *", "day-of-month", "no such day"),
    ("@often", None, "5 fields"),
])
def test_malformed_expressions_name_the_field(expr, field, words):
    with pytest.raises(CronError) as e:
        parse(expr)
    assert e.value.field == field
    assert words in str(e.value)
    if field is not None:
        assert str(e.value).startswith(field)


def test_check_is_22023_with_the_field_in_the_detail():
    with pytest.raises(InvalidParameterValue) as e:
        check("0 25 * * *", None)
    assert e.value.sqlstate == "22023"
    assert e.value.message == 'invalid value for parameter "refresh.cron": "0 25 * * *"'
    assert e.value.detail == "Hour field: 25 is out of range 0-23."
    with pytest.raises(InvalidParameterValue) as e:
        check("0 3 * * *", "Mars/Olympus_Mons", what="BATCH REFRESH CRON",
              zone_what="AT TIME ZONE")
    assert e.value.message == 'time zone "Mars/Olympus_Mons" not recognized'
    with pytest.raises(InvalidParameterValue) as e:
        check("0 3 * * *", "Europe/Nowhere")
    assert (e.value.message, e.value.detail) == (
        'invalid value for parameter "refresh.timezone": "Europe/Nowhere"',
        'time zone "Europe/Nowhere" not recognized')
    for bad in ("", "../etc/passwd", "/usr/share/zoneinfo/UTC", "Europe/"):
        with pytest.raises(InvalidParameterValue):
            check("* * * * *", bad)


def test_check_keeps_the_expression_and_the_zone_spelled_as_the_database_does():
    assert check("  0   3 * *\t*  ", None) == ("0 3 * * *", "UTC")
    assert check("0 3 * * *", "europe/berlin") == ("0 3 * * *", "Europe/Berlin")
    assert check("@daily", "AMERICA/NEW_YORK") == ("@daily", "America/New_York")


def test_fields_lists_ranges_steps_and_names():
    s = parse("*/15 9-17/4 1,15,L-L * MON-FRI".replace(",L-L", ""))
    assert s.minutes == (0, 15, 30, 45)
    assert s.hours == (9, 13, 17)
    assert s.days == {1, 15}
    assert s.months == set(range(1, 13))
    assert s.weekdays == {1, 2, 3, 4, 5}
    s = parse("5/20 0,12 * jan,Jul-aug/1 sun,7,6")
    assert s.minutes == (5, 25, 45)  # n/step: n to the end, by step (cronie)
    assert s.hours == (0, 12)
    assert s.months == {1, 7, 8}
    assert s.weekdays == {0, 6}  # 7 is Sunday too
    assert parse("0-59/30 * * * *").minutes == (0, 30)
    assert parse("7 * * * */2").weekdays == {0, 2, 4, 6}
    assert parse("1-3,2-4 * * * *").minutes == (1, 2, 3, 4)


@pytest.mark.parametrize(("macro", "same"), [
    ("@yearly", "0 0 1 1 *"), ("@annually", "0 0 1 1 *"), ("@monthly", "0 0 1 * *"),
    ("@weekly", "0 0 * * 0"), ("@daily", "0 0 * * *"), ("@midnight", "0 0 * * *"),
    ("@HOURLY", "0 * * * *"),
])
def test_macros(macro, same):
    after = utc(2027, 5, 17, 13, 21)
    assert slots(macro, after, 3) == slots(same, after, 3)


def test_wildcard_is_a_star_in_the_minute_or_hour_field():
    assert parse("* 3 * * *").wildcard and parse("0 */2 * * *").wildcard
    assert not parse("0 3 * * *").wildcard and not parse("0-59 0-23 * * *").wildcard


# -- next slot, UTC ----------------------------------------------------------------------------

def test_next_slot_is_strictly_after():
    assert nxt("* * * * *", utc(2027, 1, 1, 0, 0)) == utc(2027, 1, 1, 0, 1)
    assert nxt("* * * * *", utc(2027, 1, 1, 0, 0, 0, 1)) == utc(2027, 1, 1, 0, 1)
    assert nxt("* * * * *", utc(2027, 1, 1, 0, 0, 59, 999999)) == utc(2027, 1, 1, 0, 1)
    assert nxt("0 3 * * *", utc(2027, 1, 1, 3, 0)) == utc(2027, 1, 2, 3, 0)
    assert nxt("0 3 * * *", utc(2027, 1, 1, 2, 59, 59)) == utc(2027, 1, 1, 3, 0)
    assert nxt("59 23 31 12 *", utc(2027, 12, 31, 23, 59)) == utc(2028, 12, 31, 23, 59)


def test_the_answer_is_utc_whatever_the_zone_of_the_instant():
    after = dt.datetime(2027, 6, 1, 12, 0, tzinfo=BERLIN)  # 10:00 UTC
    assert nxt("30 10 * * *", after) == utc(2027, 6, 1, 10, 30)
    assert nxt("30 10 * * *", after).tzinfo is UTC


def test_month_ends_and_leap_years():
    assert slots("0 0 31 * *", utc(2027, 1, 31, 12), 4) == [
        "2027-03-31T00:00:00+00:00", "2027-05-31T00:00:00+00:00",
        "2027-07-31T00:00:00+00:00", "2027-08-31T00:00:00+00:00"]
    assert slots("0 0 29 2 *", utc(2027, 1, 1), 3) == [
        "2028-02-29T00:00:00+00:00", "2032-02-29T00:00:00+00:00",
        "2036-02-29T00:00:00+00:00"]
    # 2100 is not a leap year: eight years between two February 29ths
    assert nxt("0 0 29 2 *", utc(2097, 1, 1)) == utc(2104, 2, 29)
    assert nxt("0 0 29 2 *", utc(2000, 1, 1)) == utc(2000, 2, 29)  # 2000 is
    assert slots("0 12 28-31 2 *", utc(2028, 2, 27), 3) == [
        "2028-02-28T12:00:00+00:00", "2028-02-29T12:00:00+00:00",
        "2029-02-28T12:00:00+00:00"]
    assert nxt("0 0 1 * *", utc(2027, 12, 15)) == utc(2028, 1, 1)


def test_day_of_month_and_day_of_week_vixie_rule():
    # neither starts with *: either matches (1st, 15th, and Mondays)
    assert slots("0 0 1,15 * MON", utc(2027, 2, 27), 5) == [
        "2027-03-01T00:00:00+00:00", "2027-03-08T00:00:00+00:00",
        "2027-03-15T00:00:00+00:00", "2027-03-22T00:00:00+00:00",
        "2027-03-29T00:00:00+00:00"]
    # the day of week field starts with *: only the day of month restricts
    assert slots("0 0 13 * *", utc(2027, 1, 1), 2) == [
        "2027-01-13T00:00:00+00:00", "2027-02-13T00:00:00+00:00"]
    # the day of month starts with * (also */n): both must match
    assert slots("0 0 * * FRI", utc(2027, 8, 1), 2) == [
        "2027-08-06T00:00:00+00:00", "2027-08-13T00:00:00+00:00"]
    assert slots("0 0 */2 * FRI", utc(2027, 8, 1), 3) == [
        "2027-08-13T00:00:00+00:00", "2027-08-27T00:00:00+00:00",
        "2027-09-03T00:00:00+00:00"]  # odd days (1, 3, ...) that are Fridays
    # Friday the 13th is not what "13 * FRI" means in cron: it is the 13th OR Fridays
    assert slots("0 0 13 * 5", utc(2027, 8, 1), 3) == [
        "2027-08-06T00:00:00+00:00", "2027-08-13T00:00:00+00:00",
        "2027-08-20T00:00:00+00:00"]
    # a day that never exists is still a valid expression when the weekday can match
    assert nxt("0 0 31 2 MON", utc(2027, 2, 1, 1)) == utc(2027, 2, 8)


def test_steps_across_hours_and_days():
    assert slots("*/20 22-23 * * *", utc(2027, 3, 1, 23, 30), 3) == [
        "2027-03-01T23:40:00+00:00", "2027-03-02T22:00:00+00:00",
        "2027-03-02T22:20:00+00:00"]
    assert slots("0 0 * JAN,JUL *", utc(2027, 1, 31, 1), 2) == [
        "2027-07-01T00:00:00+00:00", "2027-07-02T00:00:00+00:00"]


def _brute_force(expr: str, after: dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    """Every real minute after ``after``, in order, until one's wall-clock time matches."""
    sched = parse(expr)
    t = after.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)
    while True:
        wall = t.astimezone(tz)
        if (wall.minute in sched.minutes and wall.hour in sched.hours
                and sched.day_matches(wall.date())):
            return t
        t += dt.timedelta(minutes=1)


@pytest.mark.parametrize("tz", [UTC, BERLIN, NEW_YORK], ids=["UTC", "Berlin", "New_York"])
def test_wildcard_expressions_agree_with_a_minute_by_minute_scan(tz):
    """A wildcard expression follows the clock: its slots are exactly the real minutes
    whose wall-clock time matches (DST days included)."""
    rng = random.Random(29)
    exprs = ["* * * * *", "*/7 * * * *", "13 * * * *", "*/30 1-3 * * *", "0 * 1,31 * *",
             "5 * * * SAT,SUN", "*/10 2 * 3,10,11 0", "0 * */3 * 1-5"]
    starts = [utc(2027, 3, 27, 23, 0), utc(2027, 3, 14, 5, 30), utc(2027, 10, 30, 23, 30),
              utc(2027, 11, 7, 4, 45), utc(2028, 2, 28, 22, 0)]
    for expr in exprs:
        for start in starts:
            after = start + dt.timedelta(seconds=rng.randrange(0, 3 * 3600))
            for _ in range(4):
                want = _brute_force(expr, after, tz)
                assert nxt(expr, after, tz) == want, (expr, after)
                after = want


# -- DST -------------------------------------------------------------------------------------

def test_berlin_spring_forward_fixed_time_runs_once_at_the_jump():
    # 2027-03-28: 02:00 CET jumps to 03:00 CEST (01:00 UTC)
    before = utc(2027, 3, 27, 12)
    assert local("30 2 * * *", before, BERLIN) == "2027-03-28T03:00:00+02:00"
    assert nxt("30 2 * * *", before, BERLIN) == utc(2027, 3, 28, 1, 0)
    # the day after it is 02:30 again
    assert local("30 2 * * *", utc(2027, 3, 28, 1, 0), BERLIN) == "2027-03-29T02:30:00+02:00"
    # several skipped slots: one run at the jump, then the next real slot
    assert slots("0,15,45 2 * * *", before, 3, BERLIN) == [
        "2027-03-28T03:00:00+02:00", "2027-03-29T02:00:00+02:00",
        "2027-03-29T02:15:00+02:00"]
    # a slot in the gap and one at 03:00 are the same run
    assert slots("0 2,3 * * *", before, 2, BERLIN) == [
        "2027-03-28T03:00:00+02:00", "2027-03-29T02:00:00+02:00"]
    # untouched slots around the gap
    assert slots("59 1 * * *", before, 1, BERLIN) == ["2027-03-28T01:59:00+01:00"]


def test_berlin_spring_forward_wildcard_skips_what_does_not_exist():
    before = utc(2027, 3, 28, 0, 30)  # 01:30 CET
    assert slots("0 * * * *", before, 2, BERLIN) == [
        "2027-03-28T03:00:00+02:00", "2027-03-28T04:00:00+02:00"]
    assert slots("*/30 2 * * *", before, 2, BERLIN) == [
        "2027-03-29T02:00:00+02:00", "2027-03-29T02:30:00+02:00"]


def test_berlin_fall_back_fixed_time_runs_once():
    # 2027-10-31: 03:00 CEST goes back to 02:00 CET (01:00 UTC); 02:xx happens twice
    before = utc(2027, 10, 30, 12)
    first = nxt("30 2 * * *", before, BERLIN)
    assert first.astimezone(BERLIN).isoformat() == "2027-10-31T02:30:00+02:00"
    assert local("30 2 * * *", first, BERLIN) == "2027-11-01T02:30:00+01:00"
    # asked during the second pass of the hour, after the first 02:30: tomorrow
    assert local("30 2 * * *", utc(2027, 10, 31, 1, 10), BERLIN) == \
        "2027-11-01T02:30:00+01:00"
    assert slots("0 1,2,3 * * *", before, 4, BERLIN) == [
        "2027-10-31T01:00:00+02:00", "2027-10-31T02:00:00+02:00",
        "2027-10-31T03:00:00+01:00", "2027-11-01T01:00:00+01:00"]


def test_berlin_fall_back_wildcard_follows_the_clock():
    before = utc(2027, 10, 30, 23, 30)  # 01:30 CEST
    assert slots("0 * * * *", before, 4, BERLIN) == [
        "2027-10-31T02:00:00+02:00", "2027-10-31T02:00:00+01:00",
        "2027-10-31T03:00:00+01:00", "2027-10-31T04:00:00+01:00"]
    # elapsed time stays hourly
    got = [nxt("0 * * * *", before, BERLIN)]
    for _ in range(3):
        got.append(nxt("0 * * * *", got[-1], BERLIN))
    assert {b - a for a, b in zip(got, got[1:])} == {dt.timedelta(hours=1)}
    # asked in the first pass, the second pass's earlier wall-clock slot comes next
    assert local("*/20 2 * * *", utc(2027, 10, 31, 0, 50), BERLIN) == \
        "2027-10-31T02:00:00+01:00"


def test_new_york_spring_forward_and_fall_back():
    # 2027-03-14: 02:00 EST jumps to 03:00 EDT (07:00 UTC)
    assert local("30 2 * * *", utc(2027, 3, 13, 12), NEW_YORK) == "2027-03-14T03:00:00-04:00"
    assert nxt("30 2 * * *", utc(2027, 3, 13, 12), NEW_YORK) == utc(2027, 3, 14, 7)
    assert slots("15 * * * *", utc(2027, 3, 14, 6, 20), 2, NEW_YORK) == [
        "2027-03-14T03:15:00-04:00", "2027-03-14T04:15:00-04:00"]
    # 2027-11-07: 02:00 EDT goes back to 01:00 EST (06:00 UTC); 01:xx happens twice
    assert slots("30 1 * * *", utc(2027, 11, 6, 12), 2, NEW_YORK) == [
        "2027-11-07T01:30:00-04:00", "2027-11-08T01:30:00-05:00"]
    assert slots("30 * * * *", utc(2027, 11, 7, 4, 40), 3, NEW_YORK) == [
        "2027-11-07T01:30:00-04:00", "2027-11-07T01:30:00-05:00",
        "2027-11-07T02:30:00-05:00"]
    # daily at midnight is untouched by either change
    assert slots("0 0 * * *", utc(2027, 3, 13, 12), 2, NEW_YORK) == [
        "2027-03-14T00:00:00-05:00", "2027-03-15T00:00:00-04:00"]


def test_a_zone_whose_gap_is_at_midnight():
    # America/Santiago: 2027-09-05 00:00 jumps to 01:00 (the day starts at 01:00)
    santiago = zone("America/Santiago")
    assert local("0 0 * * *", utc(2027, 9, 4, 12), santiago) == "2027-09-05T01:00:00-03:00"
    assert local("0 0 5 9 *", utc(2027, 9, 4, 12), santiago) == "2027-09-05T01:00:00-03:00"


def test_half_hour_dst():
    # Australia/Lord_Howe moves by 30 minutes: 2027-10-03 02:00 -> 02:30
    lord_howe = zone("Australia/Lord_Howe")
    assert local("15 2 * * *", utc(2027, 10, 2, 0), lord_howe) == "2027-10-03T02:30:00+11:00"
    assert local("*/10 2 * * *", utc(2027, 10, 2, 15, 20), lord_howe) == \
        "2027-10-03T02:30:00+11:00"
