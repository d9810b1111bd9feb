"""What one hand-off from the event loop to a worker thread and back costs (issue 13).

The DuckDB path hands each batch of a connection's messages to a worker thread and the
answer back to the loop; the upstream relay does not. This measures that hand-off alone,
with nothing to do on the worker: CPU (this process, all threads) and wall time per round
trip, through pgbarrier's :class:`~pgbarrier.server.pool.WorkerPool` and through the
standard library's ``ThreadPoolExecutor`` on the same uvloop loop, beside the floor of two
plain threads handing a token back and forth (two ``threading.Event`` waits per round trip).

    .venv/bin/python bench/thread_hop.py [--rounds 5000] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures as cf
import sys
import threading
import time
from pathlib import Path
from typing import Any

import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402
from pgbarrier.server.pool import WorkerPool  # noqa: E402


def _nothing() -> int:
    return 1


def _timed(fn: Any, n: int) -> dict[str, float]:
    c0, t0 = time.process_time(), time.perf_counter()
    fn(n)
    return {"cpu_us": (time.process_time() - c0) / n * 1e6,
            "wall_us": (time.perf_counter() - t0) / n * 1e6}


def _loop_hops(submit: Any, n: int) -> None:
    async def run() -> None:
        for _ in range(n):
            await asyncio.wrap_future(submit(_nothing))

    uvloop.run(run())


def _ping_pong(n: int) -> None:
    ping, pong = threading.Event(), threading.Event()

    def other() -> None:
        for _ in range(n):
            ping.wait()
            ping.clear()
            pong.set()

    t = threading.Thread(target=other)
    t.start()
    for _ in range(n):
        ping.set()
        pong.wait()
        pong.clear()
    t.join()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5000)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    n = args.rounds
    pool = WorkerPool(16)
    tpe = cf.ThreadPoolExecutor(16)
    _loop_hops(pool.submit, min(n, 200))  # threads started, code warm
    rows = {
        "WorkerPool (pgbarrier's)": _timed(lambda k: _loop_hops(pool.submit, k), n),
        "ThreadPoolExecutor (stdlib)": _timed(lambda k: _loop_hops(tpe.submit, k), n),
        "two threads, Event ping-pong": _timed(_ping_pong, n),
    }
    pool.shutdown()
    tpe.shutdown()
    result = {"benchmark": "thread_hop", "loadavg_start": c.loadavg(), "params": {"rounds": n},
              "rows": rows}
    c.write_json(args.json, result)
    for name, r in rows.items():
        print(f"thread_hop {name}: cpu {r['cpu_us']:.1f} µs, wall {r['wall_us']:.1f} µs per round trip")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
