"""Calendar schedules (issue 29, item 6): BATCH REFRESH CRON '...' [AT TIME ZONE '...'],
WITH (refresh.cron, refresh.timezone) and ALTER MATERIALIZED VIEW ... SET / RESET of them,
on both data backends.

The in-process server runs on a manual clock that starts at a known instant (2027-03-27
23:55:30 UTC, half an hour before Europe/Berlin springs forward), so slots are at known
wall-clock times and no test waits for one: tests move time with ``clock.advance`` and let
FLUSH checkpoints carry it (see test_batch_refresh.Harness). One test on a real server and
the real clock waits for an every-minute slot (at most ~70 s), and one restarts a server
after kill -9 on both meta stores.
"""

from __future__ import annotations

import datetime as dt
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import start_server, stop_server
from test_batch_refresh import Harness, in_process
from test_durability import meta_args  # noqa: F401 - a fixture: SQLite, then PostgreSQL

UTC = dt.timezone.utc
START = dt.datetime(2027, 3, 27, 23, 55, 30, tzinfo=UTC)
#: Europe/Berlin's spring-forward jump: 2027-03-28 02:00 CET is 03:00 CEST
JUMP = dt.datetime(2027, 3, 28, 1, 0, tzinfo=UTC)


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def h(request) -> Iterator[Harness]:
    with in_process(request.param, int(START.timestamp() * 1000)) as harness:
        yield harness


def _n(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:6]}"


def _now(h: Harness) -> dt.datetime:
    return dt.datetime.fromtimestamp(h.clock.now_ms() / 1000, UTC)


def _next_minute(t: dt.datetime) -> dt.datetime:
    return t.replace(second=0, microsecond=0) + dt.timedelta(minutes=1)


def _advance_to(h: Harness, t: dt.datetime) -> None:
    h.clock.advance(int(t.timestamp() * 1000) - h.clock.now_ms())


def _job(conn, view: str) -> tuple:
    return conn.execute(
        "SELECT refresh_interval_sec, refresh_cron, refresh_timezone, next_refresh_at "
        f"FROM rw_catalog.rw_batch_refresh_jobs WHERE name = '{view}'").fetchone()


def test_every_minute_runs_at_the_minute_boundary(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        assert c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH CRON '* * * * *' "
                         f"AS SELECT id FROM {t}").statusmessage == "CREATE MATERIALIZED VIEW"
        boundary = _next_minute(_now(h))
        assert _job(c, v) == (None, "* * * * *", "UTC", boundary)
        c.execute(f"INSERT INTO {t} VALUES (1)")
        _advance_to(h, boundary - dt.timedelta(milliseconds=500))
        h.settle(c)
        assert h.wait_run(v) is None, "not before the minute boundary"
        _advance_to(h, boundary + dt.timedelta(milliseconds=200))
        h.settle(c)
        run = h.wait_run(v)
        assert run is not None and (run.trigger, run.status, run.rows) == \
            ("schedule", "succeeded", 1)
        assert boundary <= run.started_at < boundary + dt.timedelta(seconds=1)
        assert c.execute(f"SELECT count(*) FROM {v}").fetchone() == (1,)
        # the next slot is the next minute, not 60 s after the run
        assert _job(c, v)[3] == boundary + dt.timedelta(minutes=1)
        # a long gap (pgbarrier down, say): the view runs once, not once per missed minute
        _advance_to(h, boundary + dt.timedelta(minutes=5, seconds=10))
        h.settle(c)
        again = h.wait_run(v)
        assert again.run_id != run.run_id and again.status == "succeeded"
        h.settle(c)
        runs = c.execute("SELECT count(*) FROM rw_catalog.rw_refresh_history "
                         f"WHERE job = '{v}' AND trigger = 'schedule'").fetchone()[0]
        assert runs == 2
        assert _job(c, v)[3] == boundary + dt.timedelta(minutes=6)


def test_with_options_are_the_same_schedule(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.cron = '0 12 * * MON-FRI', "
                  f"refresh.timezone = 'america/new_york') AS SELECT id FROM {t}")
        # the clock is on Sunday 2027-03-28 (UTC); Monday noon in New York is 16:00 UTC
        assert _now(h) < dt.datetime(2027, 3, 29, tzinfo=UTC)
        assert _job(c, v) == (None, "0 12 * * MON-FRI", "America/New_York",
                              dt.datetime(2027, 3, 29, 16, 0, tzinfo=UTC))


