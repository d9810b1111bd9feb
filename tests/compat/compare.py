"""psql scripts run on PostgreSQL 15 and on pgbarrier's embedded DuckDB, outputs compared.

Issue 26's check, made runnable: each ``tests/compat/*.sql`` script is what a person types
into psql (DDL, data, errors), and it must print the same through pgbarrier's default
backend as against PostgreSQL itself. Rules:

* Each script runs as ``psql -X -a -q -v ON_ERROR_STOP=0`` with ``VERBOSITY verbose`` (so
  every error shows its SQLSTATE, DETAIL, HINT and caret), in a fresh database of its own
  on each side: on PostgreSQL ``pgb_compat_<random>`` (dropped afterwards), on pgbarrier a
  ``CREATE DATABASE`` of the same kind of name. Both sides run with ``PGTZ=UTC``.
* Lines that cannot be the same are dropped on both sides before comparing: psql's
  ``LOCATION:`` line (PostgreSQL's C source file and line). Nothing else is normalised:
  a difference is a difference.
* A statement whose answer pgbarrier knowingly gives differently (README's list of
  differences) does not belong in a script: the scripts hold what must be the same.

    .venv/bin/python tests/compat/compare.py [--port PORT] [script ...]

against a running ``pgbarrier serve`` (DuckDB) prints ``same`` or the diff per script.
"""

from __future__ import annotations

import argparse
import difflib
import os
import pathlib
import re
import subprocess
import sys
import uuid

HERE = pathlib.Path(__file__).resolve().parent
UPSTREAM_HOST, UPSTREAM_PORT = "127.0.0.1", 5432
PSQL_TIMEOUT_S = 120
_LOCATION = re.compile(r"^LOCATION:  .*\n", re.M)


def scripts() -> list[str]:
    return sorted(p.stem for p in HERE.glob("*.sql"))


def run_psql(host: str, port: int, user: str, database: str, script: str) -> str:
    env = {**os.environ, "PGTZ": "UTC", "PGOPTIONS": "", "PGAPPNAME": "compat",
           "PGCLIENTENCODING": "UTF8", "PGCONNECT_TIMEOUT": "10"}
    env.pop("PGDATESTYLE", None)
    proc = subprocess.run(
        ["psql", "-X", "-a", "-q", "-h", host, "-p", str(port), "-U", user, "-d", database,
         "-v", "ON_ERROR_STOP=0", "-v", "VERBOSITY=verbose", "-f", str(HERE / f"{script}.sql")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=PSQL_TIMEOUT_S,
        env=env)
    out = proc.stdout
    return _LOCATION.sub("", out.replace(str(HERE) + "/", ""))


def _admin(host: str, port: int, user: str, database: str, sql: str) -> None:
    subprocess.run(["psql", "-X", "-q", "-h", host, "-p", str(port), "-U", user, "-d", database,
                    "-v", "ON_ERROR_STOP=1", "-c", sql], check=True, capture_output=True,
                   text=True, timeout=PSQL_TIMEOUT_S)


def compare(script: str, port: int, host: str = "127.0.0.1") -> tuple[str, str]:
    """(PostgreSQL's output, pgbarrier's) of ``script``, each in a fresh database."""
    name = f"pgb_compat_{uuid.uuid4().hex[:8]}"
    _admin(UPSTREAM_HOST, UPSTREAM_PORT, "postgres", "postgres", f"CREATE DATABASE {name}")
    try:
        expected = run_psql(UPSTREAM_HOST, UPSTREAM_PORT, "postgres", name, script)
    finally:
        _admin(UPSTREAM_HOST, UPSTREAM_PORT, "postgres", "postgres",
               f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    _admin(host, port, "root", "dev", f"CREATE DATABASE {name}")
    try:
        got = run_psql(host, port, "root", name, script)
    finally:
        _admin(host, port, "root", "dev", f"DROP DATABASE IF EXISTS {name}")
    return expected, got


def diff(expected: str, got: str, script: str) -> str:
    return "".join(difflib.unified_diff(expected.splitlines(True), got.splitlines(True),
                                        f"{script} (PostgreSQL)", f"{script} (pgbarrier)"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=4566)
    parser.add_argument("script", nargs="*")
    args = parser.parse_args()
    failed = 0
    for script in args.script or scripts():
        expected, got = compare(script, args.port)
        if expected == got:
            print(f"{script}: same")
        else:
            failed += 1
            print(diff(expected, got, script))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
