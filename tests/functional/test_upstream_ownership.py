"""Upstream: pgbarrier's own DDL obeys PostgreSQL's ownership rules for the client's role.

REFRESH / DROP MATERIALIZED VIEW of a view another role owns is 42501 ``must be owner of
materialized view v``; CREATE DATABASE needs CREATEDB (42501 ``permission denied to create
database``) and the new database belongs to its creator; DROP DATABASE needs ownership
(42501 ``must be owner of database d``). Fresh roles and databases, dropped afterwards.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.conftest import require_postgres, start_server, stop_server


@pytest.fixture(scope="module")
def env() -> Iterator[dict]:
    dsn = require_postgres()
    sfx = uuid.uuid4().hex[:8]
    names = {"db": f"pgb_own_{sfx}", "alice": f"pgb_oa_{sfx}", "bob": f"pgb_ob_{sfx}",
             "maker": f"pgb_om_{sfx}", "made": f"pgb_omade_{sfx}"}
    with psycopg.connect(dsn, autocommit=True) as adm:
        for role in ("alice", "bob"):
            adm.execute(f'CREATE ROLE "{names[role]}" LOGIN')
        adm.execute(f'CREATE ROLE "{names["maker"]}" LOGIN CREATEDB')
    srv = start_server("--database", names["db"], "--upstream", dsn.rsplit("/", 1)[0] + "/")
    names["server"] = srv
    try:
        with psycopg.connect(dsn, dbname=names["db"], autocommit=True) as c:
            c.execute("CREATE TABLE base AS SELECT 1 AS x")
            for role in ("alice", "bob"):
                c.execute(f'GRANT CREATE ON SCHEMA public TO "{names[role]}"')
                c.execute(f'GRANT SELECT ON base TO "{names[role]}"')
        yield names
    finally:
        code = stop_server(srv)
        with psycopg.connect(dsn, autocommit=True) as adm:
            for db in (names["db"], names["made"]):
                adm.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
            for role in ("alice", "bob", "maker"):
                adm.execute(f'DROP ROLE IF EXISTS "{names[role]}"')
    assert code == 0, "".join(srv.log)


def _conn(env, user: str, database: str | None = None) -> psycopg.Connection:
    return psycopg.connect(env["server"].dsn(database or env["db"], env[user] if user in env
                                             else user), autocommit=True)


def test_only_the_owner_refreshes_or_drops_a_batch_view(env):
    with _conn(env, "alice") as alice, _conn(env, "bob") as bob:
        alice.execute("CREATE MATERIALIZED VIEW alice_v WITH (refresh.interval.sec = 3600) "
                      "AS SELECT x FROM base")
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="must be owner of materialized view alice_v"):
            bob.execute("REFRESH MATERIALIZED VIEW alice_v")
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="must be owner of materialized view alice_v"):
            bob.execute("DROP MATERIALIZED VIEW alice_v")
        assert alice.execute("SELECT x FROM alice_v").fetchone() == (1,)
        alice.execute("REFRESH MATERIALIZED VIEW alice_v")
        alice.execute("DROP MATERIALIZED VIEW alice_v")


def test_only_the_owner_drops_a_plain_materialized_view(env):
    # issue 14: upstream, a plain materialized view is PostgreSQL's own (relayed), so
    # PostgreSQL's own ownership error answers, naming a materialized view
    with _conn(env, "alice") as alice, _conn(env, "bob") as bob:
        bob.execute("CREATE MATERIALIZED VIEW bob_s AS SELECT x FROM base")
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="must be owner of materialized view bob_s"):
            alice.execute("DROP MATERIALIZED VIEW bob_s")
        # a superuser may (root is one on this PostgreSQL)
        with _conn(env, "root") as root:
            root.execute("DROP MATERIALIZED VIEW bob_s")


def test_create_and_drop_database_follow_postgres_rules(env):
    with _conn(env, "alice") as alice:
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="permission denied to create database"):
            alice.execute(f'CREATE DATABASE "{env["made"]}"')
    with _conn(env, "maker") as maker:
        maker.execute(f'CREATE DATABASE "{env["made"]}"')
        owner = maker.execute("SELECT pg_get_userbyid(datdba) FROM pg_database "
                              "WHERE datname = %s", [env["made"]]).fetchone()
        assert owner == (env["maker"],)
    with _conn(env, "bob") as bob:
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match=f'must be owner of database {env["made"]}'):
            bob.execute(f'DROP DATABASE "{env["made"]}"')
    with _conn(env, "maker") as maker:
        maker.execute(f'DROP DATABASE "{env["made"]}"')
        listed = [r[0] for r in maker.execute("SHOW DATABASES")]
        assert env["made"] not in listed


def test_only_the_database_owner_pauses_it(env):
    with _conn(env, "alice") as alice:
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match=f'must be owner of database {env["db"]}'):
            alice.execute(f'ALTER DATABASE "{env["db"]}" PAUSE')
    with _conn(env, "root") as root:
        paused = root.execute("SELECT paused FROM rw_catalog.rw_databases WHERE name = %s",
                              [env["db"]]).fetchone()
        assert paused == (False,)


def test_database_rights_are_the_current_roles_after_set_role(env):
    """PostgreSQL checks CREATEDB and ownership of the current user, so SET ROLE and SET
    SESSION AUTHORIZATION count (PostgreSQL's create_role.sql does exactly this)."""
    with _conn(env, "root") as root:  # a superuser that takes a role without CREATEDB
        root.execute(f'SET ROLE "{env["alice"]}"')
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match="permission denied to create database"):
            root.execute(f'CREATE DATABASE "{env["made"]}"')
        root.execute("RESET ROLE")
        root.execute(f'SET SESSION AUTHORIZATION "{env["bob"]}"')
        with pytest.raises(psycopg.errors.InsufficientPrivilege,
                           match=f'must be owner of database {env["db"]}'):
            root.execute(f'ALTER DATABASE "{env["db"]}" PAUSE')
        root.execute("RESET SESSION AUTHORIZATION")
        listed = [r[0] for r in root.execute("SHOW DATABASES")]
        assert env["made"] not in listed
    with _conn(env, "alice") as alice:  # and the other way: a role it was granted
        with psycopg.connect(require_postgres(), autocommit=True) as adm:
            adm.execute(f'GRANT "{env["maker"]}" TO "{env["alice"]}"')
        try:
            alice.execute(f'SET ROLE "{env["maker"]}"')
            alice.execute(f'CREATE DATABASE "{env["made"]}"')
            alice.execute(f'DROP DATABASE "{env["made"]}"')
        finally:
            with psycopg.connect(require_postgres(), autocommit=True) as adm:
                adm.execute(f'REVOKE "{env["maker"]}" FROM "{env["alice"]}"')
