"""What running one statement produces, whoever ran it (backend or control plane).

Rules this module keeps:

* ``columns is None`` means the statement returns no row set: the client gets
  NoData on Describe and only a CommandComplete with ``tag``.
* A row set's CommandComplete is ``SELECT <n>`` (or ``tag`` followed by the
  count, for ``INSERT ... RETURNING``-style results) and is completed by the
  session once the rows were counted, so portals that suspend report the total.
* ``Result`` is buenavista's ``QueryResult`` seam, with PostgreSQL type OIDs
  instead of buenavista's coarse ``BVType``.
* ``raw_format is None``: row values are Python values the session encodes;
  ``raw_format == 0``: they are already PostgreSQL text-format bytes (relayed
  from an upstream server) and are sent as they are.
* ``raw_format == 1``: they are PostgreSQL binary-format bytes (every column).
* ``exact_tag``: ``tag`` is the complete CommandComplete tag (an upstream's own,
  e.g. ``SELECT 3`` or ``SHOW``); no row count is appended.
* ``parameter_status``: run-time parameters the statement changed (name -> new
  value, e.g. after ``SET application_name``); the session reports those that
  differ from what the client was last told, in ParameterStatus messages sent
  before the CommandComplete, as PostgreSQL does.
* A :class:`RowStream` is a ``row_source`` that fetches its rows in batches from
  a backend cursor as they are iterated, so a result is never built in full; the
  session writes each batch out before the next is fetched. Its cursor holds one
  pending result: before the cursor runs anything else, the backend calls
  :meth:`RowStream.park`, which reads the rest into memory in batches (an error
  met while doing so is raised after the rows read before it). :meth:`RowStream.cancel` makes
  the next batch fail with 57014 (a cancel that came while the rows were being
  written, when the backend was not running); one that came while a portal was
  suspended is forgotten when its next Execute begins (PostgreSQL ignores a cancel
  when nothing runs).
* A :class:`BatchStream` is a RowStream whose rows come as record batches (DuckDB's Arrow
  export, the columnar result path): :meth:`BatchStream.next_batch` hands them out whole
  (sliced to a row limit, the rest kept), for a writer that encodes a column at a time
  (:mod:`pgbarrier.pgproto.columnar`); iterated, it yields the same rows as tuples of
  Python values, for every other consumer. One result is read one way: a consumer that
  began with the rows keeps to them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from buenavista.core import BVType, QueryResult

from pgbarrier.errors import Notice, PgError, QueryCanceled
from pgbarrier.pgproto import types as pgt
# re-exported: ``from pgbarrier.result import Column`` is how callers name it
from pgbarrier.pgproto.column import Column as Column


_BVTYPE = {
    pgt.BOOL: BVType.BOOL, pgt.INT2: BVType.INTEGER, pgt.INT4: BVType.INTEGER,
    pgt.INT8: BVType.BIGINT, pgt.FLOAT4: BVType.FLOAT, pgt.FLOAT8: BVType.FLOAT,
    pgt.NUMERIC: BVType.DECIMAL, pgt.TEXT: BVType.TEXT, pgt.VARCHAR: BVType.TEXT,
    pgt.DATE: BVType.DATE, pgt.TIME: BVType.TIME, pgt.TIMESTAMP: BVType.TIMESTAMP,
    pgt.INTERVAL: BVType.INTERVAL, pgt.BYTEA: BVType.BYTES, pgt.JSON: BVType.JSON,
}


@dataclass
class Result(QueryResult):
    """One statement's outcome: optional row set, command tag, notices."""

    tag: str
    columns: list[Column] | None = None
    row_source: Iterable[tuple[Any, ...]] = ()
    notices: list[Notice] = field(default_factory=list)
    #: None: Python values to encode; 0/1: values are already PostgreSQL text/binary bytes
    raw_format: int | None = None
    #: True: ``tag`` is the final CommandComplete tag, whatever the row count
    exact_tag: bool = False
    #: reported run-time parameters as they are after this statement
    parameter_status: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        QueryResult.__init__(self)
        self._iter: Iterator[tuple[Any, ...]] | None = None

    # buenavista's QueryResult seam -------------------------------------------------
    def has_results(self) -> bool:
        return self.columns is not None

    def column_count(self) -> int:
        return len(self.columns or ())

    def column(self, index: int) -> tuple[str, BVType]:
        col = (self.columns or [])[index]
        return col.name, _BVTYPE.get(col.type_oid, BVType.UNKNOWN)

    def rows(self) -> Iterator[tuple[Any, ...]]:
        if self._iter is None:
            self._iter = iter(self.row_source)
        return self._iter

    def batched(self) -> bool:
        """Whether the rows may be taken as batches: none was taken as a row yet."""
        return self._iter is None

    def status(self) -> str:
        return self.tag

    def resume(self) -> None:
        """A suspended portal's next Execute begins: only a cancel from now on counts."""
        if isinstance(self.row_source, RowStream):
            self.row_source.rearm()

    def completion_tag(self, row_count: int) -> str:
        """The CommandComplete tag once ``row_count`` rows were sent."""
        if self.columns is None or self.exact_tag:
            return self.tag
        if self.tag == "INSERT":
            return f"INSERT 0 {row_count}"
        return f"{self.tag} {row_count}"


