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
        if pick < 0.3:
            stream.frame_ahead(framer)  # after the batch, as the session does
        elif pick < 0.6:
            stream.frame_ahead(framer, limit)  # as many as the last request asked for
        elif pick < 0.7:
            stream.frame_ahead(framer)
            stream.park()  # the connection was needed: the framed rows are rows again
            plain.park()
        elif pick < 0.85:  # the Execute that suspended read the next rows ahead
            ahead = rng.choice([1, 500, 3001, 8000])
            stream.read_ahead(ahead)
            stream.frame_ahead(framer, ahead)
    assert b"".join(got) == b"".join(want)


def test_framing_ahead_frames_what_the_next_request_asks_for():
    """Framing ahead holds the session (the next request waits for it): it frames the rows
    the last request asked for, from the batches read, not more."""
    batches = iter([pa.record_batch([pa.array(list(range(i, i + 5)))], names=["a"])
                    for i in (0, 5)])
    stream = BatchStream(lambda: next(batches, None), lambda e: e, columnar.to_rows)
    framer = columnar.DataRows([Column("a", 20)], [0])
    assert stream.next_batch(1).num_rows == 1
    stream.read_ahead(6)
    stream.frame_ahead(framer, 2)
    assert stream.held_rows() == 9 and sum(len(a[2]) for a in stream._ahead) == 2
    stream.frame_ahead(framer, 2)  # already framed: nothing more
    assert sum(len(a[2]) for a in stream._ahead) == 2
    data, rows = stream.take_framed(framer.key, 2)
    assert rows == 2 and bytes(data) == bytes(framer.frame(pa.record_batch(
        [pa.array([1, 2])], names=["a"])))
    stream.frame_ahead(framer, 4)  # across the two batches
    assert [len(a[2]) for a in stream._ahead] == [2, 2]
    got = b"".join(bytes(stream.take_framed(framer.key)[0]) for _ in range(2))
    assert got == bytes(framer.frame(pa.record_batch([pa.array([3, 4, 5, 6])], names=["a"])))


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


def test_reading_ahead_reads_until_the_rows_are_held_and_keeps_an_error_for_its_turn():
    """``read_ahead`` (the Execute that suspended, under its own cancel and timeout) reads
    batches until the next Execute's rows are held; the backend's error is raised where
    the rows reach it, after the rows read before it."""
    reads = []
    batches = iter([pa.record_batch([pa.array(list(range(i, i + 3)))], names=["a"])
                    for i in (0, 3, 6)])

    def read():
        reads.append(1)
        if len(reads) == 3:
            raise ValueError("boom")
        return next(batches, None)

    stream = BatchStream(read, lambda e: RuntimeError(str(e)), columnar.to_rows)
    framer = columnar.DataRows([Column("a", 20)], [0])
    assert stream.next_batch(2).num_rows == 2  # one batch read, one row held
    assert stream.held_rows() == 1 and stream.reads_ahead(3)
    stream.read_ahead(3)
    assert len(reads) == 2 and stream.held_rows() == 4 and not stream.reads_ahead(3)
    stream.frame_ahead(framer, 3)  # three rows framed, from both batches, in order
    assert stream.held_rows() == 4
    data, rows = stream.take_framed(framer.key, 3)
    assert rows == 1 and bytes(data) == bytes(framer.frame(pa.record_batch(
        [pa.array([2])], names=["a"])))
    data, rows = stream.take_framed(framer.key, 2)
    assert rows == 2 and bytes(data) == bytes(framer.frame(pa.record_batch(
        [pa.array([3, 4])], names=["a"])))
    assert stream.take_framed(framer.key) is None and stream.held_rows() == 1
    stream.read_ahead(10)  # the third read fails: kept, nothing raised here
    assert len(reads) == 3 and not stream.reads_ahead(10)
    assert stream.next_batch().to_pydict() == {"a": [5]}
    with pytest.raises(RuntimeError, match="boom"):
        stream.next_batch()


def test_reading_ahead_stops_at_a_cancel_and_at_the_end():
    batches = iter([pa.record_batch([pa.array([1, 2])], names=["a"])])
    stream = BatchStream(lambda: next(batches, None), lambda e: e, columnar.to_rows)
    stream.cancel()
    assert not stream.reads_ahead(5)
    stream.read_ahead(5)
    assert stream.held_rows() == 0
    stream.rearm()
    stream.read_ahead(5)  # one batch, then the end
    assert stream.held_rows() == 2 and not stream.reads_ahead(5)
    assert stream.next_batch().num_rows == 2 and stream.next_batch() is None


def test_a_large_fetch_size_reads_and_frames_ahead_one_batch_at_most():
    """A driver's fetch size of a million rows must not hold a million rows between its
    round trips: the read and the framing ahead stop at ``AHEAD_ROWS``."""
    from pgbarrier.result import AHEAD_ROWS

    size = AHEAD_ROWS // 4
    batches = iter([pa.record_batch([pa.array(list(range(i, i + size)))], names=["a"])
                    for i in range(0, 40 * size, size)])
    stream = BatchStream(lambda: next(batches, None), lambda e: e, columnar.to_rows)
    framer = columnar.DataRows([Column("a", 20)], [0])
    assert stream.next_batch(1).num_rows == 1
    stream.read_ahead(1_000_000)
    assert AHEAD_ROWS <= stream.held_rows() < AHEAD_ROWS + size
    stream.frame_ahead(framer, 1_000_000)
    assert sum(len(a[2]) for a in stream._ahead) == AHEAD_ROWS
