"""Where the pass-through path spends its time (issue 7, item 6): py-spy on a loaded server.

For each scenario it starts ``pgbarrier serve``, runs pgbench against it with 4 clients,
and samples the server with ``py-spy record --format raw`` twice, ``--seconds`` each:
with ``--gil`` (only the thread holding the GIL: where the interpreter's one core of
Python work goes, the proxy's bottleneck) and without (every thread not idle, which also
counts threads blocked in a socket read). Python frames only: time inside libpq, DuckDB
or a system call is charged to the Python line that called it. The collapsed stacks are
kept (``.bench/results/profile-<scenario>-{gil,threads}.txt``, input for any flame-graph
tool) and summed into three tables for ``docs/BENCHMARKS.md``:

* by area: each sample charged to the layer of its innermost frame (wire, session, sql,
  backends, psycopg, socket I/O, locks and threads, ...);
* by function, self: innermost frames;
* by pgbarrier function, inclusive: samples with that function anywhere on the stack.

Scenarios: ``upstream-simple`` and ``upstream-extended`` (``pgbench -S``, scale 1, into a
database of its own, created and dropped here; ``--upstream``), ``duckdb-extended``
(``SELECT 1`` on the embedded DuckDB) and ``duckdb-rows-extended`` (the 10,000-row
mixed-type ``SELECT`` of ``duckdb_compare.py``); and ``upstream-syscalls``: system calls
per transaction of the upstream relay at 1 and at 4 clients, counted by ``strace -c -f``
(when strace is installed).

    .venv/bin/python bench/profile_path.py [--seconds 6] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

DATABASE = f"pgbench_profile_{os.getpid()}"  # this run's own (concurrent runs)
UPSTREAM = "postgresql://postgres@127.0.0.1:5432/"
SCENARIOS = ["upstream-simple", "upstream-extended", "upstream-syscalls", "duckdb-extended",
             "duckdb-rows-extended"]
TOP = 12

AREAS = [  # (substring of the innermost frame's file, area), first match wins
    ("pgbarrier/server/", "pgbarrier server/ (event loop connection, framing, auth)"),
    ("pgbarrier/pgproto/", "pgbarrier pgproto/ (message codecs, type encoding)"),
    ("pgbarrier/session/", "pgbarrier session/ (protocol state, dispatch)"),
    ("pgbarrier/sql/", "pgbarrier sql/ (classifier)"),
    ("pgbarrier/backends/duckdb", "pgbarrier backends/duckdb (incl. time inside DuckDB)"),
    ("pgbarrier/backends/pg_relay", "pgbarrier backends/pg_relay (upstream socket reads/writes)"),
    ("pgbarrier/backends/postgres", "pgbarrier backends/postgres (incl. time inside libpq)"),
    ("pgbarrier/", "pgbarrier, other modules"),
    ("psycopg", "psycopg (Python side)"),
    ("socket.py", "socket I/O (stdlib)"),
    ("socketserver.py", "socket I/O (stdlib)"),
    ("asyncio/", "asyncio (stdlib; uvloop's C loop itself is not sampled)"),
    ("selectors.py", "socket I/O (stdlib)"),
    ("ssl.py", "socket I/O (stdlib)"),
    ("threading.py", "locks and threads (stdlib)"),
    ("queue.py", "locks and threads (stdlib)"),
    ("buenavista", "buenavista (base classes)"),
    ("duckdb", "DuckDB (Python side)"),
]


def _area(frame: str) -> str:
    for needle, area in AREAS:
        if needle in frame:
            return area
    return "other (stdlib, interpreter)"


def summarise(raw: Path, top: int = TOP) -> dict[str, Any]:
    """Top-N tables from py-spy's collapsed stacks (``frame;frame;... count`` lines)."""
    own: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    total = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = stack.split(";")
        total += n
        leaf = frames[-1]
        own[_strip_line(leaf)] += n
        areas[_area(leaf)] += n
        for f in {_strip_line(f) for f in frames if "pgbarrier/" in f}:
            incl[f] += n

    def rows(counter: Counter[str]) -> list[dict[str, Any]]:
        return [{"what": k, "samples": v, "pct": 100 * v / total if total else 0.0}
                for k, v in counter.most_common(top)]

    return {"samples": total, "areas": rows(areas), "self": rows(own),
            "inclusive": rows(incl)}


