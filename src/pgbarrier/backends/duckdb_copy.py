"""COPY ... FROM STDIN loaded into DuckDB, in batches, with PostgreSQL's input checks.

Rules this module keeps:

* The target's columns and DuckDB types come from ``SELECT * FROM <table> LIMIT 0``
  (42P01 for an unknown relation); a column list names columns of it (42703 ``column
  "x" of relation "t" does not exist``, 42701 for a repeat). Columns left out get
  their defaults.
* DuckDB's CSV reader (and its sniffer) is never used: the COPY readers of
  :mod:`pgbarrier.pgproto.copy_data` give each field as text, and each batch of
  ``BATCH_ROWS`` rows goes to DuckDB as one VARCHAR list per column
  (``unnest($n::VARCHAR[])``), converted to the column's type in SQL. PostgreSQL's input
  rules where DuckDB's cast is looser: integers must be digits (``1.5`` is 22P02, not
  2), booleans are PostgreSQL's spellings (``t``, ``yes``, ``on``, ``1``, prefixes),
  bytea is ``\\x`` hex (else DuckDB's escape form), arrays ``{...}`` are read as DuckDB
  lists (elements that need quoting are not supported).
* Each batch is checked before it is inserted (a query of ``TRY_CAST``\\ s, which cannot
  fail): the first bad value is PostgreSQL's error, 22P02 ``invalid input syntax for type
  integer: "x"`` (22003 out of range, 22007 for date/time types) with CONTEXT ``COPY t,
  line N, column c: "x"``. Binary COPY decodes each field with the type's receive
  function and hands the text form to the same path.
* A constraint violation is PostgreSQL's (:mod:`pgbarrier.backends.duckdb_errors`), with
  its CONTEXT: ``COPY t, line N`` for a duplicate key, ``COPY t, line N: "<line>"`` and the
  ``Failing row contains`` DETAIL for a CHECK or NOT NULL one (the batch's first row that
  breaks it, found again; the line written back in the COPY's format, as the session's
  reader gives it to ``row_text``).
* Atomic: outside a transaction block the load runs in its own DuckDB transaction,
  committed by :meth:`CopyIn.finish` and rolled back by :meth:`CopyIn.abort`; inside one,
  an error fails the block (its ROLLBACK undoes the rows).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import duckdb

from pgbarrier.backends.duckdb_constraint_errors import Lookup
from pgbarrier.backends.duckdb_failing_row import Query, failing_row
from pgbarrier.backends.duckdb_errors import to_pg_error
from pgbarrier.backends.duckdb_sql import literal, quote_ident
from pgbarrier.backends.duckdb_types import pg_type_oid
from pgbarrier.errors import PgError
from pgbarrier.pgproto import types as pgt

BATCH_ROWS = 20000

#: DuckDB's CHECK failure (its expression) and PostgreSQL's duplicate-key DETAIL
_CHECK = re.compile(r"CHECK constraint failed on table .*? with expression CHECK\((.*)\)$",
                    re.S | re.M)
_KEY = re.compile(r"^Key \((.*)\)=\((.*)\) already exists\.$", re.S)

_INT_TYPES = frozenset({"TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
                        "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT"})
_DATETIME = frozenset({pgt.DATE, pgt.TIME, pgt.TIMETZ, pgt.TIMESTAMP, pgt.TIMESTAMPTZ,
                       pgt.INTERVAL})
_TRUE = "'t','tr','tru','true','y','ye','yes','on','1'"
_FALSE = "'f','fa','fal','fals','false','n','no','of','off','0'"
_INT_RANGE = {"SMALLINT": (-2**15, 2**15 - 1), "INTEGER": (-2**31, 2**31 - 1),
              "BIGINT": (-2**63, 2**63 - 1)}


def _conversion(v: str, duck_type: str) -> str:
    """SQL turning VARCHAR ``v`` into ``duck_type`` by PostgreSQL's input rules; NULL
    where the text is not valid (see module rules)."""
    t = duck_type.upper()
    if t in _INT_TYPES:
        return (f"CASE WHEN regexp_full_match({v}, '\\s*[+-]?[0-9]+\\s*') "
                f"THEN TRY_CAST({v} AS {t}) END")
    if t == "BOOLEAN":
        return (f"CASE WHEN lower(trim({v})) IN ({_TRUE}) THEN true "
                f"WHEN lower(trim({v})) IN ({_FALSE}) THEN false END")
    if t == "BLOB":
        return (f"CASE WHEN starts_with({v}, '\\x') THEN CASE WHEN "
                f"regexp_full_match({v}, '\\\\x([0-9a-fA-F]{{2}})*') THEN unhex({v}[3:]) END "
                f"ELSE TRY_CAST({v} AS BLOB) END")
    if t.endswith("[]"):
        return f"TRY_CAST(translate({v}, '{{}}', '[]') AS {duck_type})"
    return f"TRY_CAST({v} AS {duck_type})"


def target_columns(cur: duckdb.DuckDBPyConnection, table: str, names: list[str]
                   ) -> list[tuple[str, str]]:
    """(name, DuckDB type) of the columns COPY fills, in the order of its data."""
    try:
        cur.execute(f"SELECT * FROM {table} LIMIT 0")
        described = [(d[0], str(d[1])) for d in cur.description or ()]
    except duckdb.Error as exc:
        raise to_pg_error(exc, None) from None
    if not names:
        return described
    by_name = {n: (n, t) for n, t in described}
    by_lower = {n.lower(): (n, t) for n, t in described}
    out = []
    seen = set()
    for n in names:
        col = by_name.get(n) or by_lower.get(n.lower())
        if col is None:
            raise PgError(f'column "{n}" of relation "{_bare(table)}" does not exist',
                          sqlstate="42703")
        if col[0] in seen:
            raise PgError(f'column "{n}" specified more than once', sqlstate="42701")
        seen.add(col[0])
        out.append(col)
    return out


def _bare(table: str) -> str:
    return table.rsplit(".", 1)[-1].strip('"')


def value_error(duck_type: str, value: str, column: str, relation: str, line: int) -> PgError:
    """PostgreSQL's error for ``value`` that is not valid input of ``duck_type``."""
    oid = pg_type_oid(duck_type)
    name = pgt.TYPE_NAME.get(oid, duck_type.lower())
    t = duck_type.upper()
    detail = None
    if t in _INT_TYPES and re.fullmatch(r"\s*[+-]?[0-9]+\s*", value):
        err = PgError(f'value "{value}" is out of range for type {name}', sqlstate="22003")
    elif t.startswith("DECIMAL") and re.fullmatch(r"\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)\s*",
                                                   value):
        m = re.match(r"DECIMAL\((\d+),(\d+)\)", t)
        if m:
            p, s = int(m.group(1)), int(m.group(2))
            detail = (f"A field with precision {p}, scale {s} must round to an absolute "
                      f"value less than 10^{p - s}.")
        err = PgError("numeric field overflow", sqlstate="22003", detail=detail)
    elif oid in _DATETIME:
        err = PgError(f'invalid input syntax for type {name}: "{value}"', sqlstate="22007")
    else:
        err = PgError(f'invalid input syntax for type {name}: "{value}"', sqlstate="22P02")
    err.fields["W"] = f'COPY {relation}, line {line}, column {column}: "{value}"'
    return err


