"""A suspended portal's next rows framed ahead (result.BatchStream.frame_ahead): whatever
takes the stream next, and however many rows at a time, the client gets the same bytes as
when nothing was framed ahead."""

from __future__ import annotations

import random

import pytest

pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")

from pgbarrier.backends.duckdb_types import pg_type_oid  # noqa: E402
from pgbarrier.pgproto import columnar  # noqa: E402
from pgbarrier.result import BatchStream, Column  # noqa: E402

QUERY = ("SELECT i, 'r' || i::VARCHAR AS label, i / 7.0 AS x, DATE '2020-01-01' + i::INTEGER AS d "
         "FROM range(20000) t(i)")


def _stream():
    con = duckdb.connect()
    result = con._submit(QUERY, None, "stream", 3000)
    columns = [Column(d[0], pg_type_oid(d[1])) for d in result.description]
    reader = result.arrow_reader()
    batches = iter(reader)
    stream = BatchStream(lambda: next(batches, None), lambda e: e, columnar.to_rows)
    return con, columns, stream


@pytest.mark.parametrize("seed", range(6))
def test_rows_framed_ahead_are_the_bytes_framed_in_turn(seed):
    rng = random.Random(seed)
    _con, columns, stream = _stream()
    _con2, _columns, plain = _stream()
    text = columnar.DataRows(columns, [0, 0, 0, 0])
    mixed = columnar.DataRows(columns, [1, 0, 1, 0])
    got, want = [], []
    while True:
        framer = text if rng.random() < 0.8 else mixed  # a portal of other formats, now and then
        limit = rng.choice([0, 1, 7, 500, 2999, 3000, 3001, 8000])
        taken = stream.take_framed(framer.key, limit)
        if taken is not None:
            data, rows = taken
        else:
            batch = stream.next_batch(limit)
            if batch is None:
                assert plain.next_batch(limit) is None
                break
            data, rows = framer.frame(batch), batch.num_rows
        got.append(bytes(data))
        left = rows
        while left:  # the same rows, framed in turn with no framing ahead
            batch = plain.next_batch(left)
            want.append(bytes(framer.frame(batch)))
            left -= batch.num_rows
        assert b"".join(got) == b"".join(want), seed
        pick = rng.random()
        if pick < 0.6:
            stream.frame_ahead(framer)  # after the batch, as the session does
        elif pick < 0.7:
            stream.frame_ahead(framer)
            stream.park()  # the connection was needed: the framed rows are rows again
            plain.park()
    assert b"".join(got) == b"".join(want)


def test_framing_ahead_never_reads_the_backend():
    reads = []
    batches = iter([pa.record_batch([pa.array([1, 2, 3])], names=["a"])])

    def read():
        reads.append(1)
        return next(batches, None)

    stream = BatchStream(read, lambda e: e, columnar.to_rows)
    framer = columnar.DataRows([Column("a", 20)], [0])
    stream.frame_ahead(framer)  # nothing read yet: nothing to frame
    assert reads == [] and stream.take_framed(framer.key) is None
    assert stream.next_batch(1).num_rows == 1  # reads one batch, two rows left held
    stream.frame_ahead(framer)
    assert len(reads) == 1
    data, rows = stream.take_framed(framer.key)
    assert rows == 2 and bytes(data) == bytes(framer.frame(pa.record_batch(
        [pa.array([2, 3])], names=["a"])))
