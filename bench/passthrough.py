"""Pass-through overhead on the upstream PostgreSQL backend (issue 7, item 2).

Compares, side by side in one run, pgbench against:

* ``postgresql``: the PostgreSQL server itself (direct);
* ``pgbouncer``: PgBouncer (Debian's) in session mode in front of it;
* ``pgbarrier``: ``pgbarrier serve --upstream postgresql://postgres@127.0.0.1:5432/
  --database pgbench_bench_<pid>`` (a pgbarrier database is the upstream database of the
  same name; clients connect with ``dbname=pgbench_bench_<pid>``);
* ``pgbarrier-metrics``: the same with ``--metrics-port 0``, which counts every statement
  (what recording the statement metrics costs the relay);
* ``minimal-relay``: ``bench/minimal_relay.py``, a minimal relay on one uvloop event loop
  that frames every client message and reads each Query's first word: the Python ceiling;
* ``buenavista``: buenavista 0.5.0's own PostgreSQL proxy (``bench/baseline_servers.py
  postgres``), in its own venv.

Cells: ``pgbench -S`` (scale ``--scale``, initialised into a database of its own,
``pgbench_bench_<pid>``, created and dropped here) and a custom ``SELECT 1`` script; ``-M simple``,
``-M extended`` and ``-M prepared``; 1 and 4 clients (``-j 2``). Each round runs every cell
on every target, the target order rotating from round to round; a cell's figure is the
median tps of its rounds. A target that fails a cell keeps pgbench's error message.

    .venv/bin/python bench/passthrough.py [--seconds 2] [--rounds 3] [--scale 10] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

#: a database of this run's own: concurrent runs (make test's smoke run) must not drop it
DATABASE = f"pgbench_bench_{os.getpid()}"
UPSTREAM = "postgresql://postgres@127.0.0.1:5432/"
SCRIPTS = {"select-only": None, "select1": "SELECT 1;\n"}
TARGETS = ["postgresql", "pgbouncer", "minimal-relay", "pgbarrier", "pgbarrier-metrics",
           "pgbarrier-ref", "buenavista"]


def _admin(sql: str) -> None:
    import psycopg

    with psycopg.connect(c.POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(sql)


def create_database(scale: int) -> None:
    _admin(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
    _admin(f"CREATE DATABASE {DATABASE}")
    import subprocess

    subprocess.run(["pgbench", "-i", "-q", "-s", str(scale), "-h", "127.0.0.1", "-p", "5432",
                    "-U", "postgres", DATABASE], check=True, capture_output=True, text=True,
                   env=c.pgbench_env(), timeout=600)


def drop_database() -> None:
    _admin(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    c.add_pgbench_args(ap)
    ap.add_argument("--scale", type=int, default=10)
    ap.add_argument("--clients", default="1,4")
    ap.add_argument("--modes", default="simple,extended,prepared")
    ap.add_argument("--scripts", default="select-only,select1")
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--compare-ref", default=None,
                    help="also run pgbarrier from this git commit's tree (target pgbarrier-ref)")
    ap.add_argument("--json", default=None)
    args = c.parse_pgbench_args(ap, argv)
    clients = [int(x) for x in args.clients.split(",")]
    modes = args.modes.split(",")
    scripts = args.scripts.split(",")
    wanted = args.targets.split(",")
    if args.compare_ref and "pgbarrier-ref" not in wanted:
        wanted.append("pgbarrier-ref")

    result: dict[str, Any] = {
        "benchmark": "passthrough", "loadavg_start": c.loadavg(),
        "params": {"seconds": args.seconds, "seconds_one_client": args.seconds_one_client,
                   "transactions": args.transactions,
                   "rounds": args.rounds, "scale": args.scale, "clients": clients,
                   "modes": modes, "scripts": scripts, "database": DATABASE},
        "targets": {}, "cells": [], "pgbench": c.pgbench_version()}
    why = c.pgbench_missing() or c.postgres_reachable()
    if why:
        result["skipped"] = why
        print(f"passthrough: skipped: {why}")
        c.write_json(args.json, result)
        return 0

    t0 = time.monotonic()
    create_database(args.scale)
    result["init_seconds"] = round(time.monotonic() - t0, 1)
    targets: dict[str, tuple[str, int, str]] = {}  # name -> (host, port, user)
    pids: dict[str, int] = {}  # name -> server pid (for its CPU per transaction)
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-pt-") as tmp:
        stack.callback(drop_database)
        ref_src = c.source_tree(args.compare_ref, Path(tmp)) if args.compare_ref else None

        def start_ref() -> c.Server:  # started beside the others, from threads: its own env
            return c.start_pgbarrier("--upstream", UPSTREAM, "--database", DATABASE,
                                     name="pgbarrier-ref", src=ref_src)

        script_files = {}
        for name, text in SCRIPTS.items():
            if text is not None:
                script_files[name] = Path(tmp) / f"{name}.sql"
                script_files[name].write_text(text)

        import psycopg

        with psycopg.connect(c.POSTGRES_DSN) as conn:
            pg_version = conn.execute("SHOW server_version").fetchone()[0]
        starts: dict[str, tuple[Any, dict[str, Any]]] = {
            "postgresql": (lambda: None, {"version": f"PostgreSQL {pg_version}", "port": 5432}),
            "pgbouncer": (lambda: c.start_pgbouncer(
                {DATABASE: f"host=127.0.0.1 port=5432 dbname={DATABASE} user=postgres"}),
                {"version": _pgbouncer_version(), "mode": "session"}),
            "pgbarrier": (lambda: c.start_pgbarrier("--upstream", UPSTREAM, "--database", DATABASE),
                          {"version": c.main_versions()["pgbarrier"],
                           "command": f"pgbarrier serve --upstream {UPSTREAM} --database "
                                      f"{DATABASE} --data-dir :memory:"}),
            "pgbarrier-metrics": (
                lambda: c.start_pgbarrier("--upstream", UPSTREAM, "--database", DATABASE,
                                          "--metrics-port", "0", name="pgbarrier-metrics"),
                {"version": c.main_versions()["pgbarrier"],
                 "command": "the same with --metrics-port 0 (statements counted)"}),
            "pgbarrier-ref": (start_ref,
                              {"version": f"pgbarrier at {args.compare_ref}",
                               "command": "the same, from that commit's tree"}),
            "minimal-relay": (lambda: c.start_minimal_relay(),
                              {"version": "bench/minimal_relay.py (uvloop, frames and first words)"}),
            "buenavista": (lambda: c.start_baseline("postgres", "--dbname", DATABASE),
                           {"version": "buenavista 0.5.0 (postgres proxy)"}),
        }
        for name, (srv, err) in c.start_all({n: s for n, (s, _) in starts.items()
                                             if n in wanted}).items():
            info = starts[name][1]
            if err is not None:
                result["targets"][name] = {"status": f"skipped: {err}", **info}
                print(f"passthrough: {name}: skipped: {err}", file=sys.stderr)
                continue
            if srv is not None:
                stack.callback(srv.stop)
                targets[name] = (srv.host, srv.port, "postgres")
                pids[name] = srv.proc.pid
            else:
                targets[name] = ("127.0.0.1", 5432, "postgres")
            result["targets"][name] = {"status": "ok", **info}
        for name in TARGETS:
            result["targets"].setdefault(name, {"status": "not asked for"})

        order = [t for t in TARGETS if t in targets]
        runs: dict[tuple[str, str, int, str], list[c.PgbenchRun]] = {}
        for rnd in range(args.rounds):
            for script in scripts:
                for mode in modes:
                    for n in clients:
                        for target in c.rotate(order, rnd):
                            host, port, user = targets[target]
                            run = c.run_pgbench(
                                host, port, user, DATABASE, mode=mode, clients=n,
                                seconds=args.seconds if n > 1 else args.seconds_one_client,
                                transactions=args.transactions,
                                script=script_files.get(script),
                                select_only=script == "select-only",
                                server_pid=pids.get(target))
                            runs.setdefault((script, mode, n, target), []).append(run)
                            shown = f"{run.tps:.0f} tps" if run.tps is not None else run.error
                            print(f"round {rnd + 1} {script:11} {mode:8} c={n} {target:10} {shown}",
                                  flush=True)
        for (script, mode, n, target), rs in runs.items():
            result["cells"].append({"script": script, "mode": mode, "clients": n,
                                    "target": target, **c.summarise_runs(rs)})
    result["seconds_total"] = round(time.monotonic() - t0, 1)
    c.write_json(args.json, result)
    _print_table(result)
    return 0


def _pgbouncer_version() -> str:
    import subprocess

    if c.pgbouncer_missing():
        return "not installed"
    out = subprocess.run([c.pgbouncer_binary(), "--version"], capture_output=True, text=True)
    return out.stdout.splitlines()[0] if out.stdout else "unknown"


def _print_table(result: dict[str, Any]) -> None:
    cells = {(x["script"], x["mode"], x["clients"], x["target"]): x for x in result["cells"]}
    keys = sorted({k[:3] for k in cells})
    for key in keys:
        row = []
        for t in TARGETS:
            cell = cells.get((*key, t))
            if cell is None:
                continue
            row.append(f"{t}={cell['median']:.0f}" if cell["median"] is not None
                       else f"{t}=FAILED")
        print(f"passthrough {key[0]} {key[1]} c={key[2]}: " + " ".join(row))


if __name__ == "__main__":
    raise SystemExit(main())
