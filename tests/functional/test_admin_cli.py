"""``pgbarrier status | pause | resume | refresh | suspend | resume-view`` (issue 16 item 4,
issue 29 item 1): the admin CLI run as a
subprocess against a real server on both backends, as an operator's script would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import psycopg


def _cli(srv, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return subprocess.run([sys.executable, "-m", "pgbarrier", *args], capture_output=True,
                          text=True, timeout=60, env={**base, **(env or {})})


def _flags(srv) -> list[str]:
    return ["-h", srv.host, "-p", str(srv.port), "-U", "root"]


def test_status_pause_resume_and_refresh_as_a_script_uses_them(backend_server):
    srv = backend_server
    db, view = f"adm_{uuid.uuid4().hex[:8]}", f"adm_v_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(srv.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {db}")
        try:
            with psycopg.connect(srv.dsn(db), autocommit=True) as c:
                c.execute("CREATE TABLE t AS SELECT 1 AS x")
                c.execute(f"CREATE MATERIALIZED VIEW {view} WITH (refresh.interval.sec = 3600) "
                          "AS SELECT count(*) AS n FROM t")
                c.execute("INSERT INTO t VALUES (2)")

            done = _cli(srv, "pause", db, *_flags(srv))
            assert (done.returncode, done.stdout, done.stderr) == (0, "ALTER DATABASE\n", "")
            again = _cli(srv, "pause", db, *_flags(srv))
            assert again.returncode == 0 and f'database "{db}" is already paused' in again.stdout

            status = _cli(srv, "status", "--json", *_flags(srv))
            assert status.returncode == 0, status.stderr
            state = json.loads(status.stdout)
            mine = {d["name"]: d for d in state["databases"]}[db]
            assert mine["paused"] is True and mine["paused_by"] == "root" and mine["paused_at"]
            assert mine["committed_epoch"] > 0 and mine["epoch_age_sec"] >= 0
            (job,) = [j for j in state["jobs"] if j["database"] == db]
            assert (job["name"], job["status"], job["refresh_interval_sec"]) == (view, "idle", 3600)
            assert job["last_refreshed_at"] and job["next_refresh_at"]

            # PG* variables are libpq's: the same status, read through them
            table = _cli(srv, "status", env={"PGHOST": srv.host, "PGPORT": str(srv.port),
                                             "PGUSER": "root"})
            assert table.returncode == 0, table.stderr
            row = next(line for line in table.stdout.splitlines() if line.startswith(f" {db} "))
            assert "| paused" in row and "| root" in row
            assert view in table.stdout and "Batch refresh jobs" in table.stdout

            refused = _cli(srv, "refresh", db, view, *_flags(srv))
            assert refused.returncode == 1 and refused.stdout == ""
            assert refused.stderr.startswith("pgbarrier: ERROR 55000: ")

            assert _cli(srv, "resume", db, *_flags(srv)).returncode == 0
            done = _cli(srv, "refresh", db, view, *_flags(srv))
            assert (done.returncode, done.stdout) == (0, "REFRESH MATERIALIZED VIEW\n"), done.stderr
            with psycopg.connect(srv.dsn(db), autocommit=True) as c:
                assert c.execute(f"SELECT n FROM {view}").fetchone() == (2,)

            done = _cli(srv, "suspend", db, view, "--reason", "it's late", *_flags(srv))
            assert (done.returncode, done.stdout) == (0, "ALTER MATERIALIZED VIEW\n"), done.stderr
            state = json.loads(_cli(srv, "status", "--json", *_flags(srv)).stdout)
            (job,) = [j for j in state["jobs"] if j["database"] == db]
            assert (job["status"], job["suspended_by"], job["suspend_reason"]) == \
                ("suspended", "root", "it's late")
            done = _cli(srv, "resume-view", db, view, *_flags(srv))
            assert (done.returncode, done.stdout) == (0, "ALTER MATERIALIZED VIEW\n"), done.stderr
            again = _cli(srv, "resume-view", db, view, *_flags(srv))
            assert again.returncode == 0 and "is not suspended" in again.stdout
            wrong = _cli(srv, "suspend", db, "t", *_flags(srv))
            assert wrong.returncode == 1 and wrong.stderr.startswith("pgbarrier: ERROR 42809: ")

            done = _cli(srv, "pause", db, "--for", "1 hour", "--reason", "it's nightly",
                        *_flags(srv))
            assert (done.returncode, done.stdout) == (0, "ALTER DATABASE\n"), done.stderr
            state = json.loads(_cli(srv, "status", "--json", *_flags(srv)).stdout)
            mine = {d["name"]: d for d in state["databases"]}[db]
            assert mine["paused"] is True and mine["pause_reason"] == "it's nightly"
            assert mine["resumes_at"]
            bad = _cli(srv, "pause", db, "--for", "soon", *_flags(srv))
            assert bad.returncode == 1 and bad.stderr.startswith("pgbarrier: ERROR 22007: ")
            assert _cli(srv, "resume", db, *_flags(srv)).returncode == 0

            missing = _cli(srv, "pause", f"{db}_nope", *_flags(srv))
            assert missing.returncode == 1
            assert missing.stderr.startswith("pgbarrier: ERROR 3D000: ")
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {db}")


def test_usage_and_connection_errors_have_their_exit_codes(server):
    usage = _cli(server, "pause")
    assert usage.returncode == 2 and "required: DB" in usage.stderr
    with socket_that_refuses() as port:
        down = _cli(server, "status", "-h", "127.0.0.1", "-p", str(port))
    assert down.returncode == 1 and down.stderr.startswith("pgbarrier: ERROR 08001: ")


class socket_that_refuses:
    """A port nothing listens on (bound, never listening), for as long as the block runs."""

    def __enter__(self) -> int:
        import socket

        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        return self.sock.getsockname()[1]

    def __exit__(self, *exc: object) -> None:
        self.sock.close()


def test_refresh_takes_the_view_as_sql_names_it(backend_server):
    """VIEW is SQL, as vacuumdb -t takes a table: a quoted name is exact, an unquoted one
    folds, and a schema may qualify it (issue 31: the CLI quoted a quoted name again)."""
    srv = backend_server
    db = f"adm_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(srv.dsn(), autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {db}")
        try:
            with psycopg.connect(srv.dsn(db), autocommit=True) as c:
                c.execute("CREATE SCHEMA s")
                c.execute("CREATE TABLE s.t (a int)")
                for name in ('"Mixed Case"', 's."My View"', "plain"):
                    c.execute(f"CREATE MATERIALIZED VIEW {name} WITH (refresh.interval.sec "
                              "= 3600) AS SELECT count(*) AS n FROM s.t")
            for arg in ('"Mixed Case"', 's."My View"', "PLAIN", 'public."Mixed Case"'):
                done = _cli(srv, "refresh", db, arg, *_flags(srv))
                assert (done.returncode, done.stdout) == (0, "REFRESH MATERIALIZED VIEW\n"), \
                    (arg, done.stderr)
            spaced = _cli(srv, "refresh", db, "Mixed Case", *_flags(srv))  # not SQL: one name
            assert spaced.returncode == 0, spaced.stderr
            missing = _cli(srv, "refresh", db, '"mixed case"', *_flags(srv))
            assert missing.returncode == 1
            assert missing.stderr.startswith("pgbarrier: ERROR 42P01: "), missing.stderr
            assert '"mixed case"' in missing.stderr and '""' not in missing.stderr
        finally:
            admin.execute(f"DROP DATABASE IF EXISTS {db}")
