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
  A result read in record batches is written a batch at a time in every format (text,
  CSV and binary: :mod:`pgbarrier.pgproto.columnar`, the same bytes), unless the data
  is converted to another encoding or the session's output styles are not the defaults.
* ``COPY ... PROGRAM`` is PostgreSQL's answer to a user without pg_execute_server_program
  (42501, with its HINT); ``COPY ... 'file'`` stays DuckDB's (files in ``--allow-path``
  directories, 42501 elsewhere).
* ``COPY ... FROM STDIN`` must be alone in its Query message (0A000 otherwise; psql and
  drivers send it alone).
* Under a client encoding other than UTF8, or with ``ENCODING``, text and CSV data are
  converted as PostgreSQL converts them (:mod:`pgbarrier.pgproto.transcode`): COPY FROM's
  stream to UTF-8 before it is parsed (a character split between two CopyData waits for
  its rest; a bad one is reported on its line, ``COPY t, line 3``, after the lines before
  it are read), COPY TO's rows after they are written; binary COPY converts the fields of
  text types from and to the client encoding, whatever ``ENCODING`` says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pgbarrier.errors import PgError, QueryCanceled
from pgbarrier.pgproto import copy_data as cd
from pgbarrier.pgproto import messages as m
from pgbarrier.pgproto import transcode
from pgbarrier.pgproto import types as pgt
from pgbarrier.pgproto.encodings import Codec
from pgbarrier.result import BatchStream, Result, write_now
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
    """One COPY FROM STDIN waiting for its data. ``codec``: the encoding its text and CSV
    data are in (the COPY's ENCODING, else the client's; None: UTF-8); ``client``: the
    client encoding (its CopyFail message, binary fields of text types)."""

    def __init__(self, st: CopyStatement, loader: Any, extended: bool,
                 codec: Codec | None = None, client: Codec | None = None) -> None:
        self.st = st
        self.loader = loader
        self.extended = extended
        #: set by a cancel (another thread): the next CopyData ends the COPY with 57014
        self.cancelled = False
        self.client = client
        #: the data converted to UTF-8 before it is parsed, as PostgreSQL converts it
        self.transcoder = codec.incremental() if codec is not None and st.format != "binary" \
            else None
        names = [c for c, _ in loader.columns]
        relation = loader.relation
        if st.format == "binary":
            self.reader: Any = cd.BinaryReader(relation, names)
            self.add = loader.add_binary if client is None else self._add_binary
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
        if self.transcoder is not None:
            payload = self._converted(self.transcoder.feed, payload)
        self.add(self.reader.feed(payload))

    def done(self) -> int:
        if self.cancelled:
            raise QueryCanceled("canceling statement due to user request")
        if self.transcoder is not None:
            self.add(self.reader.feed(self._converted(lambda _: self.transcoder.finish(), b"")))
        self.add(self.reader.finish())
        return int(self.loader.finish())

    def _converted(self, convert: Callable[[bytes], bytes], payload: bytes) -> bytes:
        """``payload`` in UTF-8; a conversion error is PostgreSQL's: the lines before the bad
        character are read first (their own errors come first), then it is reported on its
        line."""
        try:
            return convert(payload)
        except PgError as err:
            assert self.transcoder is not None
            self.add(self.reader.feed(self.transcoder.good))
            err.fields["W"] = f"COPY {self.loader.relation}, line {self.reader.line + 1}"
            raise

    def _add_binary(self, rows: list[tuple[int, list[bytes | None]]]) -> None:
        """Binary rows whose fields of text types are converted from the client encoding."""
        client = self.client
        assert client is not None
        oids = self.loader.oids
        names = [c for c, _ in self.loader.columns]
        out = []
        for line, fields in rows:
            converted: list[bytes | None] = []
            for raw, oid, name in zip(fields, oids, names):
                try:
                    converted.append(None if raw is None
                                     else transcode.binary_to_utf8(oid, raw, client))
                except PgError as err:
                    err.fields["W"] = f"COPY {self.loader.relation}, line {line}, column {name}"
                    raise
            out.append((line, converted))
        self.loader.add_binary(out)

    def fail(self, payload: bytes) -> PgError:
        self.loader.abort()
        raw = payload.rstrip(b"\x00")
        if self.client is None:
            message = raw.decode("utf-8", "replace")
        else:
            try:  # a message string, in the client encoding (its error is PostgreSQL's)
                message = self.client.decode(raw)
            except PgError as err:
                err.fields["W"] = f"COPY {self.loader.relation}, line {self.reader.line + 1}"
                return err
        return QueryCanceled(f"COPY from stdin failed: {message}")

    def abort(self) -> None:
        self.loader.abort()


def start_copy_in(st: CopyStatement, backend: Any, own_transaction: bool, extended: bool,
                  out: m.Outbox, codec: Codec | None = None,
                  client: Codec | None = None) -> CopyInState:
    assert st.table is not None
    loader = backend.copy_in(st.table, st.columns, own_transaction)
    try:
        state = CopyInState(st, loader, extended, codec, client)
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
             out: m.Outbox, spill: Callable[[bytes], None] | None,
             codec: Codec | None = None, client: Codec | None = None,
             columnar_ok: bool = False) -> int:
    """Send ``result``'s rows as COPY TO STDOUT's data; returns the row count.
    ``text_encoders``: the session's encoders of a text-format SELECT result in UTF-8 (so
    COPY prints each value as that SELECT would), one per column; ``codec``: the encoding
    text and CSV data are written in (None: UTF-8), ``client``: the client encoding
    (binary fields of text types); ``columnar_ok``: a text-format COPY of a result read in
    record batches may write them a batch at a time (:mod:`pgbarrier.pgproto.columnar`,
    the same bytes), the session's output styles being the defaults."""
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
        encoders = [pgt.encoder(c.type_oid, 1, None, c.type_modifier) if client is None else
                    transcode.result_encoder(pgt.encoder(c.type_oid, 1, None, c.type_modifier),
                                             1, c.type_oid, client)
                    for c in columns]
    else:
        encoders = text_encoders or [pgt.encoder(c.type_oid, 0, None, c.type_modifier)
                                    for c in columns]
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
    convert = codec.from_utf8 if codec is not None and not binary else None
    if st.header:
        if st.format == "csv":
            head = (st.delimiter.join(writer.field(n) for n in names) + "\n").encode()
        else:
            head = writer.row(names)
        chunks.append(copy_data(head if convert is None else convert(head)))
    sent = 0
    pending = 0
    stream = result.row_source
    if convert is None and (text_encoders is not None or binary and client is None) \
            and columns and isinstance(stream, BatchStream) and result.batched() \
            and columnar_ok:
        from pgbarrier.pgproto import columnar  # pyarrow: on first use

        framer: Any = columnar.CopyBinaryRows(columns) if binary else \
            columnar.CopyCsvRows(columns, st.delimiter, st.null, st.quote, st.escape,
                                 set(force)) if st.format == "csv" else \
            columnar.CopyTextRows(columns, st.delimiter, st.null)
        while (batch := stream.next_batch()) is not None:
            if not batch.num_rows:
                continue
            data = framer.frame(batch)
            if prefix:
                data, prefix = columnar.with_header(data, prefix), b""
            chunks.append(data)
            sent += batch.num_rows
            if spill is not None:
                pending += len(data)
                if pending >= SPILL_BYTES or write_now(sent, batch.num_rows):
                    spill(out.take())
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
            if convert is not None:
                data = convert(data)
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
