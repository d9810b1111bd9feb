"""PAUSE→RESUME round trips on one database while another database serves load (issue 13).

Starts ``pgbarrier serve`` (DuckDB, port 0, 1 s barriers), creates a database ``load``
and runs ``pgbench -n -M <mode> -c <clients> -f select1.sql load`` against it (a
``SELECT 1`` script: the DuckDB backend has no pgbench tables); meanwhile a psycopg
connection to ``dev`` runs ``--rounds`` round trips of ``ALTER DATABASE dev PAUSE`` then
``ALTER DATABASE dev RESUME`` (each returns when its command barrier is collected). It
prints median, p99 and worst of the round trips in ms, first without load (the same
server, same run) and then under load, with the load's tps.

    .venv/bin/python bench/pause_under_load.py [--rounds 200] [--clients 4] [--mode simple]
                                               [--json PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402


def _round_trips(dsn: str, rounds: int) -> list[float]:
    samples = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER DATABASE dev RESUME")
        for _ in range(rounds):
            t0 = time.perf_counter()
            conn.execute("ALTER DATABASE dev PAUSE")
            conn.execute("ALTER DATABASE dev RESUME")
            samples.append((time.perf_counter() - t0) * 1000)
    return sorted(samples)


def _summary(samples: list[float]) -> dict[str, Any]:
    return {"n": len(samples), "median_ms": statistics.median(samples),
            "p99_ms": c.percentile(samples, 99), "worst_ms": samples[-1]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--clients", type=int, default=4)
    ap.add_argument("--mode", default="simple")
    ap.add_argument("--interval-ms", type=int, default=1000)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    missing = c.pgbench_missing()
    if missing:
        print(f"pause_under_load: skipped ({missing})")
        return 0
    load = c.loadavg()
    srv = c.start_pgbarrier("--barrier-interval-ms", str(args.interval_ms))
    dsn = f"postgresql://root@{srv.host}:{srv.port}/dev?sslmode=disable"
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE DATABASE load")
        idle = _round_trips(dsn, args.rounds)
        with tempfile.TemporaryDirectory() as tmp:
            script = Path(tmp) / "select1.sql"
            script.write_text("SELECT 1;\n")
            result: dict[str, Any] = {}
            started = threading.Event()

            def run_load() -> None:
                started.set()
                result["run"] = c.run_pgbench(srv.host, srv.port, "root", "load",
                                              mode=args.mode, clients=args.clients,
                                              seconds=seconds, script=script,
                                              server_pid=srv.proc.pid)

            # long enough to cover the round trips under load, measured without load
            seconds = max(3.0, 3 * sum(idle) / 1000 + 2)
            loader = threading.Thread(target=run_load)
            loader.start()
            started.wait()
            time.sleep(1.0)  # a benchmark, not a test: let pgbench's clients connect
            busy = _round_trips(dsn, args.rounds)
            loader.join()
        run = result.get("run")
    finally:
        srv.stop()
    out = {"benchmark": "pause_under_load", "loadavg_start": load,
           "params": {"rounds": args.rounds, "clients": args.clients, "mode": args.mode,
                      "barrier_interval_ms": args.interval_ms, "load": "SELECT 1 on database load"},
           "idle": _summary(idle), "under_load": _summary(busy),
           "load_tps": getattr(run, "tps", None), "load_error": getattr(run, "error", None)}
    c.write_json(args.json, out)
    for name in ("idle", "under_load"):
        s = out[name]
        print(f"PAUSE->RESUME {name}: n={s['n']} median={s['median_ms']:.2f}ms "
              f"p99={s['p99_ms']:.2f}ms worst={s['worst_ms']:.2f}ms", flush=True)
    tps = out["load_tps"]
    print(f"load: pgbench -M {args.mode} -c {args.clients} SELECT 1 on another database: "
          + (f"{tps:.0f} tps" if tps else f"error {out['load_error']}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