#: rows fetched from the backend at a time (a DuckDB vector is 2,048 rows)
STREAM_BATCH_ROWS = 2048
_PARK_BATCH_ROWS = 65536


class RowStream:
    """Rows fetched ``batch_rows`` at a time with ``fetch(n)``; fewer than ``n`` rows (as
    DB-API's ``fetchmany`` returns only at the end) means no more, so a short result costs
    one fetch, not a second one that comes back empty. ``to_error`` turns a backend
    exception into the PgError the client gets."""

    def __init__(self, fetch: Callable[[int], list[tuple[Any, ...]]],
                 to_error: Callable[[Exception], PgError],
                 batch_rows: int = STREAM_BATCH_ROWS) -> None:
        self._fetch = fetch
        self._to_error = to_error
        self._batch_rows = batch_rows
        self._buffer: deque[tuple[Any, ...]] = deque()
        self._exhausted = False
        self._error: PgError | None = None
        self._cancelled = False

    @property
    def pending(self) -> bool:
        """True while rows are still to be read from the backend's cursor."""
        return not self._exhausted

    def cancel(self) -> None:
        if not self._exhausted:
            self._cancelled = True

    def rearm(self) -> None:
        """Forget a cancel that came while nobody was reading (a suspended portal)."""
        self._cancelled = False

    def park(self) -> None:
        """Read the rest of the rows into memory: the cursor is needed for something else."""
        if self._exhausted:
            return
        self._exhausted = True
        try:  # in batches: the rows before an error are kept, and sent before it
            while batch := self._fetch(_PARK_BATCH_ROWS):
                self._buffer.extend(batch)
                if len(batch) < _PARK_BATCH_ROWS:
                    break
        except Exception as exc:  # noqa: BLE001 - the backend's error, raised in its turn
            self._error = self._to_error(exc)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        buffer = self._buffer
        while True:
            while buffer:
                yield buffer.popleft()
            if self._exhausted:
                if self._error is not None:
                    err, self._error = self._error, None
                    raise err
                return
            if self._cancelled:
                self._exhausted = True
                raise QueryCanceled()
            try:
                batch = self._fetch(self._batch_rows)
            except Exception as exc:  # noqa: BLE001 - the backend's error, after the rows sent
                self._exhausted = True
                raise self._to_error(exc) from None
            if len(batch) < self._batch_rows:
                self._exhausted = True
                if not batch:
                    return
            buffer.extend(batch)


#: a batched result's batches are written out as soon as they are framed (not once
#: SPILL_BYTES have gathered) until this many rows are sent: the backend's first batch
#: comes in two parts (``duckdb_batches``), and the client's first rows wait for the
#: small first one only, which it reads while the rest is framed
EARLY_ROWS = 8192
#: ...unless the batch has fewer rows than a DuckDB vector: likely the result's last (a
#: short result then goes out in one write)
EARLY_BATCH_ROWS = 2048


#: the most rows a stream reads or frames ahead for a suspended portal's next Execute
#: (:meth:`BatchStream.read_ahead`, :meth:`BatchStream.frame_ahead`): a batch of DuckDB's
#: (``duckdb_batches.BATCH_ROWS``); a larger fetch size streams the rest as any result does
AHEAD_ROWS = 8192


def write_now(sent: int, rows: int) -> bool:
    """Whether a batched result's batch of ``rows`` rows, ``sent`` rows in with it, is
    written out at once (see :data:`EARLY_ROWS`)."""
    return rows >= EARLY_BATCH_ROWS and sent <= EARLY_ROWS


