"""PostgreSQL 15's own regression scripts print the same through pgbarrier (issue 14).

Each script named below runs as pg_regress runs it, once against PostgreSQL and once
through ``pgbarrier serve --upstream`` in front of it, and the two outputs must be
identical (``tests/pg_regress_compare.py`` fetches the scripts from Debian's source
package into ``.cache/``; nothing of PostgreSQL's is in the repository). The selection
covers what a relay can get wrong: plain SQL of every kind, transactions and savepoints,
cursors and portals, PREPARE, COPY, LISTEN/NOTIFY, temp objects and search_path, roles
and privileges, GUCs, databases and PostgreSQL's own materialized views. ``python
tests/pg_regress_compare.py --port N`` runs all 219 against a running ``pgbarrier serve
--upstream`` (the last full run is in the project's notes).

Skipped when PostgreSQL or the sources cannot be reached, except under ``CI=true``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import pathlib
from collections.abc import Iterator

import pytest

from conftest import ServerProcess, require_postgres, start_server, stop_server

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
import pg_regress_compare as prc  # noqa: E402

SCRIPTS = ["select", "insert", "update", "join", "aggregates", "subselect", "union",
           "transactions", "portals", "prepare", "copy2", "copyselect", "returning", "with",
           "temp", "namespace", "create_view", "advisory_lock", "async", "matview",
           "create_role", "guc", "sequence", "compression", "triggers", "privileges",
           "rowsecurity", "drop_if_exists", "database"]


@pytest.fixture(scope="module")
def regress() -> pathlib.Path:
    require_postgres()
    try:
        return prc.fetch_sources()
    except (subprocess.SubprocessError, OSError, ValueError) as exc:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"PostgreSQL's regression sources could not be fetched: {exc}")


@pytest.fixture(scope="module")
def pgbarrier() -> Iterator[ServerProcess]:
    dsn = require_postgres()
    srv = start_server("--upstream", dsn.rsplit("/", 1)[0] + "/")
    yield srv
    assert stop_server(srv) == 0, "".join(srv.log)


@pytest.mark.parametrize("script", SCRIPTS)
def test_regression_script_prints_the_same_through_pgbarrier(regress, pgbarrier, script):
    diff = prc.compare(regress, script, pgbarrier.port)
    assert not diff, "\n".join(diff[:120])

