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
    AlterMaterializedViewAs,
    BatchRefreshProperty,
    ControlStatement,
    CreateDatabase,
    CreateMaterializedView,
    DropDatabase,
    DropMaterializedView,
    Flush,
    PauseDatabase,
    PgBarrier,
    RefreshMaterializedView,
    ResumeDatabase,
    ShowDatabases,
    ShowMaterializedViews,
    parse_control,
)
from pgbarrier.sql import statements
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


def test_refresh_materialized_view_is_sqlglots_refresh() -> None:
    tree = validate_identity("REFRESH MATERIALIZED VIEW v")
    assert type(tree) is exp.Refresh
    assert tree.text("kind") == "MATERIALIZED VIEW"
    assert tree.this == exp.to_table("v")
    validate_identity("refresh materialized view S.\"V\"", 'REFRESH MATERIALIZED VIEW S."V"')
    # CONCURRENTLY is read and dropped: every pgbarrier refresh leaves readers alone.
    tree = validate_identity(
        "REFRESH MATERIALIZED VIEW CONCURRENTLY s.v", "REFRESH MATERIALIZED VIEW s.v"
    )
    assert type(tree) is exp.Refresh
    validate_identity(
        "/* a */ REFRESH MATERIALIZED VIEW v -- b", "REFRESH MATERIALIZED VIEW v /* b */ /* a */"
    )


def test_refresh_generates_in_other_dialects() -> None:
    # The node is sqlglot's own, so it transpiles both ways.
    assert sqlglot.transpile("REFRESH MATERIALIZED VIEW s.v", read=PgBarrier, write="trino") == [
        "REFRESH MATERIALIZED VIEW s.v"
    ]
    assert sqlglot.transpile("REFRESH MATERIALIZED VIEW s.v", read="trino", write=PgBarrier) == [
        "REFRESH MATERIALIZED VIEW s.v"
    ]


@pytest.mark.parametrize(
    ("sql", "expected", "this"),
    [
        ("SHOW DATABASES", None, "DATABASES"),
        ("show databases", "SHOW DATABASES", "DATABASES"),
        ("SHOW MATERIALIZED VIEWS", None, "MATERIALIZED VIEWS"),
        ("Show Materialized  Views", "SHOW MATERIALIZED VIEWS", "MATERIALIZED VIEWS"),
        ("/* a */ SHOW DATABASES -- b", "SHOW DATABASES /* a */ /* b */", "DATABASES"),
    ],
)
def test_show_lists_are_sqlglots_show(sql: str, expected: str | None, this: str) -> None:
    tree = validate_identity(sql, expected)
    assert type(tree) is exp.Show
    assert tree.name == this


def test_show_transpiles_from_mysql_and_snowflake() -> None:
    assert sqlglot.transpile("SHOW DATABASES", read="mysql", write=PgBarrier) == ["SHOW DATABASES"]
    assert sqlglot.transpile("SHOW DATABASES", read=PgBarrier, write="mysql") == ["SHOW DATABASES"]


def test_alter_materialized_view_as_is_an_alter() -> None:
    tree = validate_identity("ALTER MATERIALIZED VIEW v AS SELECT a FROM t")
    assert type(tree) is exp.Alter
    assert tree.text("kind") == "MATERIALIZED VIEW"
    assert tree.this == exp.to_table("v")
    assert [type(a) for a in tree.args["actions"]] == [exp.Select]
    validate_identity(
        "alter materialized view S.V as with c as (select 1) select * from c",
        "ALTER MATERIALIZED VIEW S.V AS WITH c AS (SELECT 1) SELECT * FROM c",
    )
    validate_identity("ALTER MATERIALIZED VIEW v AS (SELECT 1) UNION ALL (SELECT 2)")


