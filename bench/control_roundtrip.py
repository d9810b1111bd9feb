"""PAUSE→RESUME round trips through psycopg against a real server (issue 2's measurement).

Starts ``pgbarrier serve`` on port 0 with a 1 s barrier interval, runs N round trips
(``ALTER DATABASE dev PAUSE`` then ``ALTER DATABASE dev RESUME``, each one statement
that returns when its command barrier is collected), and prints median, p99 and worst
in milliseconds. A round trip far below the barrier interval shows that command
barriers are injected at once, not on the next periodic tick.

    .venv/bin/python bench/control_roundtrip.py [--rounds 100] [--interval-ms 1000] [--json PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from conftest import start_server, stop_server  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--interval-ms", type=int, default=1000)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    load = common.loadavg()
    srv = start_server("--barrier-interval-ms", str(args.interval_ms))
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as conn:
            conn.execute("ALTER DATABASE dev RESUME")
            samples = []
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                conn.execute("ALTER DATABASE dev PAUSE")
                conn.execute("ALTER DATABASE dev RESUME")
                samples.append((time.perf_counter() - t0) * 1000)
    finally:
        stop_server(srv)
    samples.sort()
    p99 = common.percentile(samples, 99)
    common.write_json(args.json, {
        "benchmark": "control_roundtrip", "loadavg_start": load,
        "params": {"rounds": args.rounds, "barrier_interval_ms": args.interval_ms},
        "n": len(samples), "median_ms": statistics.median(samples), "p99_ms": p99,
        "worst_ms": samples[-1], "best_ms": samples[0]})
    print(f"PAUSE->RESUME round trips: n={len(samples)} barrier_interval={args.interval_ms}ms "
          f"median={statistics.median(samples):.2f}ms p99={p99:.2f}ms worst={samples[-1]:.2f}ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