@pytest.mark.parametrize(("clause", "message", "detail"), [
    ("BATCH REFRESH CRON '* * * *'", 'invalid value for BATCH REFRESH CRON: "* * * *"',
     "A cron expression has 5 fields (minute hour day-of-month month day-of-week), not 4."),
    ("BATCH REFRESH CRON '0 24 * * *'", 'invalid value for BATCH REFRESH CRON: "0 24 * * *"',
     "Hour field: 24 is out of range 0-23."),
    ("BATCH REFRESH CRON '*/0 * * * *'", 'invalid value for BATCH REFRESH CRON: "*/0 * * * *"',
     'Minute field "*/0": the step must be a positive number.'),
    ("BATCH REFRESH CRON '0 0 30 2 *'", 'invalid value for BATCH REFRESH CRON: "0 0 30 2 *"',
     'Day-of-month field "30": no such day in month field "2".'),
    ("BATCH REFRESH CRON '0 3 * * *' AT TIME ZONE 'Europe/Atlantis'",
     'time zone "Europe/Atlantis" not recognized', None),
    ("WITH (refresh.cron = '0 3 * * 9')", 'invalid value for parameter "refresh.cron": '
     '"0 3 * * 9"', "Day-of-week field: 9 is out of range 0-7."),
    ("WITH (refresh.cron = '0 3 * * *', refresh.timezone = 'CEST+2')",
     'invalid value for parameter "refresh.timezone": "CEST+2"',
     'time zone "CEST+2" not recognized'),
])
def test_malformed_cron_and_unknown_zones_are_22023_and_create_nothing(h, clause, message,
                                                                       detail):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        with pytest.raises(pgerr.InvalidParameterValue) as e:
            c.execute(f"CREATE MATERIALIZED VIEW {v} {clause} AS SELECT id FROM {t}")
        assert (e.value.sqlstate, e.value.diag.message_primary, e.value.diag.message_detail) \
            == ("22023", message, detail)
        assert c.execute("SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs "
                         f"WHERE name = '{v}'").fetchone() == (0,)
        with pytest.raises(pgerr.UndefinedTable):
            c.execute(f"SELECT * FROM {v}")


def test_alter_switches_between_interval_and_cron(h):
    t, v = _n("t"), _n("v")
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH EVERY 1 HOUR AS SELECT id FROM {t}")
        assert _job(c, v)[:3] == (3600, None, None)
        c.execute(f"ALTER MATERIALIZED VIEW {v} SET (refresh.cron = '*/2 * * * *')")
        now = _now(h)
        even = _next_minute(now)
        if even.minute % 2:
            even += dt.timedelta(minutes=1)
        assert _job(c, v) == (None, "*/2 * * * *", "UTC", even)
        # in effect at once: it runs at that slot
        c.execute(f"INSERT INTO {t} VALUES (1)")
        _advance_to(h, even + dt.timedelta(milliseconds=100))
        h.settle(c)
        run = h.wait_run(v)
        assert run is not None and (run.trigger, run.rows) == ("schedule", 1)
        assert _job(c, v)[3] == even + dt.timedelta(minutes=2)

        c.execute(f"ALTER MATERIALIZED VIEW {v} SET (refresh.timezone = 'Asia/Kolkata')")
        assert _job(c, v)[1:3] == ("*/2 * * * *", "Asia/Kolkata")
        # a new expression keeps the zone
        c.execute(f"ALTER MATERIALIZED VIEW {v} SET (refresh.cron = '30 5 * * *')")
        # 05:30 in Kolkata (+05:30) is midnight UTC
        assert _job(c, v) == (None, "30 5 * * *", "Asia/Kolkata",
                              dt.datetime(2027, 3, 29, 0, 0, tzinfo=UTC))
        c.execute(f"ALTER MATERIALIZED VIEW {v} RESET (refresh.timezone)")
        assert _job(c, v)[1:] == ("30 5 * * *", "UTC", dt.datetime(2027, 3, 28, 5, 30,
                                                                    tzinfo=UTC))
        # bad values change nothing
        for options, error in [
            ("SET (refresh.cron = '30 5 * * * *')", pgerr.InvalidParameterValue),
            ("SET (refresh.timezone = 'Nowhere/Town')", pgerr.InvalidParameterValue),
            ("SET (refresh.cron = '* * * * *', refresh.interval.sec = 5)", pgerr.SyntaxError),
            ("SET (refresh.cron = '* * * * *', refresh.cron = '0 * * * *')",
             pgerr.InvalidParameterValue),
        ]:
            with pytest.raises(error):
                c.execute(f"ALTER MATERIALIZED VIEW {v} {options}")
            assert _job(c, v)[:3] == (None, "30 5 * * *", "UTC"), options
        # an interval again: the expression and zone are gone
        c.execute(f"ALTER MATERIALIZED VIEW {v} SET (refresh.interval.sec = 90)")
        assert _job(c, v)[:3] == (90, None, None)
        with pytest.raises(pgerr.InvalidParameterValue) as e:
            c.execute(f"ALTER MATERIALIZED VIEW {v} SET (refresh.timezone = 'UTC')")
        assert e.value.diag.message_primary == \
            'parameter "refresh.timezone" needs a cron schedule'
        assert _job(c, v)[:3] == (90, None, None)
        # RESET (refresh.cron): the default schedule, every 60 s
        c.execute(f"ALTER MATERIALIZED VIEW {v} SET (refresh.cron = '0 0 1 1 *', "
                  "refresh.timezone = 'Pacific/Auckland')")
        assert _job(c, v)[:3] == (None, "0 0 1 1 *", "Pacific/Auckland")
        c.execute(f"ALTER MATERIALIZED VIEW {v} RESET (refresh.cron)")
        assert _job(c, v)[:3] == (60, None, None)


