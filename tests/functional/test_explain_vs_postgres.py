"""EXPLAIN through a DuckDB-backed pgbarrier, read the way tools read PostgreSQL's plans,
and compared with PostgreSQL 15's answer for the same statement on the same tables.

The numbers are each server's own (DuckDB plans differently and pgbarrier's costs are its
own rule); what must be the same is the shape: the column's name and type, the command tag,
the text lines' grammar (:mod:`tests.pg_explain_grammar`, which PostgreSQL's own output is
held to as well), the JSON document's keys, the YAML and XML structure, the errors."""

from __future__ import annotations

import asyncio
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from tests.conftest import fresh_postgres_database, start_server, stop_server
from tests.pg_explain_grammar import (COSTS, SUPERSET_COST, json_shape, parse_text, shape,
                                      walk_json)

SETUP = (
    "CREATE TABLE t (a int, b text, c float8)",
    "CREATE TABLE u (a int PRIMARY KEY, d bigint)",
    "INSERT INTO t SELECT i, i::text, i FROM generate_series(1, 1000) i",
    "INSERT INTO u SELECT i, i FROM generate_series(1, 100) i",
)

QUERIES = [
    "SELECT 1",
    "SELECT * FROM t WHERE a > 5",
    "SELECT t.b, sum(d) FROM t JOIN u ON t.a = u.a WHERE c < 100 GROUP BY t.b "
    "ORDER BY 2 DESC LIMIT 3",
    "SELECT count(*) FROM t",
    "SELECT * FROM t x WHERE x.a BETWEEN 1 AND 5 ORDER BY b",
    "SELECT a FROM t UNION SELECT a FROM u",
    "WITH x AS MATERIALIZED (SELECT * FROM t) SELECT * FROM x",
    "SELECT a, row_number() OVER (ORDER BY a) FROM t",
    "SELECT * FROM t WHERE a IN (SELECT a FROM u)",
    "SELECT * FROM t, u WHERE t.a = u.a AND u.d > 5",
    "VALUES (1, 'a'), (2, 'b')",
    "SELECT * FROM generate_series(1, 10)",
    "INSERT INTO u VALUES (1000, 1)",
    "INSERT INTO u SELECT a + 2000, a FROM t WHERE a < 10",
    "UPDATE u SET d = d + 1 WHERE a < 10",
    "DELETE FROM u WHERE a = 3",
]

OPTIONS = ["", "ANALYZE", "VERBOSE", "(COSTS OFF)", "(ANALYZE, TIMING OFF)",
           "(ANALYZE, BUFFERS, VERBOSE)", "(SUMMARY)", "(SETTINGS)", "(ANALYZE, WAL)",
           "(ANALYZE, SUMMARY OFF, COSTS OFF)"]


@pytest.fixture(scope="module")
def duck() -> Iterator[Any]:
    srv = start_server()
    with psycopg.connect(srv.dsn(), autocommit=True) as c:
        for stmt in SETUP:
            c.execute(stmt)
    yield srv
    assert stop_server(srv) == 0, "".join(srv.log)


@pytest.fixture(scope="module")
def pg() -> Iterator[str]:
    with fresh_postgres_database("pgb_explain") as dsn:
        with psycopg.connect(dsn, autocommit=True) as c:
            for stmt in SETUP:
                c.execute(stmt)
            c.execute("ANALYZE")
        yield dsn


def _explain(dsn: str, sql: str, params: Any = None) -> tuple[list[tuple[str, int]], list[Any],
                                                                 str]:
    """The columns, rows and tag of ``sql``, inside a transaction rolled back (ANALYZE of
    DML runs it)."""
    with psycopg.connect(dsn) as c:
        cur = c.execute(sql, params)
        rows = cur.fetchall()
        answer = ([(d.name, d.type_code) for d in cur.description], [r[0] for r in rows],
                  cur.statusmessage or "")
        c.rollback()
    return answer


def _with_format(options: str, fmt: str) -> str:
    if fmt == "TEXT":
        return options
    if options.startswith("("):
        return f"(FORMAT {fmt}, " + options[1:]
    words = [w for w in options.split() if w]
    return "(" + ", ".join([f"FORMAT {fmt}"] + words) + ")"


