"""Scale of the barrier manager (issue 7, item 5): CPU of the barrier loop against databases.

Each size runs in a fresh child process that builds its state IN PROCESS with pgbarrier's
own API (no wire): an :class:`~pgbarrier.app.App` with a 1 s barrier interval, then
``CREATE DATABASE db_i`` and, in each database, ``--jobs`` batch-refresh views
(``CREATE MATERIALIZED VIEW v_j WITH (refresh.interval.sec = 86400) AS SELECT 1 AS x``),
each statement run through ``ControlPlane.execute`` as a session would. The data plane is
a do-nothing backend (:class:`NullBackend`): this measures the barrier manager, not
DuckDB (a real in-memory DuckDB per database costs ~5 MB and ~10 threads of its own, and
1,000 of them take minutes to set up). The refresh interval is a day, so no refresh runs in
the window: what is measured is barriers, checkpoints, the meta store's per-checkpoint
write and the scheduler's due-job lookup.

Threads are recorded per size (``/proc/self/status``): the process total at the end of the
window (``threads``), before the App was built (``threads_before_app``), and how many of them
run barriers (``threads_barrier``: ``pgbarrier-barrier*`` and ``pgbarrier-collect-*``). With
one barrier scheduler the total must not grow with the number of databases; with the old
thread-per-database workers it was about one per database.

After a settling pause the child reads its own CPU time (user + system, all threads) over
``--window`` seconds with the process otherwise idle. (A split by thread is also recorded,
but the kernel counts a thread's time in whole clock ticks, so threads that each run
~0.1 ms a second mostly show 0: only the process total is meaningful.) ``meta=memory`` keeps the meta store in memory
(``--data-dir :memory:``: the barrier loop alone); ``meta=file`` is the default server's
set-up, SQLite in a data dir (WAL, synchronous=FULL), written at every checkpoint of every
database.

The scheduler's barrier listener is wrapped with a timer (class attribute, in the child
only), so the due-job lookup's cost per barrier is measured at 10 and at 100 jobs per
database: it must not grow with the number of jobs.

With ``--profile 100x10:file`` the parent samples that size's child with py-spy
(``--nonblocking``) right after its measured window, for the doc's profile of the barrier
loop (py-spy cannot keep up with 1,000 threads, so the profile is taken at 100 databases:
the work per database-barrier is the same).

    .venv/bin/python bench/scale.py [--sizes 1x10,100x10,1000x10,100x100:memory] [--meta memory,file]
                                    [--window 8] [--json PATH]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

CHILD_TIMEOUT_S = 900


# --------------------------------------------------------------------------- child


def _child(args: argparse.Namespace) -> int:
    from pgbarrier.app import App, Config
    from pgbarrier.backends.base import Backend
    from pgbarrier.control import SessionInfo
    from pgbarrier.jobs.scheduler import RefreshScheduler
    from pgbarrier.result import Column
    from pgbarrier.sql import parse_control

    class NullBackend(Backend):
        """A data plane that does nothing (the barrier manager is what is measured)."""

        dialect = "duckdb"

        def ensure_database(self, name: str, owner: Any = None, new: bool = False) -> None: pass
        def drop_database(self, name: str) -> None: pass
        def connect(self, database: str, user: str, password: Any = None) -> Any:
            raise NotImplementedError
        def relation_exists(self, database: str, name: str) -> bool: return False
        def create_batch_view(self, database: str, name: str, columns: Any, query: str,
                              owner: Any = None, cancel: Any = None, **_: Any) -> int: return 1
        def refresh_batch_view(self, database: str, name: str, columns: Any, query: str,
                               cancel: Any = None) -> int: return 1
        def drop_batch_view(self, database: str, name: str) -> None: pass
        def create_view(self, database: str, name: str, columns: Any, query: str,
                        owner: Any = None) -> None: pass
        def drop_view(self, database: str, name: str) -> None: pass
        def describe_query(self, database: str, query: str) -> list[Column]: return [Column("x", 23)]
        def notify(self, database: str, channel: str, payload: str) -> None: pass
        def close(self) -> None: pass

    # time the scheduler's barrier listener (the due-job lookup), in this process only
    lookup = {"calls": 0, "seconds": 0.0}
    lookup_lock = threading.Lock()
    original = RefreshScheduler.on_barrier

    def timed_on_barrier(self: RefreshScheduler, info: Any) -> None:
        t0 = time.perf_counter()
        try:
            original(self, info)
        finally:
            dt = time.perf_counter() - t0
            with lookup_lock:
                lookup["calls"] += 1
                lookup["seconds"] += dt

    RefreshScheduler.on_barrier = timed_on_barrier  # type: ignore[method-assign]

    # and the per-checkpoint meta store write (App's on_commit), wall time
    commit = {"calls": 0, "seconds": 0.0}
    original_commit = App._record_commit

    def timed_commit(self: App, snap: Any) -> None:
        t0 = time.perf_counter()
        try:
            original_commit(self, snap)
        finally:
            dt = time.perf_counter() - t0
            with lookup_lock:
                commit["calls"] += 1
                commit["seconds"] += dt

    App._record_commit = timed_commit  # type: ignore[method-assign]

    threads_before_app = c.proc_status(os.getpid()).get("threads", 0)
    data_dir = ":memory:" if args.meta == "memory" else tempfile.mkdtemp(prefix="bench-scale-")
    app = App(Config(port=0, data_dir=data_dir, barrier_interval_ms=1000,
                     default_database="db0"), backend=NullBackend())
    barriers = itertools.count()
    app.barrier.add_listener(lambda _info: next(barriers))
    app.start()
    # building 10,000 jobs with a durable meta store means ~40,000 fsyncs; the state is the
    # same without them, so they are off while it is built and back on (FULL) to be measured
    meta_conn = getattr(app.meta, "_conn", None)
    fast_setup = data_dir != ":memory:" and isinstance(meta_conn, sqlite3.Connection)
    meta_lock = getattr(app.meta, "_lock", None) or threading.Lock()

    def pragma(sql: str) -> None:  # between writes: barriers are already being committed
        with meta_lock:
            meta_conn.execute(sql)

    if fast_setup:
        pragma("PRAGMA synchronous=OFF")
    t0 = time.monotonic()
    for i in range(args.n):
        name = f"db{i}"
        if i:
            app.control.execute(parse_control(f"CREATE DATABASE {name}"),
                                SessionInfo(user="root", database="db0"))
        session = SessionInfo(user="root", database=name)
        for j in range(args.jobs):
            app.control.execute(parse_control(
                f"CREATE MATERIALIZED VIEW v{j} WITH (refresh.interval.sec = 86400) "
                "AS SELECT 1 AS x"), session)
    setup_s = time.monotonic() - t0
    if fast_setup:
        pragma("PRAGMA synchronous=FULL")
    time.sleep(args.settle)

    try:
        import psutil  # the bench extra; only for the (coarse) split by thread
    except ImportError:
        psutil = None
    proc = psutil.Process() if psutil else None
    names = {t.native_id: t.name for t in threading.enumerate()}

    def per_thread() -> dict[int, float]:
        if proc is None:
            return {}
        return {t.id: t.user_time + t.system_time for t in proc.threads()}

    def cpu_now() -> float:
        t = os.times()
        return t.user + t.system

    with lookup_lock:
        l0, m0 = dict(lookup), dict(commit)
    b0 = next(barriers)
    th0 = per_thread()
    cpu0 = cpu_now()
    w0 = time.monotonic()
    time.sleep(args.window)
    w1 = time.monotonic()
    cpu1 = cpu_now()
    th1 = per_thread()
    b1 = next(barriers)
    with lookup_lock:
        l1, m1 = dict(lookup), dict(commit)
    wall = w1 - w0
    cpu = cpu1 - cpu0
    groups: dict[str, float] = {}
    for tid, t in th1.items():
        name = names.get(tid, "other")
        group = "barrier threads" if name.startswith(("pgbarrier-barrier", "pgbarrier-collect-")) else \
            "refresh alarm" if name == "refresh-alarm" else "other threads"
        groups[group] = groups.get(group, 0.0) + t - th0.get(tid, 0.0)
    n_barriers = b1 - b0 - 1
    lookup_calls = l1["calls"] - l0["calls"]
    status = c.proc_status(os.getpid())
    out = {
        "databases": args.n, "jobs_per_db": args.jobs, "meta": args.meta,
        "setup_s": round(setup_s, 1), "window_s": round(wall, 2),
        "cpu_s": cpu, "cpu_pct_of_core": 100 * cpu / wall,
        "cpu_pct_by_thread": {k: 100 * v / wall for k, v in groups.items()},
        "barriers": n_barriers, "barriers_per_s": n_barriers / wall,
        "cpu_us_per_barrier": 1e6 * cpu / n_barriers if n_barriers > 0 else None,
        "lookup_calls": lookup_calls,
        "lookup_us_per_call": (1e6 * (l1["seconds"] - l0["seconds"]) / lookup_calls
                               if lookup_calls else None),
        "meta_write_us_per_checkpoint": (1e6 * (m1["seconds"] - m0["seconds"])
                                         / (m1["calls"] - m0["calls"])
                                         if m1["calls"] > m0["calls"] else None),
        "rss_mb": status.get("rss", 0) / 1e6, "threads": status.get("threads", 0),
        "threads_before_app": threads_before_app,
        "threads_barrier": sum(1 for t in threading.enumerate()
                               if t.name.startswith(("pgbarrier-barrier", "pgbarrier-collect-"))),
        "pid": os.getpid(),
        "jobs_total": sum(len(app.jobs.jobs(d)) for d in app.barrier.databases()),
    }
    print("RESULT " + json.dumps(out), flush=True)
    if args.hold:  # the parent profiles this process now, then writes a line
        sys.stdin.readline()
    app.stop()
    if data_dir != ":memory:":
        shutil.rmtree(data_dir, ignore_errors=True)
    os._exit(0)  # do not wait for 1,000 daemon threads to be torn down


# --------------------------------------------------------------------------- parent


def run_size(n: int, jobs: int, meta: str, window: float, settle: float, profile_s: float,
             profile_out: Path | None) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", "--n", str(n), "--jobs", str(jobs),
           "--meta", meta, "--window", str(window), "--settle", str(settle)] + \
        (["--hold"] if profile_s else [])
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    result: dict[str, Any] | None = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("RESULT "):
                result = json.loads(line[len("RESULT "):])
                break
        if result is None:
            proc.wait(timeout=60)
            raise RuntimeError(f"scale child ({n} dbs) gave no result:\n{proc.stderr.read()[-3000:]}")
        if profile_s and profile_out is not None:
            result["profile"] = _py_spy(result["pid"], profile_s, profile_out)
        assert proc.stdin is not None
        proc.stdin.write("done\n")
        proc.stdin.close()
        proc.wait(timeout=CHILD_TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return result


def _py_spy(pid: int, seconds: float, out: Path) -> dict[str, Any]:
    exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(exe).exists():
        return {"skipped": "py-spy not installed (the bench extra)"}
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        proc = subprocess.run([exe, "record", "--pid", str(pid), "--duration", str(int(seconds)),
                               "--rate", "100", "--nonblocking", "--format", "raw", "-o", str(out)],
                              capture_output=True, text=True, timeout=seconds + 60)
    except subprocess.TimeoutExpired:
        return {"skipped": f"py-spy did not finish within {seconds + 60:.0f}s"}
    if proc.returncode != 0 or not out.exists():
        return {"skipped": f"py-spy failed: {(proc.stderr or proc.stdout).strip()[-300:]}"}
    return {"raw": str(out), "seconds": seconds}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1x10,100x10,1000x10,100x100:memory",
                    help="DATABASESxJOBS[:META], comma-separated (:META: only with that meta store)")
    ap.add_argument("--meta", default="memory,file")
    ap.add_argument("--window", type=float, default=8)
    ap.add_argument("--settle", type=float, default=2.0, help="seconds between set-up and window")
    ap.add_argument("--profile", default=None, metavar="DBSxJOBS:META",
                    help="py-spy that size's child after its window")
    ap.add_argument("--profile-seconds", type=float, default=5)
    ap.add_argument("--profile-out", default=str(c.RESULTS / "scale-profile.txt"))
    ap.add_argument("--json", default=None)
    # child mode
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--jobs", type=int, default=10, help=argparse.SUPPRESS)
    ap.add_argument("--hold", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        args.meta = args.meta.split(",")[0]
        return _child(args)

    sizes = []  # (databases, jobs, only this meta or None)
    for spec in args.sizes.split(","):
        dims, _, only = spec.partition(":")
        n, jobs = (int(x) for x in dims.split("x"))
        sizes.append((n, jobs, only or None))
    metas = args.meta.split(",")
    result: dict[str, Any] = {"benchmark": "scale", "loadavg_start": c.loadavg(),
                              "params": {"sizes": args.sizes, "meta": metas,
                                         "window_s": args.window, "barrier_interval_ms": 1000,
                                         "refresh_interval_sec": 86400,
                                         "settle_s": args.settle},
                              "rows": []}
    for meta in metas:
        for n, jobs, only in sizes:
            if only is not None and only != meta:
                continue
            profile = args.profile_seconds if args.profile == f"{n}x{jobs}:{meta}" else 0
            r = run_size(n, jobs, meta, args.window, args.settle, profile, Path(args.profile_out))
            result["rows"].append(r)
            print(f"scale meta={meta} dbs={n} jobs/db={jobs}: cpu={r['cpu_pct_of_core']:.1f}% of a core "
                  f"({r['cpu_us_per_barrier'] or 0:.0f} us/barrier, {r['barriers_per_s']:.0f} barriers/s) "
                  f"lookup={r['lookup_us_per_call'] or 0:.1f} us/barrier "
                  f"meta write={r['meta_write_us_per_checkpoint'] or 0:.0f} us rss={r['rss_mb']:.0f}MB "
                  f"threads={r['threads']} (barrier {r['threads_barrier']}, "
                  f"{r['threads_before_app']} before the app) setup={r['setup_s']}s", flush=True)
    c.write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