class BatchStream(RowStream):
    """Record batches read with ``read()`` (None at the end); ``to_rows`` turns a batch
    into tuples; ``on_end(rows)`` is told how many rows the result had once it is read out."""

    def __init__(self, read: Callable[[], Any], to_error: Callable[[Exception], PgError],
                 to_rows: Callable[[Any], list[tuple[Any, ...]]],
                 on_end: Callable[[int], None] | None = None) -> None:
        super().__init__(lambda n: [], to_error)
        self._read = read
        self._to_rows = to_rows
        self._on_end = on_end
        self._batches: deque[Any] = deque()
        self._count = 0
        #: rows framed ahead (:meth:`frame_ahead`), a batch each, in order: [framer key,
        #: messages, row ends, rows taken, the batch they are]
        self._ahead: deque[list[Any]] = deque()

    def _next(self) -> Any:
        batch = self._read()
        if batch is None:
            self._exhausted = True
            if self._on_end is not None:
                self._on_end(self._count)
        else:
            self._count += batch.num_rows
        return batch

    def park(self) -> None:
        self._unframe()
        if self._exhausted:
            return
        try:
            while (batch := self._next()) is not None:
                self._batches.append(batch)
        except Exception as exc:  # noqa: BLE001 - the backend's error, raised in its turn
            self._exhausted = True
            self._error = self._to_error(exc)

    def next_batch(self, max_rows: int = 0) -> Any:
        """The next batch of at most ``max_rows`` rows (0: any), None at the end."""
        self._unframe()
        batches = self._batches
        while True:
            if batches:
                batch = batches.popleft()
                if max_rows and batch.num_rows > max_rows:
                    batches.appendleft(batch.slice(max_rows))
                    batch = batch.slice(0, max_rows)
                if batch.num_rows:
                    return batch
                continue
            if self._exhausted:
                if self._error is not None:
                    err, self._error = self._error, None
                    raise err
                return None
            if self._cancelled:
                self._exhausted = True
                raise QueryCanceled()
            try:
                batch = self._next()
            except Exception as exc:  # noqa: BLE001 - the backend's error, after the rows sent
                self._exhausted = True
                raise self._to_error(exc) from None
            if batch is not None:
                batches.append(batch)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        while (batch := self.next_batch()) is not None:
            yield from self._to_rows(batch)

    def frame_ahead(self, framer: Any, rows: int = 0) -> None:
        """Frame rows already read (never a read from the backend: nothing of the
        statement runs) with ``framer`` (``frame_rows``, ``key``:
        :class:`pgbarrier.pgproto.columnar.DataRows`), for :meth:`take_framed`: a
        suspended portal's next rows, framed while the client reads the last ones.
        ``rows``: what the next Execute or FETCH will likely ask for (the last one's
        limit), framed from the front until that many are framed (at most
        :data:`AHEAD_ROWS`); 0: the next batch whole. Only that much: the framing holds the session, and the next request
        waits for it."""
        batches = self._batches
        ahead = self._ahead
        if ahead and ahead[0][0] != framer.key:
            return
        framed = self._framed_rows()
        rows = min(rows, AHEAD_ROWS)
        while batches and (framed < rows or not rows and not framed):
            batch = batches[0]
            need = rows - framed
            if rows and batch.num_rows > need:
                batches[0] = batch.slice(need)
                batch = batch.slice(0, need)
            else:
                batches.popleft()
            data, ends = framer.frame_rows(batch)
            ahead.append([framer.key, data, ends, 0, batch])
            framed += batch.num_rows

    def take_framed(self, key: Any, max_rows: int = 0) -> tuple[memoryview, int] | None:
        """Up to ``max_rows`` (0: all) of the rows framed ahead with a framer of ``key``
        (those of one batch at most), as messages and their count; None when there are
        none (rows framed another way go back to being rows)."""
        if not self._ahead:
            return None
        first_ahead = self._ahead[0]
        if first_ahead[0] != key:
            self._unframe()
            return None
        _key, data, ends, first, _batch = first_ahead
        left = len(ends) - first
        k = left if not max_rows or max_rows >= left else max_rows
        start = int(ends[first - 1]) if first else 0
        piece = memoryview(data)[start:int(ends[first + k - 1])]
        if k == left:
            self._ahead.popleft()
        else:
            first_ahead[3] = first + k
        return piece, k

    def _unframe(self) -> None:
        """Rows framed ahead and not taken go back to the front as rows of their batches."""
        ahead = self._ahead
        while ahead:
            segment = ahead.pop()
            rest = segment[4].slice(segment[3])
            if rest.num_rows:
                self._batches.appendleft(rest)

    def _framed_rows(self) -> int:
        """Rows framed ahead and not taken yet."""
        return sum(len(a[2]) - a[3] for a in self._ahead)

    def held_rows(self) -> int:
        """Rows read from the backend and not sent yet, framed ahead or not."""
        return self._framed_rows() + sum(b.num_rows for b in self._batches)

    def reads_ahead(self, rows: int) -> bool:
        """Whether :meth:`read_ahead` of ``rows`` would read from the backend."""
        return not self._exhausted and not self._cancelled \
            and self.held_rows() < min(rows, AHEAD_ROWS)

    def read_ahead(self, rows: int) -> None:
        """Read from the backend until ``rows`` rows are held (:meth:`held_rows`; at most
        :data:`AHEAD_ROWS`: a driver's fetch size of a million rows must not hold a
        million rows between its round trips) or the result ends: called by the statement that suspended (a portal's Execute with a
        row limit, once its rows are written), so the read runs under that statement's
        cancel and timeout, and its next Execute finds its rows read and framed
        (:meth:`frame_ahead`). An error is kept and raised where the rows reach it, as
        :meth:`park` keeps it."""
        while self.reads_ahead(rows):
            try:
                batch = self._next()
            except Exception as exc:  # noqa: BLE001 - the backend's error, raised in its turn
                self._exhausted = True
                self._error = self._to_error(exc)
                return
            if batch is not None:
                self._batches.append(batch)

    def batch_rows(self, batch: Any) -> list[tuple[Any, ...]]:
        """One of this stream's batches as rows of Python values."""
        return self._to_rows(batch)

    def continues(self) -> bool:
        """Whether rows read already are left to frame ahead once a result of this
        stream's rows was sent (a cursor's next FETCH: :class:`StreamWindow`)."""
        return False

    def window_rows(self) -> int:
        """The rows a window of this stream asked for (a cursor's FETCH count; 0: all
        or none)."""
        return 0