def test_a_fixed_time_slot_in_the_skipped_hour_runs_at_the_jump(h):
    """Europe/Berlin, 2027-03-28: 02:30 does not exist; a daily 02:30 view runs once at the
    jump (03:00 CEST, 01:00 UTC), and at 02:30 CEST the day after (Vixie cron's rule)."""
    t, v = _n("t"), _n("v")
    assert _now(h) < JUMP, "the tests before this one keep the clock before the jump"
    with h.connect() as c:
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH CRON '30 2 * * *' "
                  f"AT TIME ZONE 'Europe/Berlin' AS SELECT id FROM {t}")
        assert _job(c, v) == (None, "30 2 * * *", "Europe/Berlin", JUMP)
        c.execute(f"INSERT INTO {t} VALUES (7)")
        _advance_to(h, JUMP - dt.timedelta(seconds=1))
        h.settle(c)
        assert h.wait_run(v) is None
        _advance_to(h, JUMP + dt.timedelta(milliseconds=300))
        h.settle(c)
        run = h.wait_run(v)
        assert run is not None and (run.trigger, run.rows) == ("schedule", 1)
        assert _job(c, v)[3] == dt.datetime(2027, 3, 29, 0, 30, tzinfo=UTC)


def test_a_real_clock_every_minute_view_runs_at_the_boundary():
    """A real server on the system clock (its due alarm, no test clock): the scheduled run
    starts within a second or two of the minute boundary. Waits up to ~70 s."""
    srv = start_server("--data-dir", ":memory:")
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            c.execute("CREATE TABLE t (id INT)")
            c.execute("CREATE MATERIALIZED VIEW v BATCH REFRESH CRON '* * * * *' "
                      "AS SELECT id FROM t")
            created = c.execute("SELECT next_refresh_at, now() FROM "
                                "rw_catalog.rw_batch_refresh_jobs WHERE name = 'v'").fetchone()
            due = created[0]
            assert due.second == 0 and due.microsecond == 0
            assert dt.timedelta(0) < due - created[1] <= dt.timedelta(seconds=61)
            c.execute("INSERT INTO t VALUES (1)")
            deadline = time.monotonic() + 75
            row = None
            while time.monotonic() < deadline:
                row = c.execute("SELECT started_at, status FROM rw_catalog.rw_refresh_history "
                                "WHERE job = 'v' AND trigger = 'schedule' AND status <> 'running'"
                                ).fetchone()
                if row is not None:
                    break
                time.sleep(0.2)  # polling a condition against a deadline
            assert row is not None, "no scheduled run within 75 s"
            assert row[1] == "succeeded"
            assert due <= row[0] < due + dt.timedelta(seconds=3)
            assert c.execute("SELECT count(*) FROM v").fetchone() == (1,)
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def _next_new_year_in_tokyo(now: dt.datetime) -> dt.datetime:
    """January 1st 03:00 in Asia/Tokyo (+09:00, no DST) is December 31st 18:00 UTC."""
    slot = dt.datetime(now.year, 12, 31, 18, tzinfo=UTC)
    return slot if slot > now else slot.replace(year=now.year + 1)


def test_a_cron_schedule_survives_kill9(tmp_path, meta_args):
    srv = start_server("--data-dir", str(tmp_path / "data"), *meta_args)
    with psycopg.connect(srv.dsn(), autocommit=True) as c:
        c.execute("CREATE TABLE t (id INT)")
        c.execute("CREATE MATERIALIZED VIEW v BATCH REFRESH CRON '0 3 1 1 *' "
                  "AT TIME ZONE 'Asia/Tokyo' AS SELECT id FROM t")
        c.execute("CREATE MATERIALIZED VIEW w BATCH REFRESH EVERY 1 HOUR AS SELECT id FROM t")
        c.execute("ALTER MATERIALIZED VIEW w SET (refresh.cron = '0 3 1 1 *', "
                  "refresh.timezone = 'Asia/Tokyo')")
    srv.proc.kill()
    srv.proc.wait(timeout=30)
    srv = start_server("--data-dir", str(tmp_path / "data"), *meta_args)
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as c:
            now = c.execute("SELECT now()").fetchone()[0]
            for view in ("v", "w"):
                assert _job(c, view) == (None, "0 3 1 1 *", "Asia/Tokyo",
                                         _next_new_year_in_tokyo(now))
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
