"""Rows per second out of a large result, pgbarrier's DuckDB beside PostgreSQL (issue 27).

The same table on every side, ``t``: ``--rows`` rows of eight mixed columns (``integer``,
``bigint``, ``double precision``, ``text``, ``date``, ``timestamp``, ``boolean``,
``numeric(12,2)``; NULLs in four of them, non-ASCII text in every fifth row), made by one
``CREATE TABLE t AS SELECT ... FROM generate_series(1, N)`` (:func:`load_sql`) sent as it
is to each side:

* ``pgbarrier``: ``pgbarrier serve --data-dir <temporary directory>`` (embedded DuckDB,
  database ``dev``), the statement translated by pgbarrier as any client's is;
* ``postgresql``: a fresh database on the PostgreSQL at ``PGBARRIER_BENCH_POSTGRES``
  (127.0.0.1:5432), ``VACUUM (FREEZE, ANALYZE)`` after the load, dropped at the end;
* ``upstream``: ``pgbarrier serve --upstream postgresql://postgres@127.0.0.1:5432/`` in
  front of that same database (a relay: expected ≈ PostgreSQL; ``--no-upstream`` leaves
  it out);
* ``duckdb``: the same statement on an in-memory DuckDB in this process (context: what
  DuckDB and its Python conversion alone do).

Each cell reads ``SELECT <the eight columns> FROM t`` whole, on a fresh connection (connect
time not counted), with one client:

* ``psycopg_text``: psycopg, text format, ``cursor.execute(sql); cursor.fetchall()``;
* ``asyncpg_binary``: asyncpg, binary format, ``await conn.fetch(sql)``;
* ``copy_text``: psycopg ``COPY (sql) TO STDOUT`` (text), every block read;
* ``psycopg_star`` and ``copy_csv``: the whole-table forms tools send, ``SELECT * FROM t``
  (text format) and ``COPY t TO STDOUT (FORMAT csv)`` (the same rows; no target of their
  own, there to show such a form is served as fast as the named columns);
* ``psycopg_named`` and ``asyncpg_cursor``: the same query read :data:`FETCH_ROWS` rows a
  round trip, as drivers with a fetch size read it: a psycopg named cursor (``DECLARE``,
  ``FETCH FORWARD``; psql's ``FETCH_COUNT`` does the same) and an asyncpg cursor (a portal,
  Execute with a row limit; pgjdbc's ``setFetchSize`` does the same);
* ``in_process`` (``duckdb`` only): ``cursor.execute(sql).fetchall()``.

A figure is rows / wall seconds; beside it the server's CPU per row (``/proc``: the
pgbarrier process, all threads; PostgreSQL's backend of that connection; for
``upstream`` both) and this client's. Rounds are interleaved: every client, every target
in turn, the order rotating each round; a cell's figure is the median of its rounds. The
first round also checks the answers are the same: the rows (as the driver's Python
values, an order-independent hash) and the COPY text (its lines, the same way) against
PostgreSQL's; a difference is recorded with examples.

Every statement has ``statement_timeout`` (``--cell-timeout``) and a client-side
timeout behind it; a cell that fails or times out is not tried again in later rounds.
Servers are stopped and the PostgreSQL database dropped on every way out (SIGTERM too).

    .venv/bin/python bench/result_rows.py [--rows 300000,3000000] [--rounds 3]
        [--cell-timeout 900] [--no-upstream] [--json PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

COLUMNS = ["c_int", "c_bigint", "c_double", "c_text", "c_date", "c_timestamp", "c_boolean",
           "c_numeric"]
TYPES = ["integer", "bigint", "double precision", "text", "date", "timestamp", "boolean",
         "numeric(12,2)"]
QUERY = f"SELECT {', '.join(COLUMNS)} FROM t"
#: the whole-table forms tools send (pandas ``read_sql("SELECT * ...")``, psql ``\\copy t
#: to ... csv``, pg_dump's COPY): the same rows, checked beside the issue's three clients
STAR = "SELECT * FROM t"
COPY_CSV = "COPY t TO STDOUT (FORMAT csv)"
#: rows a round trip of the fetch-size readers: a SQL cursor's FETCH FORWARD (psycopg's
#: named cursor; psql's FETCH_COUNT) and an Execute with a row limit (asyncpg's cursor;
#: pgjdbc's setFetchSize)
FETCH_ROWS = 2000
CLIENTS = ["psycopg_text", "asyncpg_binary", "copy_text", "psycopg_star", "copy_csv",
           "psycopg_named", "asyncpg_cursor"]
CLIENT_NAMES = {"psycopg_text": "psycopg, text format, `fetchall()`",
                "asyncpg_binary": "asyncpg, binary format, `fetch()`",
                "copy_text": "psycopg `COPY (SELECT …) TO STDOUT`",
                "psycopg_star": f"psycopg, text format, `{STAR}`",
                "copy_csv": f"psycopg `{COPY_CSV}`",
                "psycopg_named": f"psycopg named cursor, `FETCH FORWARD {FETCH_ROWS}` each",
                "asyncpg_cursor": f"asyncpg cursor, Execute of {FETCH_ROWS} rows each",
                "in_process": "in-process DuckDB `execute().fetchall()`"}
#: the targets of the wire clients, in their first round's order
WIRE_TARGETS = ["pgbarrier", "postgresql", "upstream"]
_MASK = (1 << 64) - 1
#: rows of each cell's first round kept to show what differs, when the answers do
SAMPLE = 2000


def load_sql(rows: int) -> str:
    """The table, in SQL that PostgreSQL, DuckDB and pgbarrier all run as it is (DuckDB's
    ``generate_series`` is ``bigint``: the date arithmetic casts to ``integer``)."""
    return (
        "CREATE TABLE t AS SELECT "
        "i::integer AS c_int, "
        "(i::bigint * 1000003 - 5000000000) AS c_bigint, "
        "CASE WHEN i % 17 = 0 THEN NULL ELSE i / 7.0::double precision END AS c_double, "
        "CASE WHEN i % 13 = 0 THEN NULL WHEN i % 5 = 0 THEN 'Zürich – 東京 ' || i "
        "ELSE 'row ' || i END AS c_text, "
        "DATE '2024-01-01' + (i % 3650)::integer AS c_date, "
        "TIMESTAMP '2024-01-01 00:00:00' + i * INTERVAL '1 second' AS c_timestamp, "
        "CASE WHEN i % 11 = 0 THEN NULL ELSE i % 2 = 0 END AS c_boolean, "
        "(((i % 200000) - 100000)::numeric(12,2) / 100)::numeric(12,2) AS c_numeric "
        f"FROM generate_series(1, {int(rows)}) AS g(i)")


# --------------------------------------------------------------------------- one cell


@dataclass
class Endpoint:
    """Where a wire client connects, and which server processes it charges CPU to."""

    host: str
    port: int
    user: str
    dbname: str
    server_pid: int | None = None  # a pgbarrier process; None for PostgreSQL direct
    backend: bool = False  # also charge PostgreSQL's backend (pg_backend_pid() through it)
    time_zone: str | None = None  # the session's TimeZone, set at start-up (None: default)

    def conninfo(self) -> str:
        zone = f" options='-c TimeZone={self.time_zone}'" if self.time_zone else ""
        return (f"host={self.host} port={self.port} user={self.user} dbname={self.dbname} "
                "connect_timeout=10 sslmode=disable gssencmode=disable "
                f"application_name=result_rows{zone}")


@dataclass
class Run:
    rows: int | None = None
    seconds: float | None = None
    server_cpu_s: float | None = None
    backend_cpu_s: float | None = None  # PostgreSQL's backend, where it is part of the path
    client_cpu_s: float | None = None
    bytes: int | None = None
    fingerprint: str | None = None
    error: str | None = None
    sample: Any = field(default=None, repr=False)  # round 1: the first rows, for a diff

    def as_json(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "sample"}
        out["rows_per_s"] = self.rows / self.seconds if self.rows and self.seconds else None
        return out


def _cpu(pid: int | None) -> float | None:
    return None if pid is None else c.proc_times(pid)[0]


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


class _Clock:
    """Wall, this process's CPU and the servers' CPU around one read."""

    def __init__(self, server_pid: int | None, backend_pid: int | None) -> None:
        self.server_pid, self.backend_pid = server_pid, backend_pid

    def __enter__(self) -> _Clock:
        self.s0, self.b0 = _cpu(self.server_pid), _cpu(self.backend_pid)
        self.c0, self.t0 = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.seconds = time.perf_counter() - self.t0
        self.client = time.process_time() - self.c0
        self.server = _delta(self.s0, _cpu(self.server_pid))
        self.backend = _delta(self.b0, _cpu(self.backend_pid))

    def fill(self, run: Run) -> Run:
        run.seconds, run.client_cpu_s = self.seconds, self.client
        if self.server_pid is not None:
            run.server_cpu_s, run.backend_cpu_s = self.server, self.backend
        else:  # PostgreSQL direct: its backend is the server
            run.server_cpu_s = self.backend
        return run


def rows_fingerprint(rows: Iterable[Any]) -> str:
    """Row count and an order-independent hash of the rows as Python values (this process
    only: str hashes are salted per process; a row holding lists or dicts by its repr)."""
    n = acc = 0
    for r in rows:
        try:
            h = hash(tuple(r))
        except TypeError:  # arrays, json
            h = hash(repr(tuple(r)))
        acc = (acc + h) & _MASK
        n += 1
    return f"{n}:{acc:016x}"


def lines_fingerprint(chunks: list[bytes]) -> tuple[str, list[bytes]]:
    lines = b"".join(chunks).split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return rows_fingerprint((ln,) for ln in lines), lines


def _key(item: Any) -> Any:
    """A row's ``c_int`` (a tuple's first value, a COPY line's first field)."""
    return item.split(b"\t", 1)[0] if isinstance(item, bytes) else item[0]


