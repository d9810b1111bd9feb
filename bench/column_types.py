"""Rows per second of one column of each type, pgbarrier's DuckDB beside PostgreSQL (issue 27).

``result_rows.py`` measures the issue's eight mixed columns together; a type whose values
the columnar result path could not write a column at a time hides there behind the
others. Here each type is a result of its own: one table ``ct`` of ``--rows`` rows with
one column per type (:data:`COLUMNS`, made by one ``CREATE TABLE ct AS SELECT ... FROM
generate_series(1, N)`` sent as it is to each side), and each cell reads ``SELECT "<type>"
FROM ct`` whole on a fresh connection (and ``timestamptz`` again in two sessions whose
TimeZone is set at start-up, :data:`ZONED`), with the two wire clients of ``result_rows.py``:

* ``psycopg_text``: psycopg, text format, ``fetchall()``;
* ``asyncpg_binary``: asyncpg, binary format (text where asyncpg has no binary codec),
  ``fetch()``.

Targets: ``pgbarrier serve --data-dir <temporary directory>`` (embedded DuckDB) and a fresh
database on the PostgreSQL at ``PGBARRIER_BENCH_POSTGRES``. Rounds are interleaved (every
type, client and target in turn, the target order rotating each round); a cell's figure
is rows / wall seconds, the median of its rounds, and the ratio is pgbarrier's over
PostgreSQL's. The first round compares the answers (the driver's Python values, an
order-independent hash) with PostgreSQL's and records any difference.

    .venv/bin/python bench/column_types.py [--rows 200000] [--rounds 3] [--json PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402
import result_rows as rr  # noqa: E402

#: column name -> its expression over ``i`` (1..N), in SQL both sides run as it is
COLUMNS = {
    "int2": "(i % 30000)::smallint",
    "int4": "i::integer",
    "int8": "i::bigint * 1000003",
    "float4": "(i / 7.0)::real",
    "float8": "i / 3.0::double precision",
    "numeric(12,2)": "(i / 7.0)::numeric(12,2)",
    "numeric(30,8)": "(i / 7.0)::numeric(30,8)",
    "bool": "i % 2 = 0",
    "text": "'row ' || i::text",
    "varchar(20)": "('v' || i::text)::varchar(20)",
    "char(10)": "('c' || i::text)::char(10)",
    "bytea": "md5(i::text)::bytea",
    "uuid": "md5(i::text)::uuid",
    "date": "DATE '2000-01-01' + (i % 20000)::integer",
    "time": "TIME '00:00' + (i % 86400) * INTERVAL '1 second'",
    "timestamp": "TIMESTAMP '2000-01-01' + i * INTERVAL '1 second'",
    "timestamptz": "TIMESTAMPTZ '2020-01-01 00:00:00+00' + i * INTERVAL '1 second'",
    "interval": "i * INTERVAL '1 minute 1.5 seconds' - INTERVAL '1 month'",
    "json": "('{\"a\": ' || i::text || ', \"b\": [1, 2]}')::json",
    "jsonb": "('{\"a\": ' || i::text || ', \"b\": \"x\"}')::jsonb",
    "int4[]": "ARRAY[i, NULL, i + 2]::integer[]",
    "text[]": "ARRAY['a' || i::text, NULL, 'b c']::text[]",
}
#: more cells: a label -> (the column read, the session's TimeZone); timestamps with time
#: zone print in the session's zone, and pgjdbc sets the JVM's at start-up
ZONED = {"timestamptz, TimeZone Europe/Berlin": ("timestamptz", "Europe/Berlin"),
         "timestamptz, TimeZone America/St_Johns": ("timestamptz", "America/St_Johns")}
CLIENTS = ["psycopg_text", "asyncpg_binary"]
TARGETS = ["pgbarrier", "postgresql"]


def load_sql(rows: int) -> str:
    cols = ", ".join(f'{expr} AS "{name}"' for name, expr in COLUMNS.items())
    return f"CREATE TABLE ct AS SELECT {cols} FROM generate_series(1, {int(rows)}) AS g(i)"


def _load(ep: rr.Endpoint, rows: int, postgres: bool) -> None:
    import psycopg

    with psycopg.connect(ep.conninfo(), autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS ct")
        conn.execute(load_sql(rows))
        if postgres:
            conn.execute("VACUUM (FREEZE, ANALYZE) ct")


def _cell(client: str, ep: rr.Endpoint, column: str, timeout_s: float, keep: bool) -> rr.Run:
    if column in ZONED:
        column, zone = ZONED[column]
        ep = dataclasses.replace(ep, time_zone=zone)
    query = f'SELECT "{column}" FROM ct'
    try:
        if client == "psycopg_text":
            return rr.psycopg_text(ep, timeout_s, keep, query)
        return rr.asyncpg_binary(ep, timeout_s, keep, query)
    except Exception as exc:  # noqa: BLE001 - recorded in the cell
        return rr.Run(error=f"{type(exc).__name__}: {exc}"[:300])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=200000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cell-timeout", type=float, default=300)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    result: dict[str, Any] = {"benchmark": "column_types", "loadavg_start": c.loadavg(),
                              "params": {"rows": args.rows, "rounds": args.rounds,
                                         "columns": COLUMNS}, "cells": []}
    why = c.postgres_reachable()
    if why:
        result["skipped"] = why
        print(f"column_types: skipped: {why}")
        c.write_json(args.json, result)
        return 0
    signal.signal(signal.SIGTERM, rr._on_term)
    t0 = time.monotonic()
    srv: c.Server | None = None
    dbname: str | None = None
    data = tempfile.TemporaryDirectory(prefix="bench-types-data-")
    try:
        dbname = rr._create_database()
        srv = c.start_pgbarrier("--data-dir", data.name)
        pg_host, pg_port = rr._pg_address()
        endpoints = {"pgbarrier": rr.Endpoint(srv.host, srv.port, "root", "dev", srv.proc.pid),
                     "postgresql": rr.Endpoint(pg_host, pg_port, "postgres", dbname)}
        for name, ep in endpoints.items():
            _load(ep, args.rows, name == "postgresql")
        runs: dict[tuple[str, str, str], list[rr.Run]] = {}
        for rnd in range(args.rounds):
            for column in [*COLUMNS, *ZONED]:
                for client in CLIENTS:
                    for target in c.rotate(TARGETS, rnd):
                        run = _cell(client, endpoints[target], column, args.cell_timeout,
                                    keep=rnd == 0)
                        runs.setdefault((column, client, target), []).append(run)
            print(f"column_types: round {rnd + 1} done", flush=True)
        for column in [*COLUMNS, *ZONED]:
            for client in CLIENTS:
                cell: dict[str, Any] = {"column": column, "client": client}
                for target in TARGETS:
                    got = [r for r in runs[(column, client, target)] if r.error is None]
                    cell[target] = {
                        "rows_per_s": statistics.median(r.rows / r.seconds for r in got)
                        if got else None,
                        "error": next((r.error for r in runs[(column, client, target)]
                                       if r.error), None)}
                a, b = cell["pgbarrier"]["rows_per_s"], cell["postgresql"]["rows_per_s"]
                cell["ratio"] = a / b if a and b else None
                first = [runs[(column, client, t)][0] for t in TARGETS]
                cell["same_answers"] = (first[0].fingerprint == first[1].fingerprint
                                        if all(f.fingerprint for f in first) else None)
                result["cells"].append(cell)
                ratio = f"{cell['ratio']:.2f}" if cell["ratio"] else "-"
                print(f"column_types {column:38} {client:15} pgbarrier/PostgreSQL {ratio}"
                      f"{'' if cell['same_answers'] is not False else ' (answers differ)'}",
                      flush=True)
    except rr._Stop as exc:
        result["stopped"] = str(exc)
    finally:
        if srv is not None:
            srv.stop()
        if dbname is not None:
            rr._drop_database(dbname)
        data.cleanup()
    result["seconds"] = time.monotonic() - t0
    c.write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
