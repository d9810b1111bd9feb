"""RowStream: a backend's rows fetched in batches as the client reads them."""

from __future__ import annotations

import duckdb
import pytest

from pgbarrier.errors import PgError
from pgbarrier.result import RowStream


def _stream(sql: str, batch_rows: int) -> tuple[RowStream, list[int]]:
    cur = duckdb.connect(":memory:").cursor()
    cur.execute(sql)
    sizes: list[int] = []

    def fetch(n: int) -> list[tuple]:
        rows = cur.fetchmany(n)
        sizes.append(len(rows))
        return rows

    def to_error(exc: Exception) -> PgError:
        return PgError(str(exc), sqlstate="22000")

    return RowStream(fetch, to_error, batch_rows), sizes


@pytest.mark.parametrize("rows, fetches", [(1, [1]), (0, [0]), (10, [4, 4, 2]), (8, [4, 4, 0])])
def test_a_short_batch_is_the_last_fetch(rows, fetches):
    stream, sizes = _stream(f"SELECT range FROM range({rows})", 4)
    assert [r[0] for r in stream] == list(range(rows))
    assert sizes == fetches and not stream.pending


def test_park_reads_the_rest_with_one_fetch_when_it_is_short():
    stream, sizes = _stream("SELECT range FROM range(3)", 2)
    it = iter(stream)
    assert next(it) == (0,)
    stream.park()
    assert [r[0] for r in it] == [1, 2] and sizes == [2, 1]