def _diff_examples(a: list[Any], b: list[Any], n: int = 3) -> dict[str, list[str]]:
    """A few rows in one sample and not the other (as multisets), among the rows whose
    ``c_int`` both samples hold: the samples are each side's first rows."""
    keys = {_key(x) for x in a} & {_key(x) for x in b}
    ca = Counter(x for x in a if _key(x) in keys)
    cb = Counter(x for x in b if _key(x) in keys)
    return {"here_not_postgresql": [repr(x)[:300] for x in list((ca - cb).elements())[:n]],
            "postgresql_not_here": [repr(x)[:300] for x in list((cb - ca).elements())[:n]]}


def _backend_pid_sync(conn: Any) -> int | None:
    try:
        return int(conn.execute("SELECT pg_backend_pid()").fetchone()[0])
    except Exception:  # noqa: BLE001 - a server without it: no backend CPU
        return None


def _watchdog(seconds: float, cancel: Callable[[], Any]) -> threading.Timer:
    """Cancel a statement the server did not end by its statement_timeout."""
    t = threading.Timer(seconds, cancel)
    t.daemon = True
    t.start()
    return t


def psycopg_text(ep: Endpoint, timeout_s: float, keep: bool, query: str = QUERY,
                 fetch_rows: int = 0) -> Run:
    """``fetchall()``; ``fetch_rows``: through a server-side cursor instead (DECLARE, then
    FETCH FORWARD ``fetch_rows`` until none are left), in a transaction."""
    import psycopg

    with psycopg.connect(ep.conninfo(), autocommit=not fetch_rows) as conn:
        conn.execute(f"SET statement_timeout = {int(timeout_s * 1000)}")
        backend = _backend_pid_sync(conn) if (ep.backend or ep.server_pid is None) else None
        dog = _watchdog(timeout_s + 30, conn.cancel_safe)
        try:
            with _Clock(ep.server_pid, backend) as clock:
                if fetch_rows:
                    with conn.cursor(name="result_rows") as cur:
                        cur.itersize = fetch_rows
                        cur.execute(query)
                        rows = list(cur)
                else:
                    rows = conn.execute(query).fetchall()
        finally:
            dog.cancel()
        run = clock.fill(Run(rows=len(rows)))
        if keep:
            run.fingerprint, run.sample = rows_fingerprint(rows), rows[:SAMPLE]
        return run


