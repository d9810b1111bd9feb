"""The columnar result path on DuckDB: which statements take it, and reading their batches.

A read statement's rows can leave DuckDB as Arrow record batches (its streaming result,
``_submit(..., "stream")`` read through ``arrow_reader``: the public
``DuckDBPyConnection.sql(...).to_arrow_reader()`` runs the same, behind a relation that
would rewrite the text and its error positions). :mod:`pgbarrier.pgproto.columnar` writes
them out a column at a time. Rules this module keeps:

* Which statements take it (:data:`_FITS`, by first word): a ``SELECT`` with a ``FROM``
  or a call of a set-returning function (``SELECT generate_series(1, 1000000)``); a
  ``TABLE``; a ``WITH`` with a ``FROM`` and no data-modifying word in its text
  (``INSERT``, ``UPDATE``, ``DELETE``, ``MERGE``: anywhere, a string included); none
  that calls a sequence or signal function or reads pgbarrier's PostgreSQL catalog.
  Other ``SELECT`` statements (``SELECT 1``, ``SELECT now()``) and ``VALUES`` lists are a
  row or a few: the row path, never the batch machinery nor pyarrow's import. A
  statement that turns out not to fit is closed unread and run again the row way, which
  must do no harm. Only where the connection has the streaming Arrow result (DuckDB 2.x).
* A text whose result had fewer than :data:`SHORT_ROWS` rows is remembered (at most
  :data:`REMEMBERED` texts) and takes the row path next time, unless it held an infinite
  date or timestamp (the row path's Python values have none: DuckDB hands ``infinity`` over
  as year 9999, which would answer the text's second run otherwise than its first): a
  one-row result costs no batch machinery (nor pyarrow), and keeps its prepared plan
  (``duckdb_plans``: the columnar run counts as the text's first, so its second run prepares
  it). A text the row path finds long (a full fetch) is forgotten again.
* Columns of a DuckDB type outside :data:`_SERVABLE` (``BIT``, structs, maps, unions,
  time with time zone, ``TIMESTAMP_NS``, lists of intervals...), or whose Arrow type
  :func:`pgbarrier.pgproto.columnar.servable` refuses, keep the whole result on the row
  path: their Arrow values are not DuckDB's Python values. A result with interval columns
  is closed unread and opened again as its
  :func:`~pgbarrier.backends.duckdb_intervals.parts_query` (each interval as its three
  fields): the statements that come here have no side effects, as for the row path's
  ``months_query``. Unconstrained numerics
  (``duckdb_numeric``) take the columnar path, which prints them without the storage
  scale's zeros as the row path does.
* The first :data:`FIRST_ROWS` rows of DuckDB's first batch are handed on alone and
  written out at once (``result.write_now``), then the rest of that batch: the client's
  first row waits for a quarter of a batch's framing, and reads it while the rest is
  framed. (Reading DuckDB's result in smaller batches, joined later, came 1-2 ms sooner
  still but cost 15-25% more server CPU per row: measured, not kept.)
* DuckDB computes a streaming result ahead of its reader only as far as
  ``backends.duckdb.STREAM_AHEAD`` (set on every session's connection): its default filled
  10 MiB before the first batch came out.
* DuckDB refuses a streaming result while an ``execute()`` result is unread: that one
  is run to its end first (``complete()``; the session's own streams were parked before).
* The open result holds the connection until it is read out: :meth:`BatchReading.release`
  closes it, and runs before anything else uses the cursor (after the stream, if still
  alive, was parked).
* An error DuckDB raises while a batch is read reaches Python as pyarrow's ``OSError``
  with DuckDB's message (``Invalid Input Error: ...``, ``INTERRUPT Error: ...``): it is
  turned back into the DuckDB exception of that name, so it becomes the same PostgreSQL
  error as on the row path (57014 for an interrupt).
* pyarrow is loaded beside start-up by the backend (:func:`load`, on a thread of its
  own); until it is (:data:`LOADED`), statements take the row path: none waits for an
  import, which would count against its statement_timeout. What the import made (pyarrow,
  numpy and pandas: some 40,000 objects) is frozen out of the garbage collector's way
  once loaded, as the server freezes start-up's heap (``cli``): left in, every full
  collection walked them, a cost every short statement shared (``SELECT 1``).
"""

from __future__ import annotations

import gc
import re
import threading
from typing import Any

import duckdb

