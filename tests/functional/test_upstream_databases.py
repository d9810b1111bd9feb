"""Which upstream databases a client reaches through pgbarrier (issue 31, item 4).

* ``postgres``, the maintenance database every PostgreSQL has, is served, so ``psql -l``,
  ``createdb``, ``dropdb`` and the connection defaults of pgAdmin and DBeaver work.
* An upstream database pgbarrier does not serve is never adopted silently: ``CREATE
  DATABASE`` of it is PostgreSQL's ``42P04`` with a HINT naming ``--adopt-database``,
  and ``--adopt-database NAME`` serves it (one that does not exist: exit 2, one line).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid

import psycopg
import pytest

from tests.conftest import ServerProcess, require_postgres, start_server, stop_server


@pytest.fixture()
def upstream() -> str:
    dsn = require_postgres()
    return dsn.rsplit("/", 1)[0] + "/postgres"


@pytest.fixture()
def outside(upstream: str):
    """A database made directly on the upstream, not through pgbarrier."""
    name = f"pgb_outside_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(upstream, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
        try:
            yield name
        finally:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _tool(srv: ServerProcess, *cmd: str) -> subprocess.CompletedProcess[str]:
    if shutil.which(cmd[0]) is None:
        pytest.skip(f"{cmd[0]} not found (Debian package postgresql-client)")
    env = {**os.environ, "PGHOST": srv.host, "PGPORT": str(srv.port), "PGUSER": "postgres",
           "PGCONNECT_TIMEOUT": "10"}
    env.pop("PGDATABASE", None)
    return subprocess.run(list(cmd), capture_output=True, text=True, timeout=60, env=env)


def test_maintenance_database_and_client_tools_work_upstream(upstream: str) -> None:
    srv = start_server("--upstream", upstream)
    name = f"pgb_tool_{uuid.uuid4().hex[:8]}"
    try:
        listed = _tool(srv, "psql", "-X", "-l")
        assert listed.returncode == 0, listed.stderr
        assert "postgres" in listed.stdout
        made = _tool(srv, "createdb", name)
        assert made.returncode == 0, made.stderr
        with psycopg.connect(host=srv.host, port=srv.port, user="postgres", dbname=name,
                             autocommit=True) as c:
            assert c.execute("SELECT current_database()").fetchone() == (name,)
        with psycopg.connect(host=srv.host, port=srv.port, user="postgres", dbname="postgres",
                             autocommit=True) as c:
            names = {r[0] for r in c.execute("SELECT name FROM rw_catalog.rw_databases")}
            assert {"postgres", name} <= names
        gone = _tool(srv, "dropdb", name)
        assert gone.returncode == 0, gone.stderr
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
        with psycopg.connect(upstream, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_an_upstream_database_is_adopted_only_when_asked(upstream: str, outside: str) -> None:
    srv = start_server("--upstream", upstream)
    try:
        with pytest.raises(psycopg.OperationalError, match=f'database "{outside}" does not'
                           ) as refused:
            psycopg.connect(host=srv.host, port=srv.port, user="postgres", dbname=outside)
        # \l lists it (the upstream's pg_database): the refusal says how to serve it
        assert f"--adopt-database {outside}" in str(refused.value)
        with psycopg.connect(host=srv.host, port=srv.port, user="postgres", dbname="postgres",
                             autocommit=True) as c:
            with pytest.raises(psycopg.errors.DuplicateDatabase) as info:
                c.execute(f"CREATE DATABASE {outside}")
            assert "--adopt-database" in (info.value.diag.message_hint or "")
            names = {r[0] for r in c.execute("SELECT name FROM rw_catalog.rw_databases")}
            assert outside not in names
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
    srv = start_server("--upstream", upstream, "--adopt-database", outside)
    try:
        with psycopg.connect(host=srv.host, port=srv.port, user="postgres", dbname=outside,
                             autocommit=True) as c:
            assert c.execute("SELECT current_database()").fetchone() == (outside,)
            c.execute("ALTER DATABASE " + outside + " PAUSE")
            c.execute("ALTER DATABASE " + outside + " RESUME")
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


def test_adopting_a_database_the_upstream_lacks_is_one_line(upstream: str) -> None:
    out = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--port", "0",
                          "--data-dir", ":memory:", "--upstream", upstream,
                          "--adopt-database", "pgb_no_such_db"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert out.stderr.strip().splitlines() == [out.stderr.strip()]
    assert "--adopt-database pgb_no_such_db" in out.stderr


def test_adopt_database_needs_an_upstream() -> None:
    out = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--port", "0",
                          "--data-dir", ":memory:", "--adopt-database", "x"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "needs --upstream" in out.stderr