@pytest.mark.parametrize(
    ("sql", "node", "kind"),
    [
        ("CREATE DATABASE d", exp.Create, "DATABASE"),
        ('CREATE DATABASE "My DB"', exp.Create, "DATABASE"),
        ("DROP DATABASE d", exp.Drop, "DATABASE"),
        ("DROP DATABASE IF EXISTS d", exp.Drop, "DATABASE"),
        ("DROP MATERIALIZED VIEW v", exp.Drop, "VIEW"),
        ("DROP MATERIALIZED VIEW IF EXISTS s.v RESTRICT", exp.Drop, "VIEW"),
    ],
)
def test_database_and_drop_statements_keep_sqlglots_nodes(
    sql: str, node: type[exp.Expr], kind: str
) -> None:
    tree = validate_identity(sql)
    assert type(tree) is node
    assert tree.kind == kind


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
        "SELECT show, refresh FROM t",
        "SHOW search_path",
        "show search_path;",
        "SHOW TABLES",
        "SHOW ALL",
        "show TIME ZONE",
        'SHOW "x"',
        "SHOW DATABASES LIKE 'x'",
        "SHOW MATERIALIZED VIEWS FROM s",
        "show /* c */ search_path",
        "SHOW",
        "SHOW x; SELECT 1",
        "REFRESH TABLE t",
        "refresh table t",
        "REFRESH foo 'bar'",
        "REFRESH",
        "ALTER MATERIALIZED VIEW v RENAME TO w",
        "ALTER MATERIALIZED VIEW v SET SCHEMA s",
        "ALTER MATERIALIZED VIEW IF EXISTS v RENAME TO w",
        "ALTER MATERIALIZED VIEW",
        "ALTER VIEW v AS SELECT 1",
        "CREATE DATABASE d",
        "DROP DATABASE IF EXISTS d",
        "DROP DATABASE d CASCADE",
        "DROP MATERIALIZED VIEW a, b CASCADE",
    ],
)
def test_ordinary_statements_generate_as_risingwave_does(sql: str) -> None:
    ours = sqlglot.parse(sql, read=PgBarrier)
    theirs = sqlglot.parse(sql, read="risingwave")
    assert [type(t) for t in ours] == [type(t) for t in theirs]
    assert [t.sql(dialect=PgBarrier) for t in ours] == [t.sql(dialect="risingwave") for t in theirs]


def test_trailing_comment_of_a_passed_through_show_is_kept() -> None:
    # RisingWave keeps it inside the Command's raw text; ours keeps it as a comment.
    tree = sqlglot.parse_one("SHOW x -- c", read=PgBarrier)
    assert isinstance(tree, exp.Command)
    assert tree.sql(dialect=PgBarrier) == "/* c */ SHOW x"


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
        "REFRESH MATERIALIZED VIEW",
        "REFRESH MATERIALIZED VIEW CONCURRENTLY",
        "REFRESH MATERIALIZED VIEW v WITH NO DATA",
        "REFRESH MATERIALIZED VIEW v w",
        "ALTER MATERIALIZED VIEW v AS",
        "ALTER MATERIALIZED VIEW v AS SELEC 1",
        "ALTER MATERIALIZED VIEW v AS SELECT 1 WITH NO DATA",
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


def test_parse_alter_materialized_view_name() -> None:
    name = statements.AlterMaterializedViewName
    assert parse_control("ALTER MATERIALIZED VIEW public.v RENAME TO W") == name("v", "RENAME TO", "w")
    assert parse_control('alter materialized view if exists s.v set schema "T";') == \
        name("s.v", "SET SCHEMA", "T", if_exists=True)
    for sql in ("ALTER MATERIALIZED VIEW v RENAME TO", "ALTER MATERIALIZED VIEW v RENAME TO w x",
                "ALTER MATERIALIZED VIEW v SET SCHEMA 's'"):
        with pytest.raises(errors.SyntaxError):
            parse_control(sql)