from pgbarrier.backends.duckdb_plans import _SIDE_EFFECTS
from pgbarrier.backends.pgcatalog.rewrite import may_touch_catalog
from pgbarrier.sql.text_memo import by_text

#: rows of a record batch as written (DuckDB's vectors are 2,048)
BATCH_ROWS = 8192
#: rows of the first batch handed on: a slice of DuckDB's first, written alone (the
#: client's first row waits for its framing only: a quarter of a whole batch's); the rest
#: of that batch follows, then DuckDB's batches as they come
FIRST_ROWS = 2048
#: a result shorter than this sends its text to the row path next time (where the row path,
#: a Python object and a Python encoder per value, costs about 30 us a row of eight columns
#: and the columnar path 10: about even at 30 rows, the columnar path 2.5x faster at 255)
SHORT_ROWS = 32
#: texts remembered as short (all forgotten past this)
REMEMBERED = 512
#: a SELECT without FROM (``SELECT 1``, ``SELECT now()``) is a row or a few: the row path;
#: unless it calls a set-returning function (``SELECT generate_series(1, 1000000)``)
_READS = re.compile(
    r"(?i)\bfrom\b|\b(?:generate_series|generate_subscripts|unnest|range"
    r"|regexp_split_to_table|regexp_matches|jsonb?_array_elements(?:_text)?"
    r"|jsonb?_each(?:_text)?|jsonb?_object_keys)\s*\(")
#: a WITH statement whose text holds any of these words (in a name or a string too: a
#: false match only costs the row path) may modify data: the row path
_WRITES = re.compile(r"(?i)\b(?:insert|update|delete|merge)\b")


@by_text
def _text_fits(sql: str) -> bool:
    """The text rules of :meth:`BatchReading.wanted` that read only the text (DuckDB's):
    a ``FROM`` and no sequence or signal function (kept per text: ``sql.text_memo``)."""
    return _READS.search(sql) is not None and _SIDE_EFFECTS.search(sql) is None


@by_text
def _with_fits(sql: str) -> bool:
    """:func:`_text_fits` for a ``WITH`` statement: its main statement and every one of
    its common table expressions only read (no data-modifying word in the text)."""
    return _text_fits(sql) and _WRITES.search(sql) is None


@by_text
def _table_fits(sql: str) -> bool:
    """:func:`_text_fits` for a ``TABLE`` statement (no ``FROM`` needed)."""
    return _SIDE_EFFECTS.search(sql) is None


#: set once pyarrow and the columnar writers are loaded (:func:`load`)
LOADED = threading.Event()


def load() -> None:
    """Load the columnar path's modules and pay their first-use costs (pyarrow loads its
    pandas shim on a first array, half a second where pandas is installed), then open
    the path (:data:`LOADED`). Run on a thread of its own by the backend."""
    from pgbarrier.pgproto import columnar

    columnar.warm_up()
    gc.freeze()  # the modules live as long as the process: out of the collector's way
    LOADED.set()


def _error_names() -> dict[str, type]:
    names: dict[str, type] = {}
    for name in dir(duckdb):
        cls = getattr(duckdb, name)
        if name.endswith("Exception") and isinstance(cls, type) and issubclass(cls, duckdb.Error):
            words = re.sub(r"(?<!^)(?=[A-Z])", " ", name[:-len("Exception")]).lower()
            names[words + " error"] = cls
    return names


_ERRORS = _error_names()


def duckdb_error(exc: Exception) -> Exception:
    """DuckDB's exception for an error that crossed the Arrow stream as ``OSError``."""
    if isinstance(exc, duckdb.Error):
        return exc
    text = str(exc)
    head, sep, _ = text.partition(":")
    if not sep:
        return exc
    cls = _ERRORS.get(head.strip().lower())
    if cls is None:
        return duckdb.Error(text) if head.strip().lower().endswith(" error") else exc
    return cls(text)


#: the statements that may take the path, by first word: their text rules
_FITS = {"SELECT": _text_fits, "TABLE": _table_fits, "WITH": _with_fits}

#: DuckDB types whose values, read through Arrow, are what ``fetchmany`` gives (and so print
#: the same on the per-value fallback); lists of them too
_SERVABLE = frozenset({
    "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT",
    "UINTEGER", "UBIGINT", "HUGEINT", "FLOAT", "DOUBLE", "VARCHAR", "DATE", "TIMESTAMP",
    "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_S", "TIMESTAMP_MS", "TIME", "UUID", "BLOB", "JSON", '"NULL"', "NULL"})


