"""The classifier on its own (issue 7, item 6): ns per statement, next to a full sqlglot parse.

For each statement of a mix of ordinary SQL (what pgbench, psql, drivers and BI tools
send) and pgbarrier's control statements it times, in this process, with ``timeit``
(best of ``--repeat`` runs of ``--number`` calls, call overhead included):

* ``is_control(sql)``: the cheap check every statement pays (:mod:`pgbarrier.sql.controls`);
* the simple-Query fast path: ``split_statements`` + ``is_control`` +
  ``mentions_rw_catalog`` for each piece;
* a full parse with pgbarrier's sqlglot dialect (``PgBarrier().parse(sql)``), what every
  statement would pay if the proxy parsed everything (buenavista's DuckDB backend runs
  ``sqlglot.parse_one`` on each statement);
* for control statements, ``parse_control`` (what they pay on top of the check).

    .venv/bin/python bench/classifier.py [--number 2000] [--repeat 5] [--json PATH]
"""

from __future__ import annotations

import argparse
import logging
import sys
import timeit
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

from pgbarrier.sql import PgBarrier, parse_control  # noqa: E402
from pgbarrier.sql.classify import mentions_rw_catalog, split_statements  # noqa: E402
from pgbarrier.sql.controls import is_control  # noqa: E402

ORDINARY = {
    "pgbench -S": "SELECT abalance FROM pgbench_accounts WHERE aid = 48291;",
    "pgbench update": "UPDATE pgbench_accounts SET abalance = abalance + -2787 WHERE aid = 48291;",
    "SELECT 1": "SELECT 1",
    "BEGIN": "BEGIN",
    "COMMIT": "COMMIT",
    "SET": "SET application_name = 'psql'",
    "SHOW search_path": "SHOW search_path",
    "INSERT 1 KB string": "INSERT INTO notes (id, body) VALUES (7, '" + "x" * 1024 + "')",
    "join + group by": ("SELECT c.region, count(*) AS n, sum(o.amount) AS total FROM orders o "
                        "JOIN customers c ON c.id = o.customer_id WHERE o.created_at >= "
                        "now() - interval '7 days' GROUP BY c.region ORDER BY total DESC LIMIT 10"),
    "catalog query (psql \\d)": (
        "SELECT c.oid, n.nspname, c.relname FROM pg_catalog.pg_class c LEFT JOIN "
        "pg_catalog.pg_namespace n ON n.oid = c.relnamespace WHERE c.relname OPERATOR(pg_catalog.~) "
        "'^(orders)$' COLLATE pg_catalog.default AND pg_catalog.pg_table_is_visible(c.oid) "
        "ORDER BY 2, 3"),
    "DROP TABLE": "DROP TABLE IF EXISTS scratch",
    "CREATE TABLE": "CREATE TABLE t (id INT PRIMARY KEY, name TEXT NOT NULL, at TIMESTAMPTZ)",
}
CONTROL = {
    "ALTER DATABASE PAUSE": "ALTER DATABASE dev PAUSE",
    "ALTER DATABASE RESUME": "ALTER DATABASE dev RESUME",
    "FLUSH": "FLUSH",
    "CREATE MV WITH (refresh...)": (
        "CREATE MATERIALIZED VIEW region_totals WITH (refresh.interval.sec = 5) AS "
        "SELECT region, sum(amount) AS total FROM orders GROUP BY region"),
    "CREATE MV BATCH REFRESH": (
        "CREATE MATERIALIZED VIEW daily BATCH REFRESH EVERY 1 HOUR AS SELECT 1 AS x"),
    "REFRESH MATERIALIZED VIEW": "REFRESH MATERIALIZED VIEW region_totals",
    "SHOW DATABASES": "SHOW DATABASES",
}


def _ns(fn: Any, number: int, repeat: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e9


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--number", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--parse-number", type=int, default=200,
                    help="calls per run for the (much slower) sqlglot parses")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    # as the server does (cli.py): no warning per statement sqlglot parses as a Command
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    dialect = PgBarrier()
    rows = []
    for kind, stmts in (("ordinary", ORDINARY), ("control", CONTROL)):
        for label, sql in stmts.items():
            assert is_control(sql) == (kind == "control"), (label, sql)

            def fast(sql: str = sql) -> None:
                for piece in split_statements(sql):
                    is_control(piece.text)
                    mentions_rw_catalog(piece.text)

            row = {"kind": kind, "label": label, "chars": len(sql),
                   "is_control_ns": _ns(lambda sql=sql: is_control(sql), args.number, args.repeat),
                   "fast_path_ns": _ns(fast, args.number, args.repeat),
                   "sqlglot_parse_ns": _ns(lambda sql=sql: dialect.parse(sql), args.parse_number,
                                           args.repeat)}
            if kind == "control":
                row["parse_control_ns"] = _ns(lambda sql=sql: parse_control(sql),
                                              args.parse_number, args.repeat)
            rows.append(row)
            print(f"{kind:8} {label:28} is_control={row['is_control_ns']:8.0f} ns  "
                  f"fast path={row['fast_path_ns']:8.0f} ns  "
                  f"sqlglot parse={row['sqlglot_parse_ns']:10.0f} ns", flush=True)
    ordinary = [r for r in rows if r["kind"] == "ordinary"]
    mean = {k: sum(r[k] for r in ordinary) / len(ordinary)
            for k in ("is_control_ns", "fast_path_ns", "sqlglot_parse_ns")}
    result = {"benchmark": "classifier", "params": {"number": args.number, "repeat": args.repeat,
                                                    "parse_number": args.parse_number},
              "rows": rows, "ordinary_mean": mean, "loadavg_start": c.loadavg()}
    c.write_json(args.json, result)
    print(f"ordinary SQL, mean of {len(ordinary)}: is_control {mean['is_control_ns']:.0f} ns, "
          f"fast path {mean['fast_path_ns']:.0f} ns, sqlglot parse {mean['sqlglot_parse_ns']:.0f} ns "
          f"({mean['sqlglot_parse_ns'] / mean['fast_path_ns']:.0f}x the fast path)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
