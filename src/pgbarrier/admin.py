"""``pgbarrier status | pause | resume | refresh | suspend | resume-view``: the admin CLI, a
client over the wire.

Rules this module keeps:

* It is a PostgreSQL client like psql (psycopg over libpq): ``-h/--host``, ``-p/--port``,
  ``-U/--username``, ``-d/--dbname`` and the ``PG*`` environment variables (``PGHOST``,
  ``PGPORT``, ``PGUSER``, ``PGPASSWORD``, ``PGPASSFILE``, ``PGSSLMODE``, ...) as libpq reads
  them. Where neither a flag nor the environment says, it connects to pgbarrier's own
  defaults, not libpq's: host ``127.0.0.1`` (pgbarrier listens on no Unix socket), port
  ``4566`` (``pgbarrier serve``'s), database ``dev``.
* It only runs SQL any client could: ``rw_catalog`` reads, ``ALTER DATABASE d PAUSE |
  RESUME``, ``REFRESH MATERIALIZED VIEW v``, ``ALTER MATERIALIZED VIEW v SUSPEND [REASON
  'text'] | RESUME``. So it needs no other access and works on both
  backends, with the server's own rules for who may do what.
* Output is a readable table on stdout, or with ``--json`` one JSON document. Exit codes: 0
  done; 1 the server (or the connection) failed, with ``pgbarrier: ERROR <SQLSTATE>:
  <message>`` on stderr (libpq's own connection failure is ``08001``); 2 a usage error
  (argparse's).
"""

from __future__ import annotations

import argparse
import re
import datetime as dt
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, TextIO

import psycopg
from psycopg import sql

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = "4566"
DEFAULT_DATABASE = "dev"

COMMANDS = ("status", "pause", "resume", "refresh", "suspend", "resume-view")


def add_parsers(sub: Any) -> None:
    """The admin commands, as subcommands of ``pgbarrier``."""
    common = argparse.ArgumentParser(add_help=False)
    conn = common.add_argument_group("connection (as psql's; PG* variables apply)")
    conn.add_argument("-h", "--host", help=f"default: $PGHOST, else {DEFAULT_HOST}")
    conn.add_argument("-p", "--port", help=f"default: $PGPORT, else {DEFAULT_PORT}")
    conn.add_argument("-U", "--username", help="default: $PGUSER, else the OS user")
    conn.add_argument("-d", "--dbname", help=f"default: $PGDATABASE, else {DEFAULT_DATABASE}")
    status = sub.add_parser("status", parents=[common], add_help=False,
                            help="each database's pause state and epoch, each job's refreshes",
                            description="Connects to a running pgbarrier as a client and "
                            "prints each database's pause state and epoch and each batch-"
                            "refresh job's last and next refresh (rw_catalog).")
    status.add_argument("--help", action="help", help="show this help message and exit")
    status.add_argument("--json", action="store_true", help="one JSON document, for scripts")
    for name, what in (("pause", "ALTER DATABASE DB PAUSE [FOR ...] [REASON ...]"),
                       ("resume", "ALTER DATABASE DB RESUME")):
        p = sub.add_parser(name, parents=[common], add_help=False, help=what,
                           description=f"Connects to a running pgbarrier and runs {what}.")
        p.add_argument("--help", action="help", help="show this help message and exit")
        p.add_argument("database", metavar="DB", help="the database, exactly as named")
        if name == "pause":
            p.add_argument("--for", dest="for_", metavar="INTERVAL",
                           help="resume by itself after INTERVAL ('10 minutes', '01:30:00')")
            p.add_argument("--reason", help="why (shown in rw_databases and in the 55000 "
                                            "errors the pause causes)")
    refresh = sub.add_parser("refresh", parents=[common], add_help=False,
                             help="REFRESH MATERIALIZED VIEW VIEW in database DB",
                             description="Connects to database DB of a running pgbarrier "
                             "and runs REFRESH MATERIALIZED VIEW VIEW; it returns when the "
                             "refresh has committed.")
    refresh.add_argument("--help", action="help", help="show this help message and exit")
    refresh.add_argument("database", metavar="DB", help="the database, exactly as named")
    refresh.add_argument("view", metavar="VIEW", help=VIEW_HELP)
    suspend = sub.add_parser("suspend", parents=[common], add_help=False,
                             help="ALTER MATERIALIZED VIEW VIEW SUSPEND in database DB: no "
                                  "scheduled refreshes until resume-view",
                             description="Connects to database DB of a running pgbarrier and "
                             "suspends VIEW's scheduled refreshes (a manual REFRESH still runs).")
    suspend.add_argument("--help", action="help", help="show this help message and exit")
    suspend.add_argument("database", metavar="DB", help="the database, exactly as named")
    suspend.add_argument("view", metavar="VIEW", help=VIEW_HELP)
    suspend.add_argument("--reason", help="why (shown in rw_batch_refresh_jobs)")
    resume_view = sub.add_parser("resume-view", parents=[common], add_help=False,
                                 help="ALTER MATERIALIZED VIEW VIEW RESUME in database DB",
                                 description="Connects to database DB of a running pgbarrier "
                                 "and resumes VIEW's scheduled refreshes.")
    resume_view.add_argument("--help", action="help", help="show this help message and exit")
    resume_view.add_argument("database", metavar="DB", help="the database, exactly as named")
    resume_view.add_argument("view", metavar="VIEW", help=VIEW_HELP)


