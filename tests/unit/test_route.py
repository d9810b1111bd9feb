"""sql.route: the one routing decision per statement text (no sqlglot, cached)."""

from __future__ import annotations

import importlib

import pytest

from pgbarrier.sql.classify import mentions_rw_catalog, split_statements
from pgbarrier.sql.controls import is_control
from pgbarrier.sql.route import CACHED_TEXT, PLAIN, Kind, Route, route
from pgbarrier.sql.setting import SettingStatement

# the module (the package's ``route`` attribute is the function)
route_module = importlib.import_module("pgbarrier.sql.route")


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        # plain SQL
        ("SELECT 1", Kind.PLAIN),
        ("select * from t where id = 1", Kind.PLAIN),
        ("INSERT INTO t VALUES ('rw catalog')", Kind.PLAIN),
        ("", Kind.PLAIN),
        (";", Kind.PLAIN),
        ("-- only a comment", Kind.PLAIN),
        ("SHOW search_path", Kind.PLAIN),
        ("SHOW TABLES", Kind.PLAIN),
        ("SET application_name = 'x'", Kind.PLAIN),
        ("RESET ALL", Kind.PLAIN),
        ("SET TIME ZONE 'UTC'", Kind.PLAIN),
        ("ALTER DATABASE d SET x = 1", Kind.PLAIN),
        ("ALTER DATABASE d OWNER TO e", Kind.PLAIN),
        ("CREATE OR REPLACE MATERIALIZED VIEW v AS SELECT 1", Kind.PLAIN),
        ("DROP TABLE t", Kind.PLAIN),
        ("COMMIT", Kind.PLAIN),
        # pgbarrier's control statements, and what looks like one (the parser's 42601)
        ("ALTER DATABASE d PAUSE", Kind.CONTROL),
        ("  alter database d resume;", Kind.CONTROL),
        ("ALTER DATABASE d PAUZE", Kind.CONTROL),
        ("FLUSH", Kind.CONTROL),
        ("FLUSH nonsense", Kind.CONTROL),
        ("/* c */ SHOW DATABASES", Kind.CONTROL),
        ("SHOW MATERIALIZED VIEWS;", Kind.CONTROL),
        ("CREATE MATERIALIZED VIEW v AS SELECT 1", Kind.CONTROL),
        ("REFRESH MATERIALIZED VIEW v", Kind.CONTROL),
        ("DROP MATERIALIZED VIEW v", Kind.CONTROL),
        ("ALTER MATERIALIZED VIEW s.v AS SELECT 2", Kind.CONTROL),
        ("CREATE DATABASE d", Kind.CONTROL),
        ("DROP DATABASE d", Kind.CONTROL),
        # a control statement reading rw_catalog is still the control plane's
        ("CREATE MATERIALIZED VIEW v AS SELECT * FROM rw_catalog.rw_databases", Kind.CONTROL),
        # pgbarrier's own settings
        ("SET statement_timeout = '5s'", Kind.SETTING),
        ("set Statement_Timeout to 5000", Kind.SETTING),
        ("SHOW batch_refresh_when_paused", Kind.SETTING),
        ("RESET lock_timeout", Kind.SETTING),
        ("SET SESSION idle_session_timeout = 0;", Kind.SETTING),
        ("SHOW idle_in_transaction_session_timeout", Kind.SETTING),
        ("SET statement_timeout = 'rw_catalog'", Kind.SETTING),
        # catalog reads
        ("SELECT * FROM rw_catalog.rw_databases", Kind.CATALOG),
        ("select * from RW_CATALOG.rw_jobs", Kind.CATALOG),
        ("SELECT 1 -- rw_catalog", Kind.CATALOG),  # a false positive: the rewriter changes nothing
    ],
)
def test_kind_of_one_statement(sql: str, kind: Kind) -> None:
    assert route(sql).kind is kind


def test_own_setting_is_read_once_and_carried() -> None:
    r = route("SET statement_timeout TO '1min'")
    assert r == Route(Kind.SETTING, SettingStatement("SET", "statement_timeout", "1min"))
    assert route("SHOW LOCK_TIMEOUT").setting == SettingStatement("SHOW", "lock_timeout")
    assert route("RESET batch_refresh_when_paused").setting == SettingStatement(
        "RESET", "batch_refresh_when_paused")
    # a leading comment hides a setting from the cheap reading, as it always did
    assert route("/* x */ SET statement_timeout = 1").kind is Kind.PLAIN
    for sql in ("SELECT 1", "ALTER DATABASE d PAUSE", "SELECT * FROM rw_catalog.rw_jobs",
                "SET application_name = 'a'"):
        assert route(sql).setting is None


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("SELECT 1; SELECT 2", Kind.PLAIN),
        ("BEGIN; INSERT INTO t VALUES (1); COMMIT", Kind.PLAIN),
        ("SELECT 1; ALTER DATABASE d PAUSE", Kind.CONTROL),
        ("SELECT 1; SET statement_timeout = 10; SHOW DATABASES", Kind.SETTING),
        ("SHOW DATABASES; SET statement_timeout = 10", Kind.CONTROL),
        ("SELECT 1; SELECT * FROM rw_catalog.rw_jobs", Kind.CATALOG),
        ("SELECT 1; SELECT 2 -- rw_catalog", Kind.CATALOG),
        ("SELECT 'ALTER DATABASE d PAUSE'; SELECT 2", Kind.PLAIN),
        ("SELECT 1; -- rw_catalog", Kind.CATALOG),  # the mention is read in the whole text
    ],
)
def test_kind_of_a_query_with_several_statements(sql: str, kind: Kind) -> None:
    r = route(sql)
    assert r.kind is kind
    assert r.setting is None  # each statement is routed again when it runs
    assert r.relayable is (kind is Kind.PLAIN)


