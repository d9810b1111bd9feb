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


# ---------------------------------------------------------------- BatchStream (issue 27)

def _batches(sql: str, batch_rows: int):
    pytest.importorskip("pyarrow")
    from pgbarrier.backends.duckdb_batches import BatchReading
    from pgbarrier.result import BatchStream

    cur = duckdb.connect(":memory:").cursor()
    reading = BatchReading()
    opened = reading.open(cur, sql, None)
    assert reading.servable(opened)
    ends: list[int] = []

    def to_error(exc: Exception) -> PgError:
        return PgError(str(exc), sqlstate="XX000" if not isinstance(exc, duckdb.Error)
                       else "22000")

    return BatchStream(reading.read, to_error, reading.to_rows, ends.append), ends, reading


def test_batches_are_sliced_to_a_row_limit_and_the_rest_kept(monkeypatch):
    from pgbarrier.backends import duckdb_batches

    monkeypatch.setattr(duckdb_batches, "BATCH_ROWS", 4)
    stream, ends, _ = _batches("SELECT range FROM range(10)", 4)
    got = []
    while (batch := stream.next_batch(3)) is not None:
        assert batch.num_rows <= 3
        got += batch.column(0).to_pylist()
    assert got == list(range(10)) and ends == [10] and not stream.pending


def test_park_keeps_the_batches_and_the_error_after_them(monkeypatch):
    from pgbarrier.backends import duckdb_batches

    monkeypatch.setattr(duckdb_batches, "BATCH_ROWS", 2048)
    stream, _, reading = _batches(
        "SELECT CASE WHEN range < 5000 THEN range ELSE error('boom') END AS v "
        "FROM range(10000)", 2048)
    rows = 0
    with pytest.raises(PgError, match="boom") as err:
        rows += stream.next_batch().num_rows  # DuckDB may meet the error this early
        stream.park()
        assert reading._result is None  # the connection is free
        while (batch := stream.next_batch()) is not None:
            rows += batch.num_rows
    # DuckDB's error, turned back from pyarrow's OSError into its own exception
    assert err.value.sqlstate == "22000" and rows < 5000 and not stream.pending


def test_batches_iterate_as_the_rows_fetchmany_gives():
    stream, ends, _ = _batches("SELECT range AS a, range::VARCHAR AS b FROM range(5)", 2)
    assert list(stream) == [(i, str(i)) for i in range(5)] and ends == [5]


def test_a_cancel_stops_the_next_batch():
    from pgbarrier.errors import QueryCanceled

    stream, _, _ = _batches("SELECT range FROM range(100000)", 2048)
    assert stream.next_batch() is not None
    stream.cancel()
    with pytest.raises(QueryCanceled):
        stream.next_batch()
