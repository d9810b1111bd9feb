"""RowDescription metadata on the DuckDB backend, as PostgreSQL sends it.

For a column that is a table column, PostgreSQL's RowDescription carries the table's OID
and the column's attnum; every column carries its type modifier (``varchar(10)`` 14,
``numeric(12,2)``...). pgbarrier on DuckDB takes them from its emulated catalog
(:mod:`pgbarrier.backends.pgcatalog.origins`). The same tables are created on a pgbarrier
DuckDB server and in a fresh database of the reference PostgreSQL (127.0.0.1:5432), and
every answer is compared with PostgreSQL's:

* psycopg over the simple protocol, the extended one, and a prepared statement (Describe
  before Execute): per column the name, type OID, typmod, attnum, ``cursor.description``'s
  internal_size / precision / scale / display_size, and the table the OID names in that
  server's own ``pg_class`` (so a client's follow-up lookup by OID finds the table) and
  the column ``pg_attribute`` names for (OID, attnum);
* pgjdbc's ResultSetMetaData (``tests/clients/PgbarrierRowMeta.java``): getTableName,
  isNullable, getPrecision/getScale, getColumnDisplaySize, getBaseColumnName;
* after DDL (ADD COLUMN, ALTER COLUMN TYPE, a rolled-back ALTER, DROP and CREATE again)
  the same statement text describes the table as it is now; a temporary table shadows a
  permanent one in its own session only.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest

from conftest import (CLIENT_TIMEOUT_S, compile_java, fresh_postgres_database, start_server,
                      stop_server)

psycopg = pytest.importorskip("psycopg")

DDL = [
    "CREATE TABLE items (id integer PRIMARY KEY, name varchar(10) NOT NULL, "
    "price numeric(12,2), code char(3), at timestamp(3), note text, big bigint, "
    "ok boolean, day date, seen timestamptz)",
    "CREATE TABLE orders (order_id integer, item_id integer NOT NULL, qty smallint, "
    "label varchar(40))",
    "CREATE VIEW v_items AS SELECT id, price FROM items",
    "INSERT INTO items VALUES (1, 'one', 1.50, 'abc', '2024-01-02 03:04:05.678', 'n', 7, "
    "true, '2024-01-02', '2024-01-02 03:04:05+00')",
    "INSERT INTO orders VALUES (10, 1, 3, 'first')",
]

QUERIES = [
    "SELECT * FROM items ORDER BY id",
    "SELECT name AS n, price * 2 AS doubled, price::numeric(10,2) AS p2, "
    "'x'::varchar(5) AS v, id FROM public.items i",
    "SELECT s.n, s.code FROM (SELECT name AS n, code FROM items) s",
    "WITH c AS (SELECT code, at FROM items) SELECT code, at FROM c",
    "SELECT i.id, o.qty, o.item_id, o.label, i.seen FROM items i JOIN orders o ON o.item_id = i.id",
    "SELECT o.*, i.name FROM orders o, items i",
    "SELECT id FROM items UNION SELECT item_id FROM orders",
    "SELECT count(*) AS n, max(price) AS top, min(name) AS first FROM items",
    "SELECT 1 AS one, 'a'::char(2) AS c, 2.5::numeric(4,1) AS x, 'y'::varchar(7) AS y",
    "SELECT id, price FROM v_items",
    "SELECT name FROM items WHERE id IN (SELECT item_id FROM orders)",
]


@pytest.fixture(scope="module")
def dsns() -> Iterator[dict[str, str]]:
    srv = start_server()
    try:
        with fresh_postgres_database("pgb_rowdesc") as pg_dsn:
            out = {"duckdb": srv.dsn(), "postgres": pg_dsn}
            for dsn in out.values():
                with psycopg.connect(dsn, autocommit=True) as conn:
                    for stmt in DDL:
                        conn.execute(stmt)
            out["jdbc-duckdb"] = (f"jdbc:postgresql://{srv.host}:{srv.port}/dev?user=root"
                                  "&socketTimeout=60")
            rest = pg_dsn.split("://", 1)[1]
            user, hostdb = rest.split("@", 1)
            out["jdbc-postgres"] = f"jdbc:postgresql://{hostdb}?user={user}&socketTimeout=60"
            yield out
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def _relname(conn, oid: int) -> str | None:
    if oid == 0:
        return None
    row = conn.execute("SELECT relname FROM pg_class WHERE oid = %s", [oid]).fetchone()
    return row[0] if row else f"<no pg_class row for {oid}>"


def _attname(conn, oid: int, attnum: int) -> str | None:
    if oid == 0:
        return None
    row = conn.execute("SELECT attname FROM pg_attribute WHERE attrelid = %s AND attnum = %s",
                       [oid, attnum]).fetchone()
    return row[0] if row else f"<no pg_attribute row for {oid}.{attnum}>"


def _fields(conn, res, description) -> list[tuple]:
    out = []
    for i in range(res.nfields):
        oid, attnum = res.ftable(i), res.ftablecol(i)
        d = description[i] if description else None
        out.append((res.fname(i).decode(), res.ftype(i), res.fmod(i), attnum,
                    _relname(conn, oid), _attname(conn, oid, attnum),
                    d and (d.internal_size, d.precision, d.scale, d.display_size)))
    return out


def _described(dsn: str, sql: str, mode: str) -> list[tuple]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        if mode == "simple":
            res = conn.pgconn.exec_(sql.encode())
            assert res.status == psycopg.pq.ExecStatus.TUPLES_OK, res.error_message
            return _fields(conn, res, None)
        cur = conn.cursor()
        cur.execute(sql, prepare=mode == "prepared")
        if mode == "prepared":
            cur.execute(sql, prepare=True)  # the second run uses the prepared statement
        return _fields(conn, cur.pgresult, cur.description)


@pytest.mark.parametrize("mode", ["simple", "extended", "prepared"])
@pytest.mark.parametrize("sql", QUERIES)
def test_psycopg_fields_as_postgres(dsns, sql, mode):
    assert _described(dsns["duckdb"], sql, mode) == _described(dsns["postgres"], sql, mode)


def test_table_oid_is_pg_class_oid(dsns):
    """The OID in the RowDescription is the one pgbarrier's pg_class has for the table."""
    with psycopg.connect(dsns["duckdb"], autocommit=True) as conn:
        res = conn.execute("SELECT name, id FROM items").pgresult
        (oid,) = conn.execute("SELECT 'public.items'::regclass::oid").fetchone()
        assert oid != 0
        assert [res.ftable(0), res.ftable(1)] == [oid, oid]
        assert [res.ftablecol(0), res.ftablecol(1)] == [2, 1]


