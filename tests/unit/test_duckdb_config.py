"""duckdb_config: what a client may change is DuckDB's own per-session settings, only
per session; the guard sees through several statements in one text."""

from __future__ import annotations

import duckdb
import pytest

from pgbarrier.backends.duckdb_config import (
    NOT_FOR_CLIENTS,
    DuckDBLimits,
    InsufficientPrivilege,
    StatementGuard,
    lock_down,
    session_settable,
)
from pgbarrier.sql.classify import leading_words


def test_instance_wide_settings_are_not_session_settable() -> None:
    allowed = session_settable()
    for name in ("threads", "memory_limit", "temp_directory", "enable_external_access",
                 "lock_configuration", "allowed_directories", "allowed_configs",
                 "autoload_known_extensions", "allow_persistent_secrets"):
        assert name not in allowed
    assert not allowed & NOT_FOR_CLIENTS
    assert {"timezone", "integer_division", "default_null_order"} <= allowed


def _other_value(value: str | None, typ: str) -> str | None:
    if typ == "BOOLEAN":
        return "false" if value == "true" else "true"
    if typ in ("BIGINT", "UBIGINT", "INTEGER", "UINTEGER") and value is not None:
        return str(int(value) + 3)
    return None


def test_no_allowed_setting_leaks_to_another_connection() -> None:
    """Measured, not assumed: SET SESSION of each allowed setting leaves another
    connection's value alone (booleans and integers: a different value is known)."""
    conn = duckdb.connect(":memory:")
    a, b = conn.cursor(), conn.cursor()
    q = "SELECT value FROM duckdb_settings() WHERE name = $1"
    tried = 0
    for name, value, typ in a.execute(
            "SELECT name, value, input_type FROM duckdb_settings()").fetchall():
        new = _other_value(value, typ)
        if name.lower() not in session_settable() or new is None:
            continue
        try:
            a.execute(f'SET SESSION "{name}" = $1', [new])
        except duckdb.Error:
            continue  # not a value this setting takes
        tried += 1
        assert b.execute(q, [name]).fetchone() == (value,), name
        a.execute(f'RESET SESSION "{name}"')
    assert tried > 30


def test_guard_refuses_global_and_attach_even_after_another_statement() -> None:
    guard = StatementGuard()
    for sql in ("SELECT 1; SET GLOBAL threads = 1", "SET GLOBAL TimeZone = 'UTC'",
                "RESET GLOBAL default_order", "SELECT 1; ATTACH ':memory:' AS x",
                "/* hi */ DETACH pgbarrier_catalog"):
        with pytest.raises(InsufficientPrivilege):
            guard.check(sql, leading_words(sql, 1)[0])


def test_guard_runs_a_plain_set_of_an_allowed_setting_as_set_session() -> None:
    guard = StatementGuard()
    assert guard.check("SET default_order = 'desc'", "SET") == \
        "SET SESSION \"default_order\" = 'desc'"
    assert guard.check("PRAGMA default_null_order = 'nulls_first'", "PRAGMA") == \
        "SET SESSION \"default_null_order\" = 'nulls_first'"
    assert "SESSION" in guard.check("SELECT 1; RESET integer_division", "SELECT")
    assert guard.check("SELECT ';'", "SELECT") == "SELECT ';'"
    assert guard.check("SET VARIABLE v = 1", "SET") == "SET VARIABLE v = 1"


def test_a_locked_instance_keeps_pgbarriers_own_work() -> None:
    conn = duckdb.connect(":memory:")
    lock_down(conn, DuckDBLimits(memory_limit="256MB", threads=1), in_memory=True)
    cur = conn.cursor()
    cur.execute("SET SESSION TimeZone = 'Asia/Tokyo'")
    assert cur.execute("SELECT '2020-01-01 00:00:00+00'::timestamptz::varchar").fetchone() == \
        ("2020-01-01 09:00:00+09",)
    cur.execute("ATTACH ':memory:' AS cat")  # what pgcatalog does (not through the guard)
    cur.execute("CREATE TEMP MACRO f() AS 1")
    cur.execute("CREATE TEMP TYPE jsonb AS JSON")
    assert cur.execute("SELECT '{\"a\": 1}'::jsonb ->> 'a'").fetchone() == ("1",)
    with pytest.raises(duckdb.Error):
        cur.execute("SET GLOBAL threads = 4")
    assert cur.execute("SELECT value FROM duckdb_settings() WHERE name = 'threads'"
                       ).fetchone() == ("1",)


@pytest.mark.parametrize("sql, refused", [
    ("PRAGMA database_list", True), ("  pragma   Version", True), ("CALL PRAGMA platform", True),
    ("PRAGMA default_null_order = 'nulls_first'", False), ("PRAGMA table_info('t')", False),
    ("SELECT * FROM duckdb_settings()", True), ('SELECT * FROM "duckdb_memory" ()', True),
    ("SELECT * FROM duckdb_tables()", False), ("SELECT * FROM duckdb_columns()", False),
    ("CHECKPOINT", True), ("FORCE CHECKPOINT mydb", True), ("SELECT 'CHECKPOINT'", False),
    ("SELECT 1 -- duckdb_settings()", False), ("SELECT 'pragma_version()'", False),
    ("SELECT x.duckdb_settings FROM t x", False),
])
def test_instance_statements_are_refused_by_name_not_by_text(sql: str, refused: bool) -> None:
    from pgbarrier.backends.duckdb_instance import refusal

    err = refusal(sql)
    assert (err is not None) == refused, sql
    if err is not None:
        assert err.sqlstate == "42501" and "--allow-instance-info" in (err.hint or "")
    guard = StatementGuard(instance_info=True)
    assert guard.instance_info
