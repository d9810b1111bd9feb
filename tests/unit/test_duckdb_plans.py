"""DuckDB plans kept per session (backends/duckdb_plans.py): a read statement run again
runs its prepared plan, with the same answers, errors and reactions to DDL and settings as
the statement run afresh."""

from __future__ import annotations

import pytest

from pgbarrier.backends import duckdb_plans
from pgbarrier.backends.duckdb_plans import PLANS, Plans
from pgbarrier.errors import PgError


@pytest.fixture
def session(monkeypatch, dev_backend):
    # what is planned depends on how long a first run took: every run is short here, so
    # what the tests pin does not depend on the machine's load
    monkeypatch.setattr(duckdb_plans, "PLANNED_BELOW_S", 60.0)
    s = dev_backend.connect("dev", "root")
    yield s
    s.close()


def rows(s, sql: str) -> list[tuple]:
    return [tuple(r) for r in s.execute(sql).rows()]


def kept(s) -> list[str]:
    return [r[0] for r in s.cursor().execute(
        "SELECT statement FROM duckdb_prepared_statements() "
        "WHERE name LIKE 'pgbarrier_plan_%'").fetchall()]


def test_a_read_run_again_runs_its_plan_and_a_one_off_keeps_none(session):
    assert rows(session, "SELECT 1 AS a") == [(1,)]
    assert kept(session) == []
    assert rows(session, "SELECT 1 AS a") == [(1,)]
    assert kept(session) == ["SELECT 1 AS a"]
    result = session.execute("SELECT 1 AS a")
    assert [c.name for c in result.columns] == ["a"] and list(result.rows()) == [(1,)]


def test_ddl_and_the_search_path_rebind_a_kept_plan(session):
    session.execute("CREATE TABLE t (a int)")
    session.execute("INSERT INTO t VALUES (1)")
    for _ in range(2):
        assert rows(session, "SELECT * FROM t") == [(1,)]
    assert kept(session) == ["SELECT * FROM t"]
    session.execute("ALTER TABLE t ADD COLUMN b int DEFAULT 7")
    result = session.execute("SELECT * FROM t")
    assert [c.name for c in result.columns] == ["a", "b"] and list(result.rows()) == [(1, 7)]
    session.execute("CREATE SCHEMA s")
    session.execute("CREATE TABLE s.t (z text)")
    session.execute("INSERT INTO s.t VALUES ('in s')")
    session.execute("SET search_path = s, public")
    assert rows(session, "SELECT * FROM t") == [("in s",)]


def test_a_setting_change_forgets_every_plan(session):
    for _ in range(2):
        rows(session, "SELECT 2")
    assert kept(session)
    session.execute("SET TimeZone = 'Europe/Paris'")
    assert kept(session) == []


def test_a_kept_plan_that_fails_fails_as_the_statement_itself(session):
    session.execute("CREATE TABLE gone (a int)")
    for _ in range(2):
        rows(session, "SELECT a FROM gone")
    assert kept(session)
    session.execute("DROP TABLE gone")
    with pytest.raises(PgError) as planned:
        rows(session, "SELECT a FROM gone")
    assert planned.value.sqlstate == "42P01"
    assert planned.value.position == 15  # DuckDB's own position, as run afresh
    assert kept(session) == []


def test_statements_that_change_state_or_take_parameters_are_never_planned(session):
    session.execute("CREATE SEQUENCE seq")
    for _ in range(3):
        rows(session, "SELECT nextval('seq')")
        session.execute("SELECT $1::int + 1", [5])
    assert kept(session) == []
    assert rows(session, "SELECT currval('seq')") == [(3,)]


def test_at_most_plans_are_kept_least_recently_used_first_out(session):
    texts = [f"SELECT {i} AS n" for i in range(PLANS + 5)]
    for text in texts:
        rows(session, text)
        rows(session, text)
    held = kept(session)
    assert len(held) == PLANS
    assert texts[0] not in held and texts[-1] in held


def test_a_text_that_does_not_prepare_runs_as_itself():
    import duckdb

    cur = duckdb.connect(":memory:").cursor()
    plans = Plans()
    for _ in range(2):
        with pytest.raises(duckdb.Error, match="LINE 1"):
            plans.run(cur, "SELECT nope FROM nowhere")


def test_a_kept_plan_failing_in_a_block_fails_the_block_with_its_own_error(session):
    for _ in range(2):
        with pytest.raises(PgError):
            rows(session, "SELECT 'x'::int")  # fails as it is prepared: never kept
    assert kept(session) == []
    session.execute("CREATE TABLE v (s text)")
    session.execute("INSERT INTO v VALUES ('1')")
    for _ in range(2):
        assert rows(session, "SELECT s::int FROM v") == [(1,)]
    session.execute("INSERT INTO v VALUES ('x')")
    session.execute("BEGIN")
    with pytest.raises(PgError) as failed:
        rows(session, "SELECT s::int FROM v")
    assert failed.value.sqlstate == "22P02"  # not 25P02 of a second run in the aborted block
    session.execute("ROLLBACK")


def test_a_text_whose_first_run_was_long_is_not_planned(session, monkeypatch):
    monkeypatch.setattr(duckdb_plans, "PLANNED_BELOW_S", 0.0)
    for _ in range(3):
        assert rows(session, "SELECT 3") == [(3,)]
    assert kept(session) == []


def test_reads_of_the_postgresql_catalog_are_never_planned(session):
    for _ in range(3):
        rows(session, "SELECT count(*) FROM pg_catalog.pg_class")
    assert kept(session) == []
