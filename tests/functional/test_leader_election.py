"""Several pgbarrier processes on one PostgreSQL meta store: one leads, the others follow.

Real ``pgbarrier serve --upstream ... --meta-store postgresql://...`` processes, each test
on a fresh meta database (advisory locks and the meta schema are per database) and fresh
upstream databases, all dropped afterwards. Every wait is bounded: a log line (woken per
line) or a poll of a port or a catalog view against a deadline.
"""

from __future__ import annotations

import select
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field

import psycopg
import pytest
from psycopg import errors as pgerr

from tests.conftest import (UPSTREAM, ServerProcess, compile_java, require_postgres,
                            start_server, stop_server)
from tests.netcut import Forwarder

LOCK_APP = "pgbarrier-leader-lock"
STARTING_UP = "the database system is starting up"
FAILOVER_BOUND_S = 5.0


@dataclass
class Cluster:
    admin_dsn: str
    meta_db: str
    database: str
    servers: list[ServerProcess] = field(default_factory=list)
    extra_databases: list[str] = field(default_factory=list)

    @property
    def meta_url(self) -> str:
        return self.meta_url_via(5432)

    def meta_url_via(self, port: int) -> str:
        return f"postgresql://postgres@127.0.0.1:{port}/{self.meta_db}"

    def start(self, *extra: str, meta_port: int = 5432) -> ServerProcess:
        srv = start_server("--upstream", UPSTREAM, "--database", self.database,
                           "--meta-store", self.meta_url_via(meta_port),
                           "--barrier-interval-ms", "100", *extra)
        self.servers.append(srv)
        return srv

    def lock_sessions(self) -> list[tuple[int, bool]]:
        """(pid, holds the leader lock) of every leader-lock session on the meta database."""
        return [(pid, held) for pid, held, _ in self.lock_sessions_with_ports()]

    def lock_sessions_with_ports(self) -> list[tuple[int, bool, int]]:
        """(pid, holds the leader lock, client port) of every leader-lock session."""
        with psycopg.connect(self.admin_dsn, autocommit=True) as c:
            return c.execute(
                "SELECT a.pid, EXISTS (SELECT 1 FROM pg_locks l WHERE l.pid = a.pid "
                "AND l.locktype = 'advisory' AND l.granted), a.client_port "
                "FROM pg_stat_activity a "
                "WHERE a.datname = %s AND a.application_name = %s ORDER BY a.pid",
                (self.meta_db, LOCK_APP)).fetchall()

    def partition_leader(self, fwd: Forwarder) -> None:
        """Cut the leader's lock session as a network partition would: the meta store
        sees it end (the lock is freed), the leader (its store reached through ``fwd``)
        is told nothing."""
        held = [port for _, holds, port in self.lock_sessions_with_ports() if holds]
        assert len(held) == 1, held
        assert fwd.partition(held[0]), "the leader's lock session is not through the forwarder"


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    dsn = require_postgres()
    tag = uuid.uuid4().hex[:10]
    c = Cluster(dsn, f"pgb_ha_meta_{tag}", f"pgb_ha_{tag}")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{c.meta_db}"')
    try:
        yield c
    finally:
        for srv in c.servers:
            if srv.proc.poll() is None:
                srv.proc.kill()
                srv.proc.wait(30)
        with psycopg.connect(dsn, autocommit=True) as conn:
            for name in (c.meta_db, c.database, *c.extra_databases):
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def forwarder() -> Iterator[Forwarder]:
    """A partitionable way to the meta store on 127.0.0.1:5432 (tests.netcut)."""
    with Forwarder("127.0.0.1", 5432) as fwd:
        yield fwd


def _connect(srv: ServerProcess, database: str, **kw) -> psycopg.Connection:
    return psycopg.connect(srv.dsn(database), autocommit=True, connect_timeout=10, **kw)


def _refused_starting_up(srv: ServerProcess, database: str) -> None:
    with pytest.raises(psycopg.OperationalError) as info:
        _connect(srv, database)
    assert STARTING_UP in str(info.value), str(info.value)


