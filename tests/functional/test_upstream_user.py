"""Upstream sessions run as the client's own user (issue 11, item 4): real clients, real servers.

A pgbarrier server process on port 0 in front of the PostgreSQL on 127.0.0.1:5432 (a fresh
upstream database and fresh roles ``pgb_*_<random>``, all dropped afterwards; skipped when
PostgreSQL is unreachable, failing under CI=true). Pinned: a client connected as ``alice`` is
``alice`` upstream (current_user, session_user, is_superuser, no pg_read_file, ownership of
its tables and of the batch-refresh and streaming views it creates); a batch-refresh view
over a table alice cannot read is refused with the upstream's 42501 and leaves nothing
behind, one over a table she can read is hers and refreshes; ``--upstream-force-user``
brings back one upstream user for everyone; an unknown role and a role over its connection
limit get the upstream's FATAL 28000 and 53300.

Passwords: a private PostgreSQL cluster that asks for SCRAM passwords (initdb as the
``postgres`` OS user; skipped when that cannot be done) behind pgbarrier with
``--password-file``: the password the client authenticated with logs it in upstream, a
wrong upstream password is the upstream's 28P01, a ``--users-file`` user (a verifier, no
password) gets 28000 saying what to configure, and the server's PGPASSWORD is never offered
for a client's user.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import asyncpg
import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import ServerProcess, require_postgres, start_server, stop_server

_PG_BIN = "/usr/lib/postgresql/15/bin"


def _suffix() -> str:
    return uuid.uuid4().hex[:8]


@dataclass
class Upstream:
    """pgbarrier in front of the shared PostgreSQL, with fresh roles."""

    server: ServerProcess
    database: str
    admin_dsn: str
    alice: str
    limited: str
    roles: list[str] = field(default_factory=list)

    def connect(self, user: str, **kw) -> psycopg.Connection:
        kw.setdefault("autocommit", True)
        return psycopg.connect(self.server.dsn(self.database, user), **kw)

    def direct(self) -> psycopg.Connection:
        """A superuser connection to the upstream database itself, bypassing pgbarrier."""
        return psycopg.connect(self.admin_dsn, dbname=self.database, autocommit=True)


def _admin(dsn: str) -> psycopg.Connection:
    return psycopg.connect(dsn, autocommit=True)


@pytest.fixture(scope="module")
def up() -> Iterator[Upstream]:
    dsn = require_postgres()
    sfx = _suffix()
    database, alice, limited = f"pgb_uu_{sfx}", f"pgb_alice_{sfx}", f"pgb_lim_{sfx}"
    with _admin(dsn) as adm:
        adm.execute(f'CREATE ROLE "{alice}" LOGIN')
        adm.execute(f'CREATE ROLE "{limited}" LOGIN CONNECTION LIMIT 1')
    srv = start_server("--database", database, "--barrier-interval-ms", "100",
                       "--upstream", dsn.rsplit("/", 1)[0] + "/")
    env = Upstream(srv, database, dsn, alice, limited, [alice, limited])
    try:
        with env.direct() as c:  # PostgreSQL 15: only the database owner may create in public
            c.execute(f'GRANT CREATE ON SCHEMA public TO "{alice}"')
        yield env
    finally:
        code = stop_server(srv)
        with _admin(dsn) as adm:
            adm.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            for role in env.roles:
                adm.execute(f'DROP ROLE IF EXISTS "{role}"')
    assert code == 0, "server did not exit cleanly:\n" + "".join(srv.log)


def _fatal(server: ServerProcess, database: str, user: str, password: str | None = None
           ) -> asyncpg.PostgresError:
    """The FATAL a start-up as ``user`` gets (asyncpg reports its SQLSTATE)."""
    async def go() -> asyncpg.PostgresError:
        try:
            conn = await asyncpg.connect(host=server.host, port=server.port, user=user,
                                         password=password, database=database, ssl=False,
                                         timeout=30)
        except asyncpg.PostgresError as exc:
            return exc
        await conn.close()
        raise AssertionError(f"{user} connected")
    return asyncio.run(go())


# --------------------------------------------------------------------------- who you are


def test_session_runs_as_the_clients_user(up: Upstream) -> None:
    with up.connect(up.alice) as c:
        assert c.execute("SELECT current_user, session_user").fetchone() == (up.alice, up.alice)
        assert c.info.parameter_status("is_superuser") == "off"
        assert c.info.parameter_status("session_authorization") == up.alice
        with pytest.raises(pgerr.InsufficientPrivilege,
                           match="permission denied for function pg_read_file"):
            c.execute("SELECT pg_read_file('/etc/hostname')")
        # the superuser's own session is still a superuser
    with up.connect("root") as c:
        assert c.execute("SELECT current_user").fetchone() == ("root",)
        assert c.info.parameter_status("is_superuser") == "on"


def test_created_table_is_owned_by_the_client(up: Upstream) -> None:
    t = f"owned_{_suffix()}"
    with up.connect(up.alice) as c:
        c.execute(f"CREATE TABLE {t} (id int)")
    with up.direct() as d:
        assert d.execute("SELECT tableowner FROM pg_tables WHERE tablename = %s",
                         [t]).fetchone() == (up.alice,)


# --------------------------------------------------------------------------- views


def test_batch_view_over_a_readable_table_is_the_clients_and_refreshes(up: Upstream) -> None:
    t, v = f"shared_{_suffix()}", f"bv_{_suffix()}"
    with up.direct() as d:
        d.execute(f"CREATE TABLE {t} (id int)")
        d.execute(f"INSERT INTO {t} VALUES (1), (2)")
        d.execute(f'GRANT SELECT ON {t} TO "{up.alice}"')
    with up.connect(up.alice) as c:
        c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 3600) AS "
                  f"SELECT id FROM {t}")
        assert c.execute(f"SELECT count(*) FROM {v}").fetchone() == (2,)
        with up.direct() as d:
            assert d.execute("SELECT matviewowner FROM pg_matviews WHERE matviewname = %s",
                             [v]).fetchone() == (up.alice,)
            d.execute(f"INSERT INTO {t} VALUES (3)")
        c.execute(f"REFRESH MATERIALIZED VIEW {v}")
        assert c.execute(f"SELECT count(*) FROM {v}").fetchone() == (3,)
        c.execute(f"DROP MATERIALIZED VIEW {v}")


def test_batch_view_over_an_unreadable_table_is_refused_and_leaves_nothing(up: Upstream) -> None:
    t, v = f"secret_{_suffix()}", f"bv_{_suffix()}"
    with up.direct() as d:
        d.execute(f"CREATE TABLE {t} (id int)")
        d.execute(f"INSERT INTO {t} VALUES (42)")
    with up.connect(up.alice) as c:
        with pytest.raises(pgerr.InsufficientPrivilege, match=f"permission denied for table {t}"):
            c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 1) AS "
                      f"SELECT id FROM {t}")
        names = [r[0] for r in c.execute("SHOW MATERIALIZED VIEWS").fetchall()]
        assert v not in names
        assert c.execute("SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs WHERE name = %s",
                         [v]).fetchone() == (0,)
    with up.direct() as d:
        assert d.execute("SELECT to_regclass(%s)", [v]).fetchone() == (None,)
    # the superuser, who can read it, may build that view
    with up.connect("root") as c:
        c.execute(f"CREATE MATERIALIZED VIEW {v} WITH (refresh.interval.sec = 3600) AS "
                  f"SELECT id FROM {t}")
        assert c.execute(f"SELECT id FROM {v}").fetchall() == [(42,)]
        c.execute(f"DROP MATERIALIZED VIEW {v}")


def test_plain_matview_is_the_clients_and_computed_with_its_privileges(up: Upstream) -> None:
    """Upstream a plain materialized view is PostgreSQL's own, relayed in the client's session
    (issue 14; before, a streaming view: a plain VIEW that read with the client's privileges
    at each SELECT). PostgreSQL computes it at creation and at each REFRESH with its owner's
    privileges, the client's role: without SELECT on the table the CREATE itself is refused
    (PostgreSQL's 42501); with it the view is the client's and keeps its rows when the grant
    goes, but can no longer be refreshed."""
    t, v = f"secret_{_suffix()}", f"sv_{_suffix()}"
    with up.direct() as d:
        d.execute(f"CREATE TABLE {t} (id int)")
        d.execute(f"INSERT INTO {t} VALUES (7)")
    with up.connect(up.alice) as c:
        with pytest.raises(pgerr.InsufficientPrivilege, match=f"permission denied for table {t}"):
            c.execute(f"CREATE MATERIALIZED VIEW {v} AS SELECT id FROM {t}")
        with up.direct() as d:
            assert d.execute("SELECT count(*) FROM pg_class WHERE relname = %s",
                             [v]).fetchone() == (0,)
            d.execute(f'GRANT SELECT ON {t} TO "{up.alice}"')
        c.execute(f"CREATE MATERIALIZED VIEW {v} AS SELECT id FROM {t}")
        with up.direct() as d:
            assert d.execute("SELECT matviewowner FROM pg_matviews WHERE matviewname = %s",
                             [v]).fetchone() == (up.alice,)
            assert d.execute("SELECT count(*) FROM pg_views WHERE viewname = %s",
                             [v]).fetchone() == (0,)
            d.execute(f'REVOKE SELECT ON {t} FROM "{up.alice}"')
        assert c.execute(f"SELECT id FROM {v}").fetchall() == [(7,)]
        with pytest.raises(pgerr.InsufficientPrivilege, match=f"permission denied for table {t}"):
            c.execute(f"REFRESH MATERIALIZED VIEW {v}")
        c.execute(f"DROP MATERIALIZED VIEW {v}")
    with up.direct() as d:
        d.execute(f"DROP TABLE {t}")


# --------------------------------------------------------------------------- start-up failures


def test_unknown_role_gets_the_upstreams_fatal_28000(up: Upstream) -> None:
    name = f"pgb_nobody_{_suffix()}"
    err = _fatal(up.server, up.database, name)
    assert err.sqlstate == "28000"
    assert err.message == f'role "{name}" does not exist'


def test_connection_limit_of_a_role_is_the_upstreams_53300(up: Upstream) -> None:
    with up.connect(up.limited) as first:
        assert first.execute("SELECT current_user").fetchone() == (up.limited,)
        err = _fatal(up.server, up.database, up.limited)
        assert err.sqlstate == "53300"
        assert err.message == f'too many connections for role "{up.limited}"'
    # the limit is the upstream's, and only while the first session holds it: once its
    # upstream backend has exited (PostgreSQL ends it after the Terminate, in its own
    # time, as for any client that disconnects), the role may connect again
    deadline = time.monotonic() + 10
    while True:
        try:
            again = up.connect(up.limited)
            break
        except psycopg.OperationalError as exc:
            assert "too many connections" in str(exc) and time.monotonic() < deadline, exc
            time.sleep(0.05)  # polling the upstream's state against a deadline
    with again:
        assert again.execute("SELECT 1").fetchone() == (1,)


def test_force_user_runs_every_session_as_the_upstream_dsn_user() -> None:
    dsn = require_postgres()
    database = f"pgb_uf_{_suffix()}"
    srv = start_server("--database", database, "--upstream-force-user",
                       "--upstream", dsn.rsplit("/", 1)[0] + "/")
    try:
        dsn_user = psycopg.conninfo.conninfo_to_dict(dsn).get("user")
        name = f"pgb_nobody_{_suffix()}"  # a user the upstream does not know is fine here
        with psycopg.connect(srv.dsn(database, name), autocommit=True) as c:
            assert c.execute("SELECT current_user").fetchone() == (dsn_user,)
            c.execute("CREATE TABLE t (id int)")
            c.execute("CREATE MATERIALIZED VIEW bv WITH (refresh.interval.sec = 3600) AS "
                      "SELECT id FROM t")
            assert c.execute("SELECT count(*) FROM bv").fetchone() == (0,)
    finally:
        code = stop_server(srv)
        with _admin(dsn) as adm:
            adm.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    assert code == 0, "server did not exit cleanly:\n" + "".join(srv.log)


# --------------------------------------------------------------------------- passwords


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PasswordCluster:
    """A private PostgreSQL that asks every user for a SCRAM password."""

    dsn: str
    passwords: dict[str, str]


@pytest.fixture(scope="module")
def scram_pg() -> Iterator[PasswordCluster]:
    require_postgres()
    initdb = os.path.join(_PG_BIN, "initdb")
    if not os.access(initdb, os.X_OK):
        pytest.skip(f"{initdb} is not installed")
    as_postgres: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("no postgres OS user to run initdb as")
        as_postgres = ["runuser", "-u", "postgres", "--"]
    top = tempfile.mkdtemp(prefix="pgb_scram_")
    data, admin_pw = os.path.join(top, "data"), f"adm-{_suffix()}"
    pwfile = os.path.join(top, "pw")
    with open(pwfile, "w") as f:
        f.write(admin_pw + "\n")
    if as_postgres:
        shutil.chown(top, "postgres")
        shutil.chown(pwfile, "postgres")
    run = lambda *cmd: subprocess.run([*as_postgres, *cmd], capture_output=True, text=True,  # noqa: E731
                                      timeout=120)
    made = run(initdb, "-D", data, "-U", "pgb_admin", f"--pwfile={pwfile}",
               "--auth=scram-sha-256", "-E", "UTF8", "--no-sync")
    if made.returncode != 0:
        shutil.rmtree(top, ignore_errors=True)
        pytest.skip(f"initdb failed: {made.stderr[-500:]}")
    port = _free_port()
    started = run(os.path.join(_PG_BIN, "pg_ctl"), "-D", data, "-w", "-t", "60",
                  "-l", os.path.join(top, "log"), "-o",
                  f"-p {port} -c listen_addresses=127.0.0.1 -k {top} -c fsync=off", "start")
    try:
        assert started.returncode == 0, started.stderr + open(os.path.join(top, "log")).read()
        dsn = f"postgresql://pgb_admin:{admin_pw}@127.0.0.1:{port}/postgres"
        sfx = _suffix()
        passwords = {f"pgb_alice_{sfx}": f"a-{_suffix()}", f"pgb_bob_{sfx}": f"b-{_suffix()}",
                     f"pgb_carol_{sfx}": f"c-{_suffix()}"}
        with _admin(dsn) as adm:
            for role, password in passwords.items():
                adm.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{password}'")
        yield PasswordCluster(dsn, passwords)
    finally:
        run(os.path.join(_PG_BIN, "pg_ctl"), "-D", data, "-m", "immediate", "stop")
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="module", params=["scram-sha-256", "md5", "password"])
def scram_front(request, scram_pg: PasswordCluster, tmp_path_factory) -> Iterator[tuple]:
    """pgbarrier (``--auth-method`` as param) in front of ``scram_pg``: alice's password is
    the upstream's, bob's is not, carol is a --users-file user; the server's PGPASSWORD is
    carol's upstream password (it must never be offered for her)."""
    from pgbarrier.server.auth import ScramVerifier

    alice, bob, carol = scram_pg.passwords
    d = tmp_path_factory.mktemp("auth")
    (d / "passwords").write_text(f"{alice}:{scram_pg.passwords[alice]}\n{bob}:pgbarrier-only\n")
    (d / "users").write_text(f"{carol}:{ScramVerifier.derive(scram_pg.passwords[carol])}\n")
    database = f"pgb_pw_{_suffix()}"
    saved = os.environ.get("PGPASSWORD")
    os.environ["PGPASSWORD"] = scram_pg.passwords[carol]
    try:
        srv = start_server("--database", database, "--upstream", scram_pg.dsn.rsplit("/", 1)[0] + "/",
                           "--auth-method", request.param, "--password-file", str(d / "passwords"),
                           "--users-file", str(d / "users"))
    finally:
        if saved is None:
            os.environ.pop("PGPASSWORD")
        else:
            os.environ["PGPASSWORD"] = saved
    try:
        yield srv, database, scram_pg.passwords, (alice, bob, carol)
    finally:
        code = stop_server(srv)
    assert code == 0, "server did not exit cleanly:\n" + "".join(srv.log)


def test_the_clients_password_logs_it_in_upstream(scram_front) -> None:
    srv, database, passwords, (alice, _bob, _carol) = scram_front
    with psycopg.connect(srv.dsn(database, alice), password=passwords[alice],
                         autocommit=True) as c:
        assert c.execute("SELECT current_user").fetchone() == (alice,)


def test_a_password_the_upstream_refuses_is_its_28p01(scram_front) -> None:
    srv, database, _passwords, (_alice, bob, _carol) = scram_front
    err = _fatal(srv, database, bob, "pgbarrier-only")
    assert err.sqlstate == "28P01"
    assert err.message == f'password authentication failed for user "{bob}"'


def test_a_users_file_user_gets_28000_saying_what_to_configure(scram_front) -> None:
    srv, database, passwords, (_alice, _bob, carol) = scram_front
    # carol authenticates to pgbarrier (SCRAM, her verifier); pgbarrier has no password to
    # pass on, and the server's PGPASSWORD (her real upstream password) is not offered
    err = _fatal(srv, database, carol, passwords[carol])
    assert err.sqlstate == "28000"
    assert err.message == (f'the upstream PostgreSQL asks for a password for user "{carol}", '
                        "and pgbarrier has none to give it")
    assert "--upstream-force-user" in err.hint