@pytest.fixture(scope="module")
def rowmeta_classpath(tmp_path_factory) -> str:
    return compile_java(tmp_path_factory, "PgbarrierRowMeta.java")


def _jdbc(classpath: str, url: str) -> list[str]:
    proc = subprocess.run(["java", "-cp", classpath, "PgbarrierRowMeta", url, *QUERIES],
                          capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.splitlines()


def test_pgjdbc_resultset_metadata_as_postgres(dsns, rowmeta_classpath):
    expected = _jdbc(rowmeta_classpath, dsns["jdbc-postgres"])
    assert any("|items|" in line for line in expected)  # PostgreSQL names the table
    assert _jdbc(rowmeta_classpath, dsns["jdbc-duckdb"]) == expected


STEPS = [
    "ALTER TABLE grow ADD COLUMN extra varchar(4)",
    "ALTER TABLE grow ALTER COLUMN label TYPE varchar(20)",
    "BEGIN; ALTER TABLE grow ADD COLUMN gone numeric(5,1); ROLLBACK",
    "DROP TABLE grow; CREATE TABLE grow (label char(2), id bigint, amount numeric(8,3))",
]


def _ddl_history(dsn: str) -> list[list[tuple]]:
    seen = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS grow")
        conn.execute("CREATE TABLE grow (id integer, label varchar(8))")
        for step in [None, *STEPS]:
            if step is not None:
                for stmt in step.split("; "):
                    conn.execute(stmt)
            res = conn.execute("SELECT * FROM grow").pgresult
            seen.append([(res.fname(i).decode(), res.ftype(i), res.fmod(i), res.ftablecol(i),
                          _relname(conn, res.ftable(i))) for i in range(res.nfields)])
        conn.execute("DROP TABLE grow")
    return seen


def test_statement_after_ddl_describes_the_table_as_it_is(dsns):
    assert _ddl_history(dsns["duckdb"]) == _ddl_history(dsns["postgres"])


def _temp_shadow(dsn: str) -> tuple[list[tuple], list[tuple]]:
    def fields(conn) -> list[tuple]:
        res = conn.execute("SELECT * FROM orders").pgresult
        return [(res.fname(i).decode(), res.ftype(i), res.fmod(i), res.ftablecol(i),
                 res.ftable(i) != 0) for i in range(res.nfields)]
    with psycopg.connect(dsn, autocommit=True) as mine, \
            psycopg.connect(dsn, autocommit=True) as other:
        # (a temporary table's varchar(n) is not recorded: pgcatalog.declared)
        mine.execute("CREATE TEMP TABLE orders (tag numeric(6,2), n integer)")
        shadowed = fields(mine)
        return shadowed, fields(other)


def test_temporary_table_shadows_in_its_session_only(dsns):
    assert _temp_shadow(dsns["duckdb"]) == _temp_shadow(dsns["postgres"])


def _fields_of(conn, sql: str) -> list[tuple]:
    res = conn.execute(sql).pgresult
    return [(res.fname(i).decode(), res.ftype(i), res.fmod(i), res.ftablecol(i),
             _relname(conn, res.ftable(i))) for i in range(res.nfields)]


def _ddl_beside_a_block(dsn: str) -> tuple[list[tuple], list[tuple]]:
    """A transaction block that began before another session's ALTER: a third session
    then, and the block's session after COMMIT, describe the table as it is now."""
    with psycopg.connect(dsn, autocommit=True) as admin, \
            psycopg.connect(dsn) as block, psycopg.connect(dsn, autocommit=True) as third:
        admin.execute("DROP TABLE IF EXISTS beside")
        admin.execute("CREATE TABLE beside (id integer, label varchar(8))")
        block.execute("SELECT 1")  # psycopg's BEGIN, then the block's first statement
        admin.execute("ALTER TABLE beside ADD COLUMN extra varchar(4)")
        block.execute("SELECT * FROM beside")
        now = _fields_of(third, "SELECT * FROM beside")
        block.commit()
        after = _fields_of(block, "SELECT * FROM beside")
        block.commit()  # its lock on the table, before the DROP
        admin.execute("DROP TABLE beside")
        return now, after


def test_a_block_older_than_ddl_does_not_leave_its_view_to_others(dsns):
    assert _ddl_beside_a_block(dsns["duckdb"]) == _ddl_beside_a_block(dsns["postgres"])
