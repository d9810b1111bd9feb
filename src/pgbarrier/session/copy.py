"""PostgreSQL's COPY sub-protocol for backends that copy locally (DuckDB).

Rules this module keeps:

* ``COPY ... FROM STDIN``: :func:`start_copy_in` answers CopyInResponse (the format's
  code, every column in it) and returns a :class:`CopyInState`; the session hands it
  each CopyData, which is parsed as it comes (:mod:`pgbarrier.pgproto.copy_data`) and
  loaded a batch at a time (the backend's loader): nothing holds the whole input.
  CopyDone ends it with ``COPY n``; CopyFail is 57014 ``COPY from stdin failed: <msg>``;
  bad data is its error at once (the rest of the client's CopyData is then dropped, as
  PostgreSQL drops it); Sync and Flush during COPY are ignored (libpq sends them behind
  an extended-protocol COPY); any other message is 08P01 ``unexpected message type
  0x51 during COPY from stdin``. On any error the loader is aborted: the table is as before.
  A cancel (CancelRequest, statement_timeout) ends it with 57014 at its next message.
* ``COPY ... TO STDOUT``: :func:`copy_out` runs the rows' SELECT through the session (so
  its values are exactly a SELECT's text or binary result: the same encoders), and sends
  CopyOutResponse, one CopyData per row (written out as rows are produced), CopyDone and
  ``COPY n``. Nothing reaches DuckDB's own COPY: it would use the server's stdin/stdout.
* ``COPY ... PROGRAM`` is PostgreSQL's answer to a user without pg_execute_server_program
  (42501, with its HINT); ``COPY ... 'file'`` stays DuckDB's (files in ``--allow-path``
  directories, 42501 elsewhere).
* ``COPY ... FROM STDIN`` must be alone in its Query message (0A000 otherwise; psql and
  drivers send it alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pgbarrier.errors import PgError, QueryCanceled
from pgbarrier.pgproto import copy_data as cd
from pgbarrier.pgproto import messages as m
from pgbarrier.pgproto import types as pgt
from pgbarrier.result import Result
from pgbarrier.sql.copy_options import CopyStatement

SPILL_BYTES = 256 * 1024
_HINT = "Anyone can COPY to stdout or from stdin. psql's \\copy command also works for anyone."


def refuse_program(st: CopyStatement) -> None:
    if st.target == "PROGRAM":
        raise PgError("must be superuser or have privileges of the pg_execute_server_program "
                      "role to COPY to or from an external program", sqlstate="42501",
                      hint=_HINT)


def _format_code(st: CopyStatement) -> int:
    return 1 if st.format == "binary" else 0


def _indexes(names: list[str], columns: list[str], option: str) -> list[int]:
    out = []
    for n in names:
        if n not in columns:
            raise PgError(f'{option} column "{n}" not referenced by COPY', sqlstate="42P10")
        out.append(columns.index(n))
    return out


class CopyInState:
    """One COPY FROM STDIN waiting for its data."""

    def __init__(self, st: CopyStatement, loader: Any, extended: bool) -> None:
        self.st = st
        self.loader = loader
        self.extended = extended
        #: set by a cancel (another thread): the next CopyData ends the COPY with 57014
        self.cancelled = False
        names = [c for c, _ in loader.columns]
        relation = loader.relation
        if st.format == "binary":
            self.reader: Any = cd.BinaryReader(relation, names)
            self.add = loader.add_binary
        elif st.format == "csv":
            self.reader = cd.CsvReader(
                relation, names, delimiter=st.delimiter, null=st.null, header=st.header,
                quote=st.quote, escape=st.escape,
                force_not_null=_indexes(st.force_not_null, names, "FORCE_NOT_NULL"),
                force_null=_indexes(st.force_null, names, "FORCE_NULL"))
            self.add = loader.add
        else:
            self.reader = cd.TextReader(relation, names, delimiter=st.delimiter, null=st.null,
                                        header=st.header)
            self.add = loader.add
        if st.format != "binary" and hasattr(loader, "row_text"):
            loader.row_text = self.reader.row_text  # a constraint error's CONTEXT line

    def data(self, payload: bytes) -> None:
        if self.cancelled:
            raise QueryCanceled("canceling statement due to user request")
        self.add(self.reader.feed(payload))

    def done(self) -> int:
        if self.cancelled:
            raise QueryCanceled("canceling statement due to user request")
        self.add(self.reader.finish())
        return int(self.loader.finish())

    def fail(self, payload: bytes) -> PgError:
        self.loader.abort()
        message = payload.rstrip(b"\x00").decode("utf-8", "replace")
        return QueryCanceled(f"COPY from stdin failed: {message}")

    def abort(self) -> None:
        self.loader.abort()


def start_copy_in(st: CopyStatement, backend: Any, own_transaction: bool, extended: bool,
                  out: m.Outbox) -> CopyInState:
    assert st.table is not None
    loader = backend.copy_in(st.table, st.columns, own_transaction)
    try:
        state = CopyInState(st, loader, extended)
    except BaseException:
        loader.abort()
        raise
    out.add(m.copy_in_response(_format_code(st), len(loader.columns)))
    return state


def select_for(st: CopyStatement) -> str:
    """The query whose rows COPY TO writes."""
    if st.query is not None:
        return st.query
    cols = ", ".join('"' + c.replace('"', '""') + '"' for c in st.columns) or "*"
    return f"SELECT {cols} FROM {st.table}"


def copy_out(st: CopyStatement, result: Result, text_encoders: list[Any] | None,
             out: m.Outbox, spill: Callable[[bytes], None] | None) -> int:
    """Send ``result``'s rows as COPY TO STDOUT's data; returns the row count.
    ``text_encoders``: the session's encoders of a text-format SELECT result (so COPY
    prints each value as that SELECT would), one per column."""
    columns = result.columns
    if columns is None:
        raise PgError("COPY query must have a RETURNING clause" if st.query else
                      "COPY query must return rows", sqlstate="0A000")
    names = [c.name for c in columns]
    binary = st.format == "binary"
    if binary:
        for c in columns:
            if not pgt.supports_binary(c.type_oid):
                raise PgError(f"COPY BINARY of a column of type OID {c.type_oid} is not "
                              "supported by pgbarrier", sqlstate="0A000")
        encoders = [pgt.encoder(c.type_oid, 1) for c in columns]
    else:
        encoders = text_encoders or [pgt.encoder(c.type_oid, 0) for c in columns]
    if st.format == "csv":
        force = list(range(len(names))) if st.force_quote is True else \
            _indexes(list(st.force_quote or []), names, "FORCE_QUOTE")  # type: ignore[arg-type]
        writer: Any = cd.CsvWriter(st.delimiter, st.null, st.quote, st.escape, force)
        single = len(names) == 1
    elif not binary:
        writer = cd.TextWriter(st.delimiter, st.null)
        single = False
    out.add(m.copy_out_response(_format_code(st), len(columns)))
    chunks = out.chunks
    copy_data = m.copy_data
    #: PostgreSQL sends the binary header in the first row's CopyData (psycopg expects it)
    prefix = cd.BINARY_HEADER if binary else b""
    if st.header:
        if st.format == "csv":
            chunks.append(copy_data((st.delimiter.join(writer.field(n) for n in names)
                                     + "\n").encode()))
        else:
            chunks.append(copy_data(writer.row(names)))
    sent = 0
    pending = 0
    for row in result.rows():
        if binary:
            data = cd.binary_row([None if v is None else enc(v)
                                  for enc, v in zip(encoders, row)])
            if prefix:
                data, prefix = prefix + data, b""
        else:
            texts = [None if v is None else enc(v).decode("utf-8")
                     for enc, v in zip(encoders, row)]
            if single and texts[0] == "\\.":
                data = (writer.field("\\.", True) + "\n").encode()
            else:
                data = writer.row(texts)
        frame = copy_data(data)
        chunks.append(frame)
        sent += 1
        if spill is not None:
            pending += len(frame)
            if pending >= SPILL_BYTES:
                spill(out.take())
                pending = 0
    if binary:
        chunks.append(copy_data(prefix + cd.BINARY_TRAILER))
    out.add(m.copy_done())
    return sent
