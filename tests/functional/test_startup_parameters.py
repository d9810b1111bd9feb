"""Start-up parameters applied as PostgreSQL applies them: real psql, psycopg and asyncpg.

Upstream (``--upstream`` the PostgreSQL on 127.0.0.1:5432, a fresh database dropped
afterwards; skipped when it is unreachable, failing under CI=true): the client's start-up
parameters (``PGTZ``, ``PGDATESTYLE``, ``PGOPTIONS``, ``PGCLIENTENCODING``, ``PGAPPNAME``,
psycopg's ``options``, asyncpg's explicit ``server_settings``) are the upstream login's,
so every ``SHOW`` answers as a direct connection to the same database with the same
parameters does, the ParameterStatus values are the upstream's own (``server_version``
included), a bad value is PostgreSQL's own FATAL with its SQLSTATE, and a LATIN1 client's
text goes through the relay unconverted by pgbarrier. DuckDB: TimeZone, search_path,
statement_timeout, application_name and extra_float_digits from start-up answer as
PostgreSQL does; a LATIN1 client's text is converted by pgbarrier as PostgreSQL converts it;
a client_encoding PostgreSQL does not know, or a DateStyle pgbarrier cannot honour, is FATAL
22023, and an encoding pgbarrier cannot convert (EUC_TW...) PostgreSQL's FATAL 0A000.
Answers are compared with the direct PostgreSQL's, not hard-coded, where one exists.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import asyncpg
import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict

from conftest import ServerProcess, require_postgres, start_server, stop_server

SHOWN = ("timezone", "datestyle", "search_path", "statement_timeout", "client_encoding",
         "application_name", "extra_float_digits", "intervalstyle", "server_version")
#: what PostgreSQL 15 reports with ParameterStatus at start-up
REPORTED = ("application_name", "client_encoding", "DateStyle", "default_transaction_read_only",
            "in_hot_standby", "integer_datetimes", "IntervalStyle", "is_superuser",
            "server_encoding", "server_version", "session_authorization",
            "standard_conforming_strings", "TimeZone")
ENV = {"PGTZ": "Asia/Tokyo", "PGDATESTYLE": "German",
       "PGOPTIONS": r"-c search_path=pg_catalog,\ public -c statement_timeout=1234 "
                    "--extra-float-digits=2",
       "PGAPPNAME": "startup-test"}


@dataclass
class Endpoint:
    host: str
    port: int
    database: str
    user: str = "root"

    def psql(self, *args: str, env: dict[str, str] | None = None,
             input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        clean = {k: v for k, v in os.environ.items()
                 if not k.startswith("PG") or k in ("PGPASSFILE",)}
        cmd = ["psql", "-X", "-At", "-h", self.host, "-p", str(self.port), "-U", self.user,
               "-d", self.database, *args]
        return subprocess.run(cmd, input=input, capture_output=True, timeout=60,
                              env={**clean, "PGCONNECT_TIMEOUT": "10", **(env or {})})

    def show(self, env: dict[str, str]) -> list[str]:
        args = [a for name in SHOWN for a in ("-c", f"SHOW {name}")]
        done = self.psql(*args, env=env)
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout.decode().splitlines()

    def connect(self, **kw) -> psycopg.Connection:
        return psycopg.connect(host=self.host, port=self.port, user=self.user,
                               dbname=self.database, autocommit=True, **kw)

    def asyncpg_error(self, **kw) -> BaseException:
        async def go() -> BaseException:
            try:
                conn = await asyncpg.connect(host=self.host, port=self.port, user=self.user,
                                             database=self.database, ssl=False, **kw)
            except Exception as exc:  # noqa: BLE001 - the start-up error is the answer
                return exc
            await conn.close()
            raise AssertionError(f"connected with {kw}")
        return asyncio.run(go())

    def asyncpg_show(self, names: tuple[str, ...], **kw) -> list[str]:
        async def go() -> list[str]:
            conn = await asyncpg.connect(host=self.host, port=self.port, user=self.user,
                                         database=self.database, ssl=False, **kw)
            try:
                return [await conn.fetchval(f"SHOW {n}") for n in names]
            finally:
                await conn.close()
        return asyncio.run(go())


@dataclass
class Pair:
    server: ServerProcess
    via: Endpoint
    direct: Endpoint


@pytest.fixture(scope="module")
def upstream() -> Iterator[Pair]:
    dsn = require_postgres()
    info = conninfo_to_dict(dsn)
    database = f"pgb_startup_{uuid.uuid4().hex[:10]}"
    srv = start_server("--database", database, "--upstream", dsn.rsplit("/", 1)[0] + "/")
    try:
        yield Pair(srv, Endpoint(srv.host, srv.port, database),
                   Endpoint(info.get("host") or "127.0.0.1", int(info.get("port") or 5432),
                            database))
    finally:
        code = stop_server(srv)
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    assert code == 0, "server did not exit cleanly:\n" + "".join(srv.log)


@pytest.fixture(scope="module")
def duck() -> Iterator[Pair]:
    dsn = require_postgres()
    info = conninfo_to_dict(dsn)
    srv = start_server()
    try:
        yield Pair(srv, Endpoint(srv.host, srv.port, "dev"),
                   Endpoint(info.get("host") or "127.0.0.1", int(info.get("port") or 5432),
                            info.get("dbname") or "postgres", info.get("user") or "postgres"))
    finally:
        code = stop_server(srv)
    assert code == 0, "server did not exit cleanly:\n" + "".join(srv.log)


# --------------------------------------------------------------------------- upstream


def test_psql_environment_is_applied_upstream_as_postgresql_applies_it(upstream):
    through = upstream.via.show(ENV)
    assert through == upstream.direct.show(ENV)
    assert through[:4] == ["Asia/Tokyo", "German, DMY", "pg_catalog, public", "1234ms"]


def test_without_start_up_parameters_the_upstream_defaults_answer(upstream):
    assert upstream.via.show({}) == upstream.direct.show({})


def test_latin1_client_encoding_is_the_upstreams_and_its_text_is_converted_there(upstream):
    env = {"PGCLIENTENCODING": "LATIN1"}
    script = "SHOW client_encoding;\nSELECT 'caf\xe9', length('caf\xe9');\n".encode("latin-1")
    through = upstream.via.psql(env=env, input=script)
    direct = upstream.direct.psql(env=env, input=script)
    assert through.returncode == 0, through.stderr.decode("latin-1")
    assert through.stdout == direct.stdout == "LATIN1\ncaf\xe9|4\n".encode("latin-1")


def test_latin1_non_ascii_own_statement_is_refused_not_mistranslated(upstream):
    env = {"PGCLIENTENCODING": "LATIN1"}
    script = "SELECT 'caf\xe9' FROM rw_catalog.rw_databases LIMIT 1;\n".encode("latin-1")
    done = upstream.via.psql("-v", "VERBOSITY=verbose", env=env, input=script)
    assert b"0A000" in done.stderr and b'client_encoding "LATIN1"' in done.stderr


def test_psycopg_options_and_parameter_status_are_the_upstreams(upstream):
    opts = r"-c search_path=pg_catalog -c TimeZone=America/New_York -c IntervalStyle=iso_8601"
    with upstream.via.connect(options=opts, application_name="ps") as via, \
            upstream.direct.connect(options=opts, application_name="ps") as direct:
        for name in ("search_path", "TimeZone", "IntervalStyle", "application_name"):
            assert via.execute(f"SHOW {name}").fetchone() == \
                direct.execute(f"SHOW {name}").fetchone(), name
        for name in REPORTED:
            assert via.info.parameter_status(name) == direct.info.parameter_status(name), name
        version = direct.execute("SHOW server_version").fetchone()[0]
        assert via.info.parameter_status("server_version") == version
        assert via.info.parameter_status("TimeZone") == "America/New_York"


def test_explicit_start_up_parameters_win_over_options(upstream):
    # what pgjdbc does: TimeZone as a start-up parameter of its own
    kw = {"server_settings": {"options": "-c search_path=public -c TimeZone=UTC",
                              "search_path": "pg_catalog", "TimeZone": "Europe/Paris"}}
    names = ("search_path", "timezone")
    assert upstream.via.asyncpg_show(names, **kw) == upstream.direct.asyncpg_show(names, **kw) \
        == ["pg_catalog", "Europe/Paris"]


@pytest.mark.parametrize("settings", [
    {"options": "-c statement_timeout=abc"},
    {"statement_timeout": "abc"},
    {"DateStyle": "nonsense"},
    {"options": "-c search_path"},
    {"options": "-c no_such_setting=1"},
    {"options": "-c server_version=1"},
], ids=["options", "explicit", "datestyle", "no-value", "unknown", "read-only"])
def test_a_bad_value_is_postgresqls_own_fatal(upstream, settings):
    via = upstream.via.asyncpg_error(server_settings=settings)
    direct = upstream.direct.asyncpg_error(server_settings=settings)
    assert isinstance(via, asyncpg.PostgresError), via
    assert (type(via), via.sqlstate, via.severity, str(via), via.detail) == \
        (type(direct), direct.sqlstate, direct.severity, str(direct), direct.detail)


def test_idle_timeouts_from_start_up_stay_pgbarriers(upstream):
    opts = "-c idle_session_timeout=5min -c lock_timeout=2s"
    with upstream.via.connect(options=opts) as via:
        assert via.execute("SHOW idle_session_timeout").fetchone() == ("5min",)
        assert via.execute("SHOW lock_timeout").fetchone() == ("2s",)
        upstream_own = via.execute("SELECT setting FROM pg_settings WHERE name IN "
                                   "('idle_session_timeout', 'lock_timeout') ORDER BY name")
        assert upstream_own.fetchall() == [("0",), ("2000",)]  # the idle one is not sent


# --------------------------------------------------------------------------- DuckDB


def test_duckdb_takes_start_up_settings_as_set_would(duck):
    env = {k: v for k, v in ENV.items() if k != "PGDATESTYLE"}
    through = duck.via.show(env)
    direct = duck.direct.show(env)
    # timezone, search_path, statement_timeout, application_name, extra_float_digits
    for i in (0, 2, 3, 5, 6):
        assert through[i] == direct[i], SHOWN[i]
    with duck.via.connect(options="-c TimeZone=Asia/Tokyo") as conn:
        assert conn.info.parameter_status("TimeZone") == "Asia/Tokyo"
        assert conn.execute("SELECT '2026-01-01 00:00:00+00'::timestamptz::text").fetchone() \
            == ("2026-01-01 09:00:00+09",)


@pytest.mark.parametrize("settings", [
    {"client_encoding": "no_such_encoding"},
    {"DateStyle": "SQL, German"},
    {"options": "-c statement_timeout=abc"},
])
def test_duckdb_refuses_what_it_cannot_honour_with_postgresqls_fatal(duck, settings):
    err = duck.via.asyncpg_error(server_settings=settings)
    assert isinstance(err, asyncpg.PostgresError), err
    assert (err.sqlstate, err.severity) == ("22023", "FATAL")
    name, value = next(iter(settings.items()))
    if name == "options":
        name, value = value.split(" ", 1)[1].split("=")
    assert err.message == f'invalid value for parameter "{name}": "{value}"'


def test_duckdb_takes_a_latin1_client_as_postgresql_does(duck):
    env = {"PGCLIENTENCODING": "LATIN1"}
    script = "SHOW client_encoding;\nSELECT 'caf\xe9', length('caf\xe9');\n".encode("latin-1")
    through = duck.via.psql(env=env, input=script)
    direct = duck.direct.psql(env=env, input=script)
    assert through.returncode == 0, through.stderr.decode("latin-1")
    assert through.stdout == direct.stdout == "LATIN1\ncaf\xe9|4\n".encode("latin-1")


@pytest.mark.parametrize("encoding, sqlstate, message", [
    ("MULE_INTERNAL", "0A000", "conversion between MULE_INTERNAL and UTF8 is not supported"),
    # PostgreSQL converts EUC_TW; Python has no codec for it: refused in PostgreSQL's words
    ("EUC_TW", "0A000", "conversion between EUC_TW and UTF8 is not supported"),
])
def test_duckdb_refuses_an_encoding_it_cannot_convert_with_postgresqls_fatal(duck, encoding,
                                                                              sqlstate, message):
    done = duck.via.psql("-c", "SELECT 1", env={"PGCLIENTENCODING": encoding})
    assert done.returncode != 0
    assert f"FATAL:  {message}".encode() in done.stderr
    if encoding == "MULE_INTERNAL":
        direct = duck.direct.psql("-c", "SELECT 1", env={"PGCLIENTENCODING": encoding})
        assert f"FATAL:  {message}".encode() in direct.stderr


def test_duckdb_reset_goes_back_to_the_start_up_values_as_postgresql(duck):
    env = {"PGTZ": "Asia/Tokyo", "PGAPPNAME": "first", "PGCLIENTENCODING": "LATIN1",
           "PGOPTIONS": "-c search_path=pg_catalog,public -c extra_float_digits=2"}
    args = []
    for sql in ("SET TimeZone = 'UTC'", "SET application_name = 'second'",
                "SET search_path = public", "SET client_encoding = 'WIN1252'",
                "RESET TimeZone", "SHOW TimeZone", "SET TimeZone = DEFAULT", "SHOW TimeZone",
                "RESET client_encoding", "SHOW client_encoding",
                "SET client_encoding = 'WIN1252'", "SET TimeZone = 'UTC'", "RESET ALL",
                "SHOW TimeZone", "SHOW application_name", "SHOW search_path",
                "SHOW extra_float_digits", "SHOW client_encoding",
                "SELECT '2026-01-01 00:00:00+00'::timestamptz", "SET application_name = 'x'",
                "DISCARD ALL", "SHOW application_name"):
        args += ["-c", sql]
    through = duck.via.psql(*args, env=env)
    assert through.returncode == 0, through.stderr.decode()
    assert through.stdout == duck.direct.psql(*args, env=env).stdout
    assert b"RESET\nAsia/Tokyo\nfirst\npg_catalog,public\n2\nLATIN1\n" in through.stdout