def test_parse_rename_database() -> None:
    assert parse_control("ALTER DATABASE Old RENAME TO New;") == statements.RenameDatabase("old", "new")
    assert parse_control('alter database "A b" rename to "C"') == \
        statements.RenameDatabase("A b", "C")
    for sql, position in (("ALTER DATABASE a RENAME TO", 27), ("ALTER DATABASE a RENAME TO b c", 30),
                          ("ALTER DATABASE a RENAME TO 'b'", 28)):
        with pytest.raises(errors.SyntaxError) as err:
            parse_control(sql)
        assert err.value.position == position, sql


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


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("REFRESH MATERIALIZED VIEW v", RefreshMaterializedView("v")),
        ("refresh materialized view Daily;", RefreshMaterializedView("daily")),
        ("REFRESH MATERIALIZED VIEW CONCURRENTLY v",
         RefreshMaterializedView("v", concurrently=True)),
        ('REFRESH MATERIALIZED VIEW S."Mixed"', RefreshMaterializedView("s.Mixed")),
        ("/* c */ REFRESH -- x\n MATERIALIZED VIEW v ;", RefreshMaterializedView("v")),
        ("DROP MATERIALIZED VIEW v", DropMaterializedView("v", if_exists=False)),
        ("drop materialized view if exists S.V", DropMaterializedView("s.v", if_exists=True)),
        ('DROP MATERIALIZED VIEW "V" RESTRICT;', DropMaterializedView("V", if_exists=False)),
        ("SHOW DATABASES", ShowDatabases()),
        ("show databases ;", ShowDatabases()),
        ("SHOW MATERIALIZED VIEWS", ShowMaterializedViews()),
        ("show /* x */ materialized -- y\n views;", ShowMaterializedViews()),
        ("CREATE DATABASE d", CreateDatabase("d")),
        ("create database Analytics;", CreateDatabase("analytics")),
        ('CREATE DATABASE "My DB"', CreateDatabase("My DB")),
        ("DROP DATABASE d", DropDatabase("d", if_exists=False)),
        ("drop database if exists D;", DropDatabase("d", if_exists=True)),
        ('DROP DATABASE "D"', DropDatabase("D", if_exists=False)),
        (
            "ALTER MATERIALIZED VIEW v AS SELECT a FROM t",
            AlterMaterializedViewAs("v", query="SELECT a FROM t"),
        ),
        (
            "alter materialized view S.V as\n  select  \"A\" ,'x;y' from t -- note\n;",
            AlterMaterializedViewAs("s.v", query="select  \"A\" ,'x;y' from t"),
        ),
        (
            "ALTER MATERIALIZED VIEW v AS (SELECT 1) UNION ALL (SELECT 2)",
            AlterMaterializedViewAs("v", query="(SELECT 1) UNION ALL (SELECT 2)"),
        ),
        (
            "ALTER MATERIALIZED VIEW v AS WITH c AS (SELECT 1) SELECT * FROM c",
            AlterMaterializedViewAs("v", query="WITH c AS (SELECT 1) SELECT * FROM c"),
        ),
    ],
)
def test_parse_new_control_statements(sql: str, expected: ControlStatement) -> None:
    assert parse_control(sql) == expected


def test_new_statements_are_frozen_and_exported() -> None:
    for cls in (
        RefreshMaterializedView,
        DropMaterializedView,
        AlterMaterializedViewAs,
        ShowMaterializedViews,
        ShowDatabases,
        CreateDatabase,
        DropDatabase,
    ):
        assert getattr(statements, cls.__name__) is cls
        assert cls.__name__ in statements.__all__
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert ShowDatabases() == ShowDatabases() and ShowDatabases() != ShowMaterializedViews()
    assert RefreshMaterializedView.__dataclass_fields__.keys() == {
        "name", "concurrently", "with_data", "with_at"}
    assert DropMaterializedView.__dataclass_fields__.keys() == {
        "name", "if_exists", "names", "cascade", "cascade_at", "second_at"}
    assert AlterMaterializedViewAs.__dataclass_fields__.keys() == {"name", "query"}
    assert CreateDatabase.__dataclass_fields__.keys() == {"name", "options", "options_at"}
    assert DropDatabase.__dataclass_fields__.keys() == {"name", "if_exists", "force"}


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
        ("CREATE MATERIALIZED VIEW v AS SELECT 1 WITH NO", 'syntax error at or near "WITH"', 40),
        ("CREATE MATERIALIZED VIEW v PARTITION BY x AS SELECT 1",
         'syntax error at or near "PARTITION BY"', 28),
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
        # REFRESH MATERIALIZED VIEW
        ("REFRESH MATERIALIZED VIEW", "syntax error at end of input", 26),
        ("REFRESH MATERIALIZED VIEW  ;", 'syntax error at or near ";"', 28),
        ("REFRESH MATERIALIZED VIEW CONCURRENTLY", "syntax error at end of input", 39),
        ("REFRESH MATERIALIZED VIEW v w", 'syntax error at or near "w"', 29),
        ("REFRESH MATERIALIZED VIEW v WITH", "syntax error at end of input", 33),
        ("REFRESH MATERIALIZED VIEW v WITH NO", "syntax error at end of input", 36),
        ("REFRESH MATERIALIZED VIEW v WITH FOO", 'syntax error at or near "FOO"', 34),
        ("REFRESH MATERIALIZED VIEW v WITH NO DATA x", 'syntax error at or near "x"', 42),
        ("REFRESH MATERIALIZED VIEW WITH", 'syntax error at or near "WITH"', 27),
        ("REFRESH MATERIALIZED VIEW 'v'", "syntax error at or near \"'v'\"", 27),
        # DROP MATERIALIZED VIEW
        ("DROP MATERIALIZED VIEW", "syntax error at end of input", 23),
        ("DROP MATERIALIZED VIEW IF EXISTS", "syntax error at end of input", 33),
        ("DROP MATERIALIZED VIEW v PURGE", 'syntax error at or near "PURGE"', 26),
        ("DROP MATERIALIZED VIEW v (a)", 'syntax error at or near "("', 26),
        ("DROP MATERIALIZED VIEW v RESTRICT CASCADE", 'syntax error at or near "CASCADE"', 35),
        # ALTER MATERIALIZED VIEW v AS query
        ("ALTER MATERIALIZED VIEW v AS", "syntax error at end of input", 29),
        ("ALTER MATERIALIZED VIEW v AS SELEC 1", 'syntax error at or near "SELEC"', 30),
        ("ALTER MATERIALIZED VIEW v AS SELECT (1", "syntax error at end of input", 39),
        (
            "ALTER MATERIALIZED VIEW v AS SELECT 1 WITH NO DATA",
            'syntax error at or near "WITH"',
            39,
        ),
        ("ALTER MATERIALIZED VIEW select AS SELECT 1", 'syntax error at or near "select"', 25),
        # CREATE / DROP DATABASE
        ("CREATE DATABASE", "syntax error at end of input", 16),
        ("CREATE DATABASE 5", 'syntax error at or near "5"', 17),
        ("CREATE DATABASE a.b", 'syntax error at or near "."', 18),
        ("CREATE DATABASE d WITH", "syntax error at end of input", 23),
        ("CREATE DATABASE d 'x'", "syntax error at or near \"'x'\"", 19),
        ("DROP DATABASE", "syntax error at end of input", 14),
        ("DROP DATABASE IF EXISTS", "syntax error at end of input", 24),
        ("DROP DATABASE a, b", 'syntax error at or near ","', 16),
        ("DROP DATABASE d WITH (", "syntax error at end of input", 23),
        ('DROP DATABASE ""', 'zero-length delimited identifier at or near """"', 15),
        ('REFRESH MATERIALIZED VIEW s.""', 'zero-length delimited identifier at or near """"', 29),
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