def asyncpg_binary(ep: Endpoint, timeout_s: float, keep: bool, query: str = QUERY,
                   fetch_rows: int = 0) -> Run:
    """``fetch()``; ``fetch_rows``: through a cursor instead (a portal read by Execute with a
    row limit of ``fetch_rows``), in a transaction."""
    import asyncpg

    async def go() -> Run:
        conn = await asyncpg.connect(host=ep.host, port=ep.port, user=ep.user,
                                     database=ep.dbname, timeout=10, ssl=False,
                                     server_settings={"TimeZone": ep.time_zone}
                                     if ep.time_zone else None)
        try:
            await conn.execute(f"SET statement_timeout = {int(timeout_s * 1000)}")
            backend = None
            if ep.backend or ep.server_pid is None:
                backend = await conn.fetchval("SELECT pg_backend_pid()")
            with _Clock(ep.server_pid, backend) as clock:
                if fetch_rows:
                    async with conn.transaction():
                        rows = [r async for r in conn.cursor(query, prefetch=fetch_rows)]
                else:
                    rows = await conn.fetch(query, timeout=timeout_s + 30)
            run = clock.fill(Run(rows=len(rows)))
            if keep:
                run.fingerprint = rows_fingerprint(rows)
                run.sample = [tuple(r) for r in rows[:SAMPLE]]
            return run
        finally:
            conn.terminate()

    return asyncio.run(go())


