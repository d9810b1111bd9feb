"""Batch-refresh create latency (issue 7, item 4): how long CREATE MATERIALIZED VIEW ... WITH
(refresh.interval.sec = N) takes to return, through psycopg.

For each backend (the embedded DuckDB, and the upstream PostgreSQL when it is reachable)
it starts ``pgbarrier serve`` (port 0, 1 s barrier interval), creates a ``--rows``-row
table, then times ``--views`` creates of

    CREATE MATERIALIZED VIEW mv_i WITH (refresh.interval.sec = 3600) AS
        SELECT k % 10 AS region, count(*) AS n, sum(v) AS total FROM facts GROUP BY 1

one at a time (each returns once its create barrier is collected and its first snapshot is
in place), and prints median, p99 and worst in milliseconds.

    .venv/bin/python bench/create_latency.py [--views 50] [--rows 10000] [--json PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

UPSTREAM = "postgresql://postgres@127.0.0.1:5432/"
QUERY = "SELECT k % 10 AS region, count(*) AS n, sum(v) AS total FROM facts GROUP BY 1"


def measure(backend: str, views: int, rows: int, interval_ms: int) -> dict[str, Any]:
    import psycopg

    database = "dev"
    args = ["--barrier-interval-ms", str(interval_ms)]
    if backend == "postgres":
        database = f"bench_create_{uuid.uuid4().hex[:8]}"
        args += ["--upstream", UPSTREAM, "--database", database]
    srv = c.start_pgbarrier(*args)
    try:
        with psycopg.connect(f"host={srv.host} port={srv.port} user=root dbname={database}",
                             autocommit=True) as conn:
            if backend == "postgres":
                conn.execute("CREATE TABLE facts AS SELECT g AS k, g * 2 AS v "
                             f"FROM generate_series(1, {rows}) g")
            else:
                conn.execute(f"CREATE TABLE facts AS SELECT range AS k, range * 2 AS v "
                             f"FROM range({rows})")
            samples = []
            for i in range(views):
                t0 = time.perf_counter()
                conn.execute(f"CREATE MATERIALIZED VIEW mv_{i} WITH (refresh.interval.sec = 3600) "
                             f"AS {QUERY}")
                samples.append((time.perf_counter() - t0) * 1000)
            for i in range(views):
                conn.execute(f"DROP MATERIALIZED VIEW mv_{i}")
    finally:
        srv.stop()
        if backend == "postgres":
            with psycopg.connect(c.POSTGRES_DSN, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
    samples.sort()
    return {"backend": backend, "n": len(samples), "median_ms": statistics.median(samples),
            "p99_ms": c.percentile(samples, 99), "worst_ms": samples[-1], "best_ms": samples[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--views", type=int, default=50)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--barrier-interval-ms", type=int, default=1000)
    ap.add_argument("--backends", default="duckdb,postgres")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    result: dict[str, Any] = {"benchmark": "create_latency", "loadavg_start": c.loadavg(),
                              "params": {"views": args.views, "rows": args.rows,
                                         "barrier_interval_ms": args.barrier_interval_ms,
                                         "query": QUERY, "refresh_interval_sec": 3600},
                              "backends": []}
    for backend in args.backends.split(","):
        if backend == "postgres":
            why = c.postgres_reachable()
            if why:
                result["backends"].append({"backend": backend, "skipped": why})
                print(f"create latency ({backend}): skipped: {why}")
                continue
        r = measure(backend, args.views, args.rows, args.barrier_interval_ms)
        result["backends"].append(r)
        print(f"batch-refresh create latency ({backend}): n={r['n']} "
              f"median={r['median_ms']:.2f}ms p99={r['p99_ms']:.2f}ms worst={r['worst_ms']:.2f}ms")
    c.write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