def _generic_keys(options: str) -> list[str]:
    """The keys PostgreSQL prints for every plan node with these options."""
    o = options.upper()
    keys = ["Node Type", "Parallel Aware", "Async Capable"]
    if "COSTS OFF" not in o:
        keys += ["Startup Cost", "Total Cost", "Plan Rows", "Plan Width"]
    if "ANALYZE" in o:
        if "TIMING OFF" not in o:
            keys += ["Actual Startup Time", "Actual Total Time"]
        keys += ["Actual Rows", "Actual Loops"]
    if "BUFFERS" in o:
        keys += ["Shared Hit Blocks", "Shared Read Blocks", "Temp Written Blocks"]
    if "WAL" in o:
        keys += ["WAL Records", "WAL FPI", "WAL Bytes"]
    return keys


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("sql", QUERIES)
def test_text_plan_reads_as_postgresqls(duck, pg, sql, options):
    statement = f"EXPLAIN {options} {sql}"
    expected_cols, expected, expected_tag = _explain(pg, statement)
    cols, got, tag = _explain(duck.dsn(), statement)
    assert (cols, tag) == (expected_cols, expected_tag) == ([("QUERY PLAN", 25)], "EXPLAIN")
    expected_tree, tree = parse_text(expected), parse_text(got)  # PostgreSQL's grammar
    assert tree["children"] is not None and expected_tree is not None
    costs = "COSTS OFF" not in options.upper()
    assert bool(COSTS.search(got[0])) == bool(COSTS.search(expected[0])) == costs
    assert ("(actual" in got[0]) == ("(actual" in expected[0])
    # the summary lines (PostgreSQL's "Planning:" buffer counts: DuckDB reads no buffers)
    summary = [line.split(":")[0] for line in got if line and not line.startswith(" ")][1:]
    expected_summary = [line.split(":")[0] for line in expected
                        if line and not line.startswith(" ") and line != "Planning:"][1:]
    assert summary == expected_summary
    if options == "":  # Superset's cost estimate: row 0, its regex
        m = SUPERSET_COST.search(got[0])
        assert m and 0 <= float(m.group(1)) <= float(m.group(2))


@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("sql", QUERIES)
def test_json_plan_has_postgresqls_keys(duck, pg, sql, options):
    statement = f"EXPLAIN {_with_format(options, 'JSON')} {sql}"
    expected_cols, (expected,), _ = _explain(pg, statement)
    cols, (got,), tag = _explain(duck.dsn(), statement)
    assert cols == expected_cols == [("QUERY PLAN", 114)] and tag == "EXPLAIN"
    assert list(got[0]) == list(expected[0])  # Plan, Settings, Planning Time, Triggers...
    generic = _generic_keys(options)
    pg_root = expected[0]["Plan"]
    assert [k for k in pg_root if k in generic] == generic  # PostgreSQL's order
    for node in walk_json(got):
        assert [k for k in node if k in generic] == generic, node["Node Type"]
        assert isinstance(node["Node Type"], str)
        for key in ("Startup Cost", "Total Cost", "Plan Rows", "Actual Total Time"):
            if key in node:
                assert isinstance(node[key], (int, float)) and node[key] >= 0
    text = _explain(duck.dsn(), f"EXPLAIN {options} {sql}")[1]
    assert shape(parse_text(text)) == json_shape(got[0]["Plan"])


@pytest.mark.parametrize("options", ["", "ANALYZE", "(ANALYZE, COSTS OFF, SETTINGS)"])
@pytest.mark.parametrize("sql", QUERIES[:4] + QUERIES[-2:])
def test_yaml_and_xml_plans_have_postgresqls_structure(duck, pg, sql, options):
    statement = f"EXPLAIN {_with_format(options, 'YAML')} {sql}"
    expected_cols, (expected,), _ = _explain(pg, statement)
    cols, (got,), _ = _explain(duck.dsn(), statement)
    assert cols == expected_cols == [("QUERY PLAN", 25)]

    def top_keys(text: str) -> list[str]:
        return [line.split(":")[0].strip() for line in text.split("\n")
                if line.startswith("  ") and not line.startswith("   ")]

    assert got.startswith("- Plan: \n    Node Type: ") and top_keys(got) == top_keys(expected)
    statement = f"EXPLAIN {_with_format(options, 'XML')} {sql}"
    expected_cols, (expected,), _ = _explain(pg, statement)
    cols, (got,), _ = _explain(duck.dsn(), statement)
    assert cols == expected_cols == [("QUERY PLAN", 142)]
    ns = "{http://www.postgresql.org/2009/explain}"
    mine, theirs = ET.fromstring(got), ET.fromstring(expected)
    assert mine.tag == theirs.tag == f"{ns}explain"
    assert [c.tag for c in mine[0]] == [c.tag for c in theirs[0]]
    assert all(p.find(f"{ns}Node-Type") is not None for p in mine.iter(f"{ns}Plan"))


