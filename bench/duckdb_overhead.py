"""DuckDB ``SELECT 1``: pgbarrier's server time per statement against DuckDB's own (issue 13).

The limit pgbarrier is measured against is DuckDB itself: the same statement run in
process, ``cursor.execute("SELECT 1").fetchall()`` in a loop on an in-memory DuckDB, its CPU time
(this process, all threads, DuckDB's own included) per statement (median of ``--rounds``
loops of ``--statements``). Beside it, ``pgbarrier serve
--data-dir :memory:`` serves one pgbench client (``-f select1.sql``, ``-M simple``,
``extended`` and ``prepared``) and the server's CPU time (user + system, all threads,
/proc) per statement is read around each run. The ratio is server CPU per statement over
the in-process time per statement: what the wire, the session and the event loop add.

``--query table`` serves ``SELECT id, name, price FROM bench_origins WHERE id = 1`` instead
(a ``varchar(10)``/``numeric(12,2)`` table of 100 rows, made on each server first), whose
RowDescription carries table OIDs, attnums and typmods (issue 15); with ``--compare-ref``
the same cell of a tree before that shows what they cost a statement. ``--compare-ref``
takes several commits, comma-separated (``make bench``: the tree before the event loop,
issue 13, and the tree before the columnar result path, issue 27).

Beside them, in the same rounds, ``bench/minimal_duckdb.py`` serves the same statements:
the floor for any Python server answering from DuckDB (read, frame, execute, fetch,
encode, write; nothing else), with the statement on its loop thread (``minimal-duckdb``)
and on a worker thread (``minimal-duckdb-pool``, as pgbarrier runs it). Over the
in-process time it shows what the wire alone costs on this machine, and pgbarrier's own
share is its time over the floor's (``--no-floor`` leaves them out). The in-process line
``origins`` times :meth:`SessionCatalog.origins` itself for that statement: a cache hit
(every execution after the first), a new statement text on the same table (another
literal: a parse), and the first statement after DDL (a parse and a catalog read).

    .venv/bin/python bench/duckdb_overhead.py [--statements 20000] [--rounds 3]
                                             [--transactions 20000] [--query select1|table]
                                             [--json PATH]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

MODES = ("simple", "extended", "prepared")


def in_process(statements: int) -> tuple[float, float]:
    """µs of CPU (this process, all threads: DuckDB's own included, as for the server) and
    of wall time per ``execute("SELECT 1").fetchall()`` on an in-memory DuckDB cursor."""
    cur = duckdb.connect(":memory:").cursor()
    cur.execute("SELECT 1").fetchall()
    c0, t0 = time.process_time(), time.perf_counter()
    for _ in range(statements):
        cur.execute("SELECT 1").fetchall()
    return ((time.process_time() - c0) / statements * 1e6,
            (time.perf_counter() - t0) / statements * 1e6)


def in_process_idle(statements: int, idle_s: float = 0.0002) -> float:
    """µs of CPU per ``execute("SELECT 1").fetchall()`` as :func:`in_process`, with the
    thread asleep ``idle_s`` after each, as a server's is while its client reads the reply
    and sends the next statement; the sleeps' own CPU (a loop of them alone) subtracted.
    Over :func:`in_process` it is what DuckDB's own work costs once the thread has slept."""
    cur = duckdb.connect(":memory:").cursor()
    cur.execute("SELECT 1").fetchall()
    c0 = time.process_time()
    for _ in range(statements):
        cur.execute("SELECT 1").fetchall()
        time.sleep(idle_s)
    both = time.process_time() - c0
    c0 = time.process_time()
    for _ in range(statements):
        time.sleep(idle_s)
    return (both - (time.process_time() - c0)) / statements * 1e6


TABLE_QUERY = "SELECT id, name, price FROM bench_origins WHERE id = 1"
TABLE_SQL = ["CREATE TABLE bench_origins (id integer, name varchar(10), price numeric(12,2))",
             "INSERT INTO bench_origins SELECT i, 'n' || i, i / 4.0 FROM range(100) r(i)"]


def origins_cost(statements: int) -> dict[str, float]:
    """µs per origins lookup of :data:`TABLE_QUERY` in process: a cache hit, a new statement
    text on tables already read (another literal), and a first statement after DDL."""
    from pgbarrier.backends.duckdb import DuckDBBackend
    from pgbarrier.sql.classify import leading_words

    backend = DuckDBBackend(":memory:")
    session = backend.connect("dev", "root")
    for stmt in TABLE_SQL:
        session.execute(stmt)
    words = leading_words(TABLE_QUERY, 3)
    cur, catalog = session.cursor(), session.catalog
    assert catalog.origins(cur, TABLE_QUERY, words), "no origins for the bench query"
    out = {}
    t0 = time.perf_counter()
    for _ in range(statements):
        catalog.origins(cur, TABLE_QUERY, words)
    out["hit"] = (time.perf_counter() - t0) / statements * 1e6
    fewer = max(1, statements // 20)
    t0 = time.perf_counter()
    for i in range(fewer):
        catalog.origins(cur, TABLE_QUERY.replace("= 1", f"= {i + 2}"), words)
    out["new_text"] = (time.perf_counter() - t0) / fewer * 1e6
    fewer = max(1, statements // 200)
    t0 = time.perf_counter()
    for _ in range(fewer):
        catalog.installer.origins.bump()
        catalog.origins(cur, TABLE_QUERY, words)
    out["after_ddl"] = (time.perf_counter() - t0) / fewer * 1e6
    session.close()
    backend.close()
    return out


def _make_table(srv: Any) -> None:
    import psycopg

    with psycopg.connect(f"host={srv.host} port={srv.port} user=root dbname=dev",
                         autocommit=True) as conn:
        for stmt in TABLE_SQL:
            conn.execute(stmt)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--statements", type=int, default=20000)
    ap.add_argument("--transactions", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--compare-ref", default=None,
                    help="also serve from this git commit's tree (or these, comma-separated), "
                         "in the same rounds")
    ap.add_argument("--query", choices=("select1", "table"), default="select1")
    ap.add_argument("--no-floor", action="store_true",
                    help="leave out bench/minimal_duckdb.py (inline and on a worker)")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    result: dict[str, Any] = {"benchmark": "duckdb_overhead", "loadavg_start": c.loadavg(),
                              "params": vars(args), "cells": []}
    why = c.pgbench_missing()
    if why:
        result["skipped"] = why
        c.write_json(args.json, result)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-dko-") as tmp:
        script = Path(tmp) / f"{args.query}.sql"
        script.write_text((TABLE_QUERY if args.query == "table" else "SELECT 1") + ";\n")
        if args.query == "table":
            cost = result["origins_us"] = origins_cost(args.statements)
            print(f"origins in-process: cache hit {cost['hit']:.2f} µs, new statement text "
                  f"{cost['new_text']:.0f} µs, first after DDL {cost['after_ddl']:.0f} µs",
                  flush=True)
        trees: dict[str, Path | None] = {"this": None}
        for i, ref in enumerate(filter(None, (args.compare_ref or "").split(","))):
            into = Path(tmp) / f"ref{i}"
            into.mkdir()
            trees[ref] = c.source_tree(ref, into)
        servers = {}
        try:
            for label, src in trees.items():
                with c.python_path(src):
                    servers[label] = c.start_pgbarrier()
                if args.query == "table":
                    _make_table(servers[label])
            if not args.no_floor:
                for pool in (False, True):
                    floor = c.start_minimal_duckdb(pool=pool)
                    servers[floor.name] = floor
                    if args.query == "table":
                        _make_table(floor)
            for rnd in range(args.rounds):
                inproc, inproc_wall = in_process(args.statements)
                result.setdefault("in_process_idle_us", []).append(
                    in_process_idle(max(1, args.statements // 4)))
                for mode in args.modes.split(","):
                    for label in c.rotate(list(servers), rnd):
                        srv = servers[label]
                        run = c.run_pgbench(srv.host, srv.port, "root", "dev", mode=mode,
                                            clients=1, transactions=args.transactions,
                                            script=script, server_pid=srv.proc.pid)
                        result["cells"].append({"round": rnd, "tree": label, "mode": mode,
                                                "tps": run.tps, "server_cpu_us": run.server_cpu_us,
                                                "in_process_us": inproc,
                                                "in_process_wall_us": inproc_wall,
                                                "error": run.error})
                        print(f"round {rnd + 1} {label:8} -M {mode:8} server "
                              f"{run.server_cpu_us} µs/stmt, in-process {inproc:.1f} µs",
                              flush=True)
        finally:
            for srv in servers.values():
                srv.stop()
    summary: dict[str, dict[str, Any]] = {}
    for cell in result["cells"]:
        summary.setdefault(cell["tree"], {})
    for tree in summary:
        for mode in args.modes.split(","):
            cells = [x for x in result["cells"]
                     if x["tree"] == tree and x["mode"] == mode and x["server_cpu_us"]]
            if cells:
                srv_us = statistics.median(x["server_cpu_us"] for x in cells)
                inp = statistics.median(x["in_process_us"] for x in cells)
                summary[tree][mode] = {
                    "server_cpu_us": srv_us, "in_process_us": inp,
                    "ratio": srv_us / inp if inp else None,
                    "tps": statistics.median(x["tps"] for x in cells if x["tps"])}
    result["summary"] = summary
    idle = result.get("in_process_idle_us")
    if idle:
        result["in_process_idle_median_us"] = statistics.median(idle)
        print(f"in-process, 0.2 ms asleep between statements: "
              f"{result['in_process_idle_median_us']:.1f} µs/stmt")
    c.write_json(args.json, result)
    for tree, modes in summary.items():
        for mode, s in modes.items():
            print(f"duckdb_overhead {tree} -M {mode}: server {s['server_cpu_us']:.1f} µs/stmt, "
                  f"in-process {s['in_process_us']:.1f} µs, ratio {s['ratio']:.2f}, "
                  f"{s['tps']:.0f} tps")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
