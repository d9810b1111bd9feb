"""The pgbarrier dialect (round-trips) and parse_control (fields, 42601, 22023)."""

from __future__ import annotations

import logging

import pytest
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError

from pgbarrier import errors
from pgbarrier.sql import (
    AlterDatabaseBarrier,
    BatchRefreshProperty,
    CreateMaterializedView,
    Flush,
    PauseDatabase,
    PgBarrier,
    ResumeDatabase,
    parse_control,
)
from pgbarrier.sql.dialect import Flush as FlushNode
from pgbarrier.sql.statements import parse_interval_seconds


@pytest.fixture(autouse=True)
def _quiet_sqlglot(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="sqlglot")


def validate_identity(sql: str, write_sql: str | None = None) -> exp.Expr:
    """sqlglot's own test idiom: parse with PgBarrier, generate, compare."""
    tree = sqlglot.parse_one(sql, read=PgBarrier)
    assert tree is not None
    assert tree.sql(dialect=PgBarrier) == (write_sql if write_sql is not None else sql)
    return tree


# -- round-trips of the new forms ----------------------------------------------------------


def test_alter_database_pause_resume() -> None:
    tree = validate_identity("ALTER DATABASE d PAUSE")
    assert isinstance(tree, AlterDatabaseBarrier)
    assert tree.this == exp.to_identifier("d")
    assert tree.args["action"] == "PAUSE"
    tree = validate_identity('alter database "My DB" resume', 'ALTER DATABASE "My DB" RESUME')
    assert isinstance(tree, AlterDatabaseBarrier)
    assert tree.args["action"] == "RESUME"
    assert tree.this.quoted


def test_flush() -> None:
    assert isinstance(validate_identity("FLUSH"), FlushNode)
    assert isinstance(validate_identity("flush", "FLUSH"), FlushNode)
    validate_identity("/* a */ FLUSH -- b", "FLUSH /* a */ /* b */")  # each comment once


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        (
            "CREATE MATERIALIZED VIEW v BATCH REFRESH AS SELECT 1",
            None,
        ),
        (
            "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY 5 SECONDS AS SELECT 1",
            None,
        ),
        (
            "create materialized view v batch refresh every 1 minute as select 1",
            "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY 1 MINUTE AS SELECT 1",
        ),
        (
            "CREATE MATERIALIZED VIEW IF NOT EXISTS v (a, b) BATCH REFRESH EVERY 2 HOURS AS SELECT 1, 2",
            None,
        ),
        (
            "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY INTERVAL '1 minute 30 seconds' AS SELECT 1",
            None,
        ),
        (
            "CREATE MATERIALIZED VIEW s.v BATCH REFRESH EVERY 1 DAY AS SELECT * FROM t",
            None,
        ),
    ],
)
def test_batch_refresh_round_trips(sql: str, expected: str | None) -> None:
    tree = validate_identity(sql, expected)
    assert isinstance(tree, exp.Create)
    props = [p for p in tree.args["properties"].expressions if isinstance(p, BatchRefreshProperty)]
    assert len(props) == 1


def test_batch_refresh_node_shape() -> None:
    tree = sqlglot.parse_one(
        "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY 5 SECONDS AS SELECT 1", read=PgBarrier
    )
    prop = tree.find(BatchRefreshProperty)
    assert isinstance(prop.this, exp.Interval)
    assert prop.this.this == exp.Literal.number(5)
    assert prop.this.text("unit") == "SECONDS"
    assert prop.meta["start"] == len("CREATE MATERIALIZED VIEW v ")
    bare = sqlglot.parse_one("CREATE MATERIALIZED VIEW v BATCH REFRESH AS SELECT 1", read=PgBarrier)
    assert bare.find(BatchRefreshProperty).this is None


