"""examples/ as regression scripts, pg_regress style: ``psql -X -a -q -f`` output vs ``.out``.

Values that change from run to run (the pause time in the 55000 DETAIL) are masked
in the actual output before the comparison.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from conftest import start_server, stop_server

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
_PAUSED_AT = re.compile(r"was paused at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d{2,4} by")


@pytest.fixture
def fresh_server():
    srv = start_server()
    yield srv
    assert stop_server(srv) == 0


def run_script(srv, name: str, *extra: str) -> subprocess.CompletedProcess[str]:
    cmd = ["psql", "-X", "-h", srv.host, "-p", str(srv.port), "-U", "root", "-d", "dev",
           *extra, "-f", name]
    return subprocess.run(cmd, cwd=EXAMPLES, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=120)


def mask(text: str) -> str:
    return _PAUSED_AT.sub("was paused at <TIME> by", text)


def documented_command(script: str) -> list[str]:
    """The command README and the script's own ``-- Run`` line give (they must agree), as
    words; run in examples/."""
    readme = (EXAMPLES.parent / "README.md").read_text()
    shown = re.search(r"^cd examples && (psql .*-f quickstart\.sql)$", readme, re.M)
    assert shown, "README shows how to run examples/quickstart.sql"
    command = shown.group(1).replace("quickstart.sql", f"{script}.sql")
    run_line = (EXAMPLES / f"{script}.sql").read_text().splitlines()[1]
    assert run_line == f"-- Run (in examples/): {command}", run_line
    return shlex.split(command)


@pytest.mark.parametrize("script", ["quickstart", "batch_refresh"])
def test_example_matches_expected_output(fresh_server, script):
    """Run exactly as README says (its host and port swapped for the test server's)."""
    words = documented_command(script)
    words[words.index("-h") + 1] = fresh_server.host
    words[words.index("-p") + 1] = str(fresh_server.port)
    out = subprocess.run(words, cwd=EXAMPLES, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout
    expected = (EXAMPLES / f"{script}.out").read_text()
    assert mask(out.stdout) == expected


def test_seed_example_fix_before_fails_with_55000_after_succeeds(fresh_server):
    before = run_script(fresh_server, "seed_before.sql", "-v", "ON_ERROR_STOP=1",
                        "-v", "VERBOSITY=verbose")
    assert before.returncode == 3, before.stdout
    assert "seed_before.sql:8: ERROR:  55000: cannot create batch refresh job while database " \
           "barrier is paused" in before.stdout
    assert "HINT:  Resume the database with ALTER DATABASE dev RESUME, then retry." in before.stdout

    after = run_script(fresh_server, "seed_after.sql", "-v", "ON_ERROR_STOP=1")
    assert after.returncode == 0, after.stdout
    assert "CREATE MATERIALIZED VIEW" in after.stdout
    assert " orders | amount \n--------+--------\n      0 |       \n(1 row)" in after.stdout
