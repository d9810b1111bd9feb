"""Issue 11, items 1 and 2: no client reaches the host through DuckDB, a session's
settings are its own, the operator's limits hold.

A real server (``python -m pgbarrier serve``) on a temporary data dir, driven through
psycopg. Each refused statement must be 42501 with PostgreSQL's wording
(``permission denied ...``) and a HINT; what ``--allow-path`` opens must work inside
that directory and nowhere else; one connection's SET must not change another's
results; a query over ``--duckdb-memory-limit`` is 53200 and the server goes on.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import errors

from tests.conftest import ServerProcess, start_server, stop_server


@pytest.fixture(scope="module")
def dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("isolation")
    out = {name: root / name for name in ("data", "allowed", "outside")}
    for p in out.values():
        p.mkdir()
    (out["outside"] / "secret.csv").write_text("s\nhost-only\n")
    (out["allowed"] / "in.csv").write_text("a,b\n1,x\n2,y\n")
    os.symlink(out["outside"] / "secret.csv", out["allowed"] / "escape.csv")
    return out


@pytest.fixture(scope="module")
def srv(dirs: dict[str, Path]) -> Iterator[ServerProcess]:
    """A server whose operator opened the instance's information (--allow-instance-info):
    the tests below use duckdb_settings() to see what a session changed; server paths stay
    hidden even then."""
    server = start_server("--data-dir", str(dirs["data"]), "--allow-path", str(dirs["allowed"]),
                          "--duckdb-threads", "2", "--allow-instance-info")
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def closed(dirs: dict[str, Path]) -> Iterator[ServerProcess]:
    """A server as started by default: the DuckDB instance is the operator's."""
    server = start_server("--data-dir", str(dirs["data"]) + "-closed")
    yield server
    stop_server(server)


def connect(server: ServerProcess, database: str = "dev") -> psycopg.Connection:
    return psycopg.connect(host=server.host, port=server.port, user="root", dbname=database,
                           autocommit=True)


def refused(conn: psycopg.Connection, sql: str) -> errors.Error:
    with pytest.raises(errors.InsufficientPrivilege) as info:
        conn.execute(sql)
    diag = info.value.diag
    assert diag.sqlstate == "42501"
    assert diag.message_primary.startswith("permission denied"), diag.message_primary
    assert diag.message_hint, sql
    conn.execute("SELECT 1")  # the connection goes on
    return info.value


HOST_ROUTES = [
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_blob('/etc/hostname')",
    "SELECT * FROM read_csv('{outside}/secret.csv')",
    "SELECT * FROM glob('{outside}/*')",
    "SELECT * FROM read_parquet('{outside}/x.parquet')",
    "COPY t FROM '{outside}/secret.csv'",
    "COPY (SELECT 1) TO '{outside}/out.csv'",
    "EXPORT DATABASE '{outside}/export'",
    "SELECT * FROM read_csv('{allowed}/../outside/secret.csv')",
    "SELECT * FROM read_csv('{allowed}/escape.csv')",
]


@pytest.mark.parametrize("template", HOST_ROUTES)
def test_host_files_are_refused_with_the_flag_named(srv: ServerProcess, dirs: dict[str, Path],
                                                   template: str) -> None:
    sql = template.format(outside=dirs["outside"], allowed=dirs["allowed"])
    with connect(srv) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS t (s VARCHAR)")
        err = refused(conn, sql)
        assert "--allow-path" in err.diag.message_hint
        assert err.diag.message_primary.startswith(("permission denied to read",
                                                    "permission denied to write"))
    assert not (dirs["outside"] / "out.csv").exists()
    assert not (dirs["outside"] / "export").exists()


def test_the_message_names_the_file_as_postgresql_does(srv: ServerProcess) -> None:
    with connect(srv) as conn:
        err = refused(conn, "SELECT * FROM read_text('/etc/hostname')")
        assert err.diag.message_primary == 'permission denied to read file "/etc/hostname"'
        err = refused(conn, "COPY (SELECT 1) TO '/tmp/pgbarrier-never.csv'")
        assert err.diag.message_primary == \
            'permission denied to write file "/tmp/pgbarrier-never.csv"'


@pytest.mark.parametrize("sql", [
    "INSTALL httpfs",
    "LOAD httpfs",
    "CREATE PERSISTENT SECRET s (TYPE http)",
    "ATTACH ':memory:' AS scratch",
    "DETACH pgbarrier_catalog",
    "SET enable_external_access = true",
    "SET lock_configuration = false",
    "SET allowed_directories = ['/']",
    "SET autoload_known_extensions = true",
    "SET allow_persistent_secrets = true",
    "SET python_enable_replacements = true",
    "SET home_directory = '/tmp'",
    "SET temp_directory = '/tmp'",
])
def test_extensions_secrets_attach_and_the_lock_are_refused(srv: ServerProcess, sql: str) -> None:
    with connect(srv) as conn:
        refused(conn, sql)