def test_with_refresh_option_stays_a_property() -> None:
    tree = validate_identity(
        "CREATE MATERIALIZED VIEW v WITH (refresh.interval.sec = 5) AS SELECT 1",
        "CREATE MATERIALIZED VIEW v WITH (refresh.interval.sec=5) AS SELECT 1",
    )
    props = tree.args["properties"].expressions
    assert [type(p) for p in props] == [exp.MaterializedProperty, exp.Property]


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a, b FROM t WHERE id = 1",
        "SELECT batch, refresh, flush, every FROM t",
        "CREATE MATERIALIZED VIEW v AS SELECT 1",
        "CREATE MATERIALIZED VIEW IF NOT EXISTS v (a) AS SELECT a FROM t",
        "CREATE TABLE t (id INT, batch TEXT)",
        "CREATE TABLE t AS SELECT 1",
        "CREATE VIEW v AS SELECT 1",
        "ALTER TABLE t ADD COLUMN c INT",
        "ALTER DATABASE d SET x = 1",
        "ALTER DATABASE d RENAME TO e",
        "ALTER DATABASE d PAUZE",
        "INSERT INTO t VALUES (1, 'x')",
        "CREATE SINK s FROM t WITH (connector='kafka', batch=5)",
        "CREATE SOURCE s WITH (connector='kafka') FORMAT PLAIN ENCODE JSON",
        "DROP MATERIALIZED VIEW IF EXISTS v",
        "WITH c AS (SELECT 1 AS x) SELECT x FROM c",
    ],
)
def test_ordinary_statements_generate_as_risingwave_does(sql: str) -> None:
    ours = sqlglot.parse_one(sql, read=PgBarrier)
    theirs = sqlglot.parse_one(sql, read="risingwave")
    assert type(ours) is type(theirs)
    assert ours.sql(dialect=PgBarrier) == theirs.sql(dialect="risingwave")


def test_ordinary_identities() -> None:
    validate_identity("SELECT a, b FROM t WHERE id = 1")
    validate_identity("CREATE MATERIALIZED VIEW v AS SELECT 1")
    validate_identity("CREATE TABLE t (id INT, name TEXT)")


@pytest.mark.parametrize(
    "sql",
    [
        "FLUSH now",
        "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY AS SELECT 1",
        "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY 5 AS SELECT 1",
        "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY 5 WEEKS AS SELECT 1",
        "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY INTERVAL 5 AS SELECT 1",
    ],
)
def test_malformed_special_forms_raise(sql: str) -> None:
    with pytest.raises(ParseError):
        sqlglot.parse_one(sql, read=PgBarrier)


# -- parse_control: results ------------------------------------------------------------------


def test_parse_pause_and_resume() -> None:
    assert parse_control("ALTER DATABASE dev PAUSE") == PauseDatabase("dev")
    assert parse_control("alter database DEV resume;") == ResumeDatabase("dev")
    assert parse_control('ALTER DATABASE "Dev" PAUSE') == PauseDatabase("Dev")
    assert parse_control("/* why */ ALTER DATABASE d -- note\n PAUSE ;") == PauseDatabase("d")


def test_parse_flush() -> None:
    assert parse_control("FLUSH") == Flush()
    assert parse_control("  flush ;") == Flush()


def test_parse_streaming_mv() -> None:
    sql = "CREATE MATERIALIZED VIEW mv AS SELECT a, count(*) FROM t GROUP BY a;"
    assert parse_control(sql) == CreateMaterializedView(
        name="mv",
        columns=None,
        query="SELECT a, count(*) FROM t GROUP BY a",
        if_not_exists=False,
        refresh_interval_sec=None,
        inputs=frozenset({"t"}),
        definition="CREATE MATERIALIZED VIEW mv AS SELECT a, count(*) FROM t GROUP BY a",
    )


def test_parse_batch_refresh_with_option() -> None:
    mv = parse_control(
        "CREATE MATERIALIZED VIEW IF NOT EXISTS Daily (Day, \"Total\") "
        "WITH (refresh.interval.sec = 5) AS SELECT d, sum(x) FROM Sales GROUP BY d"
    )
    assert isinstance(mv, CreateMaterializedView)
    assert mv.name == "daily"
    assert mv.columns == ("day", "Total")
    assert mv.if_not_exists is True
    assert mv.refresh_interval_sec == 5
    assert mv.inputs == frozenset({"sales"})
    assert mv.query == "SELECT d, sum(x) FROM Sales GROUP BY d"


def test_option_as_string_literal() -> None:
    mv = parse_control("CREATE MATERIALIZED VIEW v WITH (refresh.interval.sec = '7') AS SELECT 1")
    assert mv.refresh_interval_sec == 7


