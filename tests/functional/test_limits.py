"""Connection limits, start-up deadline, --require-tls and idle timeouts (issue 11, item 5).

Real clients (psycopg) and raw sockets against a real server. Nothing here sleeps to
synchronise: tests wait on the socket closing (bounded by a socket timeout) or on a
server log line; the drip-feeding client paces itself by waiting for the server to
close, one socket timeout per byte.
"""

from __future__ import annotations

import socket
import struct
import subprocess
import sys
import time
from collections.abc import Iterator

import psycopg
import pytest

from conftest import require_postgres, run_in_background, start_server, stop_server
from test_auth_tls import make_certificate
# the same three servers as the odd-input tests: DuckDB, upstream and PostgreSQL itself
from test_wire_odd_input import (  # noqa: F401 - fixtures
    Target, connect, duckdb_target, msg, query, read_messages, startup_packet, summary, target,
    upstream_target)

AUTH_TIMEOUT_S = 1.0


@pytest.fixture(scope="module")
def limited():
    # no reserved slots here: the limit itself is tested (test_reserved_connections.py
    # tests the reserved ones)
    srv = start_server("--max-connections", "3", "--reserved-connections", "0",
                       "--authentication-timeout-sec", str(AUTH_TIMEOUT_S))
    yield srv
    assert stop_server(srv) == 0


# --------------------------------------------------------------------------- max connections


def _startup_answer(host: str, port: int, user: bytes = b"root", database: bytes = b"dev"):
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(startup_packet({b"user": user, b"database": database}))
        return summary(read_messages(sock, until=b"<none>"))


def test_connection_past_the_limit_gets_53300_and_cancel_still_works(limited):
    conns = [psycopg.connect(limited.dsn(), autocommit=True) for _ in range(3)]
    try:
        with pytest.raises(psycopg.OperationalError) as exc:
            psycopg.connect(limited.dsn(), connect_timeout=10)
        assert "FATAL:  sorry, too many clients already" in str(exc.value)
        assert _startup_answer(limited.host, limited.port) == [
            ("E", "FATAL", "53300", "sorry, too many clients already"), ("<closed>",)]
        assert limited.wait_for_log("too many clients already")
        # at the limit, a CancelRequest (a connection of its own) still reaches its session
        job = run_in_background(conns[0], "SELECT count(*) FROM range(20000000000) t(i)")
        job.cancel_until_done(conns[0])
        assert isinstance(job.outcome[0], psycopg.errors.QueryCanceled), job.outcome
        assert conns[1].execute("SELECT 1").fetchone() == (1,)
    finally:
        for c in conns:
            c.close()
    # the slots are free again once the sessions have ended (each try is a real connect)
    deadline = time.monotonic() + 20
    while True:
        try:
            with psycopg.connect(limited.dsn(), connect_timeout=10) as conn:
                assert conn.execute("SELECT 2").fetchone() == (2,)
            break
        except psycopg.OperationalError as exc:
            # a session's slot is free once it has closed, a moment after its client left
            # (PostgreSQL's too: when the backend process exits); psycopg gives no sqlstate
            # for a refused connect, only PostgreSQL's words
            assert "too many clients already" in str(exc), exc
            assert time.monotonic() < deadline


# --------------------------------------------------------------------------- start-up deadline


def _until_closed(sock: socket.socket, pace_s: float, send: bytes, total_s: float) -> float:
    """Send ``send`` every ``pace_s`` until the server closes; seconds that took."""
    start = time.monotonic()
    sock.settimeout(pace_s)
    while time.monotonic() - start < total_s:
        try:
            data = sock.recv(4096)
        except socket.timeout:
            try:
                sock.sendall(send)
            except OSError:
                break
            continue
        except OSError:
            break
        if not data:
            break
    return time.monotonic() - start


