"""Issue 28, item 2: the PostgreSQL meta store fails.

Two ``pgbarrier serve --upstream … --meta-store postgresql://…`` processes share a meta
store on a private PostgreSQL (:mod:`tests.pg_instance`); the upstream is the shared
PostgreSQL on 127.0.0.1:5432 (a fresh database, dropped after). While a client pauses and
resumes a database in a loop, the meta store is (a) restarted, (b) SIGKILLed and started
again 10 s later, (c) stopped for 10 s. Then:

* the leader steps down: the statement in flight gets 25006 or 57P01, idle sessions
  FATAL 57P01, new connections to either process FATAL 57P03 at once, never a hang, never
  XX000;
* when the store is back, one process leads within :data:`LEAD_BOUND_S`, with every
  database's pause state, the jobs and the epochs as acknowledged;
* no traceback in either process's log.

Every wait is a poll or an event against a deadline; the only fixed duration is the
fault's own (the 10 s the store stays down).
"""

from __future__ import annotations

import select
import threading
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors as pgerr

from tests.conftest import UPSTREAM, ServerProcess, require_postgres, start_server
from tests.pg_instance import PgInstance, private_postgres, wait_until

#: the issue's bound (2 s) for one process to lead after the store is back, plus 1 s for a
#: test machine whose two cores are busy with other tests
LEAD_BOUND_S = 3.0
OUTAGE_S = 10.0
AT_ONCE_S = 3.0
#: a statement that takes longer than this is a hang
HANG_S = 15.0
STARTING_UP = "the database system is starting up"


@pytest.fixture
def meta() -> Iterator[PgInstance]:
    with private_postgres("pgb_meta_") as pg:
        yield pg


@pytest.fixture
def pair(meta: PgInstance) -> Iterator[tuple[str, list[ServerProcess]]]:
    admin = require_postgres()
    database = f"pgb_mo_{uuid.uuid4().hex[:10]}"
    servers: list[ServerProcess] = []
    try:
        for _ in range(2):
            servers.append(start_server("--upstream", UPSTREAM, "--database", database,
                                        "--meta-store", meta.url(), "--barrier-interval-ms",
                                        "100"))
        yield database, servers
    finally:
        for srv in servers:
            if srv.proc.poll() is None:
                srv.proc.kill()
                srv.proc.wait(30)
        with psycopg.connect(admin, autocommit=True) as conn:
            for name in (database, database + "_p"):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _connect(srv: ServerProcess, database: str) -> psycopg.Connection:
    return psycopg.connect(srv.dsn(database, user="postgres"), autocommit=True,
                           connect_timeout=10)


def _state(c: psycopg.Connection) -> tuple:
    dbs = c.execute("SELECT name, paused, paused_at, paused_by FROM rw_catalog.rw_databases "
                    "ORDER BY name").fetchall()
    jobs = c.execute("SELECT name, database, definition, snapshot_epoch "
                     "FROM rw_catalog.rw_batch_refresh_jobs ORDER BY name").fetchall()
    epochs = dict(c.execute("SELECT name, committed_epoch FROM rw_catalog.rw_databases"))
    return dbs, jobs, epochs


class _Toggler:
    """PAUSE / RESUME of ``database`` in a loop on the leader, until a statement fails:
    each acknowledged state, and the failure."""

    def __init__(self, srv: ServerProcess, database: str) -> None:
        self.conn = _connect(srv, database)
        self.database = database
        self.acked: list[tuple] = []
        self.in_doubt: bool | None = None  # the pause state the failed statement asked for
        self.acked_paused: bool | None = None  # the state the last acknowledged one set
        self.error: BaseException | None = None
        self.took: float = 0.0
        self.started = threading.Event()
        self.ended = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        pause = True
        try:
            while True:
                verb = "PAUSE" if pause else "RESUME"
                t0 = time.monotonic()
                try:
                    self.conn.execute(f'ALTER DATABASE "{self.database}" {verb}')
                except psycopg.Error as exc:
                    self.took = time.monotonic() - t0
                    self.error, self.in_doubt = exc, pause
                    return
                self.acked_paused = pause
                self.acked.append(self.conn.execute(
                    "SELECT paused, paused_at, paused_by FROM rw_catalog.rw_databases "
                    "WHERE name = %s", (self.database,)).fetchone())
                self.started.set()
                pause = not pause
        except psycopg.Error as exc:  # the state read after an acknowledged statement
            self.error = exc
        finally:
            self.started.set()
            self.ended.set()


def _assert_session_ended(conn: psycopg.Connection) -> None:
    """The idle session was sent FATAL 57P01 (the step-down): read it first."""
    select.select([conn.fileno()], [], [], HANG_S)
    conn.pgconn.consume_input()
    with pytest.raises(psycopg.OperationalError) as info:
        conn.execute("SELECT 1")
    assert isinstance(info.value, pgerr.AdminShutdown) or info.value.sqlstate is None, \
        repr(info.value)


