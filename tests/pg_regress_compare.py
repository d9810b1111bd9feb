"""PostgreSQL's own regression scripts, run directly and through pgbarrier, outputs compared.

Issue 14's check: a psql script that does not use pgbarrier's own statements prints the
same through ``pgbarrier serve --upstream`` as against PostgreSQL itself. The scripts are
PostgreSQL 15's ``src/test/regress/sql`` from Debian's source package, fetched here into
``.cache/pg-regress`` (never copied into the repository): :func:`fetch_sources` uses
``apt-get source`` with a private source list, so the machine's apt setup is untouched.

Each script runs the way pg_regress runs it (``psql -X -a -q``, its environment:
``PGTZ=PST8PDT``, ``PGDATESTYLE=Postgres, MDY``, ``PG_ABS_SRCDIR``...), after
``test_setup.sql``, in a fresh database of its own: once connected to PostgreSQL, once to
pgbarrier in front of the same PostgreSQL (a second fresh database, so both start equal).
Database names are replaced by one placeholder before comparing. Afterwards both
databases are dropped, and so is every role the script created and left behind.

    .venv/bin/python tests/pg_regress_compare.py [--port PGBARRIER_PORT] [script ...]

prints one line per script (same / N lines differ) and, with ``--diff``, the differences.
"""

from __future__ import annotations

import argparse
import difflib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import uuid

ROOT = pathlib.Path(__file__).resolve().parent.parent
CACHE = ROOT / ".cache" / "pg-regress"
#: the Debian source version fetched (bookworm's main pool keeps its sources)
SOURCE_VERSION = "15.18-0+deb12u1"
UPSTREAM_HOST, UPSTREAM_PORT = "127.0.0.1", 5432
PSQL_TIMEOUT_S = 300


def regress_dir() -> pathlib.Path:
    return CACHE / f"postgresql-{SOURCE_VERSION.split('-')[0]}" / "src" / "test" / "regress"


def fetch_sources() -> pathlib.Path:
    """The regression directory, fetched and unpacked once (raises when it cannot be)."""
    target = regress_dir()
    if (target / "sql" / "test_setup.sql").exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    lists = CACHE / "apt-lists"
    (lists / "partial").mkdir(parents=True, exist_ok=True)
    source_list = CACHE / "sources.list"
    source_list.write_text("deb-src http://deb.debian.org/debian bookworm main\n")
    opts = ["-o", f"Dir::Etc::sourcelist={source_list}", "-o", "Dir::Etc::sourceparts=/nonexistent",
            "-o", f"Dir::State::Lists={lists}", "-o", "APT::Sandbox::User=root"]
    subprocess.run(["apt-get", *opts, "update"], check=True, capture_output=True, timeout=300)
    subprocess.run(["apt-get", *opts, "source", "--download-only",
                    f"postgresql-15={SOURCE_VERSION}"], check=True, capture_output=True,
                   cwd=CACHE, timeout=600)
    (tarball,) = CACHE.glob("postgresql-15_*.orig.tar.bz2")
    prefix = f"postgresql-{SOURCE_VERSION.split('-')[0]}/src/test/regress/"
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
        tar.extractall(CACHE, members=members, filter="data")
    return target


def _admin(sql: str, port: int = UPSTREAM_PORT, database: str = "postgres") -> None:
    subprocess.run(["psql", "-X", "-q", "-h", UPSTREAM_HOST, "-p", str(port), "-U",
                    "postgres", "-d", database, "-c", sql], check=True, capture_output=True,
                   timeout=120)


def _psql(regress: pathlib.Path, port: int, database: str, script: str) -> str:
    env = {**os.environ, "PGTZ": "PST8PDT", "PGDATESTYLE": "Postgres, MDY",
           "PGAPPNAME": "pg_regress", "PG_ABS_SRCDIR": str(regress),
           "PG_ABS_BUILDDIR": str(regress), "PG_LIBDIR": str(regress), "PG_DLSUFFIX": ".so",
           "LC_MESSAGES": "C", "PGCLIENTENCODING": "UTF8"}
    for name in ("PGOPTIONS", "PGSERVICE", "PGSSLMODE"):
        env.pop(name, None)
    out = []
    for name in ("test_setup", script):
        done = subprocess.run(
            ["psql", "-X", "-a", "-q", "-h", UPSTREAM_HOST, "-p", str(port), "-U", "postgres",
             "-d", database, "-v", "HIDE_TABLEAM=on", "-v", "HIDE_TOAST_COMPRESSION=on",
             "-f", str(regress / "sql" / f"{name}.sql")],
            env=env, capture_output=True, text=True, timeout=PSQL_TIMEOUT_S, cwd=regress)
        out.append(done.stdout + done.stderr)
    return "".join(out)


def _roles() -> set[str]:
    done = subprocess.run(["psql", "-X", "-A", "-t", "-q", "-h", UPSTREAM_HOST, "-p",
                           str(UPSTREAM_PORT), "-U", "postgres", "-d", "postgres", "-c",
                           "SELECT rolname FROM pg_roles"], check=True, capture_output=True,
                          text=True, timeout=60)
    return set(done.stdout.split())