def test_drip_fed_startup_is_closed_at_the_deadline(limited):
    packet = startup_packet({b"user": b"root", b"database": b"dev"})
    with socket.create_connection((limited.host, limited.port)) as sock:
        sock.sendall(packet[:1])
        rest = iter(packet[1:-1])  # never the whole packet
        start = time.monotonic()
        sock.settimeout(0.2)
        while time.monotonic() - start < 10:
            try:
                if not sock.recv(4096):
                    break
                # a byte sent as the server closed may come back as a reset: closed too
            except ConnectionResetError:
                break
            except socket.timeout:
                try:
                    sock.sendall(bytes([next(rest)]))
                except (BrokenPipeError, ConnectionResetError):
                    break
        took = time.monotonic() - start
    assert AUTH_TIMEOUT_S * 0.8 <= took < AUTH_TIMEOUT_S + 3
    assert limited.wait_for_log("did not finish within")


def test_repeated_sslrequests_are_closed_at_the_deadline(limited):
    ssl_request = struct.pack("!ii", 8, 80877103)
    with socket.create_connection((limited.host, limited.port)) as sock:
        sock.sendall(ssl_request)
        took = _until_closed(sock, 0.2, ssl_request, 10)
    assert took < AUTH_TIMEOUT_S + 3


@pytest.mark.parametrize("length", [10005, 64 * 1024 * 1024])
def test_oversized_startup_packet_is_refused_without_reading_it(limited, length):
    # PostgreSQL reads at most 10,000 bytes after the length word; past that it logs
    # "invalid length of startup packet" and closes without a word: so does pgbarrier
    targets = [(limited.host, limited.port)]
    try:
        require_postgres()
        targets.append(("127.0.0.1", 5432))
    except pytest.skip.Exception:
        pass
    for host, port in targets:
        with socket.create_connection((host, port), timeout=10) as sock:
            sock.sendall(struct.pack("!i", length))
            answer = read_messages(sock, until=b"<none>")
        assert summary(answer) == [("<closed>",)]
    assert limited.wait_for_log(f"invalid length of startup packet ({length})")


def test_startup_packet_of_10000_bytes_is_read(limited):
    # the limit is PostgreSQL's: 10,000 bytes of body are still a start-up packet
    params = {b"user": b"root", b"database": b"dev"}
    base = len(startup_packet(params)) - 4
    params[b"application_name"] = b"a" * (10000 - base - len(b"application_name\0\0"))
    packet = startup_packet(params)
    assert len(packet) - 4 == 10000
    with socket.create_connection((limited.host, limited.port), timeout=10) as sock:
        sock.sendall(packet)
        assert summary(read_messages(sock))[-1] == ("Z", "I")


# --------------------------------------------------------------------------- --require-tls


@pytest.fixture(scope="module")
def tls_required(tmp_path_factory) -> Iterator:
    directory = tmp_path_factory.mktemp("tls")
    cert, key = make_certificate(directory)
    srv = start_server("--tls-cert", str(cert), "--tls-key", str(key), "--require-tls")
    yield srv
    assert stop_server(srv) == 0


def test_require_tls_refuses_plaintext_with_28000(tls_required):
    message = 'no pg_hba.conf entry for host "127.0.0.1", user "u", database "d", no encryption'
    with pytest.raises(psycopg.OperationalError) as exc:
        psycopg.connect(tls_required.dsn(user="u", database="d"), sslmode="disable")
    assert f"FATAL:  {message}" in str(exc.value)
    assert _startup_answer(tls_required.host, tls_required.port, b"u", b"d") == [
        ("E", "FATAL", "28000", message), ("<closed>",)]


def test_require_tls_accepts_tls(tls_required):
    with psycopg.connect(tls_required.dsn(), sslmode="require") as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
        assert conn.pgconn.ssl_in_use


def test_require_tls_without_a_certificate_exits_2():
    proc = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--port", "0",
                           "--data-dir", ":memory:", "--require-tls"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "pgbarrier: --require-tls needs --tls-cert and --tls-key"


# --------------------------------------------------------------------------- idle timeouts


IDLE = [
    (b"SET idle_session_timeout = '300ms'",
     ("E", "FATAL", "57P05", "terminating connection due to idle-session timeout")),
    (b"BEGIN; SET idle_in_transaction_session_timeout = '300ms'",
     ("E", "FATAL", "25P03", "terminating connection due to idle-in-transaction timeout")),
]