def _leader_row(conn: psycopg.Connection) -> tuple:
    return conn.execute("SELECT role, term, since, holder FROM rw_catalog.rw_leader").fetchone()


def _wait_until_serving(srv: ServerProcess, database: str, deadline: float) -> float:
    """Poll ``srv`` until a connection is accepted; the monotonic time it was."""
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with _connect(srv, database) as c:
                c.execute("SELECT 1")
            return time.monotonic()
        except psycopg.OperationalError as exc:
            last = exc
            assert STARTING_UP in str(exc) or "Connection refused" in str(exc), str(exc)
            srv.wait_for_log("role: leader", timeout=0.05)  # a bounded pause between polls
    raise AssertionError(f"not serving before the deadline: {last}\n" + "".join(srv.log))


def _assert_terminated(conn: psycopg.Connection) -> None:
    """The idle connection was sent FATAL 57P01: read it before sending anything (a query
    sent to the closed socket could be answered by a reset instead)."""
    select.select([conn.fileno()], [], [], 30)
    conn.pgconn.consume_input()
    with pytest.raises(psycopg.OperationalError) as info:
        conn.execute("SELECT 1")
    assert isinstance(info.value, pgerr.AdminShutdown), repr(info.value)
    assert info.value.diag.message_primary == "terminating connection due to administrator command"


def test_one_leads_the_other_refuses_with_57p03_and_multihost_finds_the_leader(
        cluster, tmp_path_factory):
    a = cluster.start()
    b = cluster.start()
    assert a.wait_for_log("ready: listening on"), "".join(a.log)
    ready_a = next(line for line in a.log if "ready: listening on" in line)
    ready_b = next(line for line in b.log if "ready: listening on" in line)
    assert "role: leader, term 1, since " in ready_a, ready_a
    assert "role: follower since " in ready_b, ready_b
    assert any("role: leader, term 1" in line for line in a.log)

    _refused_starting_up(b, cluster.database)
    with _connect(a, cluster.database) as c:
        role, term, since, holder = _leader_row(c)
        assert (role, term) == ("leader", 1)
        assert since is not None and f":{a.port}" in holder
    # each process's lock session is visible by its application_name; only a holds the lock
    sessions = cluster.lock_sessions()
    assert sorted(held for _, held in sessions) == [False, True], sessions

    for attrs in ("", " target_session_attrs=read-write"):
        conninfo = (f"host=127.0.0.1,127.0.0.1 port={b.port},{a.port} user=root "
                    f"dbname={cluster.database} connect_timeout=10{attrs}")
        with psycopg.connect(conninfo, autocommit=True) as c:
            assert c.info.port == a.port
            assert _leader_row(c)[:2] == ("leader", 1)
    psql = subprocess.run(["psql", "-X", "-At", "-c", "SELECT role FROM rw_catalog.rw_leader",
                           f"host=127.0.0.1,127.0.0.1 port={b.port},{a.port} user=root "
                           f"dbname={cluster.database}"],
                          capture_output=True, text=True, timeout=60)
    assert psql.returncode == 0 and psql.stdout.strip() == "leader", psql.stderr
    classpath = compile_java(tmp_path_factory, "PgbarrierLeader.java")
    jdbc = subprocess.run(["java", "-cp", classpath, "PgbarrierLeader",
                           f"jdbc:postgresql://127.0.0.1:{b.port},127.0.0.1:{a.port}/"
                           f"{cluster.database}"], capture_output=True, text=True, timeout=120)
    assert jdbc.stdout.strip() == f"leader: leader|1|{a.port}", jdbc.stdout + jdbc.stderr

    # a clean shutdown frees the lock at once: the follower takes office
    assert stop_server(a) == 0, "".join(a.log)
    assert b.wait_for_log("role: leader, term 2", timeout=15), "".join(b.log)
    with _connect(b, cluster.database) as c:
        assert _leader_row(c)[:2] == ("leader", 2)