def _refused_starting_up(srv: ServerProcess, database: str) -> None:
    started = time.monotonic()
    with pytest.raises(psycopg.OperationalError) as info:
        _connect(srv, database)
    assert time.monotonic() - started < AT_ONCE_S, "a refused start-up waits"
    assert STARTING_UP in str(info.value), str(info.value)


def _leader(servers: list[ServerProcess], database: str) -> ServerProcess | None:
    for srv in servers:
        try:
            with _connect(srv, database) as c:
                if c.execute("SELECT role FROM rw_catalog.rw_leader").fetchone()[0] == "leader":
                    return srv
        except psycopg.OperationalError as exc:
            assert STARTING_UP in str(exc), str(exc)
    return None


@pytest.mark.parametrize("fault", ["restart", "kill", "stop"])
def test_the_meta_store_fails_and_one_process_leads_again(meta, pair, fault):
    database, servers = pair
    a, b = servers
    assert any("role: leader, term 1" in line for line in a.log), "".join(a.log)
    other = database + "_p"
    with _connect(a, database) as c:
        c.execute(f'CREATE DATABASE "{other}"')
        c.execute(f'ALTER DATABASE "{other}" PAUSE')
        c.execute("CREATE TABLE t (id int)")
        c.execute("CREATE MATERIALIZED VIEW mv WITH (refresh.interval.sec = 1) AS "
                  "SELECT count(*) AS n FROM t")
        c.execute("FLUSH")
        before = _state(c)
    idle = _connect(a, database)
    toggler = _Toggler(a, database)
    assert toggler.started.wait(HANG_S) and toggler.acked, repr(toggler.error)

    if fault == "restart":
        meta.restart()
    elif fault == "kill":
        meta.kill()
    else:
        meta.stop("fast")
    fault_at = time.monotonic()
    assert toggler.ended.wait(HANG_S), "the client's PAUSE/RESUME hangs"
    err = toggler.error
    print(f"{fault}: the statement in flight got {err!r} after {toggler.took:.2f} s")
    assert isinstance(err, psycopg.Error), repr(err)
    assert err.sqlstate in ("25006", "57P01", None), repr(err)  # None: the FATAL's close
    _assert_session_ended(idle)
    if fault != "restart":
        for srv in servers:  # both follow while the store is down
            _refused_starting_up(srv, database)
        wait_until(lambda: time.monotonic() - fault_at >= OUTAGE_S, OUTAGE_S + 5, "the outage")
        for srv in servers:
            _refused_starting_up(srv, database)
        meta.start()
    back_at = time.monotonic()

    leads_at = wait_until(lambda: _leader(servers, database) is not None, 30,
                          "a process leading after the store came back")
    took = leads_at - back_at
    print(f"{fault}: a process led {took:.2f} s after the meta store accepted connections")

    assert took < LEAD_BOUND_S, ["".join(s.log) for s in servers]
    leader = _leader(servers, database)
    with _connect(leader, database) as c:
        term = c.execute("SELECT term FROM rw_catalog.rw_leader").fetchone()[0]
        assert term >= 2
        dbs, jobs, epochs = _state(c)
    assert jobs == before[1]
    rows = {name: row for name, *row in dbs}
    assert rows[other] == [row for name, *row in before[0] if name == other][0]
    # the toggled database: its last acknowledged state, or the one the failed statement
    # asked for (its write may have committed before the store went away)
    mine = tuple(rows[database])
    last = tuple(toggler.acked[-1])
    if last[0] == toggler.acked_paused:  # read back after its acknowledgement: when and who too
        assert mine == last or mine[0] == toggler.in_doubt, (mine, last, toggler.in_doubt)
    else:
        assert mine[0] in (toggler.acked_paused, toggler.in_doubt), (mine, toggler.acked_paused)
    # epochs only go up: after a checkpoint of its own (FLUSH) a database's committed epoch
    # is above every one committed before (meta/checkpoints.py: until then it shows its
    # record's, the one of its last pause change)
    for name, epoch in before[2].items():
        with _connect(leader, name) as c:
            c.execute("FLUSH")
            now = c.execute("SELECT committed_epoch FROM rw_catalog.rw_databases WHERE "
                            "name = %s", (name,)).fetchone()[0]
        assert now > epoch, (name, epoch, now)
    with _connect(leader, database) as c:  # and it works: a write, a refresh
        c.execute(f'ALTER DATABASE "{other}" RESUME')
        c.execute(f'ALTER DATABASE "{database}" RESUME')
        c.execute("INSERT INTO t VALUES (1)")
        c.execute("REFRESH MATERIALIZED VIEW mv")
        assert c.execute("SELECT n FROM mv").fetchone()[0] == 1
    for srv in servers:
        text = "".join(srv.log)
        assert "Traceback" not in text and "XX000" not in text, text[-6000:]
