"""Hostile database names through real clients: names, never paths (issue 11, item 3)."""

from __future__ import annotations

import os

import duckdb
import psycopg
import pytest

from tests.conftest import UPSTREAM, require_postgres, start_server, stop_server

NAMES = ["../other/prod", "a/b", "we;ird", 'x"q', "x'q", "Ünïcødé", "temp", "A", "%41", ".",
         "..", "/abs"]


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("names")
    (root / "inst").mkdir()
    (root / "other").mkdir()
    # another instance's database, next to this one's data dir
    prod = duckdb.connect(str(root / "other" / "prod.duckdb"))
    prod.execute("CREATE TABLE secrets AS SELECT 42 AS answer")
    prod.close()
    return root


@pytest.fixture(scope="module")
def names_server(data_dir):
    srv = start_server("--data-dir", str(data_dir / "inst"))
    yield srv
    assert stop_server(srv) == 0, "".join(srv.log)


def _files(root) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def test_hostile_names_stay_inside_the_data_dir(names_server, data_dir):
    before_other = _files(data_dir / "other")
    with psycopg.connect(names_server.dsn(), autocommit=True) as conn:
        for name in NAMES:
            conn.execute(f"CREATE DATABASE {_ident(name)}")
    for name in NAMES:
        with psycopg.connect(host=names_server.host, port=names_server.port, user="root",
                             dbname=name, autocommit=True) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == (name,)
            # nothing of the other instance is visible
            missing = conn.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_name = 'secrets'")
            assert missing.fetchone() == (0,)
            conn.execute("CREATE TABLE mine AS SELECT 1 AS x")
            assert conn.execute("SELECT x FROM mine").fetchone() == (1,)
    inst_files = _files(data_dir / "inst")
    assert all(os.sep not in f for f in inst_files), inst_files
    assert _files(data_dir / "other") == before_other
    assert not (data_dir / "a").exists()
    with psycopg.connect(names_server.dsn(), autocommit=True) as conn:
        for name in NAMES:
            conn.execute(f"DROP DATABASE {_ident(name)}")
        listed = {r[0] for r in conn.execute("SHOW DATABASES")}
    assert not listed & set(NAMES)
    # DROP deleted only its own files; the other instance's database is untouched
    assert (data_dir / "other" / "prod.duckdb").is_file()
    prod = duckdb.connect(str(data_dir / "other" / "prod.duckdb"), read_only=True)
    assert prod.execute("SELECT answer FROM secrets").fetchone() == (42,)
    prod.close()
    assert _files(data_dir / "inst") <= inst_files
    assert not any(f.startswith("%2E%2E") for f in _files(data_dir / "inst"))


def test_long_names_are_truncated_with_postgres_notice(names_server):
    long = "d" * 70
    notices: list[tuple[str | None, str | None]] = []
    with psycopg.connect(names_server.dsn(), autocommit=True) as conn:
        conn.add_notice_handler(lambda d: notices.append((d.sqlstate, d.message_primary)))
        conn.execute(f"CREATE DATABASE {long}")
        assert notices == [
            ("42622", f'identifier "{long}" will be truncated to "{"d" * 63}"')]
        assert ("d" * 63,) in conn.execute("SHOW DATABASES").fetchall()
    # the start-up packet's name is cut silently, as PostgreSQL does
    with psycopg.connect(host=names_server.host, port=names_server.port, user="root",
                         dbname="d" * 80) as conn:
        assert conn.execute("SELECT current_database()").fetchone() == ("d" * 63,)
    with psycopg.connect(names_server.dsn(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{"d" * 200}"')
        assert ("d" * 63,) not in conn.execute("SHOW DATABASES").fetchall()


def test_unknown_hostile_name_is_3d000_not_a_file(names_server, data_dir):
    with pytest.raises(psycopg.OperationalError) as info:
        psycopg.connect(host=names_server.host, port=names_server.port, user="root",
                        dbname="../other/prod")
    assert 'database "../other/prod" does not exist' in str(info.value)
    with psycopg.connect(names_server.dsn(), autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InvalidCatalogName):
            conn.execute('DROP DATABASE "../other/prod"')
    assert (data_dir / "other" / "prod.duckdb").is_file()


def test_hostile_names_on_the_upstream_backend():
    require_postgres()
    srv = start_server("--upstream", UPSTREAM)
    name = "pgb ../we;ird\"q"
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {_ident(name)}")
            conn.execute(f"CREATE DATABASE {_ident(name)}")
        with psycopg.connect(host=srv.host, port=srv.port, user="root", dbname=name) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == (name,)
        with psycopg.connect(srv.dsn(), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {_ident(name)}")
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
