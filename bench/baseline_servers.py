"""buenavista 0.5.0's own servers, the baseline pgbarrier is compared with.

Runs in the baseline venv (``.bench/baseline``, made by ``make bench`` from
``bench/baseline-requirements.txt``), never in pgbarrier's: it imports only buenavista,
its DuckDB and the standard library, and starts the servers buenavista's examples start,
with the address (and, for the proxy, the upstream database) given on the command line
instead of the examples' fixed ones:

* ``duckdb``: ``buenavista.examples.duckdb_postgres.create`` (the example's rewriter and
  ``DuckDBConnection``) over an in-memory DuckDB, after running ``--init-sql`` on it;
* ``postgres``: ``buenavista.postgres.BuenaVistaServer`` over
  ``buenavista.backends.postgres.PGConnection``, as ``buenavista.examples.postgres_proxy``
  does (that example hard-codes localhost:5433 and the ``postgres`` database).

    .bench/baseline/bin/python bench/baseline_servers.py duckdb --port 5433 [--init-sql SQL]
    .bench/baseline/bin/python bench/baseline_servers.py postgres --port 5433 --dbname d
"""

from __future__ import annotations

import argparse
import signal
import sys


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("kind", choices=["duckdb", "postgres"])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--init-sql", action="append", default=[])
    ap.add_argument("--upstream-host", default="127.0.0.1")
    ap.add_argument("--upstream-port", type=int, default=5432)
    ap.add_argument("--user", default="postgres")
    ap.add_argument("--dbname", default="postgres")
    args = ap.parse_args()

    if args.kind == "duckdb":
        import duckdb
        from buenavista.examples.duckdb_postgres import create

        db = duckdb.connect()
        for sql in args.init_sql:
            db.execute(sql)
        server = create(db, (args.host, args.port))
    else:
        from buenavista.backends.postgres import PGConnection
        from buenavista.postgres import BuenaVistaServer

        server = BuenaVistaServer((args.host, args.port), PGConnection(
            conninfo="", host=args.upstream_host, port=args.upstream_port, user=args.user,
            dbname=args.dbname))

    def stop(_signum: int, _frame: object) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    print("Listening on %s:%d" % server.server_address[:2], flush=True)
    try:
        server.serve_forever()
    except (KeyboardInterrupt, SystemExit):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
