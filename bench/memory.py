"""Resident size of the server with idle client connections (issue 7, item 5).

Starts ``pgbarrier serve`` (embedded DuckDB in memory, 1 s barrier interval), opens
``--connections`` psycopg connections to it, each running ``SELECT 1`` once so its session
and DuckDB cursor exist, and reads the server's RSS (/proc) with all of them open and
idle, next to its RSS with one connection. Target: <= 400 MB at 500 connections.

    .venv/bin/python bench/memory.py [--connections 500] [--json PATH]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

SETTLE_S = 1.0


def main(argv: list[str] | None = None) -> int:
    import psycopg

    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=500)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    # room for every connection of the run (the default --max-connections is 100)
    srv = c.start_pgbarrier("--max-connections", str(args.connections + 10))
    conns: list[Any] = []
    try:
        pid = srv.proc.pid
        dsn = f"host={srv.host} port={srv.port} user=root dbname=dev"
        t0 = time.monotonic()
        for i in range(args.connections):
            conn = psycopg.connect(dsn, autocommit=True)
            conn.execute("SELECT 1").fetchone()
            conns.append(conn)
            if i == 0:
                time.sleep(SETTLE_S)
                one = c.proc_status(pid)["rss"]
        connect_s = time.monotonic() - t0
        time.sleep(SETTLE_S)
        status = c.proc_status(pid)
        rss, threads = status["rss"], status["threads"]
    finally:
        for conn in conns:
            conn.close()
        srv.stop()
    per_conn_kb = (rss - one) / 1024 / max(1, args.connections - 1)
    result = {"benchmark": "memory", "connections": args.connections,
              "rss_one_mb": one / 1e6, "rss_mb": rss / 1e6,
              "per_connection_kb": per_conn_kb, "threads": threads,
              "connect_s": connect_s, "target_mb": 400}
    c.write_json(args.json, result)
    print(f"RSS with {args.connections} idle connections: {rss / 1e6:.0f} MB "
          f"(1 connection: {one / 1e6:.0f} MB; {per_conn_kb:.0f} KB per connection; "
          f"{threads} threads)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
