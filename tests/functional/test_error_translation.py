"""Issue 26, item 7: the DuckDB backend's errors are PostgreSQL's.

Every example of the translation table (pgbarrier.backends.duckdb_errors.table.RULES) runs
through psycopg on PostgreSQL 15 (a fresh database, its ``public`` schema emptied before
each example) and on a DuckDB-backed pgbarrier (a fresh database per example), and the two
errors must agree on everything psycopg's ``e.diag`` exposes: SQLSTATE, primary message,
DETAIL, HINT, CONTEXT, position and the schema / table / column / type / constraint names.
An example's ``differs`` lists the fields that knowingly differ (README's differences); an
example with ``own`` is a statement PostgreSQL runs and pgbarrier refuses with that SQLSTATE
(with ``other``, statements a second session runs first: a conflict PostgreSQL would wait
on, run on pgbarrier only).
Set-up statements written ``!...`` are expected to fail (an aborted transaction block).
Skipped when PostgreSQL is unreachable, except under ``CI=true``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from pgbarrier.backends.duckdb_errors import RULES, Example
from tests.conftest import (ServerProcess, fresh_postgres_database, require_postgres,
                            start_server, stop_server)

FIELDS = ("sqlstate", "message_primary", "message_detail", "message_hint", "context",
          "statement_position", "schema_name", "table_name", "column_name", "datatype_name",
          "constraint_name")

CASES = [pytest.param(rule.name, ex, id=f"{rule.name}-{i}")
         for rule in RULES for i, ex in enumerate(rule.examples)]

_T = "CREATE TABLE t (a int, b text, c numeric(5,2), d date, e timestamptz)"
_P_C = ("CREATE TABLE p (id int PRIMARY KEY, u int UNIQUE, n int NOT NULL DEFAULT 0, "
        "c int CHECK (c > 0))")
#: errors pgbarrier answers before DuckDB runs anything (duckdb_ddl decides DDL,
#: duckdb_dialect refuses what PostgreSQL refuses): no rule of the table answers them,
#: but they are held to PostgreSQL's answers the same way
EARLIER = [
    Example("ALTER TABLE w ALTER COLUMN b SET NOT NULL",
            ("CREATE TABLE w (a int, b text)", "INSERT INTO w VALUES (1, NULL)")),
    Example("ALTER TABLE t ALTER COLUMN b TYPE int", (_T, "INSERT INTO t (b) VALUES ('x')")),
    Example("SELECT 'x'::int[]"),
    Example("CREATE TABLE t2 (a int, a int)"),
    Example("ALTER TABLE t ADD COLUMN a text", (_T,)),
    Example("ALTER TABLE t RENAME COLUMN a TO b", (_T,)),
    Example("ALTER TABLE t DROP COLUMN nosuch", (_T,)),
    Example("ALTER TABLE t RENAME COLUMN nosuch TO y", (_T,)),
    Example("SELECT '2020-01-01'::date + 'x'"),
    Example("SELECT ARRAY[1] || ARRAY['a']"),
    Example("SELECT ARRAY[1,2] || 'x'::text"),
    Example("DROP TABLE nosuch"), Example("DROP VIEW nosuch"),
    Example("ALTER TABLE nosuch ADD COLUMN a int"),
    Example("ALTER TABLE t RENAME TO u", (_T, "CREATE TABLE u (a int)")),
    Example("ALTER TABLE p ADD PRIMARY KEY (u)", (_P_C,)),
    Example("DROP TABLE v", ("CREATE VIEW v AS SELECT 1 AS a",)),
    Example("DROP VIEW t", (_T,)),
    Example("DROP INDEX nosuch"), Example("DROP SCHEMA nosuch"), Example("DROP SEQUENCE nosuch"),
    Example("DROP TABLE p", ("CREATE TABLE p (id int PRIMARY KEY)",
                             "CREATE TABLE c (pid int REFERENCES p (id))")),
]
CASES += [pytest.param("answered before DuckDB", ex, id=f"earlier-{i}")
          for i, ex in enumerate(EARLIER)]


@pytest.fixture(scope="module")
def duck() -> Iterator[ServerProcess]:
    require_postgres()
    srv = start_server()
    yield srv
    assert stop_server(srv) == 0, "server did not exit cleanly:\n" + "".join(srv.log)


@pytest.fixture(scope="module")
def pg() -> Iterator[str]:
    with fresh_postgres_database("pgb_errors") as dsn:
        yield dsn


def _diag(conn: psycopg.Connection, ex: Example, other: psycopg.Connection | None = None
          ) -> dict[str, str | None] | None:
    for stmt in ex.setup:
        if stmt.startswith("!"):
            with pytest.raises(psycopg.Error):
                conn.execute(stmt[1:])
        else:
            conn.execute(stmt)
    for stmt in ex.other:
        assert other is not None
        other.execute(stmt)
    try:
        conn.execute(ex.sql)
    except psycopg.Error as exc:
        return {f: getattr(exc.diag, f) for f in FIELDS}
    return None


def _on_postgres(dsn: str, ex: Example) -> dict[str, str | None] | None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        for (schema,) in conn.execute(
                "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' "
                "AND nspname <> 'information_schema'").fetchall():
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
        conn.execute("CREATE SCHEMA public")
        return _diag(conn, ex)


def _on_pgbarrier(srv: ServerProcess, ex: Example) -> dict[str, str | None] | None:
    name = f"errs_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(srv.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        with psycopg.connect(srv.dsn(name), autocommit=True) as conn, \
                psycopg.connect(srv.dsn(name), autocommit=True) as other:
            return _diag(conn, ex, other)
    finally:
        with psycopg.connect(srv.dsn(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name}")


def test_every_rule_has_an_example():
    assert all(rule.examples for rule in RULES), [r.name for r in RULES if not r.examples]


@pytest.mark.parametrize("rule, ex", CASES)
def test_example_answers_as_postgresql(duck, pg, rule, ex):
    got = _on_pgbarrier(duck, ex)
    assert got is not None, f"{ex.sql!r} ran on pgbarrier"
    if ex.own is not None:  # PostgreSQL runs it (or waits); pgbarrier refuses it (README)
        if not ex.other:
            assert _on_postgres(pg, ex) is None
        assert got["sqlstate"] == ex.own, got
        return
    expected = _on_postgres(pg, ex)
    assert expected is not None, f"{ex.sql!r} ran on PostgreSQL"
    for name in ex.differs:
        expected.pop({"message": "message_primary", "detail": "message_detail",
                      "hint": "message_hint", "position": "statement_position"}.get(name, name))
    got = {k: v for k, v in got.items() if k in expected}
    assert got == expected


PARAMETERIZED = [
    ("SELECT amout FROM orders WHERE id = %s", [1]),
    ("SELECT o.amount FROM orders WHERE id = %s", [1]),
    ("SELECT amount + customer FROM orders WHERE id = %s", [1]),
    ("SELECT customer, count(*) FROM orders WHERE id = %s", [1]),
    ("SELECT 'abc'::int WHERE 1 = %s", [1]),
    ("UPDATE orders SET amount = %s WHERE id = %s", [-5, 1]),
    ("INSERT INTO orders (id, customer, amount) VALUES (%s, %s, %s)", [2, "b", -1]),
    ("INSERT INTO orders (id, customer) VALUES (%s, %s)", [1, "b"]),
    ("INSERT INTO orders (id, amount) VALUES (%s, %s)", [3, "x"]),
    ("UPDATE orders SET amount = %s", ["12345678901.5"]),
    ("SELECT * FROM orders WHERE customer = %s AND id = %s", ["a", "one"]),
]


@pytest.mark.parametrize("prepare", [False, True], ids=["unprepared", "prepared"])
@pytest.mark.parametrize("sql, params", PARAMETERIZED)
def test_parameterized_statement_answers_as_postgresql(duck, pg, sql, params, prepare):
    """Through the extended protocol with parameters (Describe before Execute, a prepared
    statement): the same hints, qualifiers, positions and failing rows."""
    ex = Example(sql, ("CREATE TABLE orders (id int PRIMARY KEY, customer text, "
                       "amount numeric(10,2) CHECK (amount > 0))",
                       "INSERT INTO orders VALUES (1, 'a', 1)"))

    def run(conn: psycopg.Connection) -> dict[str, str | None]:
        for stmt in ex.setup:
            conn.execute(stmt)
        with pytest.raises(psycopg.Error) as caught:
            conn.execute(sql, params, prepare=prepare)
        return {f: getattr(caught.value.diag, f) for f in FIELDS}

    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
        expected = run(conn)
    name = f"errs_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(duck.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        with psycopg.connect(duck.dsn(name), autocommit=True) as conn:
            got = run(conn)
    finally:
        with psycopg.connect(duck.dsn(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name}")
    assert got == expected


COPY_TABLES = ("CREATE TABLE cp (id int PRIMARY KEY)",
               "CREATE TABLE cc (id int PRIMARY KEY, p int REFERENCES cp (id), n text NOT NULL, "
               "k int CHECK (k > 0), d date DEFAULT '2024-01-01')",
               "INSERT INTO cp VALUES (1)")
COPIES = [
    ("COPY cc (id, p, n, k) FROM STDIN", "1\t1\ta\t1\n2\t1\tb\t2\n1\t1\tc\t3\n"),
    ("COPY cc (id, p, n, k) FROM STDIN", "5\t9\ta\t1\n"),
    ("COPY cc (id, p, n, k) FROM STDIN", "1\t1\ta\t1\n3\t1\t\\N\t1\n"),
    ("COPY cc (id, p, n, k) FROM STDIN", "1\t1\ta b\\tc\t1\n4\t1\tx\\\\y\t0\n"),
    ("COPY cc (id, p, n, k) FROM STDIN (FORMAT csv)", '1,1,"a,b",1\n4,1,"say ""hi""",-1\n'),
    ("COPY cc (id, n, k) FROM STDIN (FORMAT csv, HEADER)", "id,n,k\n7,,1\n"),
    ("COPY cc FROM STDIN", "8\t1\tq\t-3\t2020-02-02\n"),
]


@pytest.mark.parametrize("copy, data", COPIES)
def test_copy_constraint_violation_answers_as_postgresql(duck, pg, copy, data):
    """COPY FROM STDIN breaking a constraint: the names, the DETAIL (``Failing row
    contains``) and the CONTEXT (the line) are PostgreSQL's."""
    def run(conn: psycopg.Connection) -> dict[str, str | None]:
        for stmt in COPY_TABLES:
            conn.execute(stmt)
        with pytest.raises(psycopg.Error) as caught:
            with conn.cursor().copy(copy) as cp:
                cp.write(data)
        return {f: getattr(caught.value.diag, f) for f in FIELDS}

    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
        expected = run(conn)
    name = f"errs_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(duck.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        with psycopg.connect(duck.dsn(name), autocommit=True) as conn:
            got = run(conn)
    finally:
        with psycopg.connect(duck.dsn(), autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name}")
    assert got == expected