def _strip_line(frame: str) -> str:
    """``f (path/x.py:12)`` -> ``f (path/x.py)``: lines of one function counted together."""
    if frame.endswith(")") and ":" in frame:
        head, _, _ = frame.rpartition(":")
        return head + ")"
    return frame


def _py_spy() -> str | None:
    exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    return exe if Path(exe).exists() else None


def _record(pid: int, seconds: float, out: Path, gil: bool) -> str | None:
    exe = _py_spy()
    assert exe is not None
    cmd = [exe, "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "200",
           "--format", "raw", "-o", str(out)] + (["--gil"] if gil else [])
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    if proc.returncode != 0 or not out.exists():
        return f"py-spy failed: {(proc.stderr or proc.stdout).strip()[-300:]}"
    return None


def profile(scenario: str, seconds: float, out_dir: Path, tmp: Path) -> dict[str, Any]:
    import psycopg

    upstream = scenario.startswith("upstream")
    mode = scenario.rsplit("-", 1)[1]
    if upstream:
        srv = c.start_pgbarrier("--upstream", UPSTREAM, "--database", DATABASE)
        user, db, script, select_only = "postgres", DATABASE, None, True
        what = f"pgbench -S -M {mode} -c 4 -j 2 (scale 1) through pgbarrier --upstream"
    else:
        srv = c.start_pgbarrier()
        user, db, select_only = "root", "dev", False
        if "rows" in scenario:
            import duckdb_compare

            with psycopg.connect(f"host={srv.host} port={srv.port} user=root dbname=dev",
                                 autocommit=True) as conn:
                conn.execute(duckdb_compare.init_sql(10_000))
            script = tmp / "rows.sql"
            script.write_text(f"SELECT {duckdb_compare.COLUMNS} FROM bench_rows;\n")
            what = (f"pgbench -f rows.sql (10,000 mixed-type rows, bench/duckdb_compare.py's "
                    f"table) -M {mode} -c 4 -j 2 on the embedded DuckDB")
        else:
            script = tmp / "select1.sql"
            script.write_text("SELECT 1;\n")
            what = f"pgbench -f select1.sql (SELECT 1) -M {mode} -c 4 -j 2 on the embedded DuckDB"
    raw = out_dir / f"profile-{scenario}-gil.txt"
    raw_all = out_dir / f"profile-{scenario}-threads.txt"
    try:
        with psycopg.connect(f"host={srv.host} port={srv.port} user={user} dbname={db}"):
            pass  # warm: the first connection's imports and caches
        bench: dict[str, Any] = {}

        def load() -> None:
            bench["run"] = c.run_pgbench(srv.host, srv.port, user, db, mode=mode, clients=4,
                                         seconds=2 * seconds + 2, script=script,
                                         select_only=select_only)

        t = threading.Thread(target=load)
        t.start()
        cpu0, w0 = c.proc_times(srv.proc.pid)[0], time.monotonic()
        err = _record(srv.proc.pid, seconds, raw, gil=True)
        err = err or _record(srv.proc.pid, seconds, raw_all, gil=False)
        cpu1, w1 = c.proc_times(srv.proc.pid)[0], time.monotonic()
        t.join()
        cpu_pct = (100 * (cpu1 - cpu0) / (w1 - w0)) if cpu0 is not None and cpu1 is not None \
            else None
    finally:
        srv.stop()
    run = bench.get("run")
    out: dict[str, Any] = {"scenario": scenario, "load": what, "seconds": seconds,
                           "raw": str(raw), "tps_while_sampled": run.tps if run else None,
                           "server_cpu_pct": cpu_pct}
    if run and run.error:
        out["pgbench_error"] = run.error
    if err:
        out["skipped"] = err
        return out
    out.update(summarise(raw))
    out["threads"] = summarise(raw_all)
    out["raw_threads"] = str(raw_all)
    return out