def test_kill9_of_the_leader_fails_over_with_everything_acknowledged(cluster):
    a = cluster.start()
    b = cluster.start()
    paused_db = cluster.database + "_p"
    more = [f"{cluster.database}_q{i}" for i in range(6)]  # paused while a is killed
    cluster.extra_databases.extend([paused_db, *more])
    with _connect(a, cluster.database) as c:
        for name in (paused_db, *more):
            c.execute(f'CREATE DATABASE "{name}"')
        c.execute("CREATE TABLE t (id INT)")
        c.execute("INSERT INTO t VALUES (1)")
        c.execute("CREATE MATERIALIZED VIEW mv WITH (refresh.interval.sec = 1) AS "
                  "SELECT count(*) AS n FROM t")
    with _connect(a, paused_db) as c:
        c.execute(f'ALTER DATABASE "{paused_db}" PAUSE')
        paused_before = c.execute(
            "SELECT paused, paused_at, paused_by FROM rw_catalog.rw_databases WHERE name = %s",
            (paused_db,)).fetchone()
    assert paused_before[0] is True

    # a client creating batch-refresh jobs and pausing databases while the leader is killed:
    # each acknowledged job and PAUSE (with its when and by whom) must be there afterwards
    acked: list[str] = []
    acked_pauses: dict[str, tuple] = {}
    enough = threading.Event()
    stop = threading.Event()

    def create_jobs() -> None:
        try:
            with _connect(a, cluster.database) as c:
                for i in range(1000):
                    if stop.is_set():
                        return
                    c.execute(f"CREATE MATERIALIZED VIEW job_{i} WITH (refresh.interval.sec "
                              "= 3600) AS SELECT id FROM t")
                    acked.append(f"job_{i}")
                    if i < len(more):
                        c.execute(f'ALTER DATABASE "{more[i]}" PAUSE')
                        acked_pauses[more[i]] = c.execute(
                            "SELECT paused, paused_at, paused_by FROM rw_catalog.rw_databases "
                            "WHERE name = %s", (more[i],)).fetchone()
                    if len(acked) >= 3:
                        enough.set()
        except psycopg.Error:
            pass  # the leader died under it
        finally:
            enough.set()

    creator = threading.Thread(target=create_jobs, daemon=True)
    creator.start()
    assert enough.wait(60) and len(acked) >= 3, "".join(a.log)
    with _connect(a, cluster.database) as c:
        before = c.execute("SELECT max(committed_epoch) FROM rw_catalog.rw_databases").fetchone()[0]
        job_epoch = c.execute("SELECT max(snapshot_epoch) FROM rw_catalog.rw_batch_refresh_jobs"
                              ).fetchone()[0]
    killed_at = time.monotonic()
    a.proc.kill()
    a.proc.wait(30)
    stop.set()
    creator.join(60)
    acked_jobs = set(acked)

    serving_at = _wait_until_serving(b, cluster.database, killed_at + 15)
    took = serving_at - killed_at
    print(f"failover after kill -9: the follower accepted connections {took:.2f} s later")
    assert took < FAILOVER_BOUND_S, "".join(b.log)
    # admission opens the moment the role is set; its log line is written just after and
    # read by another thread, so it is waited for rather than looked up
    assert b.wait_for_log("role: leader, term 2", timeout=15), "".join(b.log)

    # a client with both hosts in its connection string reconnects to the new leader
    with psycopg.connect(f"host=127.0.0.1,127.0.0.1 port={a.port},{b.port} user=root "
                         f"dbname={cluster.database} connect_timeout=10", autocommit=True) as c:
        assert c.info.port == b.port and _leader_row(c)[:2] == ("leader", 2)
    with _connect(b, cluster.database) as c:
        assert _leader_row(c)[:2] == ("leader", 2)
        assert c.execute(
            "SELECT paused, paused_at, paused_by FROM rw_catalog.rw_databases WHERE name = %s",
            (paused_db,)).fetchone() == paused_before
        jobs = {r[0] for r in c.execute("SELECT name FROM rw_catalog.rw_batch_refresh_jobs")}
        assert acked_jobs | {"mv"} <= jobs, (acked_jobs, jobs)
        assert len(acked_pauses) >= 2
        for name, state in acked_pauses.items():
            assert state[0] is True
            assert c.execute("SELECT paused, paused_at, paused_by FROM rw_catalog.rw_databases "
                             "WHERE name = %s", (name,)).fetchone() == state, name
        c.execute("FLUSH")
        after = c.execute("SELECT committed_epoch FROM rw_catalog.rw_databases WHERE name = %s",
                          (cluster.database,)).fetchone()[0]
        assert after > max(before, job_epoch), (before, job_epoch, after)
        # the scheduled refresh runs again under the new leader
        c.execute("INSERT INTO t VALUES (2)")
        deadline = time.monotonic() + 20
        while c.execute("SELECT n FROM mv").fetchone()[0] != 2:
            assert time.monotonic() < deadline, "".join(b.log)
            b.wait_for_log("no such line", timeout=0.2)  # a bounded pause between polls
        # (the new leader's first run of a view that fell due is its catch-up run)
        runs = c.execute("SELECT count(*) FROM rw_catalog.rw_refresh_history WHERE job = 'mv' "
                         "AND trigger IN ('schedule', 'catchup') AND started_at > %s::timestamptz",
                         (_leader_row(c)[2],)).fetchone()[0]
        assert runs >= 1