def test_storage_clauses_are_kept_for_the_backend() -> None:
    # issue 14: PostgreSQL's storage clauses are read, not refused (the control plane
    # refuses what DuckDB cannot honour); the WITH option list keeps only storage parameters
    stmt = parse_control("CREATE MATERIALIZED VIEW v (a) WITH (fillfactor = 70, "
                         "refresh.interval.sec = 5) USING heap TABLESPACE pg_default "
                         "AS SELECT 1 WITH NO DATA;")
    assert isinstance(stmt, CreateMaterializedView)
    assert stmt.refresh_interval_sec == 5 and stmt.columns == ("a",)
    assert stmt.storage == (("WITH", "fillfactor = 70"), ("USING", "USING heap"),
                            ("TABLESPACE", "TABLESPACE pg_default"))
    assert stmt.storage_at == 38 and stmt.query == "SELECT 1"
    assert stmt.with_data is False and stmt.with_data_at == 126
    plain = parse_control("CREATE MATERIALIZED VIEW m AS SELECT 1 AS x WITH DATA")
    assert plain.with_data is True and plain.query == "SELECT 1 AS x"  # type: ignore[union-attr]
    assert parse_control("CREATE MATERIALIZED VIEW v AS SELECT 1").with_data is None  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("sql", "fields"),
    [
        ("REFRESH MATERIALIZED VIEW v WITH NO DATA", {"with_data": False, "with_at": 29}),
        ("refresh materialized view concurrently v with data;",
         {"with_data": True, "with_at": 42, "concurrently": True}),
        ("DROP MATERIALIZED VIEW v CASCADE", {"cascade": True, "cascade_at": 26}),
        ("DROP MATERIALIZED VIEW IF EXISTS s.v CASCADE;", {"cascade": True, "cascade_at": 38}),
        ("DROP MATERIALIZED VIEW a, b", {"names": ("a", "b"), "second_at": 27}),
        ("DROP MATERIALIZED VIEW IF EXISTS a,b,c CASCADE",
         {"names": ("a", "b", "c"), "second_at": 36, "cascade": True}),
    ],
)
def test_postgres_clauses_are_read_with_their_positions(sql: str, fields: dict) -> None:
    # issue 14: the parser reads PostgreSQL's grammar; the control plane decides what a
    # backend supports (DuckDB refuses these with 0A000 at the same positions)
    stmt = parse_control(sql)
    for key, value in fields.items():
        assert getattr(stmt, key) == value, key


