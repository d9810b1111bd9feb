"""Issue 26: psql scripts print the same on pgbarrier's embedded DuckDB as on PostgreSQL 15.

Each ``tests/compat/<name>.sql`` runs through ``psql`` against PostgreSQL (127.0.0.1:5432)
and against a DuckDB-backed pgbarrier, each in a fresh database, and the outputs must be
identical (see ``tests/compat/compare.py`` for the rules). Skipped when PostgreSQL is
unreachable, except under ``CI=true``.
"""

from __future__ import annotations

import pathlib
import sys
from collections.abc import Iterator

import pytest

from tests.conftest import ServerProcess, require_postgres, start_server, stop_server

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "compat"))
import compare  # noqa: E402


@pytest.fixture(scope="module")
def duck() -> Iterator[ServerProcess]:
    require_postgres()
    srv = start_server()
    yield srv
    assert stop_server(srv) == 0, "server did not exit cleanly:\n" + "".join(srv.log)


@pytest.mark.parametrize("script", compare.scripts())
def test_script_prints_the_same_as_postgresql(duck, script):
    expected, got = compare.compare(script, duck.port, duck.host)
    assert expected == got, compare.diff(expected, got, script)
