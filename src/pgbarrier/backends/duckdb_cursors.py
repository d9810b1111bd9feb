"""SQL cursors (``DECLARE`` / ``FETCH`` / ``MOVE`` / ``CLOSE``) for a DuckDB session.

DuckDB has no cursors. Rules this module keeps:

* ``DECLARE name [ASENSITIVE|INSENSITIVE] [[NO] SCROLL] CURSOR [{WITH|WITHOUT} HOLD] FOR
  query`` runs the query through the session (its rows stream: they are read as they are
  fetched, and read into memory only when the session's DuckDB connection is needed for
  something else; :class:`~pgbarrier.result.RowStream`). Tag ``DECLARE CURSOR``. Without
  ``WITH HOLD`` it needs a transaction block (25P01 ``DECLARE CURSOR can only be used in
  transaction blocks``) and ends with it; a held cursor survives its COMMIT (its rows are
  read into memory then, as PostgreSQL materialises it) and goes with the ROLLBACK of the
  block that declared it. A name already open is 42P03 ``cursor "c" already exists``;
  ``BINARY`` is 0A000. SQL cursors share their names with protocol portals, as in
  PostgreSQL: Describe of a portal of that name describes the cursor.
* ``FETCH`` / ``MOVE`` with PostgreSQL's directions: ``NEXT``, ``PRIOR``, ``FIRST``,
  ``LAST``, ``ABSOLUTE n``, ``RELATIVE n``, ``n``, ``ALL``, ``FORWARD [n|ALL]``,
  ``BACKWARD [n|ALL]``. Tags ``FETCH n`` / ``MOVE n``. A cursor declared without
  ``SCROLL`` keeps no rows it has passed and goes forward only (55000 ``cursor can only
  scan forward``, PostgreSQL's answer for a plan that cannot go back); a ``SCROLL`` one
  keeps the rows it has read, so it can go back. ``CLOSE name`` (tag ``CLOSE CURSOR``),
  ``CLOSE ALL``. An unknown cursor is 34000 ``cursor "c" does not exist``.
* A NO SCROLL cursor whose query was read in record batches (the columnar result path,
  :class:`~pgbarrier.result.BatchStream`) takes its rows a batch at a time, and a
  ``FETCH [FORWARD] n`` of them is a batched result itself: written a column at a time,
  as psql's ``FETCH_COUNT`` and drivers' server-side cursors read large results.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pgbarrier.errors import FeatureNotSupported, PgError, SyntaxError
from pgbarrier.result import BatchStream, Column, Result, StreamWindow

_NAME = r'("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_DECLARE = re.compile(
    rf"\s*DECLARE\s+{_NAME}\s+((?:(?:BINARY|ASENSITIVE|INSENSITIVE|NO\s+SCROLL|SCROLL)\s+)*)"
    r"CURSOR\s+(?:(WITH|WITHOUT)\s+HOLD\s+)?FOR\s+(.*?)\s*;?\s*$", re.I | re.S)
_FETCH = re.compile(
    r"\s*(?:FETCH|MOVE)\s+(?:(NEXT|PRIOR|FIRST|LAST|ALL)\b|(ABSOLUTE|RELATIVE)\s+([+-]?\d+)"
    r"|(FORWARD|BACKWARD)\b(?:\s+(ALL\b|[+-]?\d+))?|([+-]?\d+))?\s*"
    rf"(?:(?:FROM|IN)\s+)?{_NAME}\s*;?\s*$", re.I | re.S)
_CLOSE = re.compile(rf"\s*CLOSE\s+(?:(ALL)|{_NAME})\s*;?\s*$", re.I | re.S)
_ALL = None  # a count meaning "every row"


def _name(token: str) -> str:
    return token[1:-1].replace('""', '"') if token.startswith('"') else token.lower()


def missing(name: str) -> PgError:
    return PgError(f'cursor "{name}" does not exist', sqlstate="34000")


@dataclass(frozen=True)
class Declare:
    name: str
    query: str
    scroll: bool
    hold: bool


def parse_declare(sql: str) -> Declare:
    m = _DECLARE.match(sql)
    if m is None:
        raise SyntaxError('syntax error at or near "DECLARE"', position=1)
    options = m.group(2).upper().split()
    if "BINARY" in options:
        raise FeatureNotSupported("DECLARE BINARY is not supported on the DuckDB backend",
                                  hint="Ask for binary results with the protocol's result "
                                       "formats instead.")
    scroll = "SCROLL" in options and "NO" not in options
    return Declare(_name(m.group(1)), m.group(4), scroll,
                   (m.group(3) or "").upper() == "WITH")


def parse_fetch(sql: str) -> tuple[str, str, int | None]:
    """(cursor name, kind, count) of a FETCH/MOVE; kind is forward, backward, absolute or
    relative; count None is ALL."""
    m = _FETCH.match(sql)
    if m is None:
        raise SyntaxError(f'syntax error at or near "{sql.split()[0]}"', position=1)
    word, pos_kind, pos_n, way, way_n, count, name = m.groups()
    name = _name(name)
    if word:
        word = word.upper()
        return name, *{"NEXT": ("forward", 1), "PRIOR": ("backward", 1),
                       "FIRST": ("absolute", 1), "LAST": ("absolute", -1),
                       "ALL": ("forward", _ALL)}[word]
    if pos_kind:
        return name, pos_kind.lower(), int(pos_n)
    if way:
        n = 1 if way_n is None else _ALL if way_n.upper() == "ALL" else int(way_n)
        kind = way.lower()
        if n is not None and n < 0:
            kind, n = ("backward" if kind == "forward" else "forward"), -n
        return name, kind, n
    if count is not None:
        n = int(count)
        return (name, "forward", n) if n >= 0 else (name, "backward", -n)
    return name, "forward", 1


def parse_close(sql: str) -> str | None:
    """The cursor CLOSE names; None for CLOSE ALL."""
    m = _CLOSE.match(sql)
    if m is None:
        raise SyntaxError('syntax error at or near "CLOSE"', position=1)
    return None if m.group(1) else _name(m.group(2))


@dataclass
class Cursor:
    name: str
    columns: list[Column]
    rows: Iterator[tuple[Any, ...]]
    scroll: bool
    hold: bool
    #: declared in the transaction block now running (a ROLLBACK takes it away)
    in_block: bool
    #: rows read so far (a SCROLL cursor only)
    kept: list[tuple[Any, ...]] = field(default_factory=list)
    #: PostgreSQL's position: 0 before the first row, n on row n, total + 1 after the last
    pos: int = 0
    #: rows in all, once the query's end was read
    total: int | None = None
    #: a NO SCROLL cursor over a result read in record batches: its rows are taken from
    #: here a batch at a time (:meth:`forward_batches`), never through ``rows``
    stream: BatchStream | None = None

    def forward_batches(self, n: int | None) -> list[Any]:
        """The next ``n`` rows (None: all) of a cursor that has a ``stream``, taken at once
        as its record batches (MOVE counts them; the row-returning moves read them)."""
        window = self._window(n)
        return [] if window is None else list(iter(window.next_batch, None))

    def _read_to(self, n: int | None) -> None:
        """Read rows until ``n`` are kept (None: all), or the end."""
        kept = self.kept
        while self.total is None and (n is None or len(kept) < n):
            row = next(self.rows, None)
            if row is None:
                self.total = len(kept)
                return
            kept.append(row)

    def fetch(self, n: int | None) -> Result:
        """FETCH FORWARD ``n`` (None: ALL) of a cursor that has a ``stream``: a batched
        result whose rows are taken from the stream as they are sent, the position moved
        with each."""
        window = self._window(n)
        return Result(tag="FETCH", columns=self.columns,
                      row_source=[] if window is None else window)

    def _window(self, n: int | None) -> StreamWindow | None:
        """The stream's next ``n`` rows (None: the rest) as they are taken
        (:class:`~pgbarrier.result.StreamWindow`); None once past the end."""
        assert self.stream is not None
        if self.total is not None and self.pos > self.total:
            return None
        return StreamWindow(self.stream, n, self._took)

    def _took(self, rows: int | None) -> None:
        """``rows`` more were taken from the stream (None: it ended)."""
        if rows is None:
            self.total = self.pos
            self.pos = self.total + 1
        else:
            self.pos += rows

    def _forward_only(self, n: int | None) -> list[tuple[Any, ...]]:
        """The next ``n`` rows of a NO SCROLL cursor (None: all)."""
        if self.stream is not None:
            return [row for batch in self.forward_batches(n)
                    for row in self.stream.batch_rows(batch)]
        if self.total is not None and self.pos > self.total:
            return []
        out: list[tuple[Any, ...]] = []
        while n is None or len(out) < n:
            row = next(self.rows, None)
            if row is None:
                self.total = self.pos + len(out)
                break
            out.append(row)
        self.pos += len(out)
        if self.total is not None:
            self.pos = self.total + 1
        return out

    def _goto(self, target: int) -> list[tuple[Any, ...]]:
        """Onto row ``target`` (its row), or before the first / after the last (none)."""
        if target <= 0:
            self.pos = 0
            return []
        self._read_to(target)
        if target > len(self.kept):
            self.pos = len(self.kept) + 1
            return []
        self.pos = target
        return [self.kept[target - 1]]

    def move(self, kind: str, n: int | None) -> list[tuple[Any, ...]]:
        """The rows FETCH would return (MOVE counts them), the position moved."""
        if not self.scroll:
            if kind == "forward" and n != 0:
                return self._forward_only(n)
            target = n if kind == "absolute" else self.pos + (n or 0)
            if kind in ("absolute", "relative") and target is not None and target > self.pos:
                self._forward_only(target - self.pos - 1)
                return self._forward_only(1)
            raise PgError("cursor can only scan forward", sqlstate="55000",
                          hint="Declare it with SCROLL option to enable backward scan.")
        pos, kept = self.pos, self.kept
        if kind in ("forward", "relative") and n == 0:  # the current row again
            return [kept[pos - 1]] if 1 <= pos <= len(kept) else []
        if kind == "forward":
            if self.total is not None and pos > self.total:
                return []
            self._read_to(None if n is None else pos + n)
            if n is not None and pos + n <= len(kept):
                self.pos = pos + n
                return kept[pos:pos + n]
            self.pos = len(kept) + 1
            return kept[pos:]
        if kind == "backward":
            low = 1 if n is None else max(pos - n, 1)
            rows = [kept[i - 1] for i in range(min(pos - 1, len(kept)), low - 1, -1)]
            self.pos = 0 if n is None or pos - n < 1 else pos - n
            return rows
        if kind == "relative":
            return self._goto(pos + (n or 0))
        target = n or 0
        if target < 0:
            self._read_to(None)
            target = len(kept) + 1 + target
            if target < 1:
                self.pos = 0
                return []
        return self._goto(target)
