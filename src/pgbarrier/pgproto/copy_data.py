"""COPY's data formats (text, CSV, binary): rows read from CopyData bytes, rows written.

Rules this module keeps (PostgreSQL 15's copyfromparse.c / copyto.c):

* Readers are fed the CopyData payloads as they come (:meth:`feed`, then :meth:`finish`)
  and hand back whole rows only, each ``(line number, fields)`` with fields ``str`` or
  None: a row split across CopyData messages waits for its rest; memory is one partial
  row beyond what the caller holds. Line numbers count from 1, the header line included.
* Text: lines end with ``\\n`` (or ``\\r\\n``); a line ``\\.`` ends the data; a field
  whose raw text is the NULL string is NULL (compared before de-escaping, as PostgreSQL
  does); ``\\b \\f \\n \\r \\t \\v``, ``\\`` + 1-3 octal digits, ``\\x`` + 1-2 hex digits
  are decoded to bytes, any other escaped character is itself.
* CSV: fields are separated by DELIMITER; QUOTE starts and ends a quoted part; inside it
  ESCAPE before QUOTE or ESCAPE takes it literally; a quoted field may hold newlines. An
  unquoted field equal to NULL is NULL (not in FORCE_NOT_NULL columns); a quoted one only
  in FORCE_NULL columns. ``\\.`` alone on a line ends the data.
* Binary: PostgreSQL's signature ``PGCOPY\\n\\377\\r\\n\\0``, flags, header extension,
  then per tuple an int16 field count (-1: trailer) and each field int32 length (-1:
  NULL) and its bytes (the type's binary receive format; decoding is the caller's).
* Bad data is PostgreSQL's 22P04 (``bad_copy_file_format``): ``missing data for column
  "b"``, ``extra data after last expected column``, ``unterminated CSV quoted field``,
  ``COPY file signature not recognized``, ``row field count is 3, expected 2``; invalid
  UTF-8 is 22021. Each carries CONTEXT ``COPY t, line N`` (with the line's text where
  PostgreSQL shows it).
* Writers turn rows of text-encoded values (``bytes`` from the SELECT path's encoders, or
  None) into one CopyData payload per row; binary rows take the binary encodings.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence

from pgbarrier.errors import PgError

SIGNATURE = b"PGCOPY\n\xff\r\n\x00"
BINARY_HEADER = SIGNATURE + b"\x00\x00\x00\x00\x00\x00\x00\x00"
BINARY_TRAILER = b"\xff\xff"

Row = tuple[int, list[str | None]]

_ESC_MAP = {b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t", b"v": b"\v"}
_ESCAPE = re.compile(rb"\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|.?)", re.S)


def _unescape_match(m: re.Match[bytes]) -> bytes:
    s = m.group(1)
    if not s:
        return b""
    if s in _ESC_MAP:
        return _ESC_MAP[s]
    if s[:1] in b"01234567" and s[:1].isdigit():
        return bytes([int(s, 8) & 0xFF])
    if s[:1] == b"x" and len(s) > 1:
        return bytes([int(s[1:], 16)])
    return s


def bad_copy(message: str, context: str) -> PgError:
    err = PgError(message, sqlstate="22P04")
    err.fields["W"] = context
    return err


def _utf8(raw: bytes, context: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start:exc.start + 2]
        err = PgError('invalid byte sequence for encoding "UTF8": '
                      + " ".join(f"0x{b:02x}" for b in bad), sqlstate="22021")
        err.fields["W"] = context
        raise err from None


class _LineReader:
    """Splits the stream into lines (terminator kept off); counts them."""

    def __init__(self, relation: str, columns: Sequence[str], header: bool | str) -> None:
        self.relation = relation
        self.columns = list(columns)
        self.header = header
        self.buf = b""
        self.line = 0
        self.ended = False  # ``\.`` seen: the rest is ignored
        self.crlf: bool | None = None

    def context(self, text: str | None = None) -> str:
        if text is None:
            return f"COPY {self.relation}, line {self.line}"
        return f'COPY {self.relation}, line {self.line}: "{text}"'

    def _lines(self, final: bool) -> list[bytes]:
        if self.ended:
            return []
        data = self.buf
        parts = data.split(b"\n")
        if final:
            self.buf = b""
            if parts and parts[-1] == b"":
                parts.pop()
        else:
            self.buf = parts.pop()
        if self.crlf is None and parts:
            self.crlf = parts[0].endswith(b"\r")
        if self.crlf:
            parts = [p[:-1] if p.endswith(b"\r") else p for p in parts]
        return parts

    def feed(self, data: bytes) -> list[Row]:
        self.buf += data
        return self._rows(self._lines(False))

    def finish(self) -> list[Row]:
        return self._rows(self._lines(True), final=True)

    def _rows(self, lines: list[bytes], final: bool = False) -> list[Row]:
        raise NotImplementedError

    def _check_header(self, fields: list[str | None], text: str) -> None:
        if self.header != "match":
            return
        if len(fields) != len(self.columns):
            raise bad_copy(f"wrong number of fields in header line: got {len(fields)}, "
                           f"expected {len(self.columns)}", self.context(text))
        for i, (got, want) in enumerate(zip(fields, self.columns), 1):
            if got is None:
                raise bad_copy(f"column name mismatch in header line field {i}: got null "
                               f'value ("{got}"), expected "{want}"', self.context(text))
            if got != want:
                raise bad_copy(f'column name mismatch in header line field {i}: got "{got}", '
                               f'expected "{want}"', self.context(text))

    def _count(self, fields: list[str | None], text: str) -> None:
        n = len(self.columns)
        if len(fields) > n:
            raise bad_copy("extra data after last expected column", self.context(text))
        if len(fields) < n:
            raise bad_copy(f'missing data for column "{self.columns[len(fields)]}"',
                           self.context(text))


class TextReader(_LineReader):
    def __init__(self, relation: str, columns: Sequence[str], *, delimiter: str = "\t",
                 null: str = "\\N", header: bool | str = False) -> None:
        super().__init__(relation, columns, header)
        self.delim = delimiter
        self.delim_b = delimiter.encode()
        self.null = null
        self.null_b = null.encode()
        d = re.escape(self.delim_b)
        self._field = re.compile(rb"((?:[^\\" + d + rb"]|\\.?)*)(" + d + rb"|$)", re.S)

    def row_text(self, fields: Sequence[str | None]) -> str:
        """A row's line as COPY's text format writes it (a constraint error's CONTEXT: the
        line is not kept; written again, it is the line unless it used other escapes)."""
        def one(v: str | None) -> str:
            if v is None:
                return self.null
            v = v.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
            return v.replace(self.delim, "\\t" if self.delim == "\t" else "\\" + self.delim)
        return self.delim.join(one(v) for v in fields)

    def _split(self, raw: bytes, text: str) -> list[str | None]:
        if b"\\" not in raw:
            return [None if f == self.null else f for f in text.split(self.delim)]
        out: list[str | None] = []
        pos = 0
        n = len(raw)
        while True:
            m = self._field.match(raw, pos)
            assert m is not None
            f = m.group(1)
            if f == self.null_b:
                out.append(None)
            else:
                out.append(_utf8(_ESCAPE.sub(_unescape_match, f), self.context(text)))
            pos = m.end()
            if not m.group(2) or pos > n:
                break
            if pos == n:  # a delimiter ends the line: one more (empty) field
                out.append(None if self.null == "" else "")
                break
        return out

    def _rows(self, lines: list[bytes], final: bool = False) -> list[Row]:
        rows: list[Row] = []
        for raw in lines:
            self.line += 1
            text = _utf8(raw, self.context())
            if text == "\\.":
                self.ended = True
                break
            fields = self._split(raw, text)
            if self.header and self.line == 1:
                self._check_header(fields, text)
                continue
            if len(fields) != len(self.columns):
                if not self.columns and fields == [None if self.null == "" else ""]:
                    fields = []
                else:
                    self._count(fields, text)
            rows.append((self.line, fields))
        return rows


class CsvReader(_LineReader):
    def __init__(self, relation: str, columns: Sequence[str], *, delimiter: str = ",",
                 null: str = "", header: bool | str = False, quote: str = '"',
                 escape: str = '"', force_not_null: Sequence[int] = (),
                 force_null: Sequence[int] = ()) -> None:
        super().__init__(relation, columns, header)
        self.delim, self.null, self.quote, self.escape = delimiter, null, quote, escape
        self.force_not_null = set(force_not_null)
        self.force_null = set(force_null)
        self.pending: list[str] = []  # lines of a record whose quote is still open
        self.start_line = 0
        q, d = re.escape(quote), re.escape(delimiter)
        #: a whole field, quoted or not (ESCAPE = QUOTE only); other shapes take _parse_chars
        self._field = re.compile(f"(?:{q}((?:[^{q}]|{q}{q})*){q}|([^{q}{d}]*))", re.S) \
            if escape == quote else None

    def row_text(self, fields: Sequence[str | None]) -> str:
        """A row's record as CSV writes it, quoting only where it must (a constraint error's
        CONTEXT: the record is not kept)."""
        q = self.quote

        def one(v: str | None) -> str:
            if v is None:
                return self.null
            if v == self.null or any(c in v for c in (self.delim, q, "\n", "\r")):
                return q + v.replace(q, self.escape + q) + q
            return v
        return self.delim.join(one(v) for v in fields)

    def _parse(self, s: str) -> list[tuple[str, bool]] | None:
        """Fields (value, quoted) of record ``s``, or None while a quote is open."""
        rx = self._field
        if rx is None:
            return self._parse_chars(s)
        fields: list[tuple[str, bool]] = []
        q, d = self.quote, self.delim
        pos, n = 0, len(s)
        while True:
            m = rx.match(s, pos)
            assert m is not None  # the unquoted form matches the empty string
            quoted = m.group(1)
            if quoted is not None:
                fields.append((quoted.replace(q + q, q), True))
            else:
                fields.append((m.group(2), False))
            pos = m.end()
            if pos == n:
                return fields
            if s[pos] != d:  # a field partly quoted, or a quote still open
                return self._parse_chars(s)
            pos += 1

    def _parse_chars(self, s: str) -> list[tuple[str, bool]] | None:
        """:meth:`_parse` a character at a time (any ESCAPE, fields partly quoted)."""
        delim, quote, esc = self.delim, self.quote, self.escape
        fields: list[tuple[str, bool]] = []
        i, n = 0, len(s)
        while True:
            buf: list[str] = []
            quoted = in_quote = False
            while i < n:
                c = s[i]
                if in_quote:
                    if c == esc and i + 1 < n and (s[i + 1] == quote or s[i + 1] == esc) \
                            and (esc != quote or s[i + 1] == quote):
                        buf.append(s[i + 1])
                        i += 2
                        continue
                    if c == quote:
                        in_quote = False
                    else:
                        buf.append(c)
                    i += 1
                elif c == delim:
                    break
                elif c == quote:
                    in_quote = quoted = True
                    i += 1
                else:
                    buf.append(c)
                    i += 1
            if in_quote:
                return None
            fields.append(("".join(buf), quoted))
            if i >= n:
                return fields
            i += 1  # the delimiter

    def _fields(self, parsed: list[tuple[str, bool]]) -> list[str | None]:
        out: list[str | None] = []
        null = self.null
        for k, (v, quoted) in enumerate(parsed):
            if v == null and (not quoted and k not in self.force_not_null
                              or quoted and k in self.force_null):
                out.append(None)
            else:
                out.append(v)
        return out

    def _rows(self, lines: list[bytes], final: bool = False) -> list[Row]:
        rows: list[Row] = []
        eol = "\r\n" if self.crlf else "\n"
        for raw in lines:
            self.line += 1
            text = _utf8(raw, self.context())
            if self.pending:
                self.pending.append(text)
                record = eol.join(self.pending)
            else:
                if text == "\\.":
                    self.ended = True
                    break
                if self.quote not in text:
                    fields = self._fields([(f, False) for f in text.split(self.delim)])
                    self._emit(rows, fields, text, self.line)
                    continue
                record = text
                self.start_line = self.line
            parsed = self._parse(record)
            if parsed is None:
                if not self.pending:
                    self.pending.append(text)
                continue
            self.pending = []
            self._emit(rows, self._fields(parsed), record, self.start_line)
        if final and self.pending:
            raise bad_copy("unterminated CSV quoted field",
                           self.context(eol.join(self.pending) + eol))
        return rows

    def _emit(self, rows: list[Row], fields: list[str | None], text: str, line: int) -> None:
        if self.header and line == 1:
            self._check_header(fields, text)
            return
        if len(fields) != len(self.columns):
            if not self.columns and fields == [None if self.null == "" else ""]:
                fields = []
            else:
                self._count(fields, text)
        rows.append((line, fields))


_I16 = struct.Struct("!h")
_I32 = struct.Struct("!i")


class BinaryReader:
    """Rows of raw field bytes (None: NULL); see module rules."""

    def __init__(self, relation: str, columns: Sequence[str]) -> None:
        self.relation = relation
        self.ncols = len(columns)
        self.buf = bytearray()
        self.pos = 0
        self.line = 0
        self.header_done = False
        self.ended = False

    def context(self) -> str:
        return f"COPY {self.relation}, line {self.line}"

    def feed(self, data: bytes) -> list[tuple[int, list[bytes | None]]]:
        self.buf += data
        rows = self._rows()
        if self.pos > 65536:
            del self.buf[:self.pos]
            self.pos = 0
        return rows

    def finish(self) -> list[tuple[int, list[bytes | None]]]:
        rows = self._rows()
        if not self.ended:
            if not self.header_done:
                raise bad_copy("COPY file signature not recognized", self.context())
            self.line += 1
            raise bad_copy("unexpected EOF in COPY data", self.context())
        return rows

    def _rows(self) -> list[tuple[int, list[bytes | None]]]:
        buf = self.buf
        rows: list[tuple[int, list[bytes | None]]] = []
        if self.ended:
            return rows
        if not self.header_done:
            if len(buf) - self.pos < 19:
                if bytes(buf[self.pos:self.pos + 11]) != SIGNATURE[:len(buf) - self.pos]:
                    raise bad_copy("COPY file signature not recognized", self.context())
                return rows
            if bytes(buf[self.pos:self.pos + 11]) != SIGNATURE:
                raise bad_copy("COPY file signature not recognized", self.context())
            (flags,) = _I32.unpack_from(buf, self.pos + 11)
            if flags & 0x10000:
                raise bad_copy("invalid COPY file header (WITH OIDS)", self.context())
            if flags & 0xFFFEFFFF:
                raise bad_copy("unrecognized critical flags in COPY file header", self.context())
            (ext,) = _I32.unpack_from(buf, self.pos + 15)
            if ext < 0:
                raise bad_copy("invalid COPY file header (wrong length)", self.context())
            if len(buf) - self.pos < 19 + ext:
                return rows
            self.pos += 19 + ext
            self.header_done = True
        n = len(buf)
        while True:
            p = self.pos
            if n - p < 2:
                return rows
            (count,) = _I16.unpack_from(buf, p)
            if count == -1:
                self.ended = True
                return rows
            if count != self.ncols:
                self.line += 1
                raise bad_copy(f"row field count is {count}, expected {self.ncols}",
                               self.context())
            p += 2
            fields: list[bytes | None] = []
            for _ in range(count):
                if n - p < 4:
                    return rows
                (length,) = _I32.unpack_from(buf, p)
                p += 4
                if length == -1:
                    fields.append(None)
                    continue
                if length < 0:
                    self.line += 1
                    raise bad_copy("invalid field size", self.context())
                if n - p < length:
                    return rows
                fields.append(bytes(buf[p:p + length]))
                p += length
            self.pos = p
            self.line += 1
            rows.append((self.line, fields))


# ---------------------------------------------------------------------- writers

_TEXT_SPECIAL = {ord("\\"): "\\\\", ord("\b"): "\\b", ord("\f"): "\\f", ord("\n"): "\\n",
                 ord("\r"): "\\r", ord("\t"): "\\t", ord("\v"): "\\v"}


class TextWriter:
    def __init__(self, delimiter: str = "\t", null: str = "\\N") -> None:
        self.delim = delimiter
        self.null = null
        table = dict(_TEXT_SPECIAL)
        table.setdefault(ord(delimiter), "\\" + delimiter)
        self.table = table
        self.special = re.compile("[" + re.escape("".join(chr(c) for c in table)) + "]")

    def field(self, v: str | None) -> str:
        if v is None:
            return self.null
        if self.special.search(v):
            return v.translate(self.table)
        return v

    def row(self, values: Sequence[str | None]) -> bytes:
        f = self.field
        return (self.delim.join([f(v) for v in values]) + "\n").encode()


class CsvWriter:
    def __init__(self, delimiter: str = ",", null: str = "", quote: str = '"',
                 escape: str = '"', force_quote: Sequence[int] = ()) -> None:
        self.delim, self.null, self.quote, self.escape = delimiter, null, quote, escape
        self.force = set(force_quote)
        self.needs = re.compile("[" + re.escape(delimiter + quote + "\r\n") + "]")

    def field(self, v: str | None, force: bool = False) -> str:
        if v is None:
            return self.null
        if force or v == self.null or self.needs.search(v):
            q, e = self.quote, self.escape
            if e != q:
                v = v.replace(e, e + e)
            return q + v.replace(q, e + q) + q
        return v

    def row(self, values: Sequence[str | None]) -> bytes:
        force = self.force
        f = self.field
        return (self.delim.join([f(v, i in force) for i, v in enumerate(values)])
                + "\n").encode()


def binary_row(values: Sequence[bytes | None]) -> bytes:
    parts = [_I16.pack(len(values))]
    for v in values:
        if v is None:
            parts.append(b"\xff\xff\xff\xff")
        else:
            parts.append(_I32.pack(len(v)))
            parts.append(v)
    return b"".join(parts)