def test_pgcli_and_pgadmin_read_the_json_plan(duck):
    """pgcli's explain mode sends this and walks Plan/Plans; pgAdmin's graphical explain
    reads the same keys."""
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        for sql in QUERIES[:12]:
            (plan,), = c.execute(
                f"EXPLAIN (ANALYZE, COSTS, VERBOSE, BUFFERS, FORMAT JSON) {sql}").fetchall()
            assert isinstance(plan, list)
            assert {"Plan", "Planning Time", "Execution Time"} <= set(plan[0])
            for node in walk_json(plan):
                assert {"Node Type", "Startup Cost", "Total Cost", "Plan Rows", "Plan Width",
                        "Actual Startup Time", "Actual Total Time", "Actual Rows",
                        "Actual Loops", "Shared Hit Blocks"} <= set(node)
                if node["Node Type"] in ("Seq Scan", "Index Scan", "CTE Scan"):
                    assert "Alias" in node
            raw = c.execute(f"EXPLAIN (FORMAT JSON) {sql}").fetchone()
            assert raw is not None and json.dumps(raw[0])


def test_explain_of_dml_changes_nothing_and_analyze_runs_it(duck, pg):
    def counts(dsn: str) -> list[Any]:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("CREATE TABLE IF NOT EXISTS dml (a int PRIMARY KEY, b int)")
            c.execute("DELETE FROM dml")
            c.execute("INSERT INTO dml VALUES (1, 1), (2, 2), (3, 3)")
            out = []
            for sql in ("EXPLAIN INSERT INTO dml VALUES (10, 10)",
                        "EXPLAIN UPDATE dml SET b = 0", "EXPLAIN DELETE FROM dml",
                        "EXPLAIN (VERBOSE) INSERT INTO dml SELECT a + 100, b FROM dml",
                        "EXPLAIN ANALYZE INSERT INTO dml VALUES (11, 11)",
                        "EXPLAIN ANALYZE INSERT INTO dml VALUES (12, 12), (13, 13)",
                        "EXPLAIN ANALYZE UPDATE dml SET b = -1 WHERE a = 1",
                        "EXPLAIN ANALYZE DELETE FROM dml WHERE a = 2",
                        "EXPLAIN ANALYZE INSERT INTO dml SELECT a + 100, b FROM dml WHERE a < 4"):
                c.execute(sql)
                out.append(c.execute("SELECT count(*), sum(b) FROM dml").fetchone())
            with c.transaction(force_rollback=True):
                c.execute("EXPLAIN ANALYZE DELETE FROM dml")
                out.append(c.execute("SELECT count(*) FROM dml").fetchone())
            out.append(c.execute("SELECT count(*) FROM dml").fetchone())
            c.execute("DROP TABLE dml")
        return out

    assert counts(duck.dsn()) == counts(pg)


def test_create_table_as_is_explained_and_created_by_analyze(duck, pg):
    for dsn in (duck.dsn(), pg):
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("DROP TABLE IF EXISTS ctas")
            lines = [r[0] for r in c.execute("EXPLAIN CREATE TABLE ctas AS SELECT a FROM t")]
            parse_text(lines)
            with pytest.raises(psycopg.errors.UndefinedTable):
                c.execute("SELECT * FROM ctas")
            c.execute("EXPLAIN ANALYZE CREATE TABLE ctas AS SELECT a FROM t")
            assert c.execute("SELECT count(*) FROM ctas").fetchone() == (1000,)
            c.execute("DROP TABLE ctas")