@pytest.mark.parametrize(
    ("sql", "message", "position"),
    [
        ("CREATE DATABASE IF NOT EXISTS d", "CREATE DATABASE IF NOT EXISTS is not supported", 17),
    ],
)
def test_unsupported_forms_of_new_statements(sql: str, message: str, position: int) -> None:
    with pytest.raises(errors.FeatureNotSupported) as info:
        parse_control(sql)
    err = info.value
    assert err.sqlstate == "0A000"
    assert err.message == message
    assert err.position == position


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("CREATE DATABASE d OWNER u", CreateDatabase("d", "OWNER u", 19)),
        ("CREATE DATABASE d WITH ENCODING = 'UTF8'  ",
         CreateDatabase("d", "WITH ENCODING = 'UTF8'", 19)),
        ('CREATE DATABASE "D" TEMPLATE template0;', CreateDatabase("D", "TEMPLATE template0", 21)),
        ("DROP DATABASE d WITH (FORCE)", DropDatabase("d", False, True)),
        ("DROP DATABASE IF EXISTS d (force)", DropDatabase("d", True, True)),
        ("DROP DATABASE d", DropDatabase("d", False, False)),
    ],
)
def test_database_options_are_kept_for_the_control_plane(sql: str, expected: object) -> None:
    # issue 14: upstream, PostgreSQL judges CREATE DATABASE's options; DROP's is FORCE
    assert parse_control(sql) == expected


@pytest.mark.parametrize(
    ("sql", "message", "position"),
    [
        ("DROP DATABASE d CASCADE", 'syntax error at or near "CASCADE"', 17),
        ("DROP DATABASE d WITH (NOPE)", 'unrecognized DROP DATABASE option "nope"', 23),
        ("DROP DATABASE d FORCE", 'syntax error at or near "FORCE"', 17),
    ],
)
def test_drop_database_options_other_than_force_are_postgresqls_42601(
        sql: str, message: str, position: int) -> None:
    with pytest.raises(errors.SyntaxError) as info:
        parse_control(sql)
    assert (info.value.sqlstate, info.value.message, info.value.position) == \
        ("42601", message, position)


def test_caller_bugs_are_value_errors() -> None:
    with pytest.raises(ValueError):
        parse_control("SELECT 1")
    with pytest.raises(ValueError):
        parse_control("FLUSH; FLUSH")
    with pytest.raises(ValueError):
        parse_control(" -- nothing\n;")
    with pytest.raises(ValueError):
        parse_control("DROP TABLE t")
    with pytest.raises(ValueError):
        parse_control("CREATE TABLE t (a INT)")


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


# -- issue 29: ALTER DATABASE d PAUSE FOR ... REASON ..., ALTER MATERIALIZED VIEW v SUSPEND --


def test_pause_clauses_parse_in_either_order() -> None:
    from pgbarrier.sql.controls import parse_control as parse

    assert parse("ALTER DATABASE dev PAUSE") == PauseDatabase("dev")
    assert parse("ALTER DATABASE Dev PAUSE FOR INTERVAL '1 hour' REASON 'it''s late'") == \
        PauseDatabase("dev", 3_600_000, "it's late")
    assert parse("alter database d pause reason 'x' for '1.5 seconds';") == \
        PauseDatabase("d", 1500, "x")
    for sql, state in (("ALTER DATABASE d PAUSE FOR 'nope'", "22007"),
                       ("ALTER DATABASE d PAUSE FOR '-1 second'", "22023"),
                       ("ALTER DATABASE d PAUSE FOR '1 second' REASON 'a' FOR '2 seconds'",
                        "42601")):
        with pytest.raises(errors.PgError) as e:
            parse(sql)
        assert e.value.sqlstate == state


def test_suspend_and_resume_view_parse() -> None:
    from pgbarrier.sql.controls import is_control, parse_control as parse
    from pgbarrier.sql.view_suspend import ResumeView, SuspendView

    assert parse('ALTER MATERIALIZED VIEW public."V" SUSPEND REASON \'load\'') == \
        SuspendView("V", "load")
    assert parse("alter materialized view s.v resume;") == ResumeView("s.v")
    assert not is_control("ALTER MATERIALIZED VIEW IF EXISTS v SUSPEND")
    with pytest.raises(errors.SyntaxError) as e:
        parse("ALTER MATERIALIZED VIEW v SUSPEND REASON 5")
    assert e.value.position == len("ALTER MATERIALIZED VIEW v SUSPEND REASON ") + 1
