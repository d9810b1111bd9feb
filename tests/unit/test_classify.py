"""The sqlglot-free fast path: splitting, leading words, is_control, rw_catalog check."""

from __future__ import annotations

import pytest

from pgbarrier.sql.classify import (
    Piece,
    leading_words,
    mentions_rw_catalog,
    split_statements,
    unterminated_token,
)
from pgbarrier.sql.controls import is_control


def texts(sql: str) -> list[str]:
    return [p.text for p in split_statements(sql)]


def test_offsets_point_at_piece_starts() -> None:
    sql = "SELECT 1;   select 2 ;\n\tINSERT INTO t VALUES (3)"
    pieces = split_statements(sql)
    assert pieces == [
        Piece("SELECT 1", 0),
        Piece("select 2", 12),
        Piece("INSERT INTO t VALUES (3)", 24),
    ]
    for piece in pieces:
        assert sql[piece.offset : piece.offset + len(piece.text)] == piece.text


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("", []),
        (";", []),
        (" ; ;; ", []),
        ("-- only a comment", []),
        ("/* a */ ; -- b\n ;", []),
        ("SELECT 1", ["SELECT 1"]),
        ("SELECT 1;", ["SELECT 1"]),
        ("  SELECT 1  ;  ", ["SELECT 1"]),
        ("SELECT 1; SELECT 2", ["SELECT 1", "SELECT 2"]),
        ("SELECT 1;;SELECT 2;", ["SELECT 1", "SELECT 2"]),
        # single quotes, with '' doubling
        ("SELECT 'a;b'; SELECT 2", ["SELECT 'a;b'", "SELECT 2"]),
        ("SELECT 'it''s; fine'; x", ["SELECT 'it''s; fine'", "x"]),
        ("SELECT '\\'; x", ["SELECT '\\'", "x"]),  # standard strings: backslash is literal
        # E'' strings honour backslash escapes
        ("SELECT E'a\\';b'; x", ["SELECT E'a\\';b'", "x"]),
        ("SELECT e'a\\\\'; x", ["SELECT e'a\\\\'", "x"]),
        ("SELECT E'x'''; y", ["SELECT E'x'''", "y"]),
        # a name ending in e is not an E prefix
        ("SELECT name'x;y'; z", ["SELECT name'x;y'", "z"]),
        # double-quoted identifiers
        ('SELECT "a;""b"; z', ['SELECT "a;""b"', "z"]),
        # comments
        ("SELECT 1 -- c; d\n; SELECT 2", ["SELECT 1 -- c; d", "SELECT 2"]),
        ("SELECT /* a; /* b; */ c; */ 1; x", ["SELECT /* a; /* b; */ c; */ 1", "x"]),
        ("/* lead */ SELECT 1; -- tail", ["/* lead */ SELECT 1"]),
        ("SELECT 1 - -2; x", ["SELECT 1 - -2", "x"]),
        ("SELECT 4 / 2; x", ["SELECT 4 / 2", "x"]),
        # dollar quotes
        ("SELECT $$a;b$$; x", ["SELECT $$a;b$$", "x"]),
        ("SELECT $fn$ $$; $fn$; x", ["SELECT $fn$ $$; $fn$", "x"]),
        ("DO $body$ BEGIN PERFORM 1; END $body$; SELECT 2", ["DO $body$ BEGIN PERFORM 1; END $body$", "SELECT 2"]),
        ("SELECT $1; SELECT a$b; z", ["SELECT $1", "SELECT a$b", "z"]),
        # unterminated constructs run to the end of the input
        ("SELECT 'abc; SELECT 2", ["SELECT 'abc; SELECT 2"]),
        ("SELECT 1; SELECT /* x; y", ["SELECT 1", "SELECT /* x; y"]),
        ("SELECT 'abc;", ["SELECT 'abc"]),
    ],
)
def test_split(sql: str, expected: list[str]) -> None:
    assert texts(sql) == expected


def test_offsets_with_comments_and_quotes() -> None:
    sql = "/* c; */ SELECT ';' ; \n  FLUSH"
    pieces = split_statements(sql)
    assert pieces == [Piece("/* c; */ SELECT ';'", 0), Piece("FLUSH", sql.index("FLUSH"))]


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT 'abc", ("quoted string", 7)),
        ("SELECT E'ab\\'", ("quoted string", 7)),
        ('SELECT "x', ("quoted identifier", 7)),
        ("SELECT /* /* */", ("/* comment", 7)),
        ("SELECT $a$ x", ("dollar-quoted string", 7)),
        ("SELECT 'a''b', E'\\\\', $$x$$, \"q\" -- c", None),
    ],
)
def test_unterminated_token(sql: str, expected: tuple[str, int] | None) -> None:
    assert unterminated_token(sql) == expected


