"""Lateness of scheduled batch refreshes: how long after their due time they start.

Starts ``pgbarrier serve`` (port 0, DuckDB in memory) with the given barrier interval,
creates ``--views`` batch-refresh views with ``refresh.interval.sec = 1`` and lets the
scheduler run until at least ``--runs`` scheduled refreshes have succeeded. For each
scheduled run, due = physical time of the job's last committed epoch + 1 s (the
previous successful run's target epoch), lateness = its start time - due. Prints the
median and worst lateness in milliseconds.

    .venv/bin/python bench/refresh_lateness.py [--runs 50] [--views 10] [--barrier-interval-ms 1000] [--json PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from conftest import start_server, stop_server  # noqa: E402
from pgbarrier.barrier.epoch import epoch_to_unix_ms  # noqa: E402

POLL_S = 0.25  # a benchmark may poll; tests never do


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--views", type=int, default=10)
    ap.add_argument("--barrier-interval-ms", type=int, default=1000)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    load = common.loadavg()
    srv = start_server("--barrier-interval-ms", str(args.barrier_interval_ms))
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as conn:
            conn.execute("CREATE TABLE facts AS SELECT range AS x FROM range(1000)")
            for i in range(args.views):
                conn.execute(f"CREATE MATERIALIZED VIEW lateness_{i} WITH (refresh.interval.sec = 1) "
                             "AS SELECT count(*) AS n, sum(x) AS s FROM facts")
            deadline = time.monotonic() + 10 + 3 * args.runs
            while time.monotonic() < deadline:
                (done,) = conn.execute(
                    "SELECT count(*) FROM rw_catalog.rw_refresh_history "
                    "WHERE trigger = 'schedule' AND status = 'succeeded'").fetchone()
                if done >= args.runs:
                    break
                time.sleep(POLL_S)
            history = conn.execute(
                "SELECT job, run_id, trigger, status, started_at, target_epoch "
                "FROM rw_catalog.rw_refresh_history ORDER BY job, run_id").fetchall()
    finally:
        stop_server(srv)
    lateness = []
    last_committed: dict[str, int] = {}
    for job, _run, trigger, status, started_at, target in history:
        if trigger == "schedule" and job in last_committed and status == "succeeded":
            due_ms = epoch_to_unix_ms(last_committed[job]) + 1000
            lateness.append(started_at.timestamp() * 1000 - due_ms)
        if status == "succeeded":
            last_committed[job] = target
    if not lateness:
        print("no scheduled refresh ran", file=sys.stderr)
        return 1
    lateness.sort()
    common.write_json(args.json, {
        "benchmark": "refresh_lateness", "loadavg_start": load,
        "params": {"runs": args.runs, "views": args.views, "refresh_interval_sec": 1,
                   "barrier_interval_ms": args.barrier_interval_ms},
        "n": len(lateness), "median_ms": statistics.median(lateness), "worst_ms": lateness[-1],
        "best_ms": lateness[0], "target_worst_ms": args.barrier_interval_ms + 50})
    print(f"scheduled refresh lateness: n={len(lateness)} views={args.views} interval=1s "
          f"barrier_interval={args.barrier_interval_ms}ms median={statistics.median(lateness):.1f}ms "
          f"worst={lateness[-1]:.1f}ms best={lateness[0]:.1f}ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