def test_a_deposed_leader_is_fenced_steps_down_and_follows(cluster, forwarder):
    # a never checks its lock session by itself and is cut off from it by a partition: only
    # the term in the meta store can stop it; no periodic barriers, so the client's PAUSE is
    # its first write after b took office
    a = cluster.start("--leader-check-interval-ms", "600000", "--barrier-interval-ms", "600000",
                      meta_port=forwarder.port)
    b = cluster.start()
    with _connect(a, cluster.database) as c:
        c.execute("SELECT 1")
    writer = _connect(a, cluster.database)
    idle = _connect(a, cluster.database)
    sessions = cluster.lock_sessions()
    held = [pid for pid, holds in sessions if holds]
    assert len(held) == 1 and len(sessions) == 2, sessions
    cluster.partition_leader(forwarder)
    assert b.wait_for_log("role: leader, term 2", timeout=15), "".join(b.log)

    # a still believes it leads; its next write fails and the client is told so
    with pytest.raises(psycopg.Error) as info:
        writer.execute(f'ALTER DATABASE "{cluster.database}" PAUSE')
    assert info.value.sqlstate == "25006", repr(info.value)
    assert info.value.diag.message_primary == ("cannot record this change: this pgbarrier "
                                               "process is no longer the leader")
    assert info.value.diag.message_detail == "Its term 1 was superseded by term 2; nothing " \
        "was recorded."
    assert a.wait_for_log("stepped down from term 1: a meta-store write was fenced", timeout=15), \
        "".join(a.log)
    assert not any("lost its leader lock session" in line for line in a.log)
    _assert_terminated(idle)
    select.select([writer.fileno()], [], [], 30)
    with pytest.raises(psycopg.OperationalError):  # its session ended too
        writer.pgconn.consume_input()
        writer.execute("SELECT 1")
    writer.close()
    idle.close()
    _refused_starting_up(a, cluster.database)
    with _connect(b, cluster.database) as c:
        assert _leader_row(c)[:2] == ("leader", 2)
        paused = c.execute("SELECT paused FROM rw_catalog.rw_databases WHERE name = %s",
                           (cluster.database,)).fetchone()[0]
        assert paused is False  # the fenced PAUSE was never recorded