@pytest.mark.parametrize(
    ("clause", "seconds"),
    [
        ("BATCH REFRESH", 60),
        ("BATCH REFRESH EVERY 1 SECOND", 1),
        ("BATCH REFRESH EVERY 5 SECONDS", 5),
        ("BATCH REFRESH EVERY 2 MINUTE", 120),
        ("BATCH REFRESH EVERY 2 minutes", 120),
        ("BATCH REFRESH EVERY 1 HOUR", 3600),
        ("BATCH REFRESH EVERY 3 HOURS", 10800),
        ("BATCH REFRESH EVERY 1 DAY", 86400),
        ("BATCH REFRESH EVERY 2 DAYS", 172800),
        ("BATCH REFRESH EVERY INTERVAL '1 minute 30 seconds'", 90),
        ("BATCH REFRESH EVERY INTERVAL '90 seconds'", 90),
        ("BATCH REFRESH EVERY INTERVAL '1 hour'", 3600),
        ("BATCH REFRESH EVERY INTERVAL '00:01:30'", 90),
        ("BATCH REFRESH EVERY INTERVAL '1 day 02:00'", 93600),
        ("BATCH REFRESH EVERY INTERVAL '1.5 minutes'", 90),
        ("BATCH REFRESH EVERY INTERVAL '90'", 90),
        ("BATCH REFRESH EVERY INTERVAL '@ 2 mins'", 120),
    ],
)
def test_batch_refresh_intervals(clause: str, seconds: int) -> None:
    mv = parse_control(f"CREATE MATERIALIZED VIEW v {clause} AS SELECT 1")
    assert mv.refresh_interval_sec == seconds
    assert mv.query == "SELECT 1"


def test_query_is_the_original_text() -> None:
    sql = (
        "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY 10 SECONDS AS\n"
        "  select  \"A\"::int , 'x;y' AS s -- keep my spacing\n  FROM   t  -- trailing\n;"
    )
    mv = parse_control(sql)
    assert mv.query == "select  \"A\"::int , 'x;y' AS s -- keep my spacing\n  FROM   t"
    assert mv.definition == sql[:-2].rstrip()
    assert mv.query in sql


def test_query_in_parentheses_and_with() -> None:
    mv = parse_control("CREATE MATERIALIZED VIEW v AS (SELECT 1 AS a)")
    assert mv.query == "(SELECT 1 AS a)"


def test_inputs_exclude_ctes_and_keep_schemas() -> None:
    mv = parse_control(
        "CREATE MATERIALIZED VIEW v AS "
        "WITH recent AS (SELECT * FROM Orders WHERE ts > now() - INTERVAL '1 day') "
        "SELECT * FROM recent r JOIN Shop.Customers c ON r.cid = c.id "
        "WHERE c.id IN (SELECT id FROM \"Audit\".vip) "
        "UNION ALL SELECT * FROM recent"
    )
    assert mv.inputs == frozenset({"orders", "shop.customers", "Audit.vip"})


def test_inputs_skip_table_functions() -> None:
    mv = parse_control(
        "CREATE MATERIALIZED VIEW v AS SELECT * FROM generate_series(1, 3) g, t"
    )
    assert mv.inputs == frozenset({"t"})


def test_qualified_and_quoted_view_names() -> None:
    assert parse_control("CREATE MATERIALIZED VIEW S.V AS SELECT 1").name == "s.v"
    assert parse_control('CREATE MATERIALIZED VIEW "Mixed" AS SELECT 1').name == "Mixed"


# -- parse_control: 42601 -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("sql", "message", "position"),
    [
        ("ALTER DATABASE d PAUZE", 'syntax error at or near "PAUZE"', 18),
        ("ALTER DATABASE d PAUSE now", 'syntax error at or near "now"', 24),
        ("ALTER DATABASE d", "syntax error at end of input", 17),
        ("FLUSH now", 'syntax error at or near "now"', 7),
        ("  FLUSH now;", 'syntax error at or near "now"', 9),
        (
            "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY AS SELECT 1",
            'syntax error at or near "AS"',
            48,
        ),
        (
            "CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY 5 WEEKS AS SELECT 1",
            'syntax error at or near "WEEKS"',
            50,
        ),
        ("CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY", "syntax error at end of input", 47),
        ("CREATE MATERIALIZED VIEW v BATCH REFRESH EVERY ;", 'syntax error at or near ";"', 48),
        ("CREATE MATERIALIZED VIEW v AS SELEC 1", 'syntax error at or near "SELEC"', 31),
        ("CREATE MATERIALIZED VIEW v AS SELECT 1 WITH NO DATA", 'syntax error at or near "WITH"', 40),
        ("CREATE MATERIALIZED VIEW v AS SELECT (1", "syntax error at end of input", 40),
        ("CREATE MATERIALIZED VIEW v FOO AS SELECT 1", 'syntax error at or near "FOO"', 28),
        ("CREATE MATERIALIZED VIEW v SELECT 1", 'syntax error at or near "SELECT"', 28),
        ("CREATE MATERIALIZED VIEW v", "syntax error at end of input", 27),
        ("CREATE MATERIALIZED VIEW v AS", "syntax error at end of input", 30),
        ("CREATE MATERIALIZED VIEW v (a INT) AS SELECT 1", 'syntax error at or near "INT"', 31),
        (
            "CREATE MATERIALIZED VIEW v AS SELECT 'abc",
            "unterminated quoted string at or near \"'abc\"",
            38,
        ),
        (
            "CREATE MATERIALIZED VIEW v BATCH REFRESH WITH (refresh.interval.sec = 5) AS SELECT 1",
            "conflicting or redundant options",
            48,
        ),
    ],
)
def test_syntax_errors(sql: str, message: str, position: int) -> None:
    with pytest.raises(errors.SyntaxError) as info:
        parse_control(sql)
    err = info.value
    assert err.sqlstate == "42601"
    assert err.message == message
    assert err.position == position


