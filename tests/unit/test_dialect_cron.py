"""BATCH REFRESH CRON and WITH (refresh.cron, refresh.timezone) in CREATE MATERIALIZED VIEW
(issue 29, item 6): the grammar (sql/dialect.py) and what parse_control makes of it."""

from __future__ import annotations

import pytest
import sqlglot

from pgbarrier import errors
from pgbarrier.sql.dialect import BatchRefreshProperty, PgBarrier
from pgbarrier.sql.statements import CreateMaterializedView, parse_control


@pytest.mark.parametrize(("sql", "expected"), [
    ("CREATE MATERIALIZED VIEW v BATCH REFRESH CRON '0 3 * * *' AS SELECT 1", None),
    ("CREATE MATERIALIZED VIEW v BATCH REFRESH CRON '0 3 * * *' AT TIME ZONE 'Europe/Berlin' "
     "AS SELECT 1", None),
    ("create materialized view v (a) batch refresh cron '*/5 * * * *' at time zone 'UTC' "
     "as select 1",
     "CREATE MATERIALIZED VIEW v (a) BATCH REFRESH CRON '*/5 * * * *' AT TIME ZONE 'UTC' "
     "AS SELECT 1"),
])
def test_cron_round_trips(sql, expected):
    tree = sqlglot.parse_one(sql, read=PgBarrier)
    assert tree.sql(dialect=PgBarrier) == (expected or sql)
    prop = tree.find(BatchRefreshProperty)
    assert prop.this is None and prop.args["cron"].is_string


@pytest.mark.parametrize(("clause", "cron", "zone"), [
    ("BATCH REFRESH CRON '0 3 * * *'", "0 3 * * *", "UTC"),
    ("BATCH REFRESH CRON ' 0  3 * * * ' AT TIME ZONE 'europe/berlin'", "0 3 * * *",
     "Europe/Berlin"),
    ("BATCH REFRESH CRON '@daily' AT TIME ZONE 'America/New_York'", "@daily",
     "America/New_York"),
    ("WITH (refresh.cron = '*/15 9-17 * * MON-FRI')", "*/15 9-17 * * MON-FRI", "UTC"),
    ("WITH (refresh.cron = '0 3 * * *', refresh.timezone = 'Asia/Tokyo')", "0 3 * * *",
     "Asia/Tokyo"),
    ("WITH (refresh.timezone = 'Asia/Tokyo', REFRESH.CRON = '0 3 * * *')", "0 3 * * *",
     "Asia/Tokyo"),
    ("BATCH REFRESH CRON '0 3 * * *' WITH (refresh.timezone = 'Asia/Tokyo')", "0 3 * * *",
     "Asia/Tokyo"),
])
def test_cron_schedules(clause, cron, zone):
    mv = parse_control(f"CREATE MATERIALIZED VIEW v {clause} AS SELECT 1")
    assert isinstance(mv, CreateMaterializedView)
    assert (mv.refresh_cron, mv.refresh_timezone, mv.refresh_interval_sec) == (cron, zone, 60)
    assert mv.storage == () and mv.query == "SELECT 1"


def test_interval_views_have_no_cron():
    mv = parse_control("CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY 5 SECONDS AS SELECT 1")
    assert (mv.refresh_cron, mv.refresh_timezone, mv.refresh_interval_sec) == (None, None, 5)
    mv = parse_control("CREATE MATERIALIZED VIEW v AS SELECT 1")
    assert (mv.refresh_cron, mv.refresh_timezone, mv.refresh_interval_sec) == (None, None, None)


def test_storage_parameters_stay_beside_cron_options():
    mv = parse_control("CREATE MATERIALIZED VIEW v WITH (fillfactor = 70, refresh.cron = "
                       "'0 * * * *', autovacuum_enabled = off) AS SELECT 1")
    assert mv.refresh_cron == "0 * * * *"
    assert mv.storage == (("WITH", "fillfactor = 70"), ("WITH", "autovacuum_enabled = off"))