def test_other_databases_files_cannot_be_reached(srv: ServerProcess, dirs: dict[str, Path]
                                                 ) -> None:
    with connect(srv) as conn:
        conn.execute('CREATE DATABASE "other db"')
    with connect(srv, "other db") as other:
        other.execute("CREATE TABLE prod AS SELECT 42 AS v")
    files = [p for p in dirs["data"].rglob("*") if p.is_file() and p.suffix == ".duckdb"]
    assert len(files) >= 2, files
    with connect(srv) as conn:
        (own,) = conn.execute("SELECT current_database()").fetchone()
        for path in files:
            refused(conn, f"ATTACH '{path}' AS stolen (READ_ONLY)")
        readable = []
        for path in files:
            try:
                conn.execute(f"SELECT size FROM read_blob('{path}')").fetchall()
                readable.append(path)
            except errors.InsufficientPrivilege:
                pass
        assert len(readable) <= 1, readable  # its own file at most, never the other's
    with connect(srv, "other db") as other:
        assert other.execute("SELECT v FROM prod").fetchall() == [(42,)]
    assert own == "dev"


def test_allow_path_opens_that_directory_for_data_files(srv: ServerProcess,
                                                        dirs: dict[str, Path]) -> None:
    allowed = dirs["allowed"]
    with connect(srv) as conn:
        assert conn.execute(f"SELECT a, b FROM read_csv('{allowed}/in.csv') ORDER BY a"
                            ).fetchall() == [(1, "x"), (2, "y")]
        conn.execute(f"COPY (SELECT range AS n FROM range(5)) TO '{allowed}/out.parquet'")
        assert conn.execute(f"SELECT sum(n) FROM read_parquet('{allowed}/out.parquet')"
                            ).fetchone() == (10,)
        conn.execute("CREATE TABLE IF NOT EXISTS loaded (a INTEGER, b VARCHAR)")
        conn.execute(f"COPY loaded FROM '{allowed}/in.csv' (HEADER)")
        assert conn.execute("SELECT count(*) FROM loaded").fetchone()[0] >= 2
        conn.execute(f"COPY (SELECT 1 AS one) TO '{allowed}/sub.csv'")
        assert (allowed / "sub.csv").exists() and (allowed / "out.parquet").exists()
        # still no ATTACH of a DuckDB file there, no persistent secret
        refused(conn, f"ATTACH '{allowed}/new.duckdb' AS n")
        assert not (allowed / "new.duckdb").exists()
        refused(conn, "CREATE PERSISTENT SECRET s2 (TYPE http)")


def test_allow_path_from_the_environment(dirs: dict[str, Path], tmp_path: Path) -> None:
    second = tmp_path / "second"
    second.mkdir()
    (second / "e.csv").write_text("v\n7\n")
    env_value = os.pathsep.join([str(dirs["allowed"]), str(second)])
    old = os.environ.get("PGBARRIER_ALLOW_PATH")
    os.environ["PGBARRIER_ALLOW_PATH"] = env_value
    try:
        server = start_server()
    finally:
        if old is None:
            del os.environ["PGBARRIER_ALLOW_PATH"]
        else:
            os.environ["PGBARRIER_ALLOW_PATH"] = old
    try:
        with connect(server) as conn:
            assert conn.execute(f"SELECT v FROM read_csv('{second}/e.csv')").fetchall() == [(7,)]
            assert conn.execute(f"SELECT count(*) FROM read_csv('{dirs['allowed']}/in.csv')"
                                ).fetchone() == (2,)
            refused(conn, f"SELECT * FROM read_csv('{dirs['outside']}/secret.csv')")
    finally:
        stop_server(server)


ORDER = "SELECT x FROM (VALUES (1), (NULL), (2)) t(x) ORDER BY x"
DEEP = "SELECT " + "+".join(["1"] * 30)