def test_a_text_whose_only_semicolon_ends_it_is_routed_as_the_statement_before_it() -> None:
    assert route("SET statement_timeout = 10;") == route("SET statement_timeout = 10")
    assert route("ALTER DATABASE d PAUSE;") == route("ALTER DATABASE d PAUSE")
    assert route("SELECT ';'").kind is Kind.PLAIN


def test_relayable_and_copy_from_stdin() -> None:
    assert route("SELECT 1") is PLAIN
    assert PLAIN.relayable and PLAIN.relayable_parse and not PLAIN.copy_from_stdin
    copy_in = route("copy t FROM stdin")
    assert copy_in.kind is Kind.PLAIN and copy_in.copy_from_stdin
    assert copy_in.relayable and not copy_in.relayable_parse  # a Query relays it, a Parse not
    assert not route("COPY t TO STDOUT").copy_from_stdin
    assert route("COPY t TO STDOUT").relayable_parse
    for sql in ("ALTER DATABASE d PAUSE", "SET statement_timeout = 1",
                "SELECT * FROM rw_catalog.rw_jobs"):
        r = route(sql)
        assert not r.relayable and not r.relayable_parse


def test_routes_are_frozen_values() -> None:
    r = route("SET statement_timeout = 1")
    with pytest.raises(AttributeError):
        r.kind = Kind.PLAIN  # type: ignore[misc]
    assert hash(r) == hash(Route(Kind.SETTING, SettingStatement("SET", "statement_timeout", "1")))


def test_short_texts_are_routed_once_long_ones_every_time(monkeypatch) -> None:
    calls: list[str] = []
    real = route_module._route

    def counting(text: str) -> Route:
        calls.append(text)
        return real(text)

    monkeypatch.setattr(route_module, "_route", counting)
    route_module._cached.cache_clear()
    short = "SELECT 42 AS route_cache_probe"
    long = "SELECT '" + "x" * CACHED_TEXT + "'"
    for _ in range(3):
        assert route(short) is PLAIN
        assert route(long) is PLAIN
    assert calls.count(short) == 1
    assert calls.count(long) == 3
    info = route_module._cached.cache_info()
    assert info.maxsize == route_module.CACHE_SIZE  # bounded


def test_ordinary_sql_is_never_parsed_with_sqlglot(monkeypatch) -> None:
    """The fast path: routing plain SQL (and our settings, and catalog reads) parses
    nothing; only the executor parses CONTROL statements."""
    import sqlglot

    def refuse(*args, **kwargs):
        raise AssertionError("sqlglot parse on the routing path")

    monkeypatch.setattr(sqlglot, "parse", refuse)
    monkeypatch.setattr(sqlglot, "parse_one", refuse)
    route_module._cached.cache_clear()
    for sql in ("SELECT 1", "ALTER DATABASE d PAUSE", "SET statement_timeout = 1",
                "SELECT * FROM rw_catalog.rw_jobs", "SELECT 1; SELECT 2"):
        route(sql)


_CORPUS = [
    "SELECT 1", "SELECT 1;", "SELECT 1; SELECT 2", "ALTER DATABASE d PAUSE",
    "SELECT 1; ALTER DATABASE d RESUME", "SET statement_timeout = 1", "SHOW lock_timeout",
    "SET application_name = 'x'", "SELECT * FROM rw_catalog.rw_jobs", "FLUSH; FLUSH",
    "COPY t FROM STDIN", "select 'a;b'; show databases", "SHOW DATABASES LIKE 'x'",
    "DROP TABLE t; DROP DATABASE d", "  /* c */ reset STATEMENT_TIMEOUT ; ", "",
]


@pytest.mark.parametrize("sql", _CORPUS)
def test_relayable_means_no_statement_is_pgbarriers(sql: str) -> None:
    pieces = [p.text for p in split_statements(sql)] or [sql]
    ours = any(is_control(p) or route(p).setting is not None for p in pieces)
    assert route(sql).relayable is not (ours or mentions_rw_catalog(sql))