@pytest.mark.parametrize("sql", [
    "EXPLAIN SELECT * FROM nope",
    "EXPLAIN ANALYZE SELECT nope FROM t",
    "EXPLAIN SELECT * FROM\n  t WHERE nope = 1",
    "EXPLAIN (ANALYZE) SELECT 1/0",
    "EXPLAIN ANALYZE SELECT 7 % 0",
    "EXPLAIN ANALYZE INSERT INTO u VALUES (1, 1)",
    "EXPLAIN ANALYZE INSERT INTO u SELECT 1, 1",
    "EXPLAIN SELECT * FROM public.nope",
    "EXPLAIN (FORMAT JSON) SELECT FROM WHERE",
    "EXPLAIN (foo) SELECT 1",
    "EXPLAIN (FORMAT csv) SELECT 1",
    "EXPLAIN (WAL) SELECT 1",
    "EXPLAIN (TIMING) SELECT 1",
    "EXPLAIN (COSTS maybe) SELECT 1",
    "EXPLAIN VERBOSE ANALYZE SELECT 1",
    "EXPLAIN DROP TABLE t",
    "EXPLAIN CREATE TABLE x (a int)",
    "EXPLAIN",
])
def test_errors_are_the_statements_own(duck, pg, sql):
    def error(dsn: str) -> tuple[Any, ...]:
        with psycopg.connect(dsn) as c:
            with pytest.raises(psycopg.Error) as info:
                c.execute(sql)
            d = info.value.diag
            return info.value.sqlstate, d.message_primary, d.statement_position

    assert error(duck.dsn()) == error(pg)


def test_errors_match_running_the_statement(duck):
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        for statement in ("SELECT * FROM nope", "SELECT 1/0", "INSERT INTO u VALUES (1, 1)",
                          "SELECT * FROM pg_catalog.pg_prepared_statements"):
            states = []
            for sql in (statement, "EXPLAIN ANALYZE " + statement):
                with pytest.raises(psycopg.Error) as info:
                    c.execute(sql)
                states.append((info.value.sqlstate, info.value.diag.message_primary))
            assert states[0] == states[1]


def test_translated_and_catalog_statements_are_explained(duck):
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        for sql in ("EXPLAIN ANALYZE SELECT 7/2, '\\x01'::bytea, '{1,2}'::int[]",
                    "EXPLAIN SELECT generate_series(1, 3)",
                    "EXPLAIN SELECT relname FROM pg_catalog.pg_class WHERE relname = 't'",
                    "EXPLAIN ANALYZE SELECT c.relname, n.nspname FROM pg_class c "
                    "JOIN pg_namespace n ON n.oid = c.relnamespace",
                    "EXPLAIN SELECT * FROM public.t WHERE a = 1"):
            lines = [r[0] for r in c.execute(sql)]
            parse_text(lines)
            assert SUPERSET_COST.search(lines[0])
        (plan,), = c.execute("EXPLAIN (FORMAT JSON) SELECT * FROM public.t x").fetchall()
        top = plan[0]["Plan"]
        assert (top["Node Type"], top["Relation Name"], top["Alias"]) == ("Seq Scan", "t", "x")


def test_read_only_transaction_refuses_explain_analyze_of_a_write(duck, pg):
    def run(dsn: str) -> list[Any]:
        out: list[Any] = []
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("BEGIN READ ONLY")
            out.append(len(c.execute("EXPLAIN INSERT INTO u VALUES (5000, 1)").fetchall()) > 0)
            out.append(len(c.execute("EXPLAIN ANALYZE SELECT * FROM u").fetchall()) > 0)
            try:
                c.execute("EXPLAIN ANALYZE INSERT INTO u VALUES (5000, 1)")
            except psycopg.Error as exc:
                out.append((exc.sqlstate, exc.diag.message_primary))
            c.execute("ROLLBACK")
        return out

    assert run(duck.dsn()) == run(pg)


def test_extended_protocol_parameters_and_describe(duck, pg):
    def run(dsn: str) -> list[Any]:
        out: list[Any] = []
        with psycopg.connect(dsn, autocommit=True) as c:
            for prepare in (False, True):
                cur = c.execute("EXPLAIN SELECT * FROM t WHERE a = %s", [5], prepare=prepare)
                out.append([(d.name, d.type_code) for d in cur.description])
                lines = [r[0] for r in cur.fetchall()]
                parse_text(lines)
                cur = c.execute("EXPLAIN (FORMAT JSON) SELECT %s::int + a FROM t", [1],
                                prepare=prepare)
                out.append(cur.fetchone()[0][0]["Plan"]["Node Type"] is not None)
        return out

    assert run(duck.dsn()) == run(pg)

    async def with_asyncpg(dsn: str) -> list[Any]:
        import asyncpg
        conn = await asyncpg.connect(dsn)
        try:
            stmt = await conn.prepare("EXPLAIN SELECT * FROM t WHERE a = $1")
            attrs = [(a.name, a.type.oid) for a in stmt.get_attributes()]
            rows = await stmt.fetch(5)
            parse_text([r[0] for r in rows])
            (plan,) = await conn.fetchrow("EXPLAIN (FORMAT JSON) SELECT 1")
            return [attrs, isinstance(json.loads(plan), list)]
        finally:
            await conn.close()

    duck_dsn = f"postgresql://root@{duck.host}:{duck.port}/dev"
    assert asyncio.run(with_asyncpg(duck_dsn)) == asyncio.run(with_asyncpg(pg))


