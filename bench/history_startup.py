"""Start-up time with 1,000,000 refresh-history rows recorded in the meta store (issue 12).

For each meta store (SQLite in the data dir, and PostgreSQL when it is reachable: a
fresh database on it, dropped afterwards) a real ``pgbarrier serve`` on DuckDB gets
``--jobs`` batch-refresh views (``refresh.interval.sec = 3600``) through the wire and
is stopped. Then, before every round, the history is reset to ``--rows`` runs spread
evenly over the jobs (a 1 s job's run every second; all within the default age of a
week), bulk-inserted straight into the meta store's ``refresh_history`` (one
``executemany`` on SQLite, ``COPY`` on PostgreSQL), and the wall time from launching
the process to its "ready" log line is measured with the default limits (1,000 runs
per job, a week). Also reported: the runs ``rw_refresh_history`` shows, the time until
the background prune pass logs its end, and the rows left in the store after it.

    .venv/bin/python bench/history_startup.py [--rows 1000000] [--jobs 10] [--rounds 3]
        [--meta sqlite,postgres] [--postgres postgresql://...] [--json FILE]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
from conftest import start_server, stop_server  # noqa: E402
from startup_time import meta_store  # noqa: E402

import common as c  # noqa: E402

#: issue 12's target: start to ready with 1,000,000 runs recorded
TARGET_S = 2.0
PRUNED = re.compile(r"refresh history pruned: (\d+) runs deleted in ([\d.]+) s")


def build(args: tuple[str, ...], jobs: int) -> None:
    srv = start_server(*args)
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as conn:
            conn.execute("CREATE TABLE facts AS SELECT range AS x FROM range(100)")
            for j in range(jobs):
                conn.execute(f"CREATE MATERIALIZED VIEW mv_{j:03d} WITH (refresh.interval.sec "
                             f"= 3600) AS SELECT count(*) + {j} AS n FROM facts")
    finally:
        assert stop_server(srv) == 0, "".join(srv.log)


#: the columns a seeded run fills (the meta store's, by name: migrations add them at the end)
_COLUMNS = ('database, job, run_id, "trigger", started_at, target_epoch, status, finished_at, '
            '"rows", error, sqlstate, duration_ms, node')


def _rows(rows: int, jobs: int):
    now = dt.datetime.now(dt.timezone.utc)
    per_job = rows // jobs
    for j in range(jobs):
        for k in range(per_job):
            at = (now - dt.timedelta(seconds=per_job - k)).isoformat()
            yield ("dev", f"mv_{j:03d}", 10_000 + k, "schedule", at, 7, "succeeded", at, 1, None,
                   None, 0, "bench")


def seed(data: str, url: str | None, rows: int, jobs: int) -> float:
    """Replace the stored history by ``rows`` runs; returns the seconds it took."""
    t0 = time.perf_counter()
    if url is None:
        conn = sqlite3.connect(os.path.join(data, "meta.sqlite"))
        with conn:
            conn.execute("DELETE FROM refresh_history")
            conn.executemany(f"INSERT INTO refresh_history ({_COLUMNS}) VALUES "
                             "(?,?,?,?,?,?,?,?,?,?,?,?,?)",
                             _rows(rows, jobs))
        conn.close()
    else:
        with psycopg.connect(url) as conn:
            conn.execute("DELETE FROM pgbarrier_meta.refresh_history")
            with conn.cursor().copy(f"COPY pgbarrier_meta.refresh_history ({_COLUMNS}) "
                                    "FROM STDIN") as copy:
                for row in _rows(rows, jobs):
                    copy.write_row(row)
    return time.perf_counter() - t0


def stored(data: str, url: str | None) -> int:
    if url is None:
        conn = sqlite3.connect(os.path.join(data, "meta.sqlite"))
        (n,) = conn.execute("SELECT count(*) FROM refresh_history").fetchone()
        conn.close()
        return n
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM pgbarrier_meta.refresh_history").fetchone()[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--jobs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--meta", default="sqlite,postgres")
    ap.add_argument("--postgres", default=os.environ.get(
        "PGBARRIER_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres"))
    ap.add_argument("--json", default=None)
    opts = ap.parse_args()
    results = []
    for kind in [k.strip() for k in opts.meta.split(",") if k.strip()]:
        with meta_store(kind, opts.postgres) as meta, tempfile.TemporaryDirectory() as tmp:
            if meta is None:
                continue
            data = os.path.join(tmp, "data")
            url = meta[1] if meta else None
            args = ("--data-dir", data, *meta)
            build(args, opts.jobs)
            times, prune, shown, seeded = [], [], None, []
            left = None
            for _ in range(opts.rounds):
                seeded.append(seed(data, url, opts.rows, opts.jobs))
                t0 = time.perf_counter()
                srv = start_server(*args)
                times.append(time.perf_counter() - t0)
                try:  # outside the timing: what it shows, and the pass that prunes the rest
                    with psycopg.connect(srv.dsn(), autocommit=True) as conn:
                        (shown,) = conn.execute(
                            "SELECT count(*) FROM rw_catalog.rw_refresh_history").fetchone()
                    assert srv.wait_for_log("refresh history pruned", timeout=600), \
                        "".join(srv.log)
                    m = next(PRUNED.search(line) for line in srv.log if PRUNED.search(line))
                    prune.append((int(m.group(1)), float(m.group(2))))
                finally:
                    assert stop_server(srv) == 0, "".join(srv.log)
                left = stored(data, url)
            results.append({"meta": kind, "rows": opts.rows, "jobs": opts.jobs,
                            "rounds": opts.rounds, "median_s": statistics.median(times),
                            "min_s": min(times), "max_s": max(times), "shown": shown,
                            "pruned": prune[-1][0], "prune_s": statistics.median(
                                p[1] for p in prune), "left": left,
                            "seed_s": statistics.median(seeded)})
    print("| meta store | history rows | jobs | rounds | start to ready, median (s) | min (s) "
          "| max (s) | rows shown | pruned in background (rows, s) | rows left |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        print(f"| {r['meta']} | {r['rows']:,} | {r['jobs']} | {r['rounds']} | "
              f"{r['median_s']:.2f} | {r['min_s']:.2f} | {r['max_s']:.2f} | {r['shown']:,} | "
              f"{r['pruned']:,} in {r['prune_s']:.1f} | {r['left']:,} |")
    c.write_json(opts.json, {"benchmark": "history_startup", "results": results,
                             "target_s": TARGET_S})
    return 0  # a benchmark reports; the verdict is the report's


if __name__ == "__main__":
    raise SystemExit(main())
