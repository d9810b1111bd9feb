"""What an operator sees of ``pgbarrier serve`` and ``--help`` (issue 31, items 1 and 2).

Every start-up failure an operator can cause is one line on stderr, ``pgbarrier: ...``,
saying what is wrong and how to fix it, with exit code 2 (1 only for a port that cannot
be bound), before anything listens; never a traceback, never a password. ``--help``
reads as a manual: every flag has help text, its environment variable and its default.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from tests.conftest import READY, require_postgres


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--data-dir", ":memory:",
                           *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **(env or {})})


def _one_line(out: subprocess.CompletedProcess[str], code: int = 2) -> str:
    assert out.returncode == code, out.stderr
    assert "Traceback" not in out.stderr, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("pgbarrier: "), lines[0]
    assert not READY.search(out.stderr)
    return lines[0]


def _upstream_port(dsn: str) -> str:
    return dsn.rsplit("@", 1)[1].split("/", 1)[0]


@pytest.mark.parametrize("port", ["70000", "-1", "65536"])
def test_a_port_out_of_range_is_one_line(port: str) -> None:
    line = _one_line(_serve("--port", port))
    assert "--port must be between 0 and 65535" in line


@pytest.mark.parametrize("args, env, says", [
    (("--port", "abc"), {}, "invalid int value: 'abc'"),
    ((), {"PGBARRIER_PORT": "abc"}, "invalid int value: 'abc'"),
    ((), {"PGBARRIER_MAX_CONNECTIONS": "many"}, "invalid int value: 'many'"),
    (("--log-level", "loud"), {}, "invalid choice"),
])
def test_a_malformed_flag_or_variable_is_a_usage_error(args, env, says) -> None:
    out = _serve(*args, env=env)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert says in out.stderr


def test_a_port_in_use_is_one_line_and_exit_1() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = _one_line(_serve("--port", str(port)), code=1)
    assert f"cannot listen on 127.0.0.1:{port}" in line


@pytest.mark.parametrize("upstream, says", [
    ("127.0.0.1:5432", "is not a PostgreSQL connection string"),
    ("postgresql://root:s3cret@127.0.0.1:1/postgres", "Connection refused"),
    ("postgresql://root:s3cret@127.0.0.1:1/postgres?sslmode=bogus", "sslmode"),
])
def test_an_upstream_that_cannot_be_used_is_one_line(upstream: str, says: str) -> None:
    line = _one_line(_serve("--port", "0", "--upstream", upstream))
    assert says in line and "s3cret" not in line
    assert "--upstream" in line  # how to fix it


@pytest.mark.parametrize("path, says", [
    ("/nosuchrole_pgb", 'role "nosuchrole_pgb" does not exist'),
    ("/postgres/nosuchdb_pgb", 'database "nosuchdb_pgb" does not exist'),
])
def test_an_upstream_that_refuses_is_one_line(path: str, says: str) -> None:
    dsn = require_postgres()
    host = _upstream_port(dsn)
    user, _, db = path.strip("/").partition("/")
    upstream = (f"postgresql://{user}@{host}/postgres" if not db
                else f"postgresql://postgres@{host}/{db}")
    line = _one_line(_serve("--port", "0", "--upstream", upstream))
    assert says in line, line


def test_help_documents_every_flag() -> None:
    out = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--help"],
                         capture_output=True, text=True, timeout=60,
                         env={**os.environ, "COLUMNS": "400"})
    assert out.returncode == 0, out.stderr
    assert "No logic" not in out.stdout
    from pgbarrier.cli import build_parser

    parser = build_parser()
    serve = next(a for a in parser._actions if a.dest == "command").choices["serve"]
    for action in serve._actions:
        flags = [o for o in action.option_strings if o.startswith("--")]
        if not flags or action.dest == "help":
            continue
        assert action.help and len(action.help) > 20, flags[0]
        env = "PGBARRIER_" + flags[0][2:].upper().replace("-", "_")
        assert env in action.help, flags[0]
        assert env in " ".join(out.stdout.split()), env


def test_top_level_help_describes_the_product() -> None:
    out = subprocess.run([sys.executable, "-m", "pgbarrier", "--help"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0
    assert "PostgreSQL's wire protocol" in out.stdout and "No logic" not in out.stdout
    for command in ("serve", "status", "pause", "resume", "refresh"):
        assert command in out.stdout