#: the help of every VIEW argument
VIEW_HELP = ("the view as SQL names it: v, schema.v, '\"Mixed Case\"' (unquoted names fold "
             "to lower case, as in psql)")
_IDENT = r'(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*|"(?:[^"]|"")+")'
_QUALIFIED = re.compile(rf"{_IDENT}(?:\.{_IDENT}){{0,2}}")


def view_name(text: str) -> sql.Composable:
    """The VIEW argument as SQL, as PostgreSQL's client tools take a table name
    (``vacuumdb -t``): ``v``, ``s.v``, ``"Mixed Case"`` or ``s."My View"`` go as written
    (unquoted parts fold to lower case, quoted parts are exact); anything else (spaces,
    odd characters) is one name, quoted."""
    if _QUALIFIED.fullmatch(text):
        return sql.SQL(text)
    return sql.Identifier(text)


def conninfo(args: argparse.Namespace, dbname: str | None = None) -> dict[str, str]:
    """libpq keywords for ``args``: flags first, then what libpq takes from ``PG*`` itself,
    then pgbarrier's defaults for what neither gives (see the module rules)."""
    params: dict[str, str] = {}
    for key, flag, env, default in (("host", args.host, "PGHOST", DEFAULT_HOST),
                                    ("port", args.port, "PGPORT", DEFAULT_PORT),
                                    ("dbname", dbname or args.dbname, "PGDATABASE",
                                     DEFAULT_DATABASE)):
        if flag:
            params[key] = flag
        elif not os.environ.get(env):
            params[key] = default
    if args.username:
        params["user"] = args.username
    params.setdefault("application_name", os.environ.get("PGAPPNAME") or "pgbarrier-admin")
    return params