@pytest.mark.parametrize(
    ("sql", "n", "expected"),
    [
        ("select * from t", 3, ("SELECT",)),
        ("  Create Materialized View v AS", 3, ("CREATE", "MATERIALIZED", "VIEW")),
        ("/* x */ ALTER -- y\n DATABASE\td1 PAUSE", 4, ("ALTER", "DATABASE", "D1", "PAUSE")),
        ('ALTER DATABASE "d" PAUSE', 4, ("ALTER", "DATABASE")),
        ("FLUSH", 3, ("FLUSH",)),
        ("_under score", 2, ("_UNDER", "SCORE")),
        ("(SELECT 1)", 3, ("SELECT",)),
        ("( /* c */ ((VALUES (1)) UNION (TABLE t)))", 1, ("VALUES",)),
        ("(WITH x AS (SELECT 1) TABLE x)", 2, ("WITH", "X")),
        ("(", 3, ()),
        ("(1)", 3, ()),
        ("(COMMIT)", 3, ()),
        ("( SET x = 1)", 3, ()),
        ("", 3, ()),
        ("-- nothing", 3, ()),
        ("CREATE TABLE t", 1, ("CREATE",)),
    ],
)
def test_leading_words(sql: str, n: int, expected: tuple[str, ...]) -> None:
    assert leading_words(sql, n) == expected