def test_one_sessions_set_never_changes_another(srv: ServerProcess) -> None:
    with connect(srv) as a, connect(srv) as b:
        before = b.execute(ORDER).fetchall()
        assert before == [(1,), (2,), (None,)]
        a.execute("SET default_null_order = 'nulls_first'")
        a.execute("PRAGMA default_order = 'desc'")
        a.execute("SET integer_division = false")  # pgbarrier's default: true
        a.execute("SET SESSION max_expression_depth = 12")
        assert a.execute(ORDER).fetchall() == [(None,), (2,), (1,)]
        with pytest.raises(errors.StatementTooComplex):
            a.execute(DEEP)
        assert a.execute("SELECT 1 / 2").fetchone() == (0.5,)
        assert b.execute(ORDER).fetchall() == before
        assert b.execute("SELECT 1 / 2").fetchone() == (0,)
        assert b.execute(DEEP).fetchone() == (30,)
        with connect(srv) as c:  # a new session too
            assert c.execute(ORDER).fetchall() == before
            assert c.execute("SELECT 1 / 2").fetchone() == (0,)
        a.execute("CREATE SCHEMA IF NOT EXISTS elsewhere")
        a.execute("USE elsewhere")
        assert a.execute("SELECT value FROM duckdb_settings() WHERE name = 'schema'"
                         ).fetchone() == ("elsewhere",)
        assert b.execute("SELECT value FROM duckdb_settings() WHERE name = 'schema'"
                         ).fetchone() == ("main",)
        # DISCARD ALL (PgBouncer's server_reset_query) gives the session its defaults back
        a.execute("DISCARD ALL")
        assert a.execute("SELECT value FROM duckdb_settings() WHERE name = 'schema'"
                         ).fetchone() == ("main",)
        assert a.execute(ORDER).fetchall() == before
        assert a.execute("SELECT 1 / 2").fetchone() == (0,)
        assert a.execute(DEEP).fetchone() == (30,)


@pytest.mark.parametrize("sql", [
    "SET GLOBAL max_expression_depth = 5",
    "SET GLOBAL default_order = 'DESC'",
    "SET GLOBAL TimeZone = 'Asia/Tokyo'",
    "RESET GLOBAL default_null_order",
    "SET threads = 1",
    "SET memory_limit = '100GB'",
    "PRAGMA memory_limit = '100GB'",
    "SET errors_as_json = true",
    "SET temp_directory = '/tmp'",
    "RESET threads",
])
def test_instance_wide_settings_cannot_be_changed(srv: ServerProcess, sql: str) -> None:
    with connect(srv) as a, connect(srv) as b:
        err = refused(a, sql)
        assert err.diag.message_primary.startswith('permission denied to set parameter "')
        assert b.execute(ORDER).fetchall() == [(1,), (2,), (None,)]
        assert b.execute(DEEP).fetchone() == (30,)
        assert b.execute("SELECT '2020-01-01 00:00:00+00'::timestamptz::varchar"
                         ).fetchone() == ("2020-01-01 00:00:00+00",)
        (threads,) = b.execute("SELECT value FROM duckdb_settings() WHERE name = 'threads'"
                               ).fetchone()
        assert threads == "2"


def test_unknown_setting_is_postgresqls_42704(srv: ServerProcess) -> None:
    with connect(srv) as conn:
        with pytest.raises(errors.UndefinedObject) as info:
            conn.execute("SET no_such_setting_here = 1")
        assert info.value.diag.message_primary == \
            'unrecognized configuration parameter "no_such_setting_here"'


def test_time_zones_stay_per_session(srv: ServerProcess) -> None:
    q = "SELECT '2020-01-01 00:00:00+00'::timestamptz::varchar"
    with connect(srv) as a, connect(srv) as b:
        a.execute("SET TimeZone = 'Asia/Tokyo'")
        assert a.execute(q).fetchone() == ("2020-01-01 09:00:00+09",)
        assert b.execute(q).fetchone() == ("2020-01-01 00:00:00+00",)
        a.execute("DISCARD ALL")
        assert a.execute(q).fetchone() == ("2020-01-01 00:00:00+00",)


def test_a_query_over_the_memory_limit_is_53200_and_the_server_goes_on() -> None:
    server = start_server("--duckdb-memory-limit", "64MB",  # :memory: data dir: no spilling
                          "--allow-instance-info")
    try:
        with connect(server) as a, connect(server) as b:
            (limit,) = a.execute("SELECT value FROM duckdb_settings() "
                                 "WHERE name = 'memory_limit'").fetchone()
            assert limit.startswith("61.0"), limit  # 64 MB in MiB
            with pytest.raises(errors.OutOfMemory) as info:
                a.execute("SELECT len(list(i)) FROM range(40000000) t(i)")
            assert info.value.diag.sqlstate == "53200"
            assert info.value.diag.message_primary == "out of memory"
            assert a.execute("SELECT 1").fetchone() == (1,)
            assert b.execute("SELECT count(*) FROM range(1000)").fetchone() == (1000,)
        assert server.proc.poll() is None
    finally:
        stop_server(server)