def _drop_roles(names: set[str]) -> None:
    """Roles a script created and left (owning objects in its dropped database, say)."""
    for name in sorted(names):
        quoted = '"' + name.replace('"', '""') + '"'
        for database in ("postgres", "template1"):
            subprocess.run(["psql", "-X", "-q", "-h", UPSTREAM_HOST, "-p", str(UPSTREAM_PORT),
                            "-U", "postgres", "-d", database, "-c",
                            f"DROP OWNED BY {quoted} CASCADE"], capture_output=True, timeout=60)
        _admin(f"DROP ROLE IF EXISTS {quoted}")


_COPY_FROM_STDIN = re.compile(r"\bFROM\s+stdin\b", re.IGNORECASE)
_NOTICE = re.compile(r"^(psql:(?P<file>[^:]+):)(?P<line>\d+)(: (?:NOTICE|WARNING|INFO|LOG|DEBUG):)")


def _copy_blocks(path: pathlib.Path) -> list[tuple[int, int]]:
    """The line ranges of a script's COPY ... FROM stdin statements with their data."""
    blocks, start = [], None
    for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
        if start is None and _COPY_FROM_STDIN.search(line):
            start = number
        elif start is not None and line.strip() == "\\.":
            blocks.append((start, number))
            start = None
    return blocks


def _normalise(text: str, database: str, regress: pathlib.Path | None = None) -> list[str]:
    """The output with the database's name masked, and the line a notice raised during
    COPY FROM STDIN is attributed to set to the COPY's own: psql names the input line it
    had read when the notice reached it, which varies from run to run even against
    PostgreSQL directly (a BEFORE STATEMENT trigger's notice races psql reading the data)."""
    blocks: dict[str, list[tuple[int, int]]] = {}

    def attribute(match: re.Match[str]) -> str:
        name, number = match["file"], int(match["line"])
        if name not in blocks:
            path = pathlib.Path(name) if regress is None else regress / "sql" / pathlib.Path(name).name
            blocks[name] = _copy_blocks(path) if path.is_file() else []
        for start, end in blocks[name]:
            if start <= number <= end:
                number = start
                break
        return f"{match[1]}{number}{match[4]}"

    text = re.sub(re.escape(database), "<db>", text)
    return [_NOTICE.sub(attribute, line) for line in text.splitlines()]


def compare(regress: pathlib.Path, script: str, pgbarrier_port: int,
            pgbarrier_database: str = "dev") -> list[str]:
    """The unified diff of the script's output direct vs through pgbarrier ([] if same).
    The relayed script's database is created through pgbarrier (connected to
    ``pgbarrier_database``), which creates it upstream."""
    tag = uuid.uuid4().hex[:8]
    direct_db, relayed_db = f"regress_{tag}_d", f"regress_{tag}_p"
    roles = _roles()
    _admin(f'CREATE DATABASE "{direct_db}"')
    _admin(f'CREATE DATABASE "{relayed_db}"', pgbarrier_port, pgbarrier_database)
    try:
        direct = _normalise(_psql(regress, UPSTREAM_PORT, direct_db, script), direct_db, regress)
        # roles are the cluster's: what they own in the first run must not be in the way
        _admin(f'DROP DATABASE IF EXISTS "{direct_db}" WITH (FORCE)')
        relayed = _normalise(_psql(regress, pgbarrier_port, relayed_db, script), relayed_db,
                             regress)
    finally:
        _admin(f'DROP DATABASE IF EXISTS "{direct_db}" WITH (FORCE)')
        try:
            _admin(f'DROP DATABASE IF EXISTS "{relayed_db}"', pgbarrier_port, pgbarrier_database)
        finally:
            _admin(f'DROP DATABASE IF EXISTS "{relayed_db}" WITH (FORCE)')
            _drop_roles(_roles() - roles)
    return list(difflib.unified_diff(direct, relayed, "postgresql", "pgbarrier", lineterm="", n=1))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True, help="a running pgbarrier --upstream")
    ap.add_argument("--diff", action="store_true")
    ap.add_argument("scripts", nargs="*")
    args = ap.parse_args(argv)
    regress = fetch_sources()
    scripts = args.scripts or sorted(p.stem for p in (regress / "sql").glob("*.sql"))
    same = 0
    for script in scripts:
        diff = compare(regress, script, args.port)
        changed = sum(1 for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---"))
        print(f"{script}: {'same' if not diff else f'{changed} lines differ'}", flush=True)
        if diff and args.diff:
            print("\n".join(diff[:200]))
        same += not diff
    print(f"{same} of {len(scripts)} the same")
    return 0 if same == len(scripts) else 1


if __name__ == "__main__":
    if shutil.which("psql") is None:
        sys.exit("psql is not installed")
    sys.exit(main())
