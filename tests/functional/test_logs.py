"""Logs an operator can search (issue 16 item 5): ``--log-format json`` lines with their
fields, nothing a client sends can forge a line, events for PAUSE / RESUME / jobs / failed
refreshes, and ``--log-min-duration-statement``."""

from __future__ import annotations

import json

import psycopg
import pytest

from conftest import start_server, stop_server

EVIL = "mallory\n2026-01-01 00:00:00,000 INFO pgbarrier: forged"


def _events(srv) -> list[dict]:
    out = []
    for line in srv.log:
        line = line.rstrip("\n")
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def _conn(srv, user: str = "root"):
    return psycopg.connect(host=srv.host, port=srv.port, user=user, dbname="dev", autocommit=True,
                           application_name="logs-test")


def test_json_lines_carry_who_what_and_how_long():
    srv = start_server("--log-format", "json", "--log-min-duration-statement", "0")
    try:
        with _conn(srv, EVIL) as c:
            pid = c.info.backend_pid
            c.execute("CREATE TABLE t AS SELECT 1 AS x")
            c.execute("CREATE MATERIALIZED VIEW mv WITH (refresh.interval.sec = 3600) "
                      "AS SELECT 1 / x AS x FROM t")
            c.execute("ALTER DATABASE dev PAUSE")
            c.execute("ALTER DATABASE dev RESUME")
            c.execute("SELECT %s::int + 1", [41], prepare=True)
            c.execute("SELECT %s::int + 1", [41], prepare=True)  # a prepared statement's Bind
            c.execute("UPDATE t SET x = 0")  # the next refresh divides by zero
            with pytest.raises(psycopg.errors.DivisionByZero):
                c.execute("REFRESH MATERIALIZED VIEW mv")
            c.execute("DROP MATERIALIZED VIEW mv")
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
    assert all(line.startswith("{") for line in srv.log), "every line is one JSON object"
    events = _events(srv)
    assert all({"time", "level", "logger", "message"} <= e.keys() for e in events)
    by = {e.get("event"): e for e in events}
    for name in ("pause", "resume", "job_created", "job_dropped"):
        e = by[name]
        assert (e["user"], e["pid"], e["database"], e["application"]) == \
            (EVIL, pid, "dev", "logs-test"), e
    assert by["pause"]["message"] == f'database "dev" paused by {EVIL}'
    failed = by["refresh_failed"]
    assert (failed["database"], failed["sqlstate"], failed["level"]) == ("dev", "22012", "WARNING")
    statements = [e for e in events if e.get("event") == "statement"]
    assert all(e["duration_ms"] >= 0 and e["pid"] == pid for e in statements)
    texts = [e["message"].split("  ", 1)[1] for e in statements]
    assert "statement: ALTER DATABASE dev PAUSE" in texts
    assert any(t.startswith("execute ") and t.endswith(": SELECT $1::int + 1") for t in texts), texts


def test_text_lines_escape_what_clients_send_and_slow_statements_only():
    srv = start_server("--log-min-duration-statement", "60000")
    try:
        with _conn(srv, EVIL) as c:
            c.execute("ALTER DATABASE dev PAUSE")
            c.execute("ALTER DATABASE dev RESUME")
            c.execute("SELECT 1")
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
    assert not any(line.startswith("2026-01-01") for line in srv.log), "a forged line"
    pause = next(line for line in srv.log if "paused by" in line)
    assert "mallory\\n2026-01-01" in pause and "event=pause" in pause
    assert not any("duration:" in line for line in srv.log), "nothing ran for a minute"


def test_errors_logins_and_state_changes_are_logged_as_postgresql_does(tmp_path):
    """A failed statement is an ERROR line with its SQLSTATE and the statement (PostgreSQL's
    default log_min_error_statement), never a password; a failed login is PostgreSQL's
    line with user, sqlstate and client as fields; RESUME says "resumed" (issue 31)."""
    passwords = tmp_path / "passwords"
    passwords.write_text("root:rootpw\n")
    srv = start_server("--log-format", "json", "--password-file", str(passwords))
    try:
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(host=srv.host, port=srv.port, user="root", password="wrong",
                            dbname="dev", sslmode="disable")
        with psycopg.connect(host=srv.host, port=srv.port, user="root", password="rootpw",
                             dbname="dev", autocommit=True, application_name="logs-test") as c:
            pid = c.info.backend_pid
            with pytest.raises(psycopg.errors.UndefinedTable):
                c.execute("SELECT * FROM no_such_table")
            with pytest.raises(psycopg.Error):
                c.execute("CREATE ROLE r2 PASSWORD 'hunter2' LOGIN NOSUCHOPTION")
            c.execute("ALTER DATABASE dev PAUSE")
            c.execute("ALTER DATABASE dev RESUME")
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
    events = _events(srv)
    assert "hunter2" not in "".join(srv.log)
    login = next(e for e in events if e.get("event") == "auth_failed")
    assert login["message"] == 'password authentication failed for user "root"'
    assert (login["level"], login["user"], login["sqlstate"], login["client"]) == \
        ("ERROR", "root", "28P01", "127.0.0.1")
    errors = [e for e in events if e.get("event") == "error"]
    missing = next(e for e in errors if e["sqlstate"] == "42P01")
    assert missing["level"] == "ERROR" and missing["pid"] == pid and missing["user"] == "root"
    assert missing["message"] == ('relation "no_such_table" does not exist; '
                                  "statement: SELECT * FROM no_such_table")
    role = next(e for e in errors if "CREATE ROLE" in e["message"])
    assert "PASSWORD '***'" in role["message"]
    resume = next(e for e in events if e.get("event") == "resume")
    assert resume["message"] == 'database "dev" resumed by root'