@pytest.mark.parametrize(("clause", "message", "detail"), [
    ("BATCH REFRESH CRON '0 3 * *'", 'invalid value for BATCH REFRESH CRON: "0 3 * *"',
     "A cron expression has 5 fields (minute hour day-of-month month day-of-week), not 4."),
    ("BATCH REFRESH CRON '61 3 * * *'", 'invalid value for BATCH REFRESH CRON: "61 3 * * *"',
     "Minute field: 61 is out of range 0-59."),
    ("BATCH REFRESH CRON '0 3 * * xyz'", 'invalid value for BATCH REFRESH CRON: "0 3 * * xyz"',
     'Day-of-week field: "xyz" is not a number or a name.'),
    ("BATCH REFRESH CRON '0 3 * * *' AT TIME ZONE 'Mars/Base'",
     'time zone "Mars/Base" not recognized', None),
    ("WITH (refresh.cron = '0 3 32 * *')", 'invalid value for parameter "refresh.cron": '
     '"0 3 32 * *"', "Day-of-month field: 32 is out of range 1-31."),
    ("WITH (refresh.cron = '0 3 * * *', refresh.timezone = 'Nowhere')",
     'invalid value for parameter "refresh.timezone": "Nowhere"',
     'time zone "Nowhere" not recognized'),
    ("WITH (refresh.cron = 3)", 'invalid value for parameter "refresh.cron": "3"',
     "refresh.cron takes a string literal."),
    ("WITH (refresh.timezone = 'UTC')", 'parameter "refresh.timezone" needs a cron schedule',
     None),
])
def test_bad_cron_is_22023(clause, message, detail):
    with pytest.raises(errors.InvalidParameterValue) as e:
        parse_control(f"CREATE MATERIALIZED VIEW v {clause} AS SELECT 1")
    assert (e.value.sqlstate, e.value.message, e.value.detail) == ("22023", message, detail)


@pytest.mark.parametrize("clause", [
    "BATCH REFRESH CRON '0 3 * * *' WITH (refresh.interval.sec = 5)",
    "BATCH REFRESH EVERY 5 SECONDS WITH (refresh.cron = '0 3 * * *')",
    "WITH (refresh.cron = '0 3 * * *', refresh.cron = '0 4 * * *')",
    "WITH (refresh.cron = '0 3 * * *', refresh.interval.sec = 60)",
    "BATCH REFRESH CRON '0 3 * * *' AT TIME ZONE 'UTC' WITH (refresh.timezone = 'UTC')",
    "WITH (refresh.cron = '0 3 * * *', refresh.timezone = 'UTC', refresh.timezone = 'UTC')",
])
def test_two_schedules_or_two_zones_conflict(clause):
    with pytest.raises(errors.SyntaxError) as e:
        parse_control(f"CREATE MATERIALIZED VIEW v {clause} AS SELECT 1")
    assert (e.value.sqlstate, e.value.message) == ("42601", "conflicting or redundant options")


@pytest.mark.parametrize(("sql", "near"), [
    ("CREATE MATERIALIZED VIEW v BATCH REFRESH CRON AS SELECT 1", '"AS"'),
    ("CREATE MATERIALIZED VIEW v BATCH REFRESH CRON 5 AS SELECT 1", '"5"'),
    ("CREATE MATERIALIZED VIEW v BATCH REFRESH CRON '* * * * *' AT TIME ZONE AS SELECT 1",
     '"AS"'),
    ("CREATE MATERIALIZED VIEW v BATCH REFRESH CRON '* * * * *' AT 'UTC' AS SELECT 1", '"AT"'),
])
def test_cron_syntax_errors(sql, near):
    with pytest.raises(errors.SyntaxError) as e:
        parse_control(sql)
    assert e.value.message == f"syntax error at or near {near}"
