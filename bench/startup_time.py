"""Start-up time with many databases and batch-refresh jobs recorded in the meta store.

For each meta store (SQLite in the data dir, and PostgreSQL when it is reachable: a
fresh database on it, dropped afterwards) this builds the state the way a user
would, through the wire: a real ``pgbarrier serve`` on DuckDB gets ``--databases``
``CREATE DATABASE`` statements, and in each database a table and ``--jobs-per-db``
batch-refresh views (``refresh.interval.sec = 3600``, so no refresh runs while
start-up is measured); then the server is stopped with SIGTERM. It then starts
the server ``--rounds`` times on that state and measures the wall time from
launching the process to its "ready" log line (recovery of every database and
job included), stopping it after each round. Prints a markdown table with the
median, min and max per meta store, and an empty start for comparison.

    .venv/bin/python bench/startup_time.py [--databases 100] [--jobs-per-db 10] [--rounds 5]
        [--meta sqlite,postgres] [--postgres postgresql://postgres@127.0.0.1:5432/postgres]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
from conftest import start_server, stop_server  # noqa: E402


@contextmanager
def meta_store(kind: str, postgres: str) -> Iterator[tuple[str, ...] | None]:
    """Server arguments for a fresh meta store of ``kind`` (None: PostgreSQL unreachable)."""
    if kind == "sqlite":
        yield ()
        return
    name = f"pgb_bench_{uuid.uuid4().hex[:10]}"
    try:
        with psycopg.connect(postgres, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        print(f"PostgreSQL meta store skipped: {exc}".splitlines()[0], file=sys.stderr)
        yield None
        return
    try:
        yield ("--meta-store", postgres.rsplit("/", 1)[0] + "/" + name)
    finally:
        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def build(args: tuple[str, ...], databases: int, jobs_per_db: int) -> int:
    """Create the databases and jobs through a real server; return the jobs recorded."""
    srv = start_server(*args)
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as dev:
            for d in range(databases):
                dev.execute(f"CREATE DATABASE db_{d:04d}")
        for d in range(databases):
            with psycopg.connect(srv.dsn(f"db_{d:04d}"), autocommit=True) as conn:
                conn.execute("CREATE TABLE facts AS SELECT range AS x FROM range(100)")
                for j in range(jobs_per_db):
                    conn.execute(f"CREATE MATERIALIZED VIEW mv_{d:04d}_{j:03d} "
                                 "WITH (refresh.interval.sec = 3600) "
                                 f"AS SELECT count(*) AS n, sum(x) + {j} AS s FROM facts")
        with psycopg.connect(srv.dsn(), autocommit=True) as dev:
            (jobs,) = dev.execute(
                "SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs").fetchone()
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)
    return jobs


def measure(args: tuple[str, ...], rounds: int, expect_jobs: int) -> list[float]:
    times = []
    for r in range(rounds):
        t0 = time.perf_counter()
        srv = start_server(*args)
        times.append(time.perf_counter() - t0)
        try:
            if r == 0:  # everything came back (checked outside the timing)
                with psycopg.connect(srv.dsn(), autocommit=True) as dev:
                    (jobs,) = dev.execute("SELECT count(*) FROM rw_catalog.rw_batch_refresh_jobs "
                                          "WHERE status = 'idle'").fetchone()
                assert jobs == expect_jobs, f"{jobs} idle jobs after restart, {expect_jobs} recorded"
        finally:
            assert stop_server(srv) == 0, "".join(srv.log)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--databases", type=int, default=100)
    ap.add_argument("--jobs-per-db", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--meta", default="sqlite,postgres",
                    help="comma-separated meta stores to measure: sqlite, postgres")
    ap.add_argument("--postgres", default=os.environ.get(
        "PGBARRIER_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres"))
    opts = ap.parse_args()
    rows = []
    for kind in [k.strip() for k in opts.meta.split(",") if k.strip()]:
        with meta_store(kind, opts.postgres) as meta, tempfile.TemporaryDirectory() as tmp:
            if meta is None:
                continue
            args = ("--data-dir", os.path.join(tmp, "data"), *meta)
            empty = measure(args, 1, 0)  # the first start: creates the store and `dev`
            t0 = time.perf_counter()
            jobs = build(args, opts.databases, opts.jobs_per_db)
            built_s = time.perf_counter() - t0
            times = measure(args, opts.rounds, jobs)
            rows.append((kind, 1, 0, 1, empty[0], empty[0], empty[0], None))
            rows.append((kind, opts.databases + 1, jobs, opts.rounds, statistics.median(times),
                         min(times), max(times), built_s))
    print("| meta store | databases | batch-refresh jobs | rounds | start to ready, median (s) "
          "| min (s) | max (s) | state built in (s) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for kind, dbs, jobs, rounds, med, lo, hi, built in rows:
        built_text = "" if built is None else f"{built:.1f}"
        print(f"| {kind} | {dbs} | {jobs} | {rounds} | {med:.2f} | {lo:.2f} | {hi:.2f} "
              f"| {built_text} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