def _servable_type(name: str) -> bool:
    if name == "INTERVAL":  # as its three fields (duckdb_intervals.parts_query); not in lists
        return True
    while name.endswith("[]"):
        name = name[:-2]
    return name in _SERVABLE or (name.startswith("DECIMAL(") and name.endswith(")")) \
        or name.startswith("ENUM(")


class BatchReading:
    """One session's columnar reads: the short texts it remembers, its open result."""

    __slots__ = ("_short", "_result", "_reader", "_columnar", "_first", "_rest", "_infinite")

    def __init__(self) -> None:
        self._short: set[str] = set()
        self._result: Any = None
        self._reader: Any = None
        self._columnar: Any = None
        self._first = True
        self._rest: Any = None
        self._infinite = False

    def wanted(self, cur: Any, words: tuple[str, ...], sql: str, client_sql: str) -> bool:
        """Whether this statement takes the columnar path (the text rules above)."""
        return bool(words) and words[0] in _FITS and LOADED.is_set() \
            and client_sql not in self._short \
            and _FITS[words[0]](sql) \
            and hasattr(cur, "_submit") and not may_touch_catalog(client_sql)

    def open(self, cur: Any, sql: str, values: list[Any] | None) -> Any:
        """Run ``sql`` as a streaming Arrow result (DuckDB's errors raised as they are)."""
        self.release()
        # what an earlier execute() of the session left unread (a statement the session ran
        # for itself): run to its end, as a new execute() would leave it
        cur.complete()
        self._result = cur._submit(sql, values, "stream", BATCH_ROWS)
        self._first, self._rest, self._infinite = True, None, False
        return self._result

    def servable(self, opened: Any, names: bool = True, arrow: bool = True) -> bool:
        """Whether the opened result's columns can take the path: their DuckDB types
        (``names``), then their Arrow types (``arrow``: the Arrow reader is opened when
        they can). A result with intervals is checked by name, then opened again as its
        :func:`~pgbarrier.backends.duckdb_intervals.parts_query`, whose Arrow types are
        checked."""
        if names and not all(_servable_type(str(d[1])) for d in opened.description or ()):
            return False
        if not arrow:
            return True
        if self._columnar is None:
            from pgbarrier.pgproto import columnar  # pyarrow: on first use

            self._columnar = columnar
        self._reader = opened.arrow_reader()
        return bool(self._columnar.servable(self._reader.schema))

    def read(self) -> Any:
        """The next record batch, None at the end: the first :data:`FIRST_ROWS` rows of
        DuckDB's first batch, then its rest, then DuckDB's batches as they come (slices
        share their buffers: nothing is copied)."""
        rest = self._rest
        if rest is not None:
            self._rest = None
            return rest
        reader = self._reader
        if reader is None:
            return None
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            self.release()
            return None
        except duckdb.Error:
            self.release()  # DuckDB ended it; closing leaves the connection clean
            raise
        except Exception as exc:  # noqa: BLE001 - DuckDB's error through Arrow
            self.release()
            raise duckdb_error(exc) from None
        if self._first:
            self._first = False
            if batch.num_rows < SHORT_ROWS:  # a short result: may the row path take it?
                self._infinite = self._columnar.has_infinity(batch)
            if batch.num_rows > FIRST_ROWS:
                self._rest = batch.slice(FIRST_ROWS)
                return batch.slice(0, FIRST_ROWS)
        return batch

    def to_rows(self, batch: Any) -> list[tuple[Any, ...]]:
        return self._columnar.to_rows(batch)

    def ended(self, client_sql: str, count: int) -> bool:
        """The result of ``client_sql`` had ``count`` rows; True: it is short (remembered)."""
        if count >= SHORT_ROWS or self._infinite:
            return False
        if len(self._short) >= REMEMBERED:
            self._short.clear()
        self._short.add(client_sql)
        return True

    def long_result(self, client_sql: str) -> None:
        """The row path read a full fetch of this text: it takes batches again."""
        if self._short:
            self._short.discard(client_sql)

    def release(self) -> None:
        """Close the open result, if any (the connection is free after)."""
        reader, result = self._reader, self._result
        self._reader = self._result = None
        for held in (reader, result):
            if held is not None:
                try:
                    held.close()
                except Exception:  # noqa: BLE001 - already closed or read out
                    pass