@pytest.mark.parametrize("sql,fatal", IDLE, ids=["idle_session", "idle_in_transaction"])
def test_idle_timeout_ends_the_connection_with_postgresqls_fatal(target, sql, fatal):
    with connect(target) as sock:
        sock.sendall(query(sql))
        assert summary(read_messages(sock))[-1][0] == "Z"
        start = time.monotonic()
        got = summary(read_messages(sock, until=b"<none>"))  # until the server closes
    assert got == [fatal, ("<closed>",)]
    assert 0.25 <= time.monotonic() - start < 10


def test_idle_timeouts_show_and_reset(target):
    with connect(target) as sock:
        sock.sendall(query(b"SET idle_session_timeout = '2min'") + query(b"SHOW idle_session_timeout")
                     + query(b"RESET idle_session_timeout")
                     + query(b"SHOW idle_in_transaction_session_timeout"))
        got = summary(read_messages(sock, count=4))
    rows = [body for kind, *body in got if kind == "D"]
    assert rows == [["\x00\x01\x00\x00\x00\x042min"], ["\x00\x01\x00\x00\x00\x010"]]


def test_activity_keeps_an_idle_session_alive(target):
    with connect(target) as sock:
        sock.sendall(query(b"SET idle_session_timeout = '1s'"))
        read_messages(sock)
        for _ in range(3):  # each exchange is well inside the timeout
            sock.sendall(query(b"SELECT 1"))
            assert summary(read_messages(sock))[-1] == ("Z", "I")
        sock.sendall(msg(b"X"))


def test_past_the_served_connections_bound_the_start_up_is_refused_after_ssl():
    # 2 * 3 + 10 connections may be served at once, start-ups included; one more is a dead
    # end: its SSLRequest is answered and its start-up refused with PostgreSQL's FATAL
    # 53300 (so libpq's sslmode=prefer reads it); as many dead ends again may be open, and
    # one more is told 53300 at once, by the accepting thread
    srv = start_server("--max-connections", "3", "--authentication-timeout-sec", "60")
    socks = [socket.create_connection((srv.host, srv.port), timeout=10) for _ in range(16)]
    try:
        with socket.create_connection((srv.host, srv.port), timeout=10) as extra:
            extra.sendall(struct.pack("!ii", 8, 80877103))
            assert extra.recv(1) == b"N"
            extra.sendall(startup_packet({b"user": b"root", b"database": b"dev"}))
            got = summary(read_messages(extra, until=b"<none>"))
        assert got == [("E", "FATAL", "53300", "sorry, too many clients already"), ("<closed>",)]
        assert srv.wait_for_log("refused: 16 connections served already")
        with pytest.raises(psycopg.OperationalError) as exc:
            psycopg.connect(srv.dsn(), sslmode="prefer", connect_timeout=10)
        assert "FATAL:  sorry, too many clients already" in str(exc.value)
        socks += [socket.create_connection((srv.host, srv.port), timeout=10)
                  for _ in range(16)]
        with socket.create_connection((srv.host, srv.port), timeout=10) as extra:
            got = summary(read_messages(extra, until=b"<none>"))
        assert got == [("E", "FATAL", "53300", "sorry, too many clients already"), ("<closed>",)]
        assert srv.wait_for_log("refused at once: 16 connections served and 16 refused")
    finally:
        for s in socks:
            s.close()
        assert stop_server(srv) == 0


def test_names_in_log_lines_are_escaped_and_cut(limited):
    conns = [psycopg.connect(limited.dsn(), autocommit=True) for _ in range(3)]
    try:
        forged = b"evil\nERROR forged line \x1b[31m"
        assert _startup_answer(limited.host, limited.port, forged)[0][2] == "53300"
        assert limited.wait_for_log('user "evil\\nERROR forged line \\x1b[31m"')
        assert _startup_answer(limited.host, limited.port, b"u", b"d" * 100)[0][2] == "53300"
        assert limited.wait_for_log('database "' + "d" * 63 + '..."')
    finally:
        for c in conns:
            c.close()
    assert not any(line.startswith("ERROR forged") for line in limited.log)