def test_a_lost_lock_session_is_noticed_by_the_leader_itself(cluster):
    a = cluster.start()
    (pid, holds), = cluster.lock_sessions()
    assert holds
    with psycopg.connect(cluster.admin_dsn, autocommit=True) as adm:
        adm.execute("SELECT pg_terminate_backend(%s)", (pid,))
    # it steps down, then (alone) wins the lock again with a new term
    assert a.wait_for_log("lost its leader lock session", timeout=15), "".join(a.log)
    assert a.wait_for_log("role: leader, term 2", timeout=15), "".join(a.log)
    with _connect(a, cluster.database) as c:
        assert _leader_row(c)[:2] == ("leader", 2)


def test_follow_only_never_takes_office(cluster):
    f = cluster.start("--follow-only")
    ready = next(line for line in f.log if "ready: listening on" in line)
    assert "role: follower (--follow-only) since " in ready, ready
    _refused_starting_up(f, cluster.database)
    assert cluster.lock_sessions() == []  # it never even asks for the lock
    leader = cluster.start()
    assert any("role: leader, term 1" in line for line in leader.log), "".join(leader.log)
    assert stop_server(leader) == 0
    assert [held for _, held in cluster.lock_sessions()] == []
    _refused_starting_up(f, cluster.database)
    assert stop_server(f) == 0, "".join(f.log)

    refused = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--port", "0",
                              "--data-dir", ":memory:", "--follow-only"],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert refused.stderr.strip() == ("pgbarrier: --follow-only needs a PostgreSQL --meta-store "
                                      "(the SQLite meta store is single-process)")


def test_the_sqlite_meta_store_refuses_a_second_process(tmp_path):
    data = str(tmp_path / "data")
    first = start_server("--data-dir", data)
    try:
        with psycopg.connect(first.dsn(), autocommit=True) as c:
            role, term, since, holder = _leader_row(c)
            assert (role, term, holder) == ("leader", None, None) and since is not None
        second = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--port", "0",
                                 "--data-dir", data], capture_output=True, text=True, timeout=60)
        assert second.returncode == 2, second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1, second.stderr
        assert lines[0] == (f"pgbarrier: cannot open meta store {data}/meta.sqlite: data dir "
                            f"{data} is in use by another pgbarrier process (pid "
                            f"{first.proc.pid}); the SQLite meta store is single-process "
                            "(several processes need --meta-store postgresql://...)")
    finally:
        assert stop_server(first) == 0, "".join(first.log)
    again = start_server("--data-dir", data)  # the lock went with the process
    assert stop_server(again) == 0


def test_a_second_duckdb_process_on_one_meta_store_is_refused(cluster, tmp_path):
    first = start_server("--data-dir", str(tmp_path / "one"), "--meta-store", cluster.meta_url)
    cluster.servers.append(first)
    assert any("role: leader, term 1" in line for line in first.log), "".join(first.log)
    second = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--port", "0",
                             "--data-dir", str(tmp_path / "two"), "--meta-store",
                             cluster.meta_url], capture_output=True, text=True, timeout=60)
    assert second.returncode == 2, second.stderr
    assert second.stderr.strip().splitlines()[-1] == (
        "pgbarrier: another pgbarrier process leads the meta store; on DuckDB each process has "
        "its own data, so only one may use it (several processes need --upstream)")
    assert stop_server(first) == 0, "".join(first.log)


def test_a_follower_whose_store_connection_was_cut_still_takes_office(cluster):
    a = cluster.start()
    with _connect(a, cluster.database) as c:
        c.execute(f'ALTER DATABASE "{cluster.database}" PAUSE')
    b = cluster.start()
    with psycopg.connect(cluster.admin_dsn, autocommit=True) as adm:
        # b's store connection is the newer of the two (a's was opened before b started)
        (cut,) = adm.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND "
            "application_name = 'pgbarrier-meta' ORDER BY backend_start DESC LIMIT 1",
            (cluster.meta_db,)).fetchone()
        assert cut
    killed_at = time.monotonic()
    a.proc.kill()
    a.proc.wait(30)
    _wait_until_serving(b, cluster.database, killed_at + 15)
    with _connect(b, cluster.database) as c:
        assert _leader_row(c)[:2] == ("leader", 2)
        assert c.execute("SELECT paused FROM rw_catalog.rw_databases WHERE name = %s",
                         (cluster.database,)).fetchone()[0] is True