class StreamWindow(BatchStream):
    """Up to ``rows`` rows (None: the rest) of ``stream``, taken as they are sent: a SQL
    cursor's FETCH. ``took(k)`` is told each ``k`` rows taken, ``took(None)`` that the
    stream ended. What is framed ahead is framed on ``stream``, for the next FETCH."""

    def __init__(self, stream: BatchStream, rows: int | None,
                 took: Callable[[int | None], None]) -> None:
        super().__init__(lambda: None, stream._to_error, stream._to_rows)
        self._stream = stream
        self._left = rows
        self._rows = rows or 0
        self._took = took

    def _want(self, max_rows: int) -> int:
        left = self._left
        return max_rows if left is None else min(max_rows, left) if max_rows else left

    def _taken(self, rows: int) -> None:
        if self._left is not None:
            self._left -= rows
        self._took(rows)

    def next_batch(self, max_rows: int = 0) -> Any:
        if self._left == 0:
            return None
        batch = self._stream.next_batch(self._want(max_rows))
        if batch is None:
            self._left = 0
            self._took(None)
            return None
        self._taken(batch.num_rows)
        return batch

    def take_framed(self, key: Any, max_rows: int = 0) -> tuple[memoryview, int] | None:
        if self._left == 0:
            return None
        taken = self._stream.take_framed(key, self._want(max_rows))
        if taken is not None:
            self._taken(taken[1])
        return taken

    def frame_ahead(self, framer: Any, rows: int = 0) -> None:
        self._stream.frame_ahead(framer, rows)

    def held_rows(self) -> int:
        return self._stream.held_rows()

    def reads_ahead(self, rows: int) -> bool:
        return self._stream.reads_ahead(rows)

    def read_ahead(self, rows: int) -> None:
        self._stream.read_ahead(rows)

    def continues(self) -> bool:
        return self._stream.pending or bool(self._stream._batches)

    def window_rows(self) -> int:
        return self._rows

    def park(self) -> None:
        pass  # the cursor's stream parks itself when the connection is needed

    def cancel(self) -> None:
        self._stream.cancel()

    def rearm(self) -> None:
        self._stream.rearm()


def command(tag: str, notices: list[Notice] | None = None) -> Result:
    return Result(tag=tag, notices=notices or [])


def rowset(columns: list[Column], rows: Iterable[tuple[Any, ...]], tag: str = "SELECT") -> Result:
    return Result(tag=tag, columns=columns, row_source=rows)