class CopyIn:
    """One COPY FROM STDIN's load (see module rules)."""

    def __init__(self, cur: duckdb.DuckDBPyConnection, table: str,
                 columns: list[tuple[str, str]], own_transaction: bool,
                 constraints: Lookup | None = None, query: Query | None = None) -> None:
        self.cur = cur
        self.table = table
        self.relation = _bare(table)
        self.columns = columns
        self.own = own_transaction
        self.constraints = constraints
        #: reads on a connection of its own, for a violation's failing row (duckdb_failing_row)
        self.query = query
        #: writes a row's line again, for a constraint error's CONTEXT (set by the session)
        self.row_text: Callable[[list[str | None]], str] | None = None
        self.rows: list[tuple[int, list[str | None]]] = []
        self.count = 0
        self.oids = [pg_type_oid(t) for _, t in columns]
        n = len(columns)
        values = ", ".join(f"unnest(${i + 2}::VARCHAR[]) AS v{i}" for i in range(n))
        convs = [_conversion(f"v{i}", t) for i, (_, t) in enumerate(columns)]
        source = f"(SELECT unnest($1::BIGINT[]) AS line, {values})"
        bad = [f"(v{i} IS NOT NULL AND ({c}) IS NULL)" for i, c in enumerate(convs)]
        self.check_sql = (f"SELECT line, list_position([{', '.join(bad)}], true) FROM {source} "
                          f"WHERE {' OR '.join(bad)} ORDER BY line LIMIT 1") if n else None
        names = ", ".join(quote_ident(c) for c, _ in columns)
        self.insert_sql = (f"INSERT INTO {table} ({names}) SELECT {', '.join(convs)} "
                           f"FROM {source}") if n else None
        if self.own:
            self._run("BEGIN")

    def _run(self, sql: str, params: list[Any] | None = None) -> Any:
        try:
            return self.cur.execute(sql, params) if params is not None else self.cur.execute(sql)
        except duckdb.Error as exc:
            # the INSERT's text names the target, for a constraint violation's names
            err = to_pg_error(exc, sql, self.constraints)
            err.position = None
            raise err from None

    def add(self, rows: list[tuple[int, list[str | None]]]) -> None:
        self.rows.extend(rows)
        if len(self.rows) >= BATCH_ROWS:
            self.flush()

    def add_binary(self, rows: list[tuple[int, list[bytes | None]]]) -> None:
        out: list[tuple[int, list[str | None]]] = []
        for line, fields in rows:
            texts: list[str | None] = []
            for raw, oid, (name, t) in zip(fields, self.oids, self.columns):
                if raw is None:
                    texts.append(None)
                    continue
                try:
                    v = pgt.decode_binary(oid, raw)
                except PgError as exc:
                    exc.fields["W"] = f"COPY {self.relation}, line {line}, column {name}"
                    raise
                if isinstance(v, (bytes, bytearray, memoryview)):
                    texts.append("\\x" + bytes(v).hex())
                else:  # arrays too: PostgreSQL's {...} text, read as text COPY reads it
                    texts.append(pgt.to_text(v, oid))
            out.append((line, texts))
        self.add(out)

    def flush(self) -> None:
        rows, self.rows = self.rows, []
        if not rows:
            return
        if self.insert_sql is None:  # no columns: PostgreSQL inserts empty rows
            raise PgError("COPY into a table without columns is not supported by pgbarrier",
                          sqlstate="0A000")
        params: list[Any] = [[line for line, _ in rows]]
        for i in range(len(self.columns)):
            params.append([f[i] for _, f in rows])
        assert self.check_sql is not None
        bad = self._run(self.check_sql, params).fetchall()
        if bad:
            line, k = bad[0]
            fields = next(f for ln, f in rows if ln == line)
            name, t = self.columns[k - 1]
            raise value_error(t, fields[k - 1] or "", name, self.relation, line)
        try:
            self.cur.execute(self.insert_sql, params)
        except duckdb.Error as exc:
            # the INSERT's text names the target, for a constraint violation's names
            err = to_pg_error(exc, self.insert_sql, self.constraints)
            err.position = None
            if err.sqlstate in ("23502", "23514", "23505"):
                self._locate(err, rows, str(exc))
            raise err from None
        self.count += len(rows)

    def _locate(self, err: PgError, rows: list[tuple[int, list[str | None]]], text: str
                ) -> None:
        """PostgreSQL's CONTEXT (``COPY t, line n: "..."``) and ``Failing row contains`` of
        a constraint violation: the batch's first row that breaks it, found again."""
        names = [c for c, _ in self.columns]
        line: tuple[int, list[str | None]] | None = None
        violates: str | None = None
        if err.sqlstate == "23502":
            column = err.fields.get("c", "")
            k = names.index(column) if column in names else None
            line = next((r for r in rows if k is None or r[1][k] is None), None)
            violates = quote_ident(column) + " IS NULL"
        elif err.sqlstate == "23514":
            found = _CHECK.search(text)
            expr = found.group(1) if found else None
            if expr is not None and self.query is not None:
                violates = f"NOT ({expr})"
                line = self._first_failing(rows, violates)
        else:
            m = _KEY.match(err.detail or "")
            if m is not None:
                cols = [c.strip() for c in m.group(1).split(",")]
                vals = [v.strip() for v in m.group(2).split(",")]
                ks = [names.index(c) for c in cols if c in names]
                if len(ks) == len(cols):
                    same = [r for r in rows if [r[1][k] for k in ks] == vals]
                    line = same[1] if len(same) > 1 else same[0] if same else None
            if line is not None:
                err.fields["W"] = f"COPY {self.relation}, line {line[0]}"
            return
        if line is None:
            return
        if self.row_text is not None:
            err.fields["W"] = f'COPY {self.relation}, line {line[0]}: "{self.row_text(line[1])}"'
        if violates is not None and err.detail is None:
            values = ", ".join("NULL" if v is None else literal(v) for v in line[1])
            err.detail = failing_row(
                f"INSERT INTO {self.table} ({', '.join(quote_ident(n) for n in names)}) "
                f"VALUES ({values})", self.relation, violates, self.query)

    def _first_failing(self, rows: list[tuple[int, list[str | None]]], violates: str
                       ) -> tuple[int, list[str | None]] | None:
        """The first of ``rows`` whose converted values make ``violates`` true."""
        assert self.query is not None
        names = ", ".join(f"{_conversion(f'v{i}', t)} AS {quote_ident(c)}"
                          for i, (c, t) in enumerate(self.columns))
        values = ", ".join(f"unnest(${i + 2}::VARCHAR[]) AS v{i}"
                           for i in range(len(self.columns)))
        params: list[Any] = [[line for line, _ in rows]]
        for i in range(len(self.columns)):
            params.append([f[i] for _, f in rows])
        try:
            found = self.query(f"SELECT line FROM (SELECT line, {names} FROM (SELECT "
                               f"unnest($1::BIGINT[]) AS line, {values})) WHERE {violates} "
                               "ORDER BY line LIMIT 1", params)
        except Exception:  # noqa: BLE001 - a row that cannot be found again has no CONTEXT
            return None
        if not found:
            return None
        return next((r for r in rows if r[0] == found[0][0]), None)

    def finish(self) -> int:
        self.flush()
        if self.own:
            self.own = False
            self._run("COMMIT")
        return self.count

    def abort(self) -> None:
        self.rows = []
        if self.own:
            self.own = False
            try:
                self.cur.execute("ROLLBACK")
            except duckdb.Error:
                pass