def syscalls(seconds: float, tmp: Path) -> dict[str, Any]:
    """System calls per transaction of the upstream relay, 1 vs 4 clients (``strace -c -f``).

    strace slows the server down a lot, so only the counts per transaction mean anything,
    not the tps under strace."""
    exe = shutil.which("strace")
    if exe is None:
        return {"skipped": "strace not installed (Debian package strace)"}
    srv = c.start_pgbarrier("--upstream", UPSTREAM, "--database", DATABASE)
    rows = []
    try:
        for clients in (1, 4):
            out = tmp / f"strace-{clients}.txt"
            tracer = subprocess.Popen([exe, "-c", "-f", "-p", str(srv.proc.pid), "-o", str(out)],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1.0)  # strace attaches to every thread
            run = c.run_pgbench(srv.host, srv.port, "postgres", DATABASE, mode="prepared",
                                clients=clients, seconds=seconds, select_only=True)
            tracer.send_signal(2)
            tracer.wait(timeout=60)
            counts = _strace_counts(out)
            n = run.transactions or 0
            rows.append({"clients": clients, "transactions": n, "error": run.error,
                         "per_tx": {k: v / n for k, v in counts.items()} if n else {}})
    finally:
        srv.stop()
    return {"load": "pgbench -S -M prepared through pgbarrier --upstream, under strace -c -f",
            "rows": rows}


def _strace_counts(path: Path) -> dict[str, int]:
    counts: dict[str, int] = {}
    for line in path.read_text(errors="replace").splitlines():
        parts = line.split()
        # % time, seconds, usecs/call, calls, [errors], syscall
        if len(parts) >= 5 and parts[3].isdigit() and not line.startswith("100"):
            counts[parts[-1]] = int(parts[3])
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=6)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--out-dir", default=str(c.RESULTS))
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    result: dict[str, Any] = {"benchmark": "profile", "loadavg_start": c.loadavg(),
                              "params": {"seconds": args.seconds, "rate_hz": 200},
                              "profiles": []}
    why = c.pgbench_missing() or (None if _py_spy() else "py-spy not installed (the bench extra)")
    if why:
        result["skipped"] = why
        print(f"profile: skipped: {why}")
        c.write_json(args.json, result)
        return 0
    out_dir = Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    scenarios = args.scenarios.split(",")
    pg_why = c.postgres_reachable() if any(s.startswith("upstream") for s in scenarios) else None
    made_db = False
    try:
        with tempfile.TemporaryDirectory(prefix="bench-prof-") as tmp:
            for scenario in scenarios:
                if scenario.startswith("upstream"):
                    if pg_why:
                        result["profiles"].append({"scenario": scenario, "skipped": pg_why})
                        continue
                    if not made_db:
                        _init_db()
                        made_db = True
                if scenario == "upstream-syscalls":
                    p = {"scenario": scenario, **syscalls(args.seconds / 2 + 1, Path(tmp))}
                    result["profiles"].append(p)
                    print(f"profile {scenario}: " + "; ".join(
                        f"{r['clients']} client(s): " + ", ".join(
                            f"{k} {v:.1f}/tx" for k, v in sorted(r["per_tx"].items(),
                                                                 key=lambda kv: -kv[1])[:4])
                        for r in p.get("rows", [])) + p.get("skipped", ""), flush=True)
                    continue
                p = profile(scenario, args.seconds, out_dir, Path(tmp))
                result["profiles"].append(p)
                head = ", ".join(f"{a['what'].split(' (')[0]} {a['pct']:.0f}%"
                                 for a in p.get("areas", [])[:4])
                print(f"profile {scenario}: {p.get('samples', 0)} samples; {head}"
                      f"{'; ' + p['skipped'] if 'skipped' in p else ''}", flush=True)
    finally:
        if made_db:
            _drop_db()
    c.write_json(args.json, result)
    return 0


def _init_db() -> None:
    import psycopg

    with psycopg.connect(c.POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")
    subprocess.run(["pgbench", "-i", "-q", "-s", "1", "-h", "127.0.0.1", "-p", "5432", "-U",
                    "postgres", DATABASE], check=True, capture_output=True, env=c.pgbench_env(),
                   timeout=300)


def _drop_db() -> None:
    import psycopg

    with psycopg.connect(c.POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


if __name__ == "__main__":
    raise SystemExit(main())
