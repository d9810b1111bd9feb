"""DateStyle and IntervalStyle on DuckDB print as PostgreSQL prints (issue 14 item 1): the
same values through a DuckDB-backed server and straight from PostgreSQL, in every style,
set by SET and at start-up."""

from __future__ import annotations

import os
import subprocess

import psycopg
import pytest

from conftest import require_postgres

#: intervals without months and under a day of time: DuckDB's Python client gives every
#: interval as a timedelta (a month as 30 days, 26 hours as 1 day 2 hours), in every style
VALUES = ("SELECT '2024-01-02 03:04:05.12+00'::timestamptz, '2024-03-04'::date, "
          "'2024-05-06 07:08:09'::timestamp, '3 days 04:05:06.5'::interval, "
          "'-1 day -1 hour'::interval, '0'::interval, '-00:00:01.5'::interval")


def _psql(host: str, port: int, user: str, database: str, *commands: str) -> list[str]:
    """What psql prints for ``commands`` (the server's own text for each value)."""
    args = ["psql", "-X", "-A", "-t", "-h", host, "-p", str(port), "-U", user, "-d", database]
    for sql in commands:
        args += ["-c", sql]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60,
                         env={k: v for k, v in os.environ.items()
                              if k not in ("PGTZ", "PGDATESTYLE", "PGOPTIONS")})
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest.mark.parametrize("datestyle,intervalstyle,zone", [
    ("SQL, MDY", "postgres_verbose", "Asia/Tokyo"),
    ("SQL, DMY", "sql_standard", "UTC"),
    ("Postgres, MDY", "iso_8601", "America/Sao_Paulo"),
    ("Postgres, DMY", "postgres", "Europe/Berlin"),
    ("German", "sql_standard", "Asia/Kolkata"),
    ("ISO, YMD", "postgres_verbose", "UTC"),
])
def test_styles_print_as_postgresql_prints_them(server, datestyle, intervalstyle, zone):
    commands = (f"SET TimeZone = '{zone}'", f"SET DateStyle = '{datestyle}'",
                f"SET IntervalStyle = {intervalstyle}", VALUES, "SHOW DateStyle")
    info = psycopg.conninfo.conninfo_to_dict(require_postgres())
    direct = _psql(info.get("host", "127.0.0.1"), int(info.get("port", 5432)),
                   info.get("user", "postgres"), info.get("dbname", "postgres"), *commands)
    assert _psql(server.host, server.port, "root", "dev", *commands) == direct


def test_a_style_keeps_the_half_not_given_and_bad_values_are_postgresqls(server):
    with psycopg.connect(server.dsn(), autocommit=True) as c:
        c.execute("SET DateStyle = 'SQL, DMY'")
        c.execute("SET DateStyle = Postgres")
        assert c.execute("SHOW DateStyle").fetchone() == ("Postgres, DMY",)
        c.execute("SET DateStyle = 'US'")
        assert c.execute("SHOW DateStyle").fetchone() == ("Postgres, MDY",)
        with pytest.raises(psycopg.errors.InvalidParameterValue) as bad:
            c.execute("SET DateStyle = 'SQL, German'")
        assert bad.value.diag.message_detail == 'Conflicting "datestyle" specifications.'
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            c.execute("SET IntervalStyle = nope")
        c.execute("RESET DateStyle")
        assert c.execute("SHOW DateStyle").fetchone() == ("ISO, MDY",)


def test_pgdatestyle_at_start_up_applies(server):
    env = {**os.environ, "PGDATESTYLE": "German", "PGTZ": "Asia/Tokyo",
           "PGOPTIONS": "-c IntervalStyle=iso_8601"}
    out = subprocess.run(["psql", "-X", "-A", "-t", "-h", server.host, "-p", str(server.port),
                          "-U", "root", "-d", "dev", "-c", "SHOW DateStyle",
                          "-c", "SELECT '2024-01-02 03:04:05+00'::timestamptz, "
                                "'3 days'::interval"],
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["German, DMY", "02.01.2024 12:04:05 JST|P3D"]