def run(args: argparse.Namespace, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    try:
        if args.command == "status":
            return _status(args, out)
        if args.command in ("pause", "resume"):
            stmt = sql.SQL("ALTER DATABASE {} " + args.command.upper()).format(
                sql.Identifier(args.database))
            if getattr(args, "for_", None) is not None:
                stmt = sql.SQL("{} FOR {}").format(stmt, sql.Literal(args.for_))
            if getattr(args, "reason", None) is not None:
                stmt = sql.SQL("{} REASON {}").format(stmt, sql.Literal(args.reason))
            return _command(conninfo(args), stmt, out)
        view = view_name(args.view)
        if args.command == "suspend":
            stmt = sql.SQL("ALTER MATERIALIZED VIEW {} SUSPEND").format(view)
            if args.reason is not None:
                stmt = sql.SQL("{} REASON {}").format(stmt, sql.Literal(args.reason))
        elif args.command == "resume-view":
            stmt = sql.SQL("ALTER MATERIALIZED VIEW {} RESUME").format(view)
        else:
            stmt = sql.SQL("REFRESH MATERIALIZED VIEW {}").format(view)
        return _command(conninfo(args, args.database), stmt, out)
    except psycopg.Error as exc:
        diag = exc.diag
        state = diag.sqlstate or ("08001" if isinstance(exc, psycopg.OperationalError) else "XX000")
        message = diag.message_primary or str(exc).strip()
        print(f"pgbarrier: ERROR {state}: {message}", file=err)
        for label, text in (("DETAIL", diag.message_detail), ("HINT", diag.message_hint)):
            if text:
                print(f"pgbarrier: {label}: {text}", file=err)
        return 1


def _command(params: dict[str, str], stmt: sql.Composable, out: TextIO) -> int:
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.add_notice_handler(lambda d: print(f"NOTICE: {d.message_primary}", file=out))
        cur = conn.execute(stmt)
        print(cur.statusmessage, file=out)
    return 0


_DATABASES = ("SELECT name, paused, paused_at, paused_by, committed_epoch, committed_at, "
              "pause_reason, resumes_at FROM rw_catalog.rw_databases ORDER BY name")
_JOBS = ("SELECT database, name, status, refresh_interval_sec, last_refreshed_at, "
         "next_refresh_at, suspended_by, suspend_reason, refresh_cron, refresh_timezone "
         "FROM rw_catalog.rw_batch_refresh_jobs ORDER BY database, name")


def _status(args: argparse.Namespace, out: TextIO) -> int:
    with psycopg.connect(**conninfo(args), autocommit=True) as conn:
        databases = conn.execute(_DATABASES).fetchall()
        jobs = conn.execute(_JOBS).fetchall()
    now = dt.datetime.now(dt.timezone.utc)
    dbs = [{"name": name, "paused": paused, "paused_at": _iso(at), "paused_by": by,
            "committed_epoch": epoch, "committed_at": _iso(committed),
            "epoch_age_sec": None if committed is None else
            round((now - committed).total_seconds(), 3),
            "pause_reason": reason, "resumes_at": _iso(resumes)}
           for name, paused, at, by, epoch, committed, reason, resumes in databases]
    job_rows = [{"database": db, "name": name, "status": status, "refresh_interval_sec": every,
                 "last_refreshed_at": _iso(last), "next_refresh_at": _iso(due),
                 "suspended_by": by, "suspend_reason": reason, "refresh_cron": cron,
                 "refresh_timezone": zone}
                for db, name, status, every, last, due, by, reason, cron, zone in jobs]
    if args.json:
        json.dump({"databases": dbs, "jobs": job_rows}, out, indent=2)
        out.write("\n")
        return 0
    out.write(_table("Databases", ["name", "state", "since", "by", "committed epoch", "epoch age"],
                     [[d["name"], "paused" if d["paused"] else "running",
                       d["paused_at"] or "", d["paused_by"] or "", str(d["committed_epoch"] or ""),
                       "" if d["epoch_age_sec"] is None else f"{d['epoch_age_sec']:.1f} s"]
                      for d in dbs]))
    out.write("\n")
    out.write(_table("Batch refresh jobs",
                     ["database", "name", "status", "every", "last refresh", "next refresh"],
                     [[j["database"], j["name"], j["status"],
                       f"{j['refresh_interval_sec']} s" if j["refresh_cron"] is None
                       else f"cron '{j['refresh_cron']}' {j['refresh_timezone']}",
                       j["last_refreshed_at"] or "", j["next_refresh_at"] or ""]
                      for j in job_rows]))
    return 0


def _iso(value: dt.datetime | None) -> str | None:
    return None if value is None else value.astimezone(dt.timezone.utc).isoformat(
        timespec="milliseconds")


def _table(title: str, header: Sequence[str], rows: list[list[str]]) -> str:
    """psql's aligned format: a title, the header, a rule, the rows, a row count."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    lines = [title.center(sum(widths) + 3 * len(widths) - 1).rstrip(),
             " " + " | ".join(h.center(w) for h, w in zip(header, widths)).rstrip(),
             "-" + "-+-".join("-" * w for w in widths) + "-"]
    lines += [" " + " | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.append(f"({len(rows)} row{'' if len(rows) == 1 else 's'})")
    return "\n".join(lines) + "\n"