def copy_text(ep: Endpoint, timeout_s: float, keep: bool,
              statement: str = f"COPY ({QUERY}) TO STDOUT") -> Run:
    import psycopg

    with psycopg.connect(ep.conninfo(), autocommit=True) as conn:
        conn.execute(f"SET statement_timeout = {int(timeout_s * 1000)}")
        backend = _backend_pid_sync(conn) if (ep.backend or ep.server_pid is None) else None
        chunks: list[bytes] = []
        rows = nbytes = 0
        dog = _watchdog(timeout_s + 30, conn.cancel_safe)
        try:
            with _Clock(ep.server_pid, backend) as clock:
                with conn.cursor() as cur, cur.copy(statement) as copy:
                    for block in copy:
                        data = bytes(block)
                        rows += data.count(b"\n")
                        nbytes += len(data)
                        if keep:
                            chunks.append(data)
        finally:
            dog.cancel()
        run = clock.fill(Run(rows=rows, bytes=nbytes))
        if keep:
            run.fingerprint, lines = lines_fingerprint(chunks)
            run.sample = lines[:SAMPLE]
        return run


def in_process(con: Any, timeout_s: float, keep: bool) -> Run:
    cur = con.cursor()
    dog = _watchdog(timeout_s, cur.interrupt)
    try:
        with _Clock(None, None) as clock:
            rows = cur.execute(QUERY).fetchall()
    finally:
        dog.cancel()
        cur.close()
    run = clock.fill(Run(rows=len(rows)))
    run.server_cpu_s = None  # one process: its CPU is the client's column
    if keep:
        run.fingerprint, run.sample = rows_fingerprint(rows), rows[:SAMPLE]
    return run