@pytest.mark.parametrize(
    "sql",
    [
        "ALTER DATABASE d PAUSE",
        "alter database d resume",
        'ALTER DATABASE "My DB" PAUSE;',
        "ALTER DATABASE db1 RESUME",
        "ALTER DATABASE d PAUZE",
        "ALTER DATABASE d PAUZE -- typo\n;",
        "ALTER DATABASE d PAUSE NOW",
        "/* c */ ALTER DATABASE d PAUSE",
        "FLUSH",
        "flush now",
        "  -- hi\n FLUSH;",
        "CREATE MATERIALIZED VIEW v AS SELECT 1",
        "create\nmaterialized /* x */ view v batch refresh as select 1",
        "CREATE MATERIALIZED VIEW",
        # REFRESH MATERIALIZED VIEW ...
        "REFRESH MATERIALIZED VIEW v",
        "refresh materialized view concurrently s.v;",
        "REFRESH /* x */ MATERIALIZED\nVIEW v WITH NO DATA",
        "REFRESH MATERIALIZED VIEW",
        "  -- c\n REFRESH MATERIALIZED VIEW v",
        # DROP MATERIALIZED VIEW ...
        "DROP MATERIALIZED VIEW v",
        "drop materialized view if exists a, b cascade",
        "DROP MATERIALIZED VIEW",
        # CREATE / DROP DATABASE ...
        "CREATE DATABASE d",
        "create database d owner u",
        "CREATE DATABASE",
        'CREATE DATABASE "My DB";',
        "DROP DATABASE d",
        "drop database if exists d",
        "DROP DATABASE d WITH (FORCE)",
        "DROP DATABASE",
        # SHOW DATABASES / SHOW MATERIALIZED VIEWS, exactly
        "SHOW DATABASES",
        "show databases;",
        "SHOW DATABASES -- all of them\n ;",
        "SHOW MATERIALIZED VIEWS",
        "show /*x*/ materialized -- y\n views ; ",
        # ALTER MATERIALIZED VIEW <name> AS ...
        "ALTER MATERIALIZED VIEW v AS SELECT 1",
        'alter materialized view "S" . "v" as select 1',
        "ALTER MATERIALIZED VIEW s.v AS",
        "ALTER MATERIALIZED VIEW v /* c */ AS SELECT 1",
        "ALTER MATERIALIZED VIEW a.b.c AS SELECT 1",
        # the view's own name or schema: refused for pgbarrier's views (issue 14)
        "ALTER MATERIALIZED VIEW v RENAME TO w",
        "ALTER MATERIALIZED VIEW s.v SET SCHEMA t",
        # pgbarrier's record of the database follows it
        "ALTER DATABASE d RENAME TO e",
        'alter database "D" /* x */ rename to "e f";',
        "ALTER MATERIALIZED VIEW IF EXISTS v RENAME TO w",
        # issue 29: per-view suspend / resume, options (relayed upstream unless the view is
        # pgbarrier's), timed pauses
        "ALTER MATERIALIZED VIEW v SUSPEND",
        "alter materialized view s.v suspend reason 'x'",
        "ALTER MATERIALIZED VIEW v RESUME",
        "ALTER MATERIALIZED VIEW v SET (fillfactor = 70)",
        "ALTER MATERIALIZED VIEW v SET(refresh.interval.sec = 5)",
        "ALTER MATERIALIZED VIEW v RESET (refresh.interval.sec)",
        "ALTER DATABASE d PAUSE FOR '10 minutes' REASON 'load'",
        "alter materialized view if exists s.v set schema t",
    ],
)
def test_is_control_true(sql: str) -> None:
    assert is_control(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "",
        ";",
        "SELECT * FROM t WHERE id = 1",
        "select 'ALTER DATABASE d PAUSE'",
        "INSERT INTO t VALUES ('FLUSH')",
        "COMMIT",
        "CREATE TABLE t (a int)",
        "CREATE VIEW v AS SELECT 1",
        "CREATE OR REPLACE MATERIALIZED VIEW v AS SELECT 1",
        "CREATE MATERIALIZED TABLE x",
        "ALTER TABLE t ADD COLUMN c int",
        "ALTER DATABASE d SET search_path = x",
        "ALTER DATABASE d RENAME e",
        "ALTER DATABASE d OWNER TO u",
        "ALTER DATABASE d RESET ALL",
        "ALTER DATABASE d CONNECTION LIMIT 5",
        "ALTER DATABASE d",
        "ALTER DATABASE",
        "ALTER DATABASE 5 PAUSE",
        "FLUSHED",
        "FETCH 10 FROM c",
        "-- FLUSH",
        "/* ALTER DATABASE d PAUSE */ SELECT 1",
        "(SELECT 1)",
        # SHOW: only the two exact forms are ours
        "SHOW search_path",
        "SHOW TABLES",
        "SHOW ALL",
        "show transaction isolation level",
        "SHOW DATABASES LIKE 'x'",
        "SHOW DATABASES, x",
        'SHOW "DATABASES"',
        "SHOW MATERIALIZED VIEWS FROM s",
        "SHOW MATERIALIZED VIEW",
        "SHOW DATABASE",
        "SHOWDATABASES",
        "SHOW",
        # ALTER MATERIALIZED VIEW forms other than AS pass through
        "ALTER MATERIALIZED VIEW v RENAME COLUMN a TO b",  # a column: PostgreSQL's own
        "ALTER MATERIALIZED VIEW v RENAME a TO b",
        "ALTER MATERIALIZED VIEW v OWNER TO r",
        "ALTER MATERIALIZED VIEW v SET TABLESPACE t",
        "ALTER MATERIALIZED VIEW v SET ACCESS METHOD heap",
        "ALTER MATERIALIZED VIEW IF EXISTS v SUSPEND",
        "ALTER MATERIALIZED VIEW v OWNER TO u",
        "ALTER MATERIALIZED VIEW v",
        "ALTER MATERIALIZED VIEW",
        "ALTER MATERIALIZED VIEW s. AS SELECT 1",
        "ALTER MATERIALIZED TABLE v AS SELECT 1",
        "ALTER VIEW v AS SELECT 1",
        # other DROP / CREATE / REFRESH
        "DROP TABLE t",
        "DROP VIEW v",
        "drop view if exists v cascade",
        "DROP MATERIALIZED TABLE t",
        "DROP DATABASES",
        "DROP SCHEMA s",
        "DROPMATERIALIZED VIEW v",
        "CREATE DATABASES",
        "CREATE SCHEMA s",
        "REFRESH TABLE t",
        "REFRESH v",
        "REFRESHING MATERIALIZED VIEW v",
        # statements starting with the same letters as ours
        "SET x = 1",
        "DELETE FROM t",
        "RESET ALL",
        "ROLLBACK",
        "START TRANSACTION",
        "DO $$ BEGIN END $$",
        "S",
        "sh",
        "  -- c\n SELECT 1",
    ],
)
def test_is_control_false(sql: str) -> None:
    assert not is_control(sql)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT * FROM rw_catalog.rw_databases", True),
        ("select * from RW_Catalog.rw_databases", True),
        ('SELECT * FROM "rw_catalog"."rw_databases"', True),
        ("SELECT * FROM pg_catalog.pg_class", False),
        ("SELECT 1", False),
        ("SELECT rwcatalog", False),
    ],
)
def test_mentions_rw_catalog(sql: str, expected: bool) -> None:
    assert mentions_rw_catalog(sql) is expected