def test_explain_execute_declare_and_refresh(duck, pg):
    def run(dsn: str) -> list[Any]:
        out: list[Any] = []
        with psycopg.connect(dsn) as c:
            c.execute("PREPARE pe (int) AS SELECT * FROM t WHERE a = $1")
            lines = [r[0] for r in c.execute("EXPLAIN EXECUTE pe(5)")]
            parse_text(lines)
            out.append(lines[0].split("  (")[0].split(" on ")[0])
            lines = [r[0] for r in c.execute(
                "EXPLAIN (COSTS OFF) DECLARE cur CURSOR FOR SELECT * FROM u WHERE d > 5")]
            out.append(lines)
            with pytest.raises(psycopg.Error) as info:
                c.execute("EXPLAIN EXECUTE nope")
            out.append(info.value.sqlstate)
            c.rollback()
        return out

    assert run(duck.dsn()) == run(pg)
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        rows = c.execute("EXPLAIN REFRESH MATERIALIZED VIEW whatever").fetchall()
        assert rows == [("Utility statements have no plan structure",)]


def test_settings_lists_the_sessions_changed_planner_settings(duck, pg):
    def run(dsn: str) -> list[Any]:
        with psycopg.connect(dsn, autocommit=True) as c:
            c.execute("SET work_mem = '8MB'")
            c.execute("SET enable_seqscan = off")
            lines = [r[0] for r in c.execute("EXPLAIN (SETTINGS) SELECT 1")]
            (plan,), = c.execute("EXPLAIN (SETTINGS, FORMAT JSON) SELECT 1").fetchall()
            c.execute("RESET ALL")
            plain = [r[0] for r in c.execute("EXPLAIN (SETTINGS) SELECT 1")]
        return [lines[1:], plan[0]["Settings"], plain[1:]]

    assert run(duck.dsn()) == run(pg)


@pytest.mark.parametrize("sql", [
    "EXPLAIN (COSTS OFF) SELECT * FROM t WHERE a > 5",
    "EXPLAIN (COSTS OFF) SELECT * FROM t x WHERE x.a < 5",
    "EXPLAIN (COSTS OFF) SELECT 1",
    "EXPLAIN (COSTS OFF) VALUES (1), (2)",
    "EXPLAIN (COSTS OFF) DELETE FROM u WHERE a = 3",
    "EXPLAIN (COSTS OFF, ANALYZE, TIMING OFF, SUMMARY OFF) SELECT * FROM t WHERE a > 5",
])
def test_simple_plans_without_costs_are_postgresqls_own(duck, pg, sql):
    """Where DuckDB's plan is PostgreSQL's (one scan and its filter), the output is the
    same text, line for line."""
    assert _explain(duck.dsn(), sql)[1] == _explain(pg, sql)[1]


def test_explain_analyze_of_a_write_is_checked_as_the_write(duck):
    """EXPLAIN ANALYZE runs the statement: what pgbarrier refuses to run (a write to its
    own schemas) it refuses to explain-and-run; a plain EXPLAIN (nothing runs) is a plan."""
    with psycopg.connect(duck.dsn(), autocommit=True) as c:
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as info:
            c.execute("EXPLAIN ANALYZE DELETE FROM pgbarrier.materialized_views")
        assert info.value.diag.message_primary == "permission denied for schema pgbarrier"
        assert c.execute("EXPLAIN DELETE FROM pgbarrier.materialized_views").fetchall()
        assert c.execute("EXPLAIN ANALYZE SELECT * FROM pgbarrier.materialized_views").fetchall()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            c.execute("EXPLAIN ANALYZE SELECT * FROM read_csv('/etc/passwd')")
