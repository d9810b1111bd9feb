"""Refusals the PostgreSQL way (issue 28, item 4): reserved slots for superusers and the
admin CLI, PostgreSQL's FATAL under every libpq ``sslmode`` at the cap, and the cap and
refusals in the metrics.

Real servers and real clients (psycopg, the admin CLI, raw sockets); no sleeps: each
refusal is the connect's own answer, and a freed slot is waited for by connecting again.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from conftest import require_postgres, start_server, stop_server
from test_auth_tls import make_certificate
from test_leader_election import cluster  # noqa: F401 - fixture
from test_metrics import MetricsServer
from test_wire_odd_input import read_messages, startup_packet, summary

RESERVED = "remaining connection slots are reserved for non-replication superuser connections"
TOO_MANY = "sorry, too many clients already"


def _connect(dsn: str, **kw: str) -> psycopg.Connection:
    """A session once a slot is free: a closed session frees its slot a moment after its
    client left (PostgreSQL's too: when the backend exits), so a refusal is tried again
    (each try is a real connect; bounded)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            return psycopg.connect(dsn, connect_timeout=10, autocommit=True, **kw)
        except psycopg.OperationalError as exc:
            if "53300" not in str(exc) and TOO_MANY not in str(exc) \
                    and RESERVED not in str(exc) or time.monotonic() > deadline:
                raise


def _refusal(dsn: str, **kw: str) -> str:
    with pytest.raises(psycopg.OperationalError) as exc:
        psycopg.connect(dsn, connect_timeout=10, **kw)
    return str(exc.value)


@pytest.fixture(scope="module")
def reserved() -> Iterator:
    # 4 slots, the last 2 kept for the superuser "boss" and the admin CLI
    srv = start_server("--max-connections", "4", "--reserved-connections", "2",
                       "--superuser", "boss", "--metrics-port", "0")
    yield srv
    assert stop_server(srv) == 0


def test_reserved_slots_keep_room_for_superusers_and_the_admin_cli(reserved):
    metrics = MetricsServer(reserved)
    before = metrics.scrape()
    conns = [_connect(reserved.dsn(user="alice")) for _ in range(2)]
    try:
        # PostgreSQL's answer: AuthenticationOk, then FATAL 53300 (raw, then through libpq)
        with socket.create_connection((reserved.host, reserved.port), timeout=10) as sock:
            sock.sendall(startup_packet({b"user": b"alice", b"database": b"dev"}))
            got = summary(read_messages(sock, until=b"<none>"))
        assert got == [("R",), ("E", "FATAL", "53300", RESERVED), ("<closed>",)]
        assert f"FATAL:  {RESERVED}" in _refusal(reserved.dsn(user="alice"))
        # the superuser and the admin CLI get in
        conns.append(_connect(reserved.dsn(user="boss")))
        status = subprocess.run(
            [sys.executable, "-m", "pgbarrier", "status", "-h", reserved.host, "-p",
             str(reserved.port), "-U", "alice", "-d", "dev"],
            capture_output=True, text=True, timeout=60, env={**os.environ, "PGAPPNAME": ""})
        assert status.returncode == 0, status.stderr
        conns.append(_connect(reserved.dsn(user="boss")))  # once the CLI's slot is free
        # every slot taken: even a superuser is told PostgreSQL's 53300
        assert f"FATAL:  {TOO_MANY}" in _refusal(reserved.dsn(user="boss"))
        after = metrics.scrape()
    finally:
        for c in conns:
            c.close()
    assert after.value("pgbarrier_max_connections") == 4
    assert after.value("pgbarrier_reserved_connections") == 2
    assert after.value("pgbarrier_connection_slots_used") == 4
    refused = "pgbarrier_connections_refused_total"
    assert after.value(refused, reason="reserved_connections") \
        - before.value(refused, reason="reserved_connections") == 2
    assert after.value(refused, reason="too_many_clients") \
        - before.value(refused, reason="too_many_clients") >= 1
    assert before.has(refused, reason="not_leader")  # every reason has a series


@pytest.mark.parametrize("sslmode", ["disable", "allow", "prefer"])
def test_every_sslmode_reads_postgresqls_fatal_at_the_cap(reserved, sslmode):
    conns = [_connect(reserved.dsn(user="boss")) for _ in range(4)]
    try:
        message = _refusal(reserved.dsn(user="alice"), sslmode=sslmode)
        assert f"FATAL:  {TOO_MANY}" in message, message
        assert "SSL exchange" not in message
    finally:
        for c in conns:
            c.close()


def test_over_tls_require_and_prefer_read_postgresqls_fatal_at_the_cap(tmp_path):
    cert, key = make_certificate(tmp_path)
    srv = start_server("--max-connections", "2", "--reserved-connections", "1",
                       "--superuser", "boss", "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        conns = [psycopg.connect(srv.dsn(user="alice"), sslmode="require")]
        for sslmode in ("require", "prefer", "allow", "disable"):
            message = _refusal(srv.dsn(user="alice"), sslmode=sslmode)
            assert f"FATAL:  {RESERVED}" in message, (sslmode, message)
        conns.append(psycopg.connect(srv.dsn(user="boss"), sslmode="require"))
        for sslmode in ("require", "prefer"):
            message = _refusal(srv.dsn(user="boss"), sslmode=sslmode)
            assert f"FATAL:  {TOO_MANY}" in message, (sslmode, message)
        for c in conns:
            c.close()
    finally:
        assert stop_server(srv) == 0


def test_reserved_connections_must_be_less_than_max_connections():
    proc = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--port", "0",
                           "--data-dir", ":memory:", "--max-connections", "3",
                           "--reserved-connections", "3"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("pgbarrier: --reserved-connections must be at least 0 and "
                                   "less than --max-connections")


def test_upstream_superusers_are_the_upstreams(tmp_path):
    # sessions run upstream as the client's own role: its rolsuper decides
    dsn = require_postgres()
    role = f"pgb_plain_{uuid.uuid4().hex[:8]}"
    database = f"pgb_reserved_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'CREATE ROLE "{role}" LOGIN')
    srv = start_server("--database", database, "--upstream", dsn.rsplit("/", 1)[0] + "/",
                       "--max-connections", "3", "--reserved-connections", "1",
                       "--superuser", "nobody_here")
    try:
        conns = [_connect(srv.dsn(database, user=role)) for _ in range(2)]
        with socket.create_connection((srv.host, srv.port), timeout=10) as sock:
            sock.sendall(startup_packet({b"user": role.encode(), b"database": database.encode()}))
            got = summary(read_messages(sock, until=b"<none>"))
        assert got == [("R",), ("E", "FATAL", "53300", RESERVED), ("<closed>",)]
        conns.append(_connect(srv.dsn(database, user="postgres")))
        assert conns[-1].execute("SELECT current_setting('is_superuser')").fetchone() == ("on",)
        for c in conns:
            c.close()
    finally:
        code = stop_server(srv)
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')
    assert code == 0


def test_a_ssl_request_is_answered_before_a_refusal_by_raw_bytes(reserved):
    # the bytes libpq's sslmode=prefer sends: SSLRequest, then (after N) its start-up
    conns = [_connect(reserved.dsn(user="boss")) for _ in range(4)]
    try:
        with socket.create_connection((reserved.host, reserved.port), timeout=10) as sock:
            sock.sendall(struct.pack("!ii", 8, 80877103))
            assert sock.recv(1) == b"N"
            sock.sendall(startup_packet({b"user": b"boss", b"database": b"dev"}))
            got = summary(read_messages(sock, until=b"<none>"))
        assert got == [("E", "FATAL", "53300", TOO_MANY), ("<closed>",)]
    finally:
        for c in conns:
            c.close()


def test_a_follower_answers_the_ssl_request_then_57p03(cluster):
    # the cluster of test_leader_election: two processes on one PostgreSQL meta store
    leader = cluster.start()
    follower = cluster.start("--metrics-port", "0")
    assert leader.wait_for_log("ready: listening on")
    metrics = MetricsServer(follower)
    before = metrics.scrape().value("pgbarrier_connections_refused_total", reason="not_leader")
    for sslmode in ("disable", "allow", "prefer"):
        message = _refusal(follower.dsn(cluster.database), sslmode=sslmode)
        assert "FATAL:  the database system is starting up" in message, (sslmode, message)
    with socket.create_connection((follower.host, follower.port), timeout=10) as sock:
        sock.sendall(struct.pack("!ii", 8, 80877103))
        assert sock.recv(1) == b"N"
        sock.sendall(startup_packet({b"user": b"root", b"database": cluster.database.encode()}))
        got = summary(read_messages(sock, until=b"<none>"))
    assert got == [("E", "FATAL", "57P03", "the database system is starting up"), ("<closed>",)]
    after = metrics.scrape().value("pgbarrier_connections_refused_total", reason="not_leader")
    assert after - before >= 4  # allow: libpq tries twice
