"""The core slice end to end: psql and psycopg against a real server on port 0."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg import errors as pgerr

PAUSED_MSG = "cannot create batch refresh job while database barrier is paused"


def _name(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def conn(server):
    with psycopg.connect(server.dsn(), autocommit=True) as c:
        yield c
        # leave the shared database running for the next test
        c.execute("ALTER DATABASE dev RESUME")


def _catalog(conn):
    return conn.execute(
        "SELECT name, paused, paused_at, paused_by, committed_epoch "
        "FROM rw_catalog.rw_databases WHERE name = 'dev'").fetchone()


def test_pause_rejects_batch_refresh_create_then_resume_allows_it(conn):
    t, v = _name("t"), _name("v")
    conn.execute(f"CREATE TABLE {t} (id INT, amount INT)")
    cur = conn.execute(f"INSERT INTO {t} VALUES (1, 10), (2, 20), (3, 30)")
    assert cur.statusmessage == "INSERT 0 3"
    conn.execute("ALTER DATABASE dev PAUSE")

    with pytest.raises(pgerr.ObjectNotInPrerequisiteState) as info:
        conn.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 5) AS "
                     f"SELECT id, amount FROM {t}")
    err = info.value
    assert err.sqlstate == "55000"
    assert err.diag.message_primary == PAUSED_MSG
    assert err.diag.severity == "ERROR"
    assert err.diag.message_detail.startswith('database "dev" was paused at ')
    assert err.diag.message_detail.endswith(" by root")
    assert err.diag.message_hint == "Resume the database with ALTER DATABASE dev RESUME, then retry."
    # the connection stays usable, and nothing was created
    assert conn.execute("SELECT 1").fetchone() == (1,)
    with pytest.raises(pgerr.UndefinedTable):
        conn.execute(f"SELECT * FROM {v}")

    conn.execute("ALTER DATABASE dev RESUME")
    cur = conn.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 5) AS "
                       f"SELECT id, amount FROM {t}")
    assert cur.statusmessage == "CREATE MATERIALIZED VIEW"
    conn.execute(f"INSERT INTO {t} VALUES (4, 40)")
    # the view holds its snapshot: the row inserted after the create is not in it
    rows = conn.execute(f"SELECT id, amount FROM {v} ORDER BY id").fetchall()
    assert rows == [(1, 10), (2, 20), (3, 30)]
    job = conn.execute(
        "SELECT status, refresh_interval_sec, snapshot_epoch, last_committed_epoch "
        f"FROM rw_catalog.rw_batch_refresh_jobs WHERE name = '{v}'").fetchone()
    assert job[0] == "idle" and job[1] == 5 and job[2] == job[3] and job[2] > 0


def test_batch_refresh_every_syntax_and_streaming_view(conn):
    t, b, s = _name("t"), _name("b"), _name("s")
    conn.execute(f"CREATE TABLE {t} (x INT)")
    conn.execute(f"INSERT INTO {t} VALUES (1)")
    conn.execute(f"CREATE MATERIALIZED VIEW {b} BATCH REFRESH EVERY 2 MINUTES AS SELECT x FROM {t}")
    conn.execute(f"CREATE MATERIALIZED VIEW {s} AS SELECT x FROM {t}")
    conn.execute(f"INSERT INTO {t} VALUES (2)")
    assert conn.execute(f"SELECT count(*) FROM {b}").fetchone() == (1,)
    assert conn.execute(f"SELECT count(*) FROM {s}").fetchone() == (2,)
    assert conn.execute(
        f"SELECT refresh_interval_sec FROM rw_catalog.rw_batch_refresh_jobs WHERE name = '{b}'"
    ).fetchone() == (120,)
    # RisingWave's rule: no materialized view on a batch-refresh view
    with pytest.raises(pgerr.FeatureNotSupported) as info:
        conn.execute(f"CREATE MATERIALIZED VIEW {_name('x')} AS SELECT * FROM {b}")
    assert "batch refresh materialized views" in info.value.diag.message_primary
    with pytest.raises(pgerr.DuplicateTable):
        conn.execute(f"CREATE MATERIALIZED VIEW {b} BATCH REFRESH AS SELECT 1")


def test_pause_and_resume_are_idempotent_with_a_notice(conn):
    notices: list[str] = []
    conn.add_notice_handler(lambda d: notices.append(d.message_primary))
    conn.execute("ALTER DATABASE dev PAUSE")
    assert notices == []
    first = _catalog(conn)
    conn.execute("ALTER DATABASE dev PAUSE")
    assert notices == ['database "dev" is already paused, nothing to do']
    again = _catalog(conn)
    assert again[1] is True and again[2:4] == first[2:4], "a repeated PAUSE keeps when/by whom"
    conn.execute("ALTER DATABASE dev RESUME")
    conn.execute("ALTER DATABASE dev RESUME")
    assert notices[-1] == 'database "dev" is already running, nothing to do'


def test_rw_databases_follows_pause_and_resume(conn):
    conn.execute("ALTER DATABASE dev PAUSE")
    name, paused, paused_at, paused_by, committed = _catalog(conn)
    assert (name, paused, paused_by) == ("dev", True, "root")
    assert paused_at is not None and paused_at.tzinfo is not None
    conn.execute("ALTER DATABASE dev RESUME")
    _, paused, paused_at, paused_by, committed2 = _catalog(conn)
    assert (paused, paused_at, paused_by) == (False, None, None)
    assert committed2 > committed
    # the catalog joins with ordinary tables
    t = _name("t")
    conn.execute(f"CREATE TABLE {t} (db TEXT, owner TEXT)")
    conn.execute(f"INSERT INTO {t} VALUES ('dev', 'ops')")
    row = conn.execute(f"SELECT d.name, o.owner FROM rw_catalog.rw_databases d "
                       f"JOIN {t} o ON o.db = d.name").fetchone()
    assert row == ("dev", "ops")


def test_flush_waits_for_a_newer_committed_epoch(conn):
    before = _catalog(conn)[4]
    conn.execute("FLUSH")
    after = _catalog(conn)[4]
    assert after > before


def test_refusals(conn):
    with pytest.raises(pgerr.InvalidCatalogName) as info:
        conn.execute("ALTER DATABASE nosuch PAUSE")
    assert info.value.diag.message_primary == 'database "nosuch" does not exist'

    with pytest.raises(pgerr.InvalidParameterValue) as info:
        conn.execute("CREATE MATERIALIZED VIEW z WITH (refresh.interval.sec = 0) AS SELECT 1")
    assert "0" in info.value.diag.message_primary
    with pytest.raises(pgerr.InvalidParameterValue) as info:
        conn.execute("CREATE MATERIALIZED VIEW z WITH (refresh.interval.sec = 'abc') AS SELECT 1")
    assert "abc" in info.value.diag.message_primary

    with pytest.raises(pgerr.SyntaxError) as info:
        conn.execute("ALTER DATABASE dev PAUZE")
    assert info.value.diag.statement_position == "20"

    with pytest.raises(pgerr.UndefinedTable):
        conn.execute("CREATE MATERIALIZED VIEW z BATCH REFRESH AS SELECT * FROM no_such_table")


def test_control_statement_inside_transaction_block_is_25001(server):
    with psycopg.connect(server.dsn()) as c:  # not autocommit: psycopg opens a block
        c.execute("SELECT 1")
        with pytest.raises(pgerr.ActiveSqlTransaction) as info:
            c.execute("ALTER DATABASE dev PAUSE")
        assert info.value.diag.message_primary == "ALTER DATABASE cannot run inside a transaction block"
        with pytest.raises(pgerr.InFailedSqlTransaction):
            c.execute("SELECT 1")
        c.rollback()
        assert c.execute("SELECT 2").fetchone() == (2,)
        c.rollback()
    with psycopg.connect(server.dsn(), autocommit=True) as c:
        assert c.execute("SELECT paused FROM rw_catalog.rw_databases").fetchone() == (False,)


def test_crud_command_tags(conn):
    t = _name("t")
    assert conn.execute(f"CREATE TABLE {t} (id INT, v TEXT)").statusmessage == "CREATE TABLE"
    assert conn.execute(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b'), (3, 'c')").statusmessage == "INSERT 0 3"
    assert conn.execute(f"UPDATE {t} SET v = 'z' WHERE id < 3").statusmessage == "UPDATE 2"
    assert conn.execute(f"DELETE FROM {t} WHERE id = 1").statusmessage == "DELETE 1"
    cur = conn.execute(f"SELECT id, v FROM {t} WHERE id > %s ORDER BY id", [1])
    assert cur.statusmessage == "SELECT 2"
    assert cur.fetchall() == [(2, "z"), (3, "c")]
    assert conn.execute(f"DROP TABLE {t}").statusmessage == "DROP TABLE"


def test_unknown_database_is_fatal_3d000(server):
    with pytest.raises(psycopg.OperationalError) as info:
        psycopg.connect(server.dsn(database="nosuch"), connect_timeout=10)
    assert 'database "nosuch" does not exist' in str(info.value)
    out = server.psql("-c", "SELECT 1", database="nosuch")
    assert out.returncode == 2
    assert 'FATAL:  database "nosuch" does not exist' in out.stderr


def test_psql_prints_error_detail_hint_and_sqlstate(server):
    script = (
        "\\set VERBOSITY verbose\n"
        "ALTER DATABASE dev PAUSE;\n"
        "CREATE MATERIALIZED VIEW psql_v WITH (refresh.interval.sec = 5) AS SELECT 1 AS x;\n"
        "ALTER DATABASE dev RESUME;\n"
        "CREATE MATERIALIZED VIEW psql_v WITH (refresh.interval.sec = 5) AS SELECT 1 AS x;\n"
        "SELECT x FROM psql_v;\n"
    )
    out = server.psql("-q", input=script)
    assert out.returncode == 0, out.stderr
    assert f"ERROR:  55000: {PAUSED_MSG}" in out.stderr
    assert 'DETAIL:  database "dev" was paused at ' in out.stderr
    assert "HINT:  Resume the database with ALTER DATABASE dev RESUME, then retry." in out.stderr
    assert " x \n---\n 1\n(1 row)" in out.stdout


def test_psql_syntax_error_shows_position(server):
    out = server.psql("-c", "ALTER DATABASE dev PAUZE")
    assert out.returncode == 1
    assert 'ERROR:  syntax error at or near "PAUZE"' in out.stderr
    assert "LINE 1: ALTER DATABASE dev PAUZE" in out.stderr
