"""Embedded DuckDB: pgbarrier against buenavista 0.5.0 over DuckDB (issue 7, item 3).

Both servers hold an in-memory DuckDB with the same table, ``bench_rows``: ``--rows``
rows (10,000) of mixed types (integer, bigint, double, text, date, timestamp, boolean,
numeric(12,2)), made by the same SQL (:data:`INIT_SQL`). pgbarrier runs on pgbarrier's
DuckDB (``pgbarrier serve --data-dir :memory:``, database ``dev``); buenavista runs its
own example server (``buenavista.examples.duckdb_postgres``) on the newest DuckDB it
supports (``bench/baseline-requirements.txt``), in its own venv.

Cells: pgbench custom scripts ``SELECT 1`` and ``SELECT <all columns> FROM bench_rows``,
``-M simple`` and ``-M extended``, 1 and 4 clients; rounds interleaved (target order
rotating), median tps per cell, and pgbarrier/buenavista ratios.

    .venv/bin/python bench/duckdb_compare.py [--seconds 2] [--rounds 3] [--rows 10000] [--json PATH]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

TARGETS = ["pgbarrier", "buenavista"]
COLUMNS = "i, b, d, t, dt, ts, flag, n"


def init_sql(rows: int) -> str:
    """DuckDB SQL for the mixed-type table (run the same on both servers)."""
    return ("CREATE TABLE bench_rows AS SELECT i::INTEGER AS i, (i * 1000003)::BIGINT AS b, "
            "(i / 7.0)::DOUBLE AS d, 'row ' || i AS t, DATE '2024-01-01' + (i % 365)::INTEGER AS dt, "
            "TIMESTAMP '2024-01-01' + to_seconds(i) AS ts, i % 2 = 0 AS flag, "
            f"(i / 100.0)::DECIMAL(12,2) AS n FROM range({int(rows)}) r(i)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    c.add_pgbench_args(ap)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--clients", default="1,4")
    ap.add_argument("--modes", default="simple,extended")
    ap.add_argument("--json", default=None)
    args = c.parse_pgbench_args(ap, argv)
    clients = [int(x) for x in args.clients.split(",")]
    modes = args.modes.split(",")
    queries = {"select1": "SELECT 1;\n",
               "rows": f"SELECT {COLUMNS} FROM bench_rows;\n"}
    result: dict[str, Any] = {
        "benchmark": "duckdb", "loadavg_start": c.loadavg(),
        "params": {"seconds": args.seconds, "seconds_one_client": args.seconds_one_client,
                   "transactions": args.transactions,
                   "rounds": args.rounds, "rows": args.rows, "clients": clients,
                   "modes": modes, "queries": queries, "init_sql": init_sql(args.rows)},
        "targets": {}, "cells": [], "pgbench": c.pgbench_version()}
    why = c.pgbench_missing()
    if why:
        result["skipped"] = why
        print(f"duckdb: skipped: {why}")
        c.write_json(args.json, result)
        return 0

    t0 = time.monotonic()
    targets: dict[str, tuple[str, int, str, str]] = {}  # name -> host, port, user, database
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-duck-") as tmp:
        files = {}
        for name, text in queries.items():
            files[name] = Path(tmp) / f"{name}.sql"
            files[name].write_text(text)

        started = c.start_all({
            "pgbarrier": c.start_pgbarrier,
            "buenavista": lambda: c.start_baseline("duckdb", "--init-sql", init_sql(args.rows))})
        for srv_, _ in started.values():
            if srv_ is not None:
                stack.callback(srv_.stop)
        srv, err = started["pgbarrier"]
        if srv is None:
            raise RuntimeError(f"pgbarrier did not start: {err}")
        import psycopg

        with psycopg.connect(f"host={srv.host} port={srv.port} user=root dbname=dev",
                             autocommit=True) as conn:
            conn.execute(init_sql(args.rows))
            duck = conn.execute("SELECT version()").fetchone()[0]
        targets["pgbarrier"] = (srv.host, srv.port, "root", "dev")
        pids = {"pgbarrier": srv.proc.pid}
        result["targets"]["pgbarrier"] = {"status": "ok", "version": duck}
        bv, err = started["buenavista"]
        if bv is None:
            result["targets"]["buenavista"] = {"status": f"skipped: {err}"}
            print(f"duckdb: buenavista: skipped: {err}", file=sys.stderr)
        else:
            targets["buenavista"] = (bv.host, bv.port, "root", "memory")
            pids["buenavista"] = bv.proc.pid
            result["targets"]["buenavista"] = {"status": "ok",
                                               "version": f"buenavista 0.5.0 on {_bv_duckdb()}"}

        order = [t for t in TARGETS if t in targets]
        runs: dict[tuple[str, str, int, str], list[c.PgbenchRun]] = {}
        for rnd in range(args.rounds):
            for query in queries:
                for mode in modes:
                    for n in clients:
                        for target in c.rotate(order, rnd):
                            host, port, user, db = targets[target]
                            run = c.run_pgbench(host, port, user, db, mode=mode, clients=n,
                                                seconds=args.seconds if n > 1
                                                else args.seconds_one_client,
                                                transactions=args.transactions,
                                                script=files[query],
                                                server_pid=pids.get(target))
                            runs.setdefault((query, mode, n, target), []).append(run)
                            shown = f"{run.tps:.1f} tps" if run.tps is not None else run.error
                            print(f"round {rnd + 1} {query:8} {mode:8} c={n} {target:10} {shown}",
                                  flush=True)
        for (query, mode, n, target), rs in runs.items():
            result["cells"].append({"query": query, "mode": mode, "clients": n, "target": target,
                                    **c.summarise_runs(rs)})
    result["seconds_total"] = round(time.monotonic() - t0, 1)
    c.write_json(args.json, result)
    cells = {(x["query"], x["mode"], x["clients"], x["target"]): x["median"]
             for x in result["cells"]}
    for key in sorted({k[:3] for k in cells}):
        a, b = cells.get((*key, "pgbarrier")), cells.get((*key, "buenavista"))
        ratio = f" ratio={a / b:.2f}" if a and b else ""
        print(f"duckdb {key[0]} {key[1]} c={key[2]}: pgbarrier={a} buenavista={b}{ratio}")
    return 0


def _bv_duckdb() -> str:
    import subprocess

    out = subprocess.run([str(c.BASELINE_PY), "-c", "import duckdb; print(duckdb.__version__)"],
                         capture_output=True, text=True, timeout=60)
    return f"DuckDB {out.stdout.strip() or '?'}"


if __name__ == "__main__":
    raise SystemExit(main())
