"""The pg_catalog rewrite on sqlglot's AST, and PostgreSQL's output column names."""

from __future__ import annotations

import pytest

from pgbarrier.errors import PgError
from pgbarrier.sql.colnames import postgres_names
from pgbarrier.backends.pgcatalog.rewrite import (
    CatalogContext,
    may_touch_catalog,
    rewrite_pg_catalog,
    settings_table,
)

SETTINGS = {"application_name": "app"}


def _set(name: str, value: str, _local: bool) -> str:
    SETTINGS[name] = value
    return value


def _get(name: str) -> str:
    if name not in SETTINGS:
        raise PgError(f'unrecognized configuration parameter "{name}"', sqlstate="42704")
    return SETTINGS[name]


CTX = CatalogContext("dev", "alice", _get, _set,
                     lambda: settings_table([(k, v, "") for k, v in SETTINGS.items()]))


def rw(sql: str) -> str | None:
    out = rewrite_pg_catalog(sql, CTX)
    return None if out is None else out.sql


@pytest.mark.parametrize("sql", [
    "SELECT 1", "SELECT * FROM orders WHERE id = $1", "INSERT INTO pg_like VALUES (1)",
    "SELECT 'pg_class' AS just_text",
])
def test_queries_that_name_no_catalog_object_are_not_rewritten(sql: str) -> None:
    assert rw(sql) is None


def test_cheap_gate_skips_ordinary_sql() -> None:
    assert not may_touch_catalog("SELECT id, total FROM orders")
    assert may_touch_catalog("select * from PG_CATALOG.pg_class")


def test_catalog_tables_map_to_the_emulation_with_their_own_alias() -> None:
    out = rw("SELECT relname FROM pg_catalog.pg_class WHERE relkind = 'r'")
    assert "pgbarrier_catalog.pgcat.pg_class AS pg_class" in out
    assert "FROM pgbarrier_catalog.infoschema.tables" in rw(
        "SELECT table_name FROM information_schema.tables")
    # a CTE named like a catalog table is the CTE
    assert rw("WITH pg_class AS (SELECT 1 AS x) SELECT x FROM pg_class") is None


def test_public_is_duckdb_main_and_qualified_columns_lose_the_schema() -> None:
    assert rw("SELECT * FROM public.orders") == "SELECT * FROM main.orders"
    out = rw("SELECT pg_catalog.pg_class.relname FROM pg_catalog.pg_class")
    assert "pg_class.relname" in out and "pg_catalog.pg_class.relname" not in out


def test_reg_casts() -> None:
    assert "pgcat.regclass_in('pg_namespace')" in rw("SELECT 'pg_namespace'::regclass")
    # the name is qualified unless its schema is on the search path (or pg_catalog)
    assert "pgcat.regclass_name(c.oid, ['pg_catalog', 'public'])" in rw(
        "SELECT c.oid::pg_catalog.regclass FROM t AS c")
    # compared with another reg* value, both sides stay OIDs
    out = rw("SELECT 1 FROM p WHERE p.t::regtype != 'trigger'::regtype")
    assert "p.t <> pgbarrier_catalog.pgcat.regtype_in('trigger')" in out
    assert "'array_in'" in rw("SELECT typinput = 'pg_catalog.array_in'::regproc FROM pg_type")


def test_operator_collate_and_array_literals() -> None:
    out = rw("SELECT 1 FROM pg_class c WHERE c.relname OPERATOR(pg_catalog.~) '^(t)$' "
             "COLLATE pg_catalog.default AND c.relkind = ANY('{r,p}')")
    assert "REGEXP_MATCHES(c.relname, '^(t)$')" in out
    assert "COLLATE" not in out and "ANY(['r', 'p'])" in out


def test_session_values() -> None:
    out = rw("SELECT current_database(), current_user, current_schema(), "
             "current_schemas(false), current_setting('application_name')")
    assert out == ("SELECT 'dev' AS \"current_database\", 'alice' AS \"current_user\", "
                   "'public' AS \"current_schema\", ['public'] AS \"current_schemas\", "
                   "'app' AS \"current_setting\"")
    rw("SELECT set_config('application_name', 'other', false)")
    assert SETTINGS["application_name"] == "other"


def test_output_types_of_catalog_columns() -> None:
    out = rewrite_pg_catalog("SELECT c.oid, c.relname, c.relkind AS k, "
                             "pg_catalog.pg_get_userbyid(c.relowner) FROM pg_class c", CTX)
    assert out.column_types == {"oid": 26, "relname": 19, "k": 18, "pg_get_userbyid": 19}


@pytest.mark.parametrize(("sql", "names"), [
    ("SELECT 1", ("?column?",)),
    ("SELECT version()", ("version",)),
    ("SELECT count(*), x AS Y, x AS \"Y\" FROM t", ("count", "y", "Y")),
    ("SELECT CASE WHEN a THEN b ELSE c END, CASE WHEN a THEN 1 END FROM t", ("c", "case")),
    ("SELECT 'x'::text, a::int FROM t", ("text", "a")),
    ("SELECT ARRAY(SELECT 1), EXISTS (SELECT 1)", ("array", "exists")),
])
def test_postgres_column_names(sql: str, names: tuple[str, ...]) -> None:
    assert postgres_names(sql, len(names)) == names


def test_postgres_column_names_unknown_for_star_or_other_width() -> None:
    assert postgres_names("SELECT * FROM t", 3) is None
    assert postgres_names("SELECT 1", 2) is None
