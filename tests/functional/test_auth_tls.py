"""Authentication and TLS against a real server process (port 0) with psql, psycopg, asyncpg, pg8000.

The self-signed certificate is made in the test with ``cryptography``.
"""

from __future__ import annotations

import asyncio
import base64
import datetime
import ipaddress
import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

import asyncpg
import pg8000.native
import psycopg
import pytest
import scramp
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import ServerProcess, run_in_background, start_server, stop_server

PASSWORD = "s3cret:pw"
FAILED = 'FATAL:  password authentication failed for user "root"'


def make_certificate(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "server.crt", directory / "server.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return cert_path, key_path


@pytest.fixture(scope="module")
def secrets_dir(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("auth")
    make_certificate(directory)
    (directory / "passwords").write_text(f"root:{PASSWORD}\nbob:bobs-password\n")
    salt, stored, server, i = scramp.ScramMechanism().make_auth_info("alices-password")
    b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
    (directory / "users").write_text(f"alice:SCRAM-SHA-256${i}:{b64(salt)}${b64(stored)}:{b64(server)}\n")
    return directory


def _start(secrets_dir: Path, method: str, *, tls: bool = True) -> ServerProcess:
    args = ["--password-file", str(secrets_dir / "passwords"),
            "--users-file", str(secrets_dir / "users"), "--auth-method", method]
    if tls:
        args += ["--tls-cert", str(secrets_dir / "server.crt"),
                 "--tls-key", str(secrets_dir / "server.key")]
    return start_server(*args)


@pytest.fixture(scope="module", params=["scram-sha-256", "md5", "password"])
def auth_server(request, secrets_dir):
    srv = _start(secrets_dir, request.param)
    srv.method = request.param  # type: ignore[attr-defined]
    yield srv
    assert stop_server(srv) == 0, "".join(srv.log)


@pytest.fixture(scope="module")
def trust_server():
    srv = start_server()
    yield srv
    assert stop_server(srv) == 0, "".join(srv.log)


def psql(server: ServerProcess, conninfo: str = "", *args: str, password: str | None = None,
         user: str = "root", sql: str = "select 1") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PGCONNECT_TIMEOUT"] = "10"
    if password is not None:
        env["PGPASSWORD"] = password
    dsn = f"host={server.host} port={server.port} user={user} dbname=dev {conninfo}"
    return subprocess.run(["psql", "-X", "-w", "-At", dsn, *args, "-c", sql], env=env,
                          capture_output=True, text=True, timeout=60)


# ------------------------------------------------------------------ every method


def test_psql_logs_in_with_the_password(auth_server):
    done = psql(auth_server, password=PASSWORD)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


def test_psql_wrong_password_is_refused(auth_server):
    done = psql(auth_server, "sslmode=disable", password="wrong")
    assert done.returncode == 2
    assert FAILED in done.stderr


def test_psql_without_a_password_is_refused(auth_server):
    done = psql(auth_server, "sslmode=disable")
    assert done.returncode == 2
    assert "no password supplied" in done.stderr


def test_psycopg_logs_in_with_the_password(auth_server):
    with psycopg.connect(auth_server.dsn(), password=PASSWORD, sslmode="disable") as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        assert not conn.info.pgconn.ssl_in_use


@pytest.mark.parametrize("user, password", [("root", "wrong"), ("nobody", PASSWORD)])
def test_psycopg_wrong_password_or_unknown_user_is_28P01(auth_server, user, password):
    with pytest.raises(psycopg.OperationalError,
                       match=f'password authentication failed for user "{user}"'):
        psycopg.connect(auth_server.dsn(user=user), password=password, sslmode="disable")


def test_psycopg_over_tls_with_sslmode_require(auth_server):
    with psycopg.connect(auth_server.dsn(), password=PASSWORD, sslmode="require") as conn:
        assert conn.info.pgconn.ssl_in_use
        assert conn.execute("select 1").fetchone() == (1,)


def test_psql_over_tls_with_sslmode_require(auth_server):
    done = psql(auth_server, "sslmode=require", password=PASSWORD, sql=r"\conninfo")
    assert done.returncode == 0, done.stderr
    assert "SSL connection" in done.stdout


def test_psql_wrong_password_over_tls(auth_server):
    done = psql(auth_server, "sslmode=require", password="wrong")
    assert done.returncode == 2
    assert FAILED in done.stderr


def test_users_file_user_logs_in_with_scram_whatever_the_method(auth_server):
    with psycopg.connect(auth_server.dsn(user="alice"), password="alices-password",
                         sslmode="disable") as conn:
        assert conn.execute("select 1").fetchone() == (1,)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(auth_server.dsn(user="alice"), password="bobs-password",
                        sslmode="disable")


def test_pg8000_and_asyncpg_log_in(auth_server):
    conn = pg8000.native.Connection("root", host=auth_server.host, port=auth_server.port,
                                    database="dev", password=PASSWORD)
    try:
        assert conn.run("select 1") == [[1]]
    finally:
        conn.close()

    async def run() -> int:
        c = await asyncpg.connect(host=auth_server.host, port=auth_server.port, user="root",
                                  database="dev", password=PASSWORD, ssl=False)
        try:
            return await c.fetchval("select 1")
        finally:
            await c.close()

    assert asyncio.run(run()) == 1


def test_a_message_other_than_a_password_during_authentication_is_08P01(auth_server):
    with socket.create_connection((auth_server.host, auth_server.port), timeout=30) as sock:
        body = struct.pack("!i", 196608) + b"user\x00root\x00database\x00dev\x00\x00"
        sock.sendall(struct.pack("!i", len(body) + 4) + body)
        assert sock.recv(1) == b"R"
        sock.recv(65536)
        sock.sendall(b"Q" + struct.pack("!i", 13) + b"select 1\x00")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data[:1] == b"E"
    assert b"C08P01\x00" in data and b"expected password response" in data
    # the server goes on
    with psycopg.connect(auth_server.dsn(), password=PASSWORD) as conn:
        assert conn.execute("select 1").fetchone() == (1,)


# ------------------------------------------------------------------ SCRAM over TLS


@pytest.fixture(scope="module")
def scram_tls_server(secrets_dir):
    srv = _start(secrets_dir, "scram-sha-256")
    yield srv
    assert stop_server(srv) == 0, "".join(srv.log)


def test_psql_scram_channel_binding_required(scram_tls_server):
    done = psql(scram_tls_server, "sslmode=require channel_binding=require", password=PASSWORD)
    assert done.returncode == 0, done.stderr


def test_psycopg_verifies_the_certificate(scram_tls_server, secrets_dir):
    with psycopg.connect(scram_tls_server.dsn(), password=PASSWORD, sslmode="verify-full",
                         sslrootcert=str(secrets_dir / "server.crt")) as conn:
        assert conn.info.pgconn.ssl_in_use


def test_cancel_request_over_tls(scram_tls_server):
    """libpq sends the CancelRequest on a new connection, after its own SSLRequest."""
    with psycopg.connect(scram_tls_server.dsn(), password=PASSWORD, sslmode="require",
                         autocommit=True) as busy:
        query = run_in_background(busy, "SELECT count(*) FROM range(100000000000) a")
        done, outcome = query.done, query.outcome
        query.cancel_until_done(busy)
        assert len(outcome) == 1 and isinstance(outcome[0], psycopg.errors.QueryCanceled), outcome


# ------------------------------------------------------------------ trust and start-up rules


def test_no_tls_configured_and_sslmode_require_is_a_client_error(trust_server):
    done = psql(trust_server, "sslmode=require")
    assert done.returncode == 2
    assert "server does not support SSL" in done.stderr
    with pytest.raises(psycopg.OperationalError, match="server does not support SSL"):
        psycopg.connect(trust_server.dsn(), sslmode="require")


def test_trust_on_loopback_needs_no_password(trust_server):
    with psycopg.connect(trust_server.dsn(), sslmode="prefer") as conn:
        assert not conn.info.pgconn.ssl_in_use
        assert conn.execute("select 1").fetchone() == (1,)


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pgbarrier", "serve", "--port", "0", "--data-dir", ":memory:", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


@pytest.mark.parametrize("args, env", [
    (["--host", "0.0.0.0"], None),
    ([], {"PGBARRIER_HOST": "0.0.0.0"}),
])
def test_non_loopback_host_without_a_password_source_refuses_to_start(args, env):
    done = _serve(*args, env=env)
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 without authentication" in done.stderr
    assert "--password-file" in done.stderr and "--trust-any-host" in done.stderr


@pytest.mark.parametrize("args, message", [
    (["--auth-method", "md5"], "needs --password-file or --users-file"),
    (["--password-file", "/nonexistent/pw"], "cannot read /nonexistent/pw"),
    (["--tls-cert", "/nonexistent/c.pem"], "TLS needs both --tls-cert and --tls-key"),
    (["--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"],
     "cannot load TLS certificate"),
])
def test_bad_security_configuration_refuses_to_start(args, message):
    done = _serve(*args)
    assert done.returncode == 2
    assert message in done.stderr


def test_trust_any_host_and_flags_from_the_environment(secrets_dir, monkeypatch):
    monkeypatch.setenv("PGBARRIER_HOST", "0.0.0.0")
    monkeypatch.setenv("PGBARRIER_TRUST_ANY_HOST", "true")
    srv = start_server()
    try:
        with psycopg.connect(f"host=127.0.0.1 port={srv.port} user=root dbname=dev") as conn:
            assert conn.execute("select 1").fetchone() == (1,)
    finally:
        assert stop_server(srv) == 0
    monkeypatch.delenv("PGBARRIER_TRUST_ANY_HOST")
    monkeypatch.setenv("PGBARRIER_PASSWORD_FILE", str(secrets_dir / "passwords"))
    monkeypatch.setenv("PGBARRIER_AUTH_METHOD", "md5")
    monkeypatch.setenv("PGBARRIER_TLS_CERT", str(secrets_dir / "server.crt"))
    monkeypatch.setenv("PGBARRIER_TLS_KEY", str(secrets_dir / "server.key"))
    srv = start_server()
    try:
        assert any("authentication: md5" in line and "TLS: on" in line for line in srv.log)
        with psycopg.connect(f"host=127.0.0.1 port={srv.port} user=bob dbname=dev",
                             password="bobs-password", sslmode="require") as conn:
            assert conn.info.pgconn.ssl_in_use
    finally:
        assert stop_server(srv) == 0