def test_the_default_memory_limit_leaves_the_host_alive(srv: ServerProcess) -> None:
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    with connect(srv) as conn:
        (value,) = conn.execute("SELECT value FROM duckdb_settings() WHERE name = 'memory_limit'"
                                ).fetchone()
    number, unit = value.split()
    scale = {"KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}[unit]
    assert float(number) * scale <= total * 0.26


@pytest.mark.parametrize("flags, words", [
    (("--allow-path", "/no/such/dir"), "--allow-path"),
    (("--duckdb-memory-limit", "lots"), "--duckdb-memory-limit"),
    (("--duckdb-threads", "0"), "--duckdb-threads"),
])
def test_bad_operator_flags_exit_2(flags: tuple[str, ...], words: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--port", "0",
                           "--data-dir", ":memory:", *flags],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert words in proc.stderr


def test_copy_stdin_stdout_are_the_clients_not_the_servers_own(srv: ServerProcess) -> None:
    """COPY FROM STDIN / TO STDOUT speak the COPY sub-protocol with the client (DuckDB
    would use the server process's own stdin/stdout; tests/functional/test_copy.py checks
    that the server's stdout stays empty)."""
    with connect(srv) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS copied (s VARCHAR)")
        with conn.cursor().copy("COPY copied FROM STDIN") as cp:
            cp.write_row(["from the client"])
        with conn.cursor().copy("COPY copied TO STDOUT") as cp:
            assert [bytes(b) for b in cp] == [b"from the client\n"]
        assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("sql", [
    "DROP TABLE pgbarrier_catalog.pgb.types",
    'DROP VIEW "PGBARRIER_CATALOG".pgcat.pg_class',
    "DELETE FROM pgbarrier_catalog.pgb.databases",
    "DELETE FROM pgbarrier.materialized_views",
    "DROP SCHEMA pgbarrier CASCADE",
    "SELECT 1; DROP TABLE pgbarrier.materialized_views",
])
def test_pgbarriers_own_catalog_is_read_only_to_clients(srv: ServerProcess, sql: str) -> None:
    with connect(srv) as conn:
        err = refused(conn, sql)
        assert err.sqlstate == "42501"
        assert "permission denied for schema pgbarrier" in str(err)
    # every session's catalog still works
    with connect(srv) as other:
        assert other.execute("SELECT count(*) FROM pg_catalog.pg_type").fetchone()[0] > 10
        other.execute("CREATE TABLE IF NOT EXISTS pgbarrier_own_name_ok (a int)")
        assert other.execute("SELECT count(*) FROM pg_class WHERE relname = "
                             "'pgbarrier_own_name_ok'").fetchone() == (1,)


@pytest.mark.parametrize("sql", [
    "SELECT path FROM system.main.duckdb_databases()",
    "SELECT value FROM system.main.duckdb_settings() WHERE name = 'temp_directory'",
    "DROP MACRO TABLE temp.duckdb_settings",
    "SELECT * FROM duckdb_logs()",
    "SHOW temp_directory",
    'SHOW "secret_directory"',
    "SHOW home_directory",
])
def test_server_paths_are_not_shown(srv: ServerProcess, dirs: dict[str, Path], sql: str) -> None:
    with connect(srv) as conn:
        err = refused(conn, sql)
        assert str(dirs["data"]) not in str(err)


@pytest.mark.parametrize("sql", [
    "PRAGMA database_list",
    "SELECT * FROM duckdb_databases()",
    "SELECT * FROM duckdb_settings()",
    "SELECT * FROM duckdb_temporary_files()",
])
def test_catalog_functions_answer_without_server_paths(srv: ServerProcess, dirs: dict[str, Path],
                                                      sql: str) -> None:
    with connect(srv) as conn:
        rows = conn.execute(sql).fetchall()
        assert str(dirs["data"]) not in repr(rows)
        assert "/root" not in repr(rows)
    with connect(srv) as conn:  # the shadows are per session, and the real values stay in use
        (threads,) = conn.execute(
            "SELECT value FROM duckdb_settings() WHERE name = 'threads'").fetchone()
        assert threads == "2"


def test_path_settings_are_duckdbs_own_names() -> None:
    import duckdb

    from pgbarrier.backends.duckdb_config import PATH_SETTINGS

    names = {r[0] for r in duckdb.connect().execute("SELECT name FROM duckdb_settings()").fetchall()}
    assert PATH_SETTINGS <= names, PATH_SETTINGS - names


def test_catalog_browsing_still_works_without_paths(srv: ServerProcess) -> None:
    result = srv.psql("-c", r"\l", "-c", r"\dt", "-c", "SELECT count(*) FROM pg_settings")
    assert result.returncode == 0, result.stderr
    assert "dev" in result.stdout


@pytest.mark.parametrize("sql", [
    "CREATE SECRET s (TYPE http)",
    "CREATE OR REPLACE TEMPORARY SECRET s (TYPE http)",
    "SET VARIABLE pgbarrier_user = 'admin'",
])
def test_no_secrets_and_no_borrowed_user_name(srv: ServerProcess, sql: str) -> None:
    with connect(srv) as conn:
        refused(conn, sql)
        assert conn.execute("SELECT current_user").fetchone() == ("root",)
        conn.execute("SET VARIABLE mine = 1")  # the session's own variables stay usable
        assert conn.execute("SELECT getvariable('mine')").fetchone() == (1,)


@pytest.mark.parametrize("sql, message", [
    ("PRAGMA database_list", "permission denied for PRAGMA database_list"),
    ("pragma version", "permission denied for PRAGMA version"),
    ("PRAGMA platform", "permission denied for PRAGMA platform"),
    ("CALL pragma_database_size()", "permission denied for function pragma_database_size"),
    ("SELECT * FROM duckdb_settings()", "permission denied for function duckdb_settings"),
    ("select value from DUCKDB_SETTINGS() where name = 'threads'",
     "permission denied for function duckdb_settings"),
    ("SELECT * FROM duckdb_databases()", "permission denied for function duckdb_databases"),
    ("SELECT * FROM duckdb_extensions()", "permission denied for function duckdb_extensions"),
    ("SELECT * FROM duckdb_memory()", "permission denied for function duckdb_memory"),
    ("SELECT * FROM pragma_version()", "permission denied for function pragma_version"),
    ("SELECT library_version FROM pragma_version()",
     "permission denied for function pragma_version"),
    ("WITH s AS (SELECT * FROM \"duckdb_settings\"()) SELECT count(*) FROM s",
     "permission denied for function duckdb_settings"),
    ("CHECKPOINT", "must be superuser to do CHECKPOINT"),
    ("force checkpoint", "must be superuser to do CHECKPOINT"),
    ("/* hi */ CHECKPOINT", "must be superuser to do CHECKPOINT"),
])
def test_the_instance_is_hidden_by_default(closed: ServerProcess, sql: str, message: str) -> None:
    """What PostgreSQL answers a non-superuser (42501), with a HINT naming the flag that
    opens it; the session goes on."""
    with connect(closed) as conn:
        with pytest.raises(errors.InsufficientPrivilege) as info:
            conn.execute(sql)
        diag = info.value.diag
        assert diag.message_primary == message
        assert "--allow-instance-info" in (diag.message_hint or "")
        assert conn.execute("SELECT 1").fetchone() == (1,)


@pytest.mark.parametrize("sql", [
    "SELECT 'duckdb_settings()' AS a",
    "SELECT 1 -- PRAGMA database_list",
    "SELECT 1 /* CHECKPOINT duckdb_settings() */",
    "CREATE TABLE IF NOT EXISTS checkpoint_log (pragma text, checkpoint text)",
    "SELECT count(*) FROM checkpoint_log",
    "SELECT version() LIKE 'PostgreSQL %'",
    "SHOW server_version",
    "SELECT count(*) > 0 FROM pg_settings",
])
def test_names_in_strings_comments_and_columns_do_not_count(closed: ServerProcess,
                                                             sql: str) -> None:
    with connect(closed) as conn:
        conn.execute(sql)


def test_browsing_needs_no_instance_information(closed: ServerProcess) -> None:
    result = closed.psql("-c", r"\l", "-c", r"\dt", "-c", r"\dn", "-c", "SHOW ALL")
    assert result.returncode == 0, result.stderr
    assert "dev" in result.stdout


def test_the_operator_may_open_the_instance_paths_stay_hidden(srv: ServerProcess,
                                                               dirs: dict[str, Path]) -> None:
    with connect(srv) as conn:
        assert conn.execute("SELECT count(*) > 0 FROM duckdb_settings()").fetchone() == (True,)
        version = conn.execute("SELECT library_version FROM pragma_version()").fetchone()[0]
        assert version.startswith("v")
        conn.execute("CHECKPOINT")
        rows = conn.execute("PRAGMA database_list").fetchall()
        assert str(dirs["data"]) not in repr(rows)