READERS = {"psycopg_text": psycopg_text, "asyncpg_binary": asyncpg_binary,
           "copy_text": copy_text,
           "psycopg_star": lambda ep, t, keep: psycopg_text(ep, t, keep, STAR),
           "copy_csv": lambda ep, t, keep: copy_text(ep, t, keep, COPY_CSV),
           "psycopg_named": lambda ep, t, keep: psycopg_text(ep, t, keep,
                                                             fetch_rows=FETCH_ROWS),
           "asyncpg_cursor": lambda ep, t, keep: asyncpg_binary(ep, t, keep,
                                                                fetch_rows=FETCH_ROWS)}
#: whose answers a client's are held to on PostgreSQL (its own, else this one's)
REFERENCE = {"asyncpg_binary": "psycopg_text", "in_process": "psycopg_text"}


# --------------------------------------------------------------------------- the run


class _Stop(BaseException):
    pass


def _on_term(signum: int, frame: Any) -> None:
    raise _Stop(f"signal {signum}")


def _admin() -> Any:
    import psycopg

    return psycopg.connect(c.POSTGRES_DSN, autocommit=True, connect_timeout=10)


def _create_database() -> str:
    name = f"pgbarrier_bench_rows_{uuid.uuid4().hex[:10]}"
    with _admin() as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return name


