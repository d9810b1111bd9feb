"""``pgbarrier serve``: flags, environment variables, start-up and shutdown. No logic.
(``pgbarrier status | pause | resume | refresh`` are clients: :mod:`pgbarrier.admin`.)

Every flag also reads from ``PGBARRIER_<FLAG>`` (``--barrier-interval-ms`` from
``PGBARRIER_BARRIER_INTERVAL_MS``); a flag on the command line wins; a switch
(``--trust-any-host``) is on when its variable is ``1``, ``true``, ``yes`` or ``on``.
SIGINT and SIGTERM shut the server down and the process exits 0: new connections
are refused at once, running statements get ``--shutdown-grace-sec`` seconds to
finish and are then cancelled, every session ends with FATAL 57P01, the meta store
is flushed and closed (see ``App.stop``). A second signal does not cut that short.
A configuration pgbarrier refuses (trust on a non-loopback host, an unreadable
password file or certificate, a meta store it cannot open, a data dir it cannot
create) exits 2 with a one-line message saying why, before anything listens; a
port it cannot listen on exits 1.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import signal
import sys
import threading

from pgbarrier import __version__, admin, logs
from pgbarrier.app import App, Config, ListenError
from pgbarrier.backends.duckdb_config import check_duckdb_flags
from pgbarrier.jobs import history as hist
from pgbarrier.errors import PgError
from pgbarrier.meta import MetaStoreError, redact
from pgbarrier.server.auth import DEFAULT_METHOD, METHODS, ConfigError
from pgbarrier.server.listener import DEFAULT_RESERVED_CONNECTIONS


def _env(flag: str, default: str | None) -> str | None:
    return os.environ.get("PGBARRIER_" + flag.upper().replace("-", "_"), default)


def _env_switch(flag: str) -> bool:
    return (_env(flag, "") or "").strip().lower() in ("1", "true", "yes", "on")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pgbarrier", description=DESCRIPTION,
        epilog="Run 'pgbarrier COMMAND --help' for a command's flags. README.md is the manual.")
    parser.add_argument("--version", action="version", version=f"pgbarrier {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    serve = sub.add_parser(
        "serve", help="run the PostgreSQL-wire server", description=SERVE_DESCRIPTION,
        epilog="Every flag also reads PGBARRIER_<FLAG> from the environment (shown as [env "
               "...]); a flag on the command line wins; a switch is on when its variable is "
               "1, true, yes or on. SIGINT/SIGTERM shut down cleanly (exit 0). A "
               "configuration pgbarrier refuses exits 2 with one line saying why; a port it "
               "cannot listen on exits 1.")
    serve.add_argument("--host", default=_env("host", "127.0.0.1"), metavar="ADDRESS",
                       help="address to listen on; 0.0.0.0 for every interface (then a "
                            "password source is required, see below)")
    serve.add_argument("--port", type=int, default=_env("port", "4566"),
                       help="TCP port to listen on; 0 picks a free port (logged when ready)")
    serve.add_argument("--data-dir", default=_env("data-dir", "./pgbarrier-data"),
                       help="DuckDB files live here; ':memory:' keeps nothing")
    serve.add_argument("--meta-store", default=_env("meta-store", None), metavar="URL",
                       help="postgresql://... keeps pgbarrier's meta state in that PostgreSQL "
                            "(schema pgbarrier_meta) instead of SQLite in the data dir")
    serve.add_argument("--follow-only", action="store_true", default=_env_switch("follow-only"),
                       help="with a PostgreSQL --meta-store: never lead, only follow "
                            "(connections get FATAL 57P03), e.g. for maintenance")
    serve.add_argument("--leader-check-interval-ms", type=int, metavar="MS",
                       default=_env("leader-check-interval-ms", "1000"),
                       help="how often a leader checks its leader-lock session (default 1000)")
    serve.add_argument("--upstream", default=_env("upstream", None),
                       help="postgresql://user@host:5432/ — use this PostgreSQL instead of DuckDB; "
                            "each session runs there as the client's own user")
    serve.add_argument("--adopt-database", action="append", metavar="NAME", default=None,
                       help="with --upstream: serve this existing upstream database as a "
                            "pgbarrier database (repeatable; PGBARRIER_ADOPT_DATABASE takes "
                            "several separated by ','). Without it CREATE DATABASE of an "
                            "existing upstream database is 42P04, as in PostgreSQL; "
                            "'postgres' is always served")
    serve.add_argument("--upstream-force-user", action="store_true",
                       default=_env_switch("upstream-force-user"),
                       help="every upstream session runs as the --upstream user instead "
                            "(PgBouncer's force_user)")
    serve.add_argument("--barrier-interval-ms", type=int, metavar="MS",
                       default=_env("barrier-interval-ms", "1000"),
                       help="how often each database's barrier is injected (RisingWave's "
                            "barrier_interval_ms); batch refreshes and FLUSH wait for one")
    serve.add_argument("--checkpoint-frequency", type=int, metavar="N",
                       default=_env("checkpoint-frequency", "1"),
                       help="every Nth barrier is a checkpoint that commits an epoch "
                            "(RisingWave's checkpoint_frequency)")
    serve.add_argument("--shutdown-grace-sec", type=float,
                       default=_env("shutdown-grace-sec", "10"), metavar="SEC",
                       help="on SIGTERM/SIGINT, how long running statements may go on before "
                            "they are cancelled (default 10)")
    serve.add_argument("--metrics-port", type=int, metavar="N",
                       default=None if _env("metrics-port", None) in (None, "")
                       else int(_env("metrics-port", "0") or 0),
                       help="serve Prometheus metrics at http://HOST:N/metrics on the --host "
                            "address (off by default; 0 picks a free port, logged when ready)")
    serve.add_argument("--database", default=_env("database", "dev"),
                       help="database created at first start")
    serve.add_argument("--log-level", default=_env("log-level", "INFO"), type=str.upper,
                       choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"),
                       help="the least severe log lines written to stderr")
    serve.add_argument("--log-format", default=_env("log-format", "text"), choices=logs.FORMATS,
                       help="text (default) or json: one JSON object per line")
    serve.add_argument("--log-min-duration-statement", type=int, metavar="MS",
                       default=_env("log-min-duration-statement", "-1"),
                       help="log each statement (batch) that ran at least MS milliseconds, "
                            "with its duration, as PostgreSQL's setting does; 0 logs all, "
                            "-1 (default) none")
    serve.add_argument("--max-connections", type=int,
                       default=_env("max-connections", "100"), metavar="N",
                       help="sessions at most (default 100, PostgreSQL's); one more gets "
                            "FATAL 53300 sorry, too many clients already")
    serve.add_argument("--reserved-connections", type=int,
                       default=None if _env("reserved-connections", None) in (None, "")
                       else int(_env("reserved-connections", "3") or 0), metavar="N",
                       help="of --max-connections, the slots kept for superusers and the "
                            "admin CLI (default 3, PostgreSQL's superuser_reserved_connections"
                            ", or --max-connections - 1 when that is less); anyone else gets "
                            "FATAL 53300 past max - N")
    serve.add_argument("--superuser", action="append", metavar="NAME", default=None,
                       help="a user name that may take a reserved connection slot "
                            "(repeatable; PGBARRIER_SUPERUSER takes several separated by "
                            "','; default: the OS user running pgbarrier); with --upstream, "
                            "the upstream's superuser roles may too")
    serve.add_argument("--authentication-timeout-sec", type=float,
                       default=_env("authentication-timeout-sec", "60"),
                       metavar="SEC",
                       help="start-up and authentication must finish within this time in "
                            "total, or the connection is closed (default 60, PostgreSQL's "
                            "authentication_timeout)")
    serve.add_argument("--refresh-history-per-job", type=int, metavar="N",
                       default=int(_env("refresh-history-per-job", str(hist.DEFAULT_PER_JOB))
                                   or 0),
                       help="refresh runs kept per batch-refresh job in rw_refresh_history and "
                            f"the meta store (default {hist.DEFAULT_PER_JOB}; 0: no limit)")
    serve.add_argument("--refresh-history-max-age-sec", type=float, metavar="SEC",
                       default=float(_env("refresh-history-max-age-sec",
                                          str(hist.DEFAULT_MAX_AGE_S)) or 0),
                       help="refresh runs started longer ago are pruned (default "
                            f"{hist.DEFAULT_MAX_AGE_S}, a week; 0: no limit)")
    serve.add_argument("--max-message-bytes", type=int,
                       default=int(_env("max-message-bytes", str(64 * 1024 * 1024)) or 0),
                       help="longer frontend messages get 08P01 and close that connection")
    duck = serve.add_argument_group(
        "embedded DuckDB", "Each database is its own DuckDB instance, locked down before any "
        "client statement: a client reads and writes only its own database.")
    duck.add_argument("--allow-path", action="append", metavar="DIR",
                      default=None,
                      help="open DIR (and below) for reading and writing data files: Parquet, "
                           "CSV, COPY TO/FROM (repeatable; PGBARRIER_ALLOW_PATH takes several "
                           f"separated by '{os.pathsep}')")
    duck.add_argument("--allow-instance-info", action="store_true",
                      default=_env_switch("allow-instance-info"),
                      help="let every client see and act on the DuckDB instance: "
                           "duckdb_settings(), PRAGMA database_list/version/platform, "
                           "pragma_version(), CHECKPOINT (default: 42501, as PostgreSQL "
                           "answers a non-superuser)")
    duck.add_argument("--duckdb-memory-limit", default=_env("duckdb-memory-limit", None),
                      metavar="SIZE",
                      help="memory limit of EACH database's DuckDB instance, e.g. 4GB (default: "
                           "a quarter of the host's RAM); a query that needs more gets 53200")
    duck.add_argument("--duckdb-threads", type=int, default=_env("duckdb-threads", None),
                      metavar="N", help="worker threads of each database's DuckDB instance "
                                        "(default: the number of cores)")
    auth = serve.add_argument_group(
        "authentication and TLS",
        "Without a password source every user is trusted, which pgbarrier allows only on a "
        "loopback --host (or with --trust-any-host).")
    auth.add_argument("--password-file", default=_env("password-file", None), metavar="FILE",
                      help="user:password lines; passwords are kept only as SCRAM verifiers "
                           "(and md5 hashes for --auth-method md5)")
    auth.add_argument("--users-file", default=_env("users-file", None), metavar="FILE",
                      help="user:SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey> lines "
                           "(PostgreSQL's rolpassword); these users always use SCRAM")
    auth.add_argument("--auth-method", default=_env("auth-method", None), choices=METHODS,
                      help=f"with a password source; default {DEFAULT_METHOD}")
    auth.add_argument("--trust-any-host", action="store_true",
                      default=_env_switch("trust-any-host"),
                      help="allow trust (no password source) on a non-loopback --host")
    auth.add_argument("--tls-cert", default=_env("tls-cert", None), metavar="FILE",
                      help="PEM certificate (chain); with --tls-key, SSLRequest gets TLS")
    auth.add_argument("--tls-key", default=_env("tls-key", None), metavar="FILE",
                      help="PEM private key of --tls-cert")
    auth.add_argument("--require-tls", action="store_true", default=_env_switch("require-tls"),
                      help="refuse plaintext connections (FATAL 28000), as a pg_hba.conf "
                           "with only hostssl lines; needs --tls-cert and --tls-key")
    admin.add_parsers(sub)
    _document_environment(serve)
    return parser


#: ``pgbarrier --help``'s description
DESCRIPTION = (
    "pgbarrier speaks PostgreSQL's wire protocol: connect psql, BI tools and drivers to it as "
    "to PostgreSQL. It runs pause/resume barriers (ALTER DATABASE d PAUSE | RESUME, FLUSH) "
    "and batch-refresh materialized views itself, and everything else on its data backend: "
    "an embedded DuckDB (the default) or an upstream PostgreSQL (--upstream).")
#: ``pgbarrier serve --help``'s description
SERVE_DESCRIPTION = (
    "Serve clients on --host:--port. Without --upstream each database is an embedded "
    "DuckDB file in --data-dir; with --upstream every statement that is not pgbarrier's own "
    "runs on that PostgreSQL. pgbarrier's own state (pauses, jobs, refresh history) is kept "
    "in SQLite in --data-dir, or in a PostgreSQL --meta-store shared by several processes "
    "(one leads, the others follow).")


def _document_environment(parser: argparse.ArgumentParser) -> None:
    """Each flag's help ends with its environment variable and its default (one place)."""
    for action in parser._actions:  # argparse keeps no public list of a parser's flags
        flags = [o for o in action.option_strings if o.startswith("--")]
        if not flags or action.dest == "help":
            continue
        text = (action.help or "").replace("%", "%%")
        env = "PGBARRIER_" + flags[0][2:].upper().replace("-", "_")
        if "default" not in text and action.default not in (None, False):
            text += " (default: %(default)s)"
        if env not in text:
            text += f" [env {env}]"
        action.help = text.strip()


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _refuse(text: str, code: int) -> int:
    """``pgbarrier: <text>`` on stderr after every log line before it (the log writer is
    stopped first: its lines come in their own time), then exit ``code``."""
    logs.stop()
    print(f"pgbarrier: {text}", file=sys.stderr)
    return code