def test_syntax_error_position_shifts_for_a_piece() -> None:
    query = "SELECT 1; FLUSH now"
    with pytest.raises(errors.SyntaxError) as info:
        parse_control(query[10:])
    assert info.value.with_position_offset(10).position == query.index("now") + 1


# -- parse_control: 22023 / 0A000 --------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [("0", "0"), ("-1", "-1"), ("'abc'", "abc"), ("abc", "abc"), ("1.5", "1.5"), ("'0'", "0")],
)
def test_bad_refresh_option(value: str, shown: str) -> None:
    with pytest.raises(errors.InvalidParameterValue) as info:
        parse_control(f"CREATE MATERIALIZED VIEW v WITH (refresh.interval.sec = {value}) AS SELECT 1")
    err = info.value
    assert err.sqlstate == "22023"
    assert err.message == f'invalid value for parameter "refresh.interval.sec": "{shown}"'
    assert err.detail is not None and "positive integer" in err.detail


@pytest.mark.parametrize(
    "clause",
    [
        "EVERY 0 SECONDS",
        "EVERY 0 DAYS",
        "EVERY 1.5 MINUTES",
        "EVERY 100000 DAYS",
        "EVERY INTERVAL '0 seconds'",
        "EVERY INTERVAL '-5 minutes'",
        "EVERY INTERVAL '5 minutes ago'",
        "EVERY INTERVAL '1.5 seconds'",
        "EVERY INTERVAL 'soon'",
        "EVERY INTERVAL ''",
    ],
)
def test_bad_batch_refresh_interval(clause: str) -> None:
    with pytest.raises(errors.InvalidParameterValue) as info:
        parse_control(f"CREATE MATERIALIZED VIEW v BATCH REFRESH {clause} AS SELECT 1")
    assert info.value.sqlstate == "22023"
    assert info.value.message.startswith("invalid value for BATCH REFRESH EVERY: ")
    assert "positive whole number of seconds" in (info.value.detail or "")


def test_unknown_with_option() -> None:
    with pytest.raises(errors.InvalidParameterValue) as info:
        parse_control("CREATE MATERIALIZED VIEW v WITH (foo = 1) AS SELECT 1")
    assert info.value.message == 'unrecognized parameter "foo"'


def test_unsupported_clause() -> None:
    with pytest.raises(errors.FeatureNotSupported):
        parse_control("CREATE MATERIALIZED VIEW v TABLESPACE x AS SELECT 1")


def test_caller_bugs_are_value_errors() -> None:
    with pytest.raises(ValueError):
        parse_control("SELECT 1")
    with pytest.raises(ValueError):
        parse_control("FLUSH; FLUSH")
    with pytest.raises(ValueError):
        parse_control(" -- nothing\n;")


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1 minute 30 seconds", 90),
        ("90 seconds", 90),
        ("1 hour", 3600),
        ("00:01:30", 90),
        ("1:00", 3600),
        ("2 days 00:00:01", 172801),
        ("1 week", 604800),
        ("1 mon", 2592000),
        ("1 year", 31557600),
        ("30s", 30),
        ("500 ms", None),
        ("1000 ms", 1),
        ("minutes", None),
        ("5 fortnights", None),
        ("1 2", None),
    ],
)
def test_parse_interval_seconds(text: str, seconds: int | None) -> None:
    assert parse_interval_seconds(text) == seconds
