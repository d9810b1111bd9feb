"""A NO SCROLL cursor over a result read in record batches fetches batches (duckdb_cursors):
the same rows, positions and tags as a SCROLL cursor over the same query, which keeps rows."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")

from pgbarrier.errors import PgError  # noqa: E402
from pgbarrier.result import BatchStream  # noqa: E402

QUERY = "SELECT i, 'r' || i::text AS label, i * 0.5 AS half FROM big ORDER BY i"


@pytest.fixture
def session(dev_session):
    dev_session.execute("CREATE TABLE big AS SELECT i::INTEGER AS i FROM range(30000) t(i)")
    return dev_session


def _run(s, sql):
    result = s.execute(sql)
    rows = list(result.rows()) if result.columns is not None else []
    return result.completion_tag(len(rows)), rows


def test_fetch_of_a_no_scroll_cursor_is_a_batched_result(session):
    session.execute(f"DECLARE c NO SCROLL CURSOR WITH HOLD FOR {QUERY}")
    assert session._cursors["c"].stream is not None  # the query took the columnar path
    result = session.execute("FETCH FORWARD 5000 FROM c")
    assert isinstance(result.row_source, BatchStream) and result.batched()
    assert [r[0] for r in result.rows()] == list(range(5000))


def test_no_scroll_cursor_moves_as_a_scroll_cursor_does(session):
    rng = random.Random(5)
    session.execute(f"DECLARE c NO SCROLL CURSOR WITH HOLD FOR {QUERY}")
    session.execute(f"DECLARE s SCROLL CURSOR WITH HOLD FOR {QUERY}")
    assert session._cursors["s"].stream is None
    commands = ["FETCH {n} FROM {c}", "FETCH FORWARD {n} FROM {c}", "MOVE {n} IN {c}",
                "FETCH NEXT FROM {c}", "FETCH {c}", "MOVE FORWARD {n} IN {c}",
                "FETCH RELATIVE {n} FROM {c}", "FETCH ABSOLUTE {ahead} FROM {c}"]
    for _ in range(60):
        command = rng.choice(commands)
        n = rng.choice([1, 2, 100, 2047, 2048, 2049, 4000])
        outcomes = []
        for cursor in ("c", "s"):
            try:
                ahead = session._cursors[cursor].pos + n  # forward: a NO SCROLL one goes there
                outcomes.append(_run(session, command.format(n=n, c=cursor, ahead=ahead)))
            except PgError as err:
                outcomes.append(err.sqlstate)
        assert outcomes[0] == outcomes[1], command
    assert _run(session, "FETCH ALL FROM c") == _run(session, "FETCH ALL FROM s")
    assert _run(session, "FETCH 10 FROM c") == _run(session, "FETCH 10 FROM s") == ("FETCH 0", [])


def test_a_cursor_fetched_while_the_session_runs_other_statements(session):
    session.execute(f"DECLARE c NO SCROLL CURSOR WITH HOLD FOR {QUERY}")
    first = _run(session, "FETCH 3000 FROM c")
    assert _run(session, "SELECT count(*) FROM big") == ("SELECT 1", [(30000,)])  # parks it
    second = _run(session, "FETCH ALL FROM c")
    assert [r[0] for r in first[1] + second[1]] == list(range(30000))
    assert second[0] == "FETCH 27000"