def _drop_database(name: str) -> None:
    with _admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _load_wire(ep: Endpoint, rows: int, postgres: bool) -> float:
    import psycopg

    t0 = time.perf_counter()
    with psycopg.connect(ep.conninfo(), autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS t")
        conn.execute(load_sql(rows))
        if postgres:  # hint bits and the visibility map set now, not in the first round
            conn.execute("VACUUM (FREEZE, ANALYZE) t")
        got = conn.execute("SELECT count(*) FROM t").fetchone()[0]
        if got != rows:
            raise RuntimeError(f"loaded {got} rows, not {rows}")
    return time.perf_counter() - t0


def _load_in_process(con: Any, rows: int) -> float:
    t0 = time.perf_counter()
    con.execute("DROP TABLE IF EXISTS t")
    con.execute(load_sql(rows))
    return time.perf_counter() - t0


def _summary(runs: list[Run]) -> dict[str, Any]:
    ok = [r for r in runs if r.error is None and r.rows and r.seconds]
    per_row = lambda attr: c.median(  # noqa: E731
        [getattr(r, attr) / r.rows * 1e6 for r in ok if getattr(r, attr) is not None])
    return {"rows_per_s": c.median([r.rows / r.seconds for r in ok]),
            "seconds": c.median([r.seconds for r in ok]),
            "server_cpu_us_per_row": per_row("server_cpu_s"),
            "backend_cpu_us_per_row": per_row("backend_cpu_s"),
            "client_cpu_us_per_row": per_row("client_cpu_s"),
            "bytes": next((r.bytes for r in ok if r.bytes is not None), None),
            "fingerprint": next((r.fingerprint for r in runs if r.fingerprint), None),
            "errors": sorted({r.error for r in runs if r.error}),
            "failed_rounds": sum(1 for r in runs if r.error),
            "runs": [r.as_json() for r in runs]}


def run_size(rows: int, args: argparse.Namespace, endpoints: dict[str, Endpoint],
             duck: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"rows": rows, "load_s": {}, "cells": []}
    print(f"--- {rows:,} rows: loading", flush=True)
    for name in ("pgbarrier", "postgresql"):
        if name in endpoints:
            out["load_s"][name] = _load_wire(endpoints[name], rows, name == "postgresql")
    out["load_s"]["duckdb"] = _load_in_process(duck, rows)
    print(f"    loaded: " + ", ".join(f"{k} {v:.1f} s" for k, v in out["load_s"].items()),
          flush=True)
    order = [t for t in WIRE_TARGETS if t in endpoints]
    cells: dict[tuple[str, str], list[Run]] = {}
    dead: set[tuple[str, str]] = set()
    samples: dict[tuple[str, str], Any] = {}
    for rnd in range(args.rounds):
        keep = rnd == 0
        plan = [(client, t) for client in CLIENTS for t in c.rotate(order, rnd)]
        plan.insert(rnd % (len(plan) + 1), ("in_process", "duckdb"))
        for client, target in plan:
            key = (client, target)
            if key in dead:
                continue
            gc.collect()
            try:
                if client == "in_process":
                    run = in_process(duck, args.cell_timeout, keep)
                else:
                    run = READERS[client](endpoints[target], args.cell_timeout, keep)
                if run.rows != rows:
                    run.error = f"read {run.rows} rows, not {rows}"
            except Exception as exc:  # noqa: BLE001 - recorded as the cell's error
                msg = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                run = Run(error=f"{type(exc).__name__}: {msg}"[:300])
            if run.error:
                dead.add(key)
            if run.sample is not None:
                samples[key] = run.sample
                run.sample = None
            cells.setdefault(key, []).append(run)
            shown = (f"{run.rows / run.seconds:,.0f} rows/s ({run.seconds:.2f} s, server "
                     f"{_fmt(run.server_cpu_s)} s, client {run.client_cpu_s:.2f} s)"
                     if run.error is None else f"FAILED: {run.error}")
            print(f"round {rnd + 1} {rows:>9,} {client:15} {target:10} {shown}", flush=True)
            del run
    # the answers, from round 1, against PostgreSQL's
    for (client, target), runs in cells.items():
        cell = {"client": client, "target": target, **_summary(runs)}
        ref_key = (REFERENCE.get(client, client), "postgresql")
        ref = samples.get(ref_key)
        mine = samples.get((client, target))
        if ref is not None and mine is not None and (client, target) != ref_key:
            ref_fp = next(r.fingerprint for r in cells[ref_key] if r.fingerprint)
            cell["same_as_postgresql"] = cell["fingerprint"] == ref_fp
            if not cell["same_as_postgresql"]:
                cell["differences"] = _diff_examples(mine, ref)
                if not any(cell["differences"].values()):
                    cell["differences"]["note"] = [f"none in the first {SAMPLE:,} rows"]
        out["cells"].append(cell)
    del samples
    gc.collect()
    by = {(x["client"], x["target"]): x for x in out["cells"]}
    out["ratios"] = {}
    for client in CLIENTS:
        pg = (by.get((client, "postgresql")) or {}).get("rows_per_s")
        out["ratios"][client] = {
            t: (by[(client, t)]["rows_per_s"] / pg
                if pg and (client, t) in by and by[(client, t)]["rows_per_s"] else None)
            for t in ("pgbarrier", "upstream") if t in endpoints}
    return out


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="300000,3000000", help="comma-separated table sizes")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cell-timeout", type=float, default=900,
                    help="seconds one read may take (statement_timeout, then a cancel)")
    ap.add_argument("--no-upstream", action="store_true",
                    help="leave out pgbarrier --upstream in front of PostgreSQL")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.rows.split(",") if x.strip()]
    result: dict[str, Any] = {
        "benchmark": "result_rows", "loadavg_start": c.loadavg(),
        "params": {"rows": sizes, "rounds": args.rounds, "cell_timeout": args.cell_timeout,
                   "upstream": not args.no_upstream, "query": QUERY,
                   "load_sql": load_sql(sizes[0] if sizes else 0),
                   "columns": dict(zip(COLUMNS, TYPES))},
        "targets": {}, "sizes": []}
    why = c.postgres_reachable()
    if why:
        result["skipped"] = why
        print(f"result_rows: skipped: {why}")
        c.write_json(args.json, result)
        return 0

    import duckdb

    signal.signal(signal.SIGTERM, _on_term)
    t0 = time.monotonic()
    servers: list[c.Server] = []
    dbname: str | None = None
    data = tempfile.TemporaryDirectory(prefix="bench-rows-data-")
    try:
        dbname = _create_database()
        upstream_url = c.POSTGRES_DSN.rsplit("/", 1)[0] + "/"
        starts: dict[str, Any] = {
            "pgbarrier": lambda: c.start_pgbarrier("--data-dir", data.name)}
        if not args.no_upstream:
            # a pgbarrier database is the upstream database of that name
            starts["upstream"] = lambda: c.start_pgbarrier(
                "--upstream", upstream_url, "--database", dbname, name="pgbarrier-upstream")
        started = c.start_all(starts)
        for srv, _ in started.values():
            if srv is not None:
                servers.append(srv)
        srv, err = started["pgbarrier"]
        if srv is None:
            raise RuntimeError(f"pgbarrier did not start: {err}")
        pg_host, pg_port = _pg_address()
        endpoints = {"pgbarrier": Endpoint(srv.host, srv.port, "root", "dev", srv.proc.pid),
                     "postgresql": Endpoint(pg_host, pg_port, "postgres", dbname)}
        if "upstream" in started:
            up, err = started["upstream"]
            if up is None:
                result["targets"]["upstream"] = {"status": f"skipped: {err}"}
            else:
                endpoints["upstream"] = Endpoint(up.host, up.port, "postgres", dbname,
                                                 up.proc.pid, backend=True)
        for name, ep in endpoints.items():
            result["targets"][name] = {"status": "ok", "version": _version(ep)}
        duck = duckdb.connect(":memory:")
        result["targets"]["duckdb"] = {"status": "ok", "version": f"DuckDB {duckdb.__version__} "
                                       "in process"}
        for name, info in result["targets"].items():
            print(f"{name}: {info.get('version', '')} ({info['status']})", flush=True)
        for rows in sizes:
            result["sizes"].append(run_size(rows, args, endpoints, duck))
            c.write_json(args.json, {**result, "partial": True})
        duck.close()
        result["server_peak_rss_mb"] = {s.name: _peak_rss_mb(s.proc.pid) for s in servers}
    finally:
        for s in servers:
            s.stop()
        if dbname is not None:
            try:
                _drop_database(dbname)
            except Exception as exc:  # noqa: BLE001 - say so; the run's figures still stand
                print(f"result_rows: could not drop database {dbname}: {exc}", file=sys.stderr)
        data.cleanup()
    result["seconds_total"] = round(time.monotonic() - t0, 1)
    result.pop("partial", None)
    c.write_json(args.json, result)
    for size in result["sizes"]:
        by = {(x["client"], x["target"]): x for x in size["cells"]}
        for client in [*CLIENTS, "in_process"]:
            line = f"result_rows {size['rows']:,} {client}:"
            for t in ("pgbarrier", "postgresql", "upstream", "duckdb"):
                x = by.get((client, t))
                if x:
                    line += f" {t}={_fmt_int(x['rows_per_s'])}"
            r = size["ratios"].get(client, {})
            if r.get("pgbarrier"):
                line += f" pgbarrier/postgresql={r['pgbarrier']:.2f}"
            if r.get("upstream"):
                line += f" upstream/postgresql={r['upstream']:.2f}"
            print(line)
        diffs = [f"{x['client']}@{x['target']}" for x in size["cells"]
                 if x.get("same_as_postgresql") is False]
        print(f"result_rows {size['rows']:,}: answers differ from PostgreSQL's: "
              f"{', '.join(diffs) or 'none'}")
    return 0


def _fmt_int(v: float | None) -> str:
    return "—" if v is None else f"{v:,.0f}"


def _pg_address() -> tuple[str, int]:
    from psycopg.conninfo import conninfo_to_dict

    d = conninfo_to_dict(c.POSTGRES_DSN)
    return str(d.get("host") or "127.0.0.1"), int(d.get("port") or 5432)


def _version(ep: Endpoint) -> str:
    import psycopg

    with psycopg.connect(ep.conninfo(), autocommit=True) as conn:
        v = str(conn.execute("SELECT version()").fetchone()[0])
    return v if "pgbarrier" in v else v.split(" on ")[0]


def _peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except _Stop as stop:  # servers stopped and the database dropped on the way out
        print(f"result_rows: stopped by {stop}", file=sys.stderr)
        raise SystemExit(143) from None