def test_two_processes_started_at_once_on_a_fresh_store(cluster):
    """As ``docker compose up`` does: neither races the other on creating the schema."""
    started: list[ServerProcess] = []
    threads = [threading.Thread(target=lambda: started.append(cluster.start())) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert len(started) == 2, "".join(line for s in cluster.servers for line in s.log)
    roles = sorted("role: leader, term 1" in "".join(s.log) for s in started)
    assert roles == [False, True], ["".join(s.log) for s in started]
    leader = next(s for s in started if "role: leader, term 1" in "".join(s.log))
    follower = next(s for s in started if s is not leader)
    _refused_starting_up(follower, cluster.database)
    with _connect(leader, cluster.database) as c:
        assert _leader_row(c)[:2] == ("leader", 1)


def test_a_refresh_in_flight_on_a_deposed_leader_is_not_recorded(cluster, forwarder):
    # a never checks its lock session itself and is partitioned from it: only a fenced write
    # (the refresh's, or a barrier's lease record, whichever comes first) stops it
    a = cluster.start("--leader-check-interval-ms", "600000", meta_port=forwarder.port)
    b = cluster.start()
    with _connect(a, cluster.database) as c:
        c.execute("CREATE VIEW src AS SELECT 1 AS n")
        c.execute("CREATE MATERIALIZED VIEW mv WITH (refresh.interval.sec = 3600) AS "
                  "SELECT n FROM src")
        # from now on a refresh of mv takes 3 s upstream
        c.execute("CREATE OR REPLACE VIEW src AS SELECT n FROM (SELECT 2 AS n, pg_sleep(3)) s")
    refreshing = _connect(a, cluster.database)
    outcome: list[BaseException | None] = []

    def refresh() -> None:
        try:
            refreshing.execute("REFRESH MATERIALIZED VIEW mv")
            outcome.append(None)
        except psycopg.Error as exc:
            outcome.append(exc)

    runner = threading.Thread(target=refresh, daemon=True)
    runner.start()
    deadline = time.monotonic() + 30
    with psycopg.connect(cluster.admin_dsn.rsplit("/", 1)[0] + "/" + cluster.database,
                         autocommit=True) as up:
        while not up.execute("SELECT 1 FROM pg_stat_activity WHERE query LIKE "
                             "'REFRESH MATERIALIZED VIEW%%mv%%' AND state = 'active'").fetchone():
            assert time.monotonic() < deadline and runner.is_alive(), "".join(a.log)
    cluster.partition_leader(forwarder)
    assert b.wait_for_log("role: leader, term 2", timeout=15), "".join(b.log)
    runner.join(60)
    assert outcome and outcome[0] is not None, outcome  # never a success
    assert outcome[0].sqlstate in ("25006", "57P01"), repr(outcome[0])
    assert a.wait_for_log("stepped down from term 1: a meta-store write was fenced", timeout=15), \
        "".join(a.log)
    refreshing.close()
    with _connect(b, cluster.database) as c:
        runs = c.execute("SELECT run_id, trigger, status FROM rw_catalog.rw_refresh_history "
                         "WHERE job = 'mv' ORDER BY run_id").fetchall()
        assert all(status != "succeeded" or trigger == "create" for _, trigger, status in runs), runs
        # the run a started was in the store as running when b took office: recovery marked it
        # failed, and a's commit of it never landed
        assert ("manual", "failed") in [(trigger, status) for _, trigger, status in runs], runs
        assert c.execute("SELECT status FROM rw_catalog.rw_batch_refresh_jobs WHERE name = 'mv'"
                         ).fetchone()[0] != "REFRESHING"


def _scrape(srv: ServerProcess) -> dict[str, float]:
    """The unlabelled role gauges of a server started with --metrics-port 0."""
    import re
    import urllib.request

    ready = next(line for line in srv.log if "ready: listening on" in line)
    host, port = re.search(r"metrics on ([\d.]+):(\d+)", ready).groups()
    with urllib.request.urlopen(f"http://{host}:{port}/metrics", timeout=10) as resp:
        text = resp.read().decode()
    return {name: float(value) for name, value in re.findall(
        r"^(pgbarrier_leader|pgbarrier_leader_term|pgbarrier_role_since_seconds) (\S+)$",
        text, re.M)}


def test_the_metrics_endpoint_says_who_leads(cluster):
    leader = cluster.start("--metrics-port", "0")
    follower = cluster.start("--metrics-port", "0")
    led, followed = _scrape(leader), _scrape(follower)
    assert led["pgbarrier_leader"] == 1 and led["pgbarrier_leader_term"] >= 1
    assert followed["pgbarrier_leader"] == 0
    assert led["pgbarrier_role_since_seconds"] > 0
    for srv in (follower, leader):
        assert stop_server(srv) == 0, "".join(srv.log)


def _leader_of(servers: list[ServerProcess], term: int, timeout: float) -> ServerProcess:
    """The process that logged taking office under ``term`` (woken per log line)."""
    deadline = time.monotonic() + timeout
    text = f"role: leader, term {term},"
    while time.monotonic() < deadline:
        for srv in servers:
            if any(text in line for line in srv.log):
                return srv
        servers[0].wait_for_log(text, timeout=0.05)  # a bounded pause between looks
    raise AssertionError(f"nobody took term {term}:\n" + "\n".join("".join(s.log) for s in servers))


def test_a_stepped_down_leader_lets_a_healthy_follower_lead(cluster):
    """Issue 28, item 3: the leader's lock session is cut again and again (at random moments
    of its term); each time the healthy follower takes over (a leader that lost its lock
    waits at least a retry interval, with jitter, before trying again), each step-down is
    one WARNING line and no traceback, and the old leader never shows itself in
    ``rw_leader`` as leading under the term it lost."""
    import random

    a = cluster.start()
    b = cluster.start()
    servers = [a, b]
    assert _leader_of(servers, 1, 15) is a
    cuts = 8
    retook = 0
    for term in range(1, cuts + 1):
        leader = _leader_of(servers, term, 15)
        follower = b if leader is a else a
        watching = _connect(leader, cluster.database)  # opened under the term to be lost
        # a random moment of the term: some barriers and a refresh history write or none
        leader.wait_for_log("no such line", timeout=random.uniform(0.0, 0.6))
        (pid,) = [pid for pid, holds in cluster.lock_sessions() if holds]
        with psycopg.connect(cluster.admin_dsn, autocommit=True) as adm:
            assert adm.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0]
        nxt = _leader_of(servers, term + 1, 15)
        retook += nxt is leader
        try:
            row = _leader_row(watching)
        except psycopg.OperationalError as exc:  # its session ended with the step-down
            assert isinstance(exc, pgerr.AdminShutdown), repr(exc)
        else:
            assert row[:2] != ("leader", term), row
        finally:
            watching.close()
        assert leader.wait_for_log(f"stepped down from term {term}:", timeout=15), \
            "".join(leader.log)
        if nxt is follower:
            with _connect(follower, cluster.database) as c:
                assert _leader_row(c)[:2] == ("leader", term + 1)
    print(f"{cuts} lock cuts: the stepped-down process led again {retook} times")
    assert retook == 0, ["".join(s.log) for s in servers]
    for srv in servers:
        text = "".join(srv.log)
        assert "Traceback" not in text, text
        step_downs = [line for line in srv.log if "stepped down from term" in line]
        warnings = [line for line in srv.log if " WARNING " in line or "WARNING:" in line]
        assert all("role: follower" in line for line in step_downs), step_downs
        assert warnings == step_downs, warnings  # one WARNING line per step-down, nothing else
    with _connect(_leader_of(servers, cuts + 1, 15), cluster.database) as c:
        assert _leader_row(c)[:2] == ("leader", cuts + 1)