def _upstream_problem(dsn: str, adopt: list[str] | None = None) -> str | None:
    """Why ``--upstream dsn`` cannot be used (not a libpq connection string, or its server
    refuses or is not there), or None."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(dsn)
    except Exception as exc:  # noqa: BLE001 - psycopg's ProgrammingError and relatives
        return (f"--upstream {redact(dsn)} is not a PostgreSQL connection string "
                f"({' '.join(str(exc).split())}); give a URL such as "
                "postgresql://user@host:5432/postgres or key=value pairs such as "
                "'host=127.0.0.1 port=5432 user=postgres'")
    import psycopg

    try:  # before anything listens or logs: a wrong upstream is one line, not a start
        from pgbarrier.backends.postgres import admin_conninfo

        with psycopg.connect(admin_conninfo(dsn), connect_timeout=10, autocommit=True) as conn:
            for name in adopt or ():
                if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s",
                                [name]).fetchone() is None:
                    return (f"--adopt-database {name}: the upstream PostgreSQL "
                            f"{redact(dsn)} has no such database (CREATE DATABASE {name} "
                            "through pgbarrier makes a new one)")
    except psycopg.Error as exc:
        return (f"cannot use the upstream PostgreSQL {redact(dsn)}: "
                f"{' '.join(str(exc).split())}; check --upstream (host, port, "
                "user, database) and that the server accepts that role")
    return None


def _upstream_refused(dsn: str | None, exc: PgError) -> str:
    detail = f" ({' '.join(exc.detail.split())})" if getattr(exc, "detail", None) else ""
    return (f"cannot use the upstream PostgreSQL {redact(dsn or '')}: "
            f"{' '.join(exc.message.split())}{detail} [{exc.sqlstate}]; check --upstream "
            "(host, port, user, database) and that the server accepts that role")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command in admin.COMMANDS:
        return admin.run(args)
    # SIGINT/SIGTERM are blocked in every thread (threads inherit the mask of the thread
    # that starts them, so this comes before any is started, the log writer's first) and
    # taken by sigwait below: a signal arriving during start-up shuts down once the server
    # is up, and no other thread (the event loop's, DuckDB's) can swallow it
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    logs.configure(args.log_level, args.log_format)
    # sqlglot warns when it falls back to a Command; pgbarrier turns those into 42601 itself
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    if args.barrier_interval_ms <= 0 or args.checkpoint_frequency <= 0:
        return _refuse("--barrier-interval-ms and --checkpoint-frequency must be positive", 2)
    if args.shutdown_grace_sec < 0:
        return _refuse("--shutdown-grace-sec must not be negative", 2)
    if args.max_connections <= 0 or args.authentication_timeout_sec <= 0:
        return _refuse("--max-connections and --authentication-timeout-sec must be positive", 2)
    if args.reserved_connections is None:
        args.reserved_connections = min(DEFAULT_RESERVED_CONNECTIONS, args.max_connections - 1)
    if not 0 <= args.reserved_connections < args.max_connections:
        return _refuse("--reserved-connections must be at least 0 and less than "
                       "--max-connections", 2)
    if args.refresh_history_per_job < 0 or args.refresh_history_max_age_sec < 0:
        return _refuse("--refresh-history-per-job and --refresh-history-max-age-sec must not "
                       "be negative", 2)
    if args.metrics_port is not None and not 0 <= args.metrics_port <= 65535:
        return _refuse("--metrics-port must be between 0 and 65535", 2)
    if args.follow_only and not args.meta_store:
        return _refuse("--follow-only needs a PostgreSQL --meta-store (the SQLite meta "
                       "store is single-process)", 2)
    if args.leader_check_interval_ms <= 0:
        return _refuse("--leader-check-interval-ms must be positive", 2)
    if args.require_tls and not (args.tls_cert and args.tls_key):
        return _refuse("--require-tls needs --tls-cert and --tls-key", 2)
    allow_paths = tuple(args.allow_path if args.allow_path is not None else
                        [p for p in (_env("allow-path", "") or "").split(os.pathsep) if p])
    superusers = args.superuser if args.superuser is not None else (
        [n.strip() for n in (_env("superuser", "") or "").split(",") if n.strip()] or None)
    problem = check_duckdb_flags(allow_paths, args.duckdb_memory_limit, args.duckdb_threads)
    if problem:
        return _refuse(problem, 2)
    if not 0 <= args.port <= 65535:
        return _refuse(f"--port must be between 0 and 65535 (0 picks a free one), not "
                       f"{args.port}", 2)
    adopt = args.adopt_database if args.adopt_database is not None else [
        n.strip() for n in (_env("adopt-database", "") or "").split(",") if n.strip()]
    if adopt and args.upstream is None:
        return _refuse("--adopt-database needs --upstream (the embedded DuckDB has no "
                       "databases of its own to adopt)", 2)
    if args.upstream is not None:
        problem = _upstream_problem(args.upstream, adopt)
        if problem:
            return _refuse(problem, 2)
    config = Config(host=args.host, port=args.port, data_dir=args.data_dir, upstream=args.upstream,
                    upstream_force_user=args.upstream_force_user,
                    meta_store=args.meta_store,
                    barrier_interval_ms=args.barrier_interval_ms,
                    checkpoint_frequency=args.checkpoint_frequency,
                    default_database=args.database,
                    password_file=args.password_file, users_file=args.users_file,
                    auth_method=args.auth_method, trust_any_host=args.trust_any_host,
                    tls_cert=args.tls_cert, tls_key=args.tls_key,
                    max_message_bytes=args.max_message_bytes,
                    max_connections=args.max_connections,
                    reserved_connections=args.reserved_connections,
                    superusers=tuple(superusers) if superusers is not None else None,
                    authentication_timeout_s=args.authentication_timeout_sec,
                    require_tls=args.require_tls,
                    allow_paths=allow_paths,
                    allow_instance_info=args.allow_instance_info,
                    adopt_databases=tuple(adopt),
                    duckdb_memory_limit=args.duckdb_memory_limit,
                    duckdb_threads=args.duckdb_threads,
                    refresh_history_per_job=args.refresh_history_per_job,
                    refresh_history_max_age_s=args.refresh_history_max_age_sec,
                    log_min_duration_statement_ms=args.log_min_duration_statement,
                    metrics_port=args.metrics_port,
                    follow_only=args.follow_only,
                    leader_check_interval_s=args.leader_check_interval_ms / 1000)
    try:
        app = App(config)
    except MetaStoreError as exc:
        return _refuse(str(exc), 2)
    except PgError as exc:  # the upstream PostgreSQL refused or was not there
        return _refuse(_upstream_refused(args.upstream, exc), 2)
    except OSError as exc:  # the DuckDB data dir
        return _refuse(f"cannot use data dir {args.data_dir}: {exc}", 2)
    try:
        server = app.start()
    except ConfigError as exc:
        return _refuse(str(exc), 2)
    except PgError as exc:  # the upstream, when the leader first reads its databases
        return _refuse(_upstream_refused(args.upstream, exc), 2)
    except ListenError as exc:
        port = exc.port if exc.port is not None else args.port
        return _refuse(f"cannot listen on {args.host}:{port}: {exc.__cause__}", 1)
    # what start-up built lives as long as the process: out of the collector's way, so
    # the per-statement garbage is collected without walking sqlglot's and DuckDB's heaps
    gc.freeze()
    serving = threading.Thread(target=server.serve_forever, name="pgbarrier-serve", daemon=True)
    serving.start()
    signum = signal.sigwait(_STOP_SIGNALS)
    logging.getLogger("pgbarrier").info("received %s, shutting down", signal.Signals(signum).name)
    app.stop(grace_s=args.shutdown_grace_sec)
    logging.getLogger("pgbarrier").info("stopped")
    logs.stop()  # every line logged is written before the process exits
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
