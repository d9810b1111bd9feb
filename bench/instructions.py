"""Instructions per transaction, counted by callgrind: the proxy's own work without the noise.

Every CPU figure read from /proc moves by tens of percent between runs on a shared 2-core
box. Callgrind counts the instructions a process executes (user space, every thread), and
the count for the same binary and the same input is the same whatever else the machine
is doing. So this benchmark runs each server under ``valgrind --tool=callgrind
--instr-atstart=no``, lets pgbench connect and warm it up, turns instrumentation on
(``callgrind_control -i on``), runs ``pgbench -t N1`` and dumps the count, runs
``pgbench -t N2`` and dumps again; the difference of the two dumps over the difference of
the transactions is the cost of one transaction, connection set-up cancelled out.

Targets (one process each, per cell): ``pgbarrier serve --upstream`` (metrics off and
``--metrics-port 0``: what recording metrics costs), ``bench/minimal_relay.py`` (the
Python ceiling) and PgBouncer (C), in front of PostgreSQL with ``pgbench -S`` (scale 1,
its own database); and the embedded DuckDB path: ``pgbarrier serve`` with ``SELECT 1``
against the same statement run in process, ``cursor.execute("SELECT 1").fetchall()``, by
the same interpreter (``--duckdb``), and ``bench/minimal_duckdb.py`` serving it (the floor
for any Python server answering from DuckDB). Kernel time (the system calls) is not counted: the
relays make the same ones (see the strace table of the profile section).

    .venv/bin/python bench/instructions.py [--modes simple,extended,prepared]
        [--clients 2] [--n1 100] [--n2 600] [--json PATH]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

MODES = ("simple", "extended", "prepared")
_TOTALS = re.compile(r"^(?:totals|summary):\s+(\d+)", re.M)


def missing() -> str | None:
    for tool in ("valgrind", "callgrind_control", "pgbench"):
        if shutil.which(tool) is None:
            return f"{tool} not found"
    return None


def _valgrind(out: Path, *, at_start: bool = False) -> list[str]:
    return ["valgrind", "--tool=callgrind", f"--instr-atstart={'yes' if at_start else 'no'}",
            f"--callgrind-out-file={out}"]


def _control(pid: int, *flags: str) -> None:
    subprocess.run(["callgrind_control", *flags, str(pid)], capture_output=True, timeout=120,
                   check=True)


def _dumped(out: Path, n: int, timeout: float = 120) -> int:
    """The instruction total of dump ``n`` (``out.n``), once callgrind has written it."""
    path = Path(f"{out}.{n}")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            m = _TOTALS.search(path.read_text(errors="replace"))
            if m:
                return int(m.group(1))
        time.sleep(0.2)
    raise RuntimeError(f"callgrind wrote no dump {path}")


def _pgbench(port: int, database: str, mode: str, clients: int, transactions: int,
             script: Path | None) -> None:
    cmd = ["pgbench", "-n", "-M", mode, "-c", str(clients), "-j", "1", "-t", str(transactions),
           "-h", "127.0.0.1", "-p", str(port), "-U", "postgres"]
    cmd += ["-f", str(script)] if script is not None else ["-S"]
    proc = subprocess.run([*cmd, database], capture_output=True, text=True, timeout=1800,
                          env=c.pgbench_env())
    if proc.returncode != 0:
        raise RuntimeError(f"pgbench failed: {(proc.stderr or proc.stdout).strip()[:300]}")


def measure(start: Any, database: str, mode: str, clients: int, n1: int, n2: int,
            script: Path | None = None) -> float:
    """Instructions per transaction of the server ``start(wrap)`` starts (see module doc)."""
    with tempfile.TemporaryDirectory(prefix="pgbarrier-callgrind-") as tmp:
        os.chmod(tmp, 0o777)  # PgBouncer drops to the postgres user before it dumps
        out = Path(tmp) / "callgrind.out"
        server = start(_valgrind(out))
        try:
            _pgbench(server.port, database, mode, clients, 20, script)  # warm up
            _control(server.proc.pid, "-i", "on")
            _pgbench(server.port, database, mode, clients, n1, script)
            _control(server.proc.pid, "-d")
            first = _dumped(out, 1)
            _pgbench(server.port, database, mode, clients, n2, script)
            _control(server.proc.pid, "-d")
            second = _dumped(out, 2)
        finally:
            server.stop()
    return (second - first) / ((n2 - n1) * clients)


def measure_whole(start: Any, database: str, mode: str, clients: int, n1: int, n2: int
                  ) -> float:
    """:func:`measure` for a server callgrind cannot be told to start counting (PgBouncer
    runs as another user, out of vgdb's reach): two processes, counted from start to exit,
    ``n1`` and ``n2`` transactions; start-up and shutdown cancel out in the difference."""
    totals = []
    for n in (n1, n2):
        with tempfile.TemporaryDirectory(prefix="pgbarrier-callgrind-") as tmp:
            os.chmod(tmp, 0o777)
            out = Path(tmp) / "callgrind.out"
            server = start(_valgrind(out, at_start=True))
            try:
                _pgbench(server.port, database, mode, clients, 20, None)  # as measure's
                _pgbench(server.port, database, mode, clients, n, None)
            finally:
                server.stop()
            totals.append(_final(out))
    return (totals[1] - totals[0]) / ((n2 - n1) * clients)


def _final(out: Path) -> int:
    m = _TOTALS.search(out.read_text(errors="replace"))
    if m is None:
        raise RuntimeError(f"callgrind wrote no totals to {out}")
    return int(m.group(1))


def in_process_select1(n1: int, n2: int) -> float:
    """Instructions per ``cursor.execute("SELECT 1").fetchall()`` in this interpreter."""
    code = ("import sys, duckdb\n"
            "cur = duckdb.connect(':memory:').cursor()\n"
            "for _ in range(int(sys.argv[1])): cur.execute('SELECT 1').fetchall()\n")
    totals = []
    with tempfile.TemporaryDirectory(prefix="pgbarrier-callgrind-") as tmp:
        for i, n in enumerate((n1, n2)):
            out = Path(tmp) / f"inproc.{i}"
            subprocess.run([*_valgrind(out, at_start=True), sys.executable, "-c", code, str(n)],
                           capture_output=True, timeout=1800, check=True)
            totals.append(_final(out))
    return (totals[1] - totals[0]) / (n2 - n1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--clients", type=int, default=2)
    ap.add_argument("--n1", type=int, default=100, help="transactions per client, first run")
    ap.add_argument("--n2", type=int, default=600, help="transactions per client, second run")
    ap.add_argument("--duckdb", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--targets", default=None,
                    help="only these (pgbarrier,pgbarrier_metrics,minimal_relay,pgbouncer)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    result: dict[str, Any] = {"benchmark": "instructions", "params": vars(args),
                              "loadavg_start": c.loadavg(), "cells": [], "duckdb": []}
    why = missing() or c.postgres_reachable()
    if why:
        result["skipped"] = why
        c.write_json(args.json, result)
        print(f"instructions: skipped: {why}")
        return 0
    database = f"pgbench_instr_{os.getpid()}"
    with psycopg.connect(c.POSTGRES_DSN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{database}"')
    try:
        subprocess.run(["pgbench", "-i", "-q", "-s", "1", "-h", "127.0.0.1", "-U", "postgres",
                        database], capture_output=True, check=True, timeout=300,
                       env=c.pgbench_env())
        upstream = "postgresql://postgres@127.0.0.1:5432/"
        relay = ("--upstream", upstream, "--database", database)
        targets: dict[str, Any] = {
            "pgbarrier": lambda wrap: c.start_pgbarrier(*relay, wrap=wrap, timeout=300),
            "pgbarrier_metrics": lambda wrap: c.start_pgbarrier(
                *relay, "--metrics-port", "0", wrap=wrap, timeout=300),
            "minimal_relay": lambda wrap: c.start_minimal_relay(wrap=wrap),
        }
        whole = {"pgbouncer"}  # counted from start to exit (see measure_whole)
        if c.pgbouncer_missing() is None:
            targets["pgbouncer"] = lambda wrap: c.start_pgbouncer(
                {database: f"host=127.0.0.1 port=5432 dbname={database} user=postgres"},
                wrap=wrap)
        if args.targets:
            targets = {k: v for k, v in targets.items() if k in args.targets.split(",")}
        for mode in modes:
            cell: dict[str, Any] = {"mode": mode, "script": "pgbench -S"}
            for name, start in targets.items():
                try:
                    how = measure_whole if name in whole else measure
                    cell[name] = how(start, database, mode, args.clients, args.n1, args.n2)
                except Exception as exc:  # noqa: BLE001 - recorded as the cell's note
                    cell[name] = None
                    cell[f"{name}_error"] = str(exc)[:300]
                print(f"instructions -S -M {mode} {name}: {cell[name]}", flush=True)
            result["cells"].append(cell)
        if args.duckdb:
            with tempfile.TemporaryDirectory() as tmp:
                script = Path(tmp) / "select1.sql"
                script.write_text("SELECT 1;\n")
                inproc = in_process_select1(args.n1 * args.clients, args.n2 * args.clients)
                for mode in modes:
                    try:
                        served = measure(lambda wrap: c.start_pgbarrier(wrap=wrap, timeout=300),
                                         "dev", mode, 1, args.n1 * args.clients,
                                         args.n2 * args.clients, script)
                    except Exception as exc:  # noqa: BLE001
                        served = None
                        result.setdefault("duckdb_errors", {})[mode] = str(exc)[:300]
                    try:  # the floor: bench/minimal_duckdb.py, the statement on its loop
                        floor = measure(lambda wrap: c.start_minimal_duckdb(wrap=wrap),
                                        "dev", mode, 1, args.n1 * args.clients,
                                        args.n2 * args.clients, script)
                    except Exception as exc:  # noqa: BLE001
                        floor = None
                        result.setdefault("duckdb_errors", {})[f"{mode} floor"] = str(exc)[:300]
                    result["duckdb"].append({"mode": mode, "server": served, "floor": floor,
                                             "in_process": inproc})
                    print(f"instructions duckdb SELECT 1 -M {mode}: server {served}, "
                          f"floor {floor}, in process {inproc}", flush=True)
    finally:
        with psycopg.connect(c.POSTGRES_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    result["loadavg_end"] = c.loadavg()
    c.write_json(args.json, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
