"""pg_dump through pgbarrier restores through pgbarrier (issue 14, item 6).

In front of PostgreSQL: a database with a table, a view, PostgreSQL's own materialized
view with an index, and a batch-refresh view is dumped through pgbarrier with pg_dump
(plain SQL restored with psql, and ``-Fc`` restored with pg_restore), into new
databases created through pgbarrier. The same objects come back with the same data.
What a dump keeps of a batch-refresh view is a PostgreSQL materialized view with its
definition, rows and indexes; its schedule is pgbarrier's and is not in the dump
(README, "Backups and pg_dump").
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from conftest import ServerProcess, require_postgres, start_server, stop_server

SETUP = """
CREATE TABLE t (a int PRIMARY KEY, b text NOT NULL);
INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 250) g;
CREATE VIEW small AS SELECT a, b FROM t WHERE a < 10;
CREATE MATERIALIZED VIEW counted AS SELECT count(*) AS n, max(a) AS top FROM t;
CREATE UNIQUE INDEX counted_n ON counted (n);
CREATE MATERIALIZED VIEW summed WITH (refresh.interval.sec = 3600) AS SELECT sum(a) AS s FROM t;
"""

#: what must come back: each relation's kind and its rows
CHECKS = {
    "t": ("r", "SELECT count(*), sum(a), min(b) FROM t"),
    "small": ("v", "SELECT count(*) FROM small"),
    "counted": ("m", "SELECT n, top FROM counted"),
    "summed": ("m", "SELECT s FROM summed"),
}


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[ServerProcess, str, str]]:
    dsn = require_postgres()
    source = f"pgb_dump_{uuid.uuid4().hex[:8]}"
    srv = start_server("--database", source, "--upstream", dsn.rsplit("/", 1)[0] + "/")
    try:
        yield srv, source, dsn
    finally:
        code = stop_server(srv)
        with psycopg.connect(dsn, autocommit=True) as adm:
            rows = adm.execute("SELECT datname FROM pg_database WHERE datname LIKE %s",
                               [f"{source}%"]).fetchall()
            for (db,) in rows:
                adm.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        assert code == 0, "".join(srv.log)


def _state(srv: ServerProcess, database: str) -> dict[str, tuple]:
    with psycopg.connect(srv.dsn(database, "postgres"), autocommit=True) as c:
        out = {}
        for name, (kind, query) in CHECKS.items():
            (got,) = c.execute("SELECT relkind::text FROM pg_class WHERE oid = to_regclass(%s)",
                               [name]).fetchone()
            out[name] = (got, c.execute(query).fetchall())
        (indexed,) = c.execute("SELECT count(*) FROM pg_indexes WHERE indexname = 'counted_n'"
                               ).fetchone()
        out["counted_n"] = indexed
        return out


@pytest.mark.parametrize("fmt", ["plain", "custom"])
def test_a_dump_through_pgbarrier_restores_through_pgbarrier(server, fmt, tmp_path):
    srv, source, _dsn = server
    with psycopg.connect(srv.dsn(source, "postgres"), autocommit=True) as c:
        if c.execute("SELECT to_regclass('t')").fetchone() == (None,):
            for statement in SETUP.strip().split(";\n"):
                c.execute(statement)
        target = f"{source}_{fmt}"
        c.execute(f"CREATE DATABASE {target}")
    base = ["-h", srv.host, "-p", str(srv.port), "-U", "postgres"]
    dump = tmp_path / f"dump.{fmt}"
    subprocess.run(["pg_dump", *base, "-F", "p" if fmt == "plain" else "c", "-f", str(dump),
                    source], check=True, capture_output=True, text=True, timeout=120)
    if fmt == "plain":
        restore = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", *base, "-d", target,
                   "-f", str(dump)]
    else:
        restore = ["pg_restore", "--exit-on-error", *base, "-d", target, str(dump)]
    done = subprocess.run(restore, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = _state(srv, source)
    assert expected["summed"] == ("m", [(31375,)])
    assert _state(srv, target) == expected
    with psycopg.connect(srv.dsn(target, "postgres"), autocommit=True) as c:
        # the schedule is pgbarrier's, not PostgreSQL's: not in a dump (README)
        assert c.execute("SHOW MATERIALIZED VIEWS").fetchall() == []
