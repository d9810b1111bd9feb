"""``make bench``: run every benchmark, one after the other, and write docs/BENCHMARKS.md.

Each benchmark is its own script in ``bench/`` and writes its figures as JSON into
``--results`` (``.bench/results``); this runner starts them with the interpreter it runs
under, keeps each one's output in ``<name>.log`` beside its JSON, records the machine,
the versions, the command and the date (``run.json``), and then renders the report
(``bench/report.py``). A benchmark that fails does not stop the others: the report says
it failed and where its log is, and the runner exits 1 at the end.

Sizes: ``full`` (default, what ``make bench`` runs; ~12 minutes on the 2-core dev box),
``quick`` (the same tables, smaller: a few minutes) and ``smoke`` (each benchmark once at
a tiny size, for ``make test``; the figures mean nothing).

    .venv/bin/python bench/run_all.py [--size full|quick|smoke] [--only a,b] [--output PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

B = c.BENCH

# name -> (script, {size: args}); --json <results>/<name>.json is added
BENCHMARKS: dict[str, tuple[str, dict[str, list[str]]]] = {
    "classifier": ("classifier.py", {
        "full": [], "quick": ["--number", "1000", "--repeat", "3"],
        "smoke": ["--number", "20", "--repeat", "1", "--parse-number", "2"]}),
    "dialect": ("dialect.py", {
        "full": [], "quick": ["--number", "1000", "--repeat", "3", "--miss-number", "50"],
        "smoke": ["--number", "20", "--repeat", "1", "--miss-number", "2", "--stream", "200"]}),
    "control_roundtrip": ("control_roundtrip.py", {
        "full": ["--rounds", "1000"], "quick": ["--rounds", "300"], "smoke": ["--rounds", "3"]}),
    "create_latency": ("create_latency.py", {
        "full": ["--views", "50"], "quick": ["--views", "20"],
        "smoke": ["--views", "2", "--rows", "100"]}),
    "refresh_lateness_1000": ("refresh_lateness.py", {
        "full": ["--runs", "60", "--views", "10", "--barrier-interval-ms", "1000"],
        "quick": ["--runs", "20", "--views", "10", "--barrier-interval-ms", "1000"],
        "smoke": ["--runs", "2", "--views", "2", "--barrier-interval-ms", "1000"]}),
    "refresh_lateness_100": ("refresh_lateness.py", {
        "full": ["--runs", "60", "--views", "10", "--barrier-interval-ms", "100"],
        "quick": ["--runs", "20", "--views", "10", "--barrier-interval-ms", "100"],
        "smoke": ["--runs", "2", "--views", "2", "--barrier-interval-ms", "100"]}),
    "memory": ("memory.py", {
        "full": ["--connections", "500"], "quick": ["--connections", "500"],
        "smoke": ["--connections", "3"]}),
    "scale": ("scale.py", {
        "full": ["--sizes", "1x10:file,100x10:file,1000x10:file,1x500:memory",
                 "--meta", "memory,file", "--window", "5", "--settle", "1"],
        "quick": ["--sizes", "1x10:file,100x10:file,1000x10:file", "--meta", "file",
                  "--window", "4", "--settle", "1"],
        "smoke": ["--sizes", "2x2", "--meta", "memory,file", "--window", "1.1",
                  "--settle", "0.1"]}),
    "profile": ("profile_path.py", {
        "full": ["--seconds", "5"], "quick": ["--seconds", "3"],
        "smoke": ["--seconds", "1", "--scenarios", "duckdb-extended"]}),
    "duckdb": ("duckdb_compare.py", {
        "full": ["--seconds", "2", "--seconds-one-client", "1", "--rounds", "3"],
        "quick": ["--seconds", "1", "--rounds", "2"],
        "smoke": ["--transactions", "3", "--rounds", "1", "--rows", "100", "--clients", "1",
                  "--modes", "extended"]}),
    "passthrough": ("passthrough.py", {
        "full": ["--seconds", "2", "--seconds-one-client", "1", "--rounds", "3", "--scale", "10",
                 "--compare-ref", "7ba7ce3"],
        "quick": ["--seconds", "1", "--rounds", "2", "--scale", "10"],
        "smoke": ["--transactions", "20", "--rounds", "1", "--scale", "1", "--clients", "1",
                  "--modes", "extended"]}),
    "streaming_memory": ("streaming_memory.py", {
        "full": ["--rows", "5000000", "--compare-ref", "4320867"],
        "quick": ["--rows", "5000000"], "smoke": ["--rows", "1000", "--timeout", "30"]}),
    "connection_flood": ("connection_flood.py", {
        "full": ["--connections", "2000", "--max-connections", "100", "--compare-ref", "4320867"],
        "quick": ["--connections", "500", "--max-connections", "100"],
        "smoke": ["--connections", "8", "--max-connections", "3"]}),
    "history_startup": ("history_startup.py", {
        "full": ["--rows", "1000000", "--jobs", "10", "--rounds", "3"],
        "quick": ["--rows", "200000", "--jobs", "10", "--rounds", "1"],
        "smoke": ["--rows", "3000", "--jobs", "2", "--rounds", "1", "--meta", "sqlite"]}),
    # issue 13: the event-loop core
    "idle_connections": ("connection_flood.py", {
        "full": ["--connections", "10000", "--max-connections", "10000"],
        "quick": ["--connections", "2000", "--max-connections", "2000"],
        "smoke": ["--connections", "8", "--max-connections", "8"]}),
    "duckdb_overhead": ("duckdb_overhead.py", {
        "full": ["--rounds", "3", "--transactions", "10000", "--statements", "10000",
                 "--compare-ref", "0648ae1,9647127"],
        "quick": ["--rounds", "1", "--transactions", "5000", "--statements", "5000"],
        "smoke": ["--rounds", "1", "--transactions", "20", "--statements", "20",
                  "--modes", "extended"]}),
    "instructions": ("instructions.py", {
        "full": [], "quick": ["--modes", "prepared", "--n2", "300"],
        "smoke": ["--modes", "prepared", "--n1", "2", "--n2", "4", "--no-duckdb",
                  "--targets", "pgbarrier"]}),
    "thread_hop": ("thread_hop.py", {
        "full": ["--rounds", "5000"], "quick": ["--rounds", "2000"], "smoke": ["--rounds", "20"]}),
    "pause_under_load": ("pause_under_load.py", {
        "full": ["--rounds", "200"], "quick": ["--rounds", "100"], "smoke": ["--rounds", "3"]}),
    # issue 27: rows out of a large result through three clients, pgbarrier's DuckDB beside
    # PostgreSQL (and pgbarrier --upstream, and DuckDB in process)
    "result_rows": ("result_rows.py", {
        "full": ["--rows", "300000,3000000", "--rounds", "3"],
        "quick": ["--rows", "100000", "--rounds", "3"],
        "smoke": ["--rows", "1000", "--rounds", "1", "--cell-timeout", "60"]}),
    # issue 27: one column of each type alone, pgbarrier's DuckDB beside PostgreSQL
    "column_types": ("column_types.py", {
        "full": ["--rows", "200000", "--rounds", "3"],
        "quick": ["--rows", "100000", "--rounds", "2"],
        "smoke": ["--rows", "100", "--rounds", "1", "--cell-timeout", "60"]}),
    # issue 17: kill -9 of the leader until the follower serves (two processes, one meta store)
    "failover": ("failover_time.py", {
        "full": ["--rounds", "20"], "quick": ["--rounds", "5"], "smoke": ["--rounds", "1"]}),
    # bench/startup_time.py (start-up with 100 databases / 1,000 jobs; another engineer's) is
    # run when present, with only the flags its --help lists
    "startup_time": ("startup_time.py", {
        "full": [], "quick": ["--rounds", "2"],
        "smoke": ["--databases", "2", "--jobs-per-db", "1", "--rounds", "1", "--meta", "sqlite"]}),
}


def _load_run(results: Path) -> dict[str, Any] | None:
    try:
        run = json.loads((results / "run.json").read_text())
    except (OSError, ValueError):
        return None
    return run if isinstance(run.get("benchmarks"), list) else None


def _help(script: Path) -> str:
    try:
        out = subprocess.run([sys.executable, str(script), "--help"], capture_output=True,
                             text=True, timeout=60, cwd=c.ROOT)
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout


def run_one(name: str, size: str, results: Path) -> dict[str, Any]:
    script_name, sizes = BENCHMARKS[name]
    script = B / script_name
    out_json = results / f"{name}.json"
    log = results / f"{name}.log"
    out_json.unlink(missing_ok=True)
    if not script.exists():
        return {"name": name, "status": "absent", "script": f"bench/{script_name}"}
    args = list(sizes[size])
    if name == "startup_time":  # written by another hand: pass only the flags it lists
        help_text = _help(script)
        kept: list[str] = []
        for i, a in enumerate(args):
            if a.startswith("--") and a in help_text:
                kept.append(a)
                if i + 1 < len(args) and not args[i + 1].startswith("--"):
                    kept.append(args[i + 1])
        args = kept
        if "--json" in help_text:
            args += ["--json", str(out_json)]
    else:
        args += ["--json", str(out_json)]
    sqlglotc = c.ROOT / ".bench" / "sqlglotc" / "bin" / "python"
    if name == "dialect" and size != "smoke" and sqlglotc.exists():  # the sqlglotc column
        args += ["--compare-python", str(sqlglotc)]
    cmd = [sys.executable, str(script), *args]
    shown = " ".join(["python", f"bench/{script_name}", *args]).replace(str(c.ROOT) + "/", "")
    print(f"\n=== {name}: {shown}", flush=True)
    t0 = time.monotonic()
    load0 = c.loadavg()
    others0 = _others_cpu()
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                cwd=c.ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert proc.stdout is not None
        for line in proc.stdout:
            fh.write(line)
            if size != "smoke":
                sys.stdout.write(line)
                sys.stdout.flush()
        code = proc.wait()
    others = _others_delta(others0, _others_cpu())
    elapsed = time.monotonic() - t0
    entry = {"name": name, "command": shown, "exit": code,
             "seconds": round(elapsed, 1), "loadavg_start": load0,
             "others_cores": others / elapsed if others is not None and elapsed > 0 else None,
             "loadavg_end": c.loadavg(), "log": str(log.relative_to(c.ROOT))
             if log.is_relative_to(c.ROOT) else str(log)}
    entry["status"] = "ok" if code == 0 else "failed"
    if code != 0:
        entry["log_tail"] = log.read_text(errors="replace").splitlines()[-15:]
        print(f"=== {name} FAILED (exit {code}); see {log}", file=sys.stderr, flush=True)
    if name == "startup_time":
        entry["stdout"] = log.read_text(errors="replace")
    return entry


def _others_cpu() -> dict[int, tuple[str, float]] | None:
    """CPU seconds of every process outside this run (not this process, none of its
    descendants, not PostgreSQL's, whose backends serve this run's load too)."""
    try:
        import psutil  # the bench extra (make bench installs it); without it, no figure
    except ImportError:
        return None
    me = psutil.Process()
    ours = {me.pid, *(p.pid for p in me.children(recursive=True))}
    out = {}
    for p in psutil.process_iter(["pid", "name", "cpu_times"]):
        info = p.info
        if info["pid"] in ours or not info["cpu_times"] or info["name"] in ("postgres",):
            continue
        out[info["pid"]] = (info["name"], info["cpu_times"].user + info["cpu_times"].system)
    return out


def _others_delta(before: dict[int, tuple[str, float]] | None,
                  after: dict[int, tuple[str, float]] | None) -> float | None:
    """CPU seconds other processes used between two snapshots (those alive at both)."""
    if before is None or after is None:
        return None
    return sum(max(0.0, a[1] - before[pid][1]) for pid, a in after.items()
               if pid in before and before[pid][0] == a[0])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", choices=["full", "quick", "smoke"], default="full")
    ap.add_argument("--quick", action="store_const", dest="size", const="quick")
    ap.add_argument("--smoke", action="store_const", dest="size", const="smoke")
    ap.add_argument("--only", default=None, help="comma-separated benchmark names")
    ap.add_argument("--results", default=str(c.RESULTS))
    ap.add_argument("--output", default=str(c.ROOT / "docs" / "BENCHMARKS.md"))
    ap.add_argument("--no-report", action="store_true")
    args = ap.parse_args(argv)
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    names = list(BENCHMARKS) if not args.only else args.only.split(",")
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        ap.error(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")

    started = time.time()
    run: dict[str, Any] = {
        "size": args.size, "command": "make bench" if args.size == "full" and not args.only
        else " ".join(["python bench/run_all.py", *(argv if argv is not None else sys.argv[1:])]),
        "started_at": time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(started)),
        "machine": c.machine_info(), "versions": c.main_versions(),
        "pgbench": c.pgbench_version(), "loadavg_start": c.loadavg(),
        "git_commit": _git_commit(), "benchmarks": []}
    previous = _load_run(results) if args.only else None
    for name in names:
        run["benchmarks"].append(run_one(name, args.size, results))
        (results / "run.json").write_text(json.dumps(run, indent=2, default=str))
    run["seconds_total"] = round(time.time() - started, 1)
    run["loadavg_end"] = c.loadavg()
    if previous is not None:
        # --only re-runs some benchmarks of an earlier run: that run stays the report's
        # header, these replace their own rows, and the re-run is recorded beside it
        again = {b["name"] for b in run["benchmarks"]}
        previous["benchmarks"] = [b for b in previous["benchmarks"] if b["name"] not in again]
        previous["benchmarks"] += run["benchmarks"]
        previous.setdefault("reruns", []).append(
            {k: run[k] for k in ("command", "started_at", "git_commit", "seconds_total")})
        run = previous
    (results / "run.json").write_text(json.dumps(run, indent=2, default=str))
    if not args.no_report:
        import report

        report.write(results, Path(args.output))
        print(f"\nwrote {args.output} ({run['seconds_total']:.0f} s)")
    failed = [b["name"] for b in run["benchmarks"] if b["status"] == "failed"]
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, cwd=c.ROOT, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, cwd=c.ROOT, timeout=10)
        return out.stdout.strip() + (" (with uncommitted changes)" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


if __name__ == "__main__":
    raise SystemExit(main())
