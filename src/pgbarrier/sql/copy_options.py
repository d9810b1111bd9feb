"""A COPY statement read into its parts: target, direction, source/sink, options.

Rules this module keeps:

* :func:`parse_copy` reads PostgreSQL 15's grammar over sqlglot's tokenizer (quoting,
  string escapes and identifiers are sqlglot's): ``COPY table [(cols)] FROM|TO
  STDIN|STDOUT|'file'|PROGRAM 'cmd' [[WITH] (option [value], ...)]``, ``COPY (query) TO
  ...`` and the old option syntax (``BINARY``, ``CSV``, ``HEADER``, ``DELIMITER [AS]
  'x'``, ``NULL [AS] 'x'``, ``QUOTE``/``ESCAPE [AS] 'x'``, ``FORCE QUOTE cols|*``,
  ``FORCE NOT NULL cols``, ``FORCE NULL cols``, ``ENCODING 'x'``, ``FREEZE``, and the
  pre-7.3 ``BINARY`` before the table and ``USING DELIMITERS``). ``WHERE`` on COPY FROM is
  0A000 (not supported by pgbarrier).
* Options are checked as PostgreSQL's ProcessCopyOptions checks them, with its
  messages: a repeated option is 42601 ``conflicting or redundant options``; a bad value
  22023; an option that does not fit the format or direction 0A000 (e.g. ``COPY delimiter
  must be a single one-byte character``, ``cannot specify HEADER in BINARY mode``,
  ``COPY force quote available only in CSV mode``).
* The defaults are PostgreSQL's: text uses tab and ``\\N``; CSV uses comma, the empty
  string for NULL, ``"`` for QUOTE and ESCAPE defaulting to QUOTE.
* ``ENCODING 'x'`` takes PostgreSQL's encoding names (``encoding`` is the canonical one;
  None: the client's); one PostgreSQL does not know is 22023, MULE_INTERNAL PostgreSQL's
  42883 (it has no conversion either), one pgbarrier cannot convert 0A000
  (:mod:`pgbarrier.pgproto.encodings`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot.tokens import Tokenizer, TokenType

from pgbarrier.errors import PgError
from pgbarrier.pgproto import encodings


@dataclass
class CopyStatement:
    table: str | None = None  #: the table as written (quoting kept), or None for a query
    columns: list[str] = field(default_factory=list)  #: column names, case-folded as SQL
    query: str | None = None  #: the text of ``COPY (query) TO``
    is_from: bool = True
    target: str = "STDIN"  #: STDIN, STDOUT, FILE or PROGRAM
    filename: str | None = None
    format: str = "text"
    delimiter: str = "\t"
    null: str = "\\N"
    header: bool | str = False  #: True, False or "match"
    quote: str = '"'
    escape: str = '"'
    force_quote: list[str] | bool = field(default_factory=list)  #: True: ``*``
    force_not_null: list[str] = field(default_factory=list)
    force_null: list[str] = field(default_factory=list)
    encoding: str | None = None

    @property
    def stdio(self) -> bool:
        return self.target in ("STDIN", "STDOUT")


def _syntax(tok: object | None) -> PgError:
    text = getattr(tok, "text", None)
    where = f'at or near "{text}"' if text is not None else "at end of input"
    return PgError(f"syntax error {where}", sqlstate="42601")


def _ident(tok: object) -> str:
    """An identifier as PostgreSQL folds it: quoted kept, else lower-cased."""
    ttype = getattr(tok, "token_type")
    text = getattr(tok, "text")
    return text if ttype == TokenType.IDENTIFIER else text.lower()


class _Tokens:
    def __init__(self, sql: str) -> None:
        self.sql = sql
        self.toks = [t for t in Tokenizer().tokenize(sql) if t.token_type != TokenType.SEMICOLON]
        self.i = 0

    def peek(self, k: int = 0) -> object | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def word(self, k: int = 0) -> str | None:
        t = self.peek(k)
        if t is None or t.token_type in (TokenType.STRING, TokenType.IDENTIFIER):  # type: ignore[attr-defined]
            return None
        return t.text.upper()  # type: ignore[attr-defined]

    def take(self) -> object:
        t = self.peek()
        if t is None:
            raise _syntax(None)
        self.i += 1
        return t

    def accept(self, *words: str) -> bool:
        if self.word() in words:
            self.i += 1
            return True
        return False

    def expect(self, *words: str) -> str:
        w = self.word()
        if w not in words:
            raise _syntax(self.peek())
        self.i += 1
        return w  # type: ignore[return-value]

    def string(self) -> str:
        t = self.take()
        if t.token_type != TokenType.STRING:  # type: ignore[attr-defined]
            raise _syntax(t)
        return t.text  # type: ignore[attr-defined]

    def name_list(self) -> list[str]:
        """``(a, b)`` after the opening parenthesis was seen."""
        self.expect("(")
        names = [_ident(self.take())]
        while self.accept(","):
            names.append(_ident(self.take()))
        self.expect(")")
        return names

    def bare_names(self) -> list[str]:
        names = [_ident(self.take())]
        while self.accept(","):
            names.append(_ident(self.take()))
        return names


def parse_copy(sql: str) -> CopyStatement:
    """The COPY statement ``sql`` (see module rules); raises PgError."""
    t = _Tokens(sql)
    st = CopyStatement()
    t.expect("COPY")
    opts: list[tuple[str, object]] = []
    if t.accept("BINARY"):
        opts.append(("format", "binary"))
    if t.word() == "(":
        start = t.take()
        depth = 1
        while depth:
            tok = t.take()
            if tok.token_type == TokenType.L_PAREN:  # type: ignore[attr-defined]
                depth += 1
            elif tok.token_type == TokenType.R_PAREN:  # type: ignore[attr-defined]
                depth -= 1
                end = tok
        st.query = sql[start.end + 1:end.start].strip()  # type: ignore[attr-defined]
    else:
        parts = [t.take()]
        while t.word() == ".":
            t.take()
            parts.append(t.take())
        st.table = ".".join(
            f'"{p.text}"' if p.token_type == TokenType.IDENTIFIER else p.text  # type: ignore[attr-defined]
            for p in parts)
        if t.word() == "(":
            st.columns = t.name_list()
    direction = t.expect("FROM", "TO")
    st.is_from = direction == "FROM"
    if st.query is not None and st.is_from:
        raise _syntax(t.toks[t.i - 1])
    if t.accept("PROGRAM"):
        st.target, st.filename = "PROGRAM", t.string()
    elif t.peek() is not None and t.peek().token_type == TokenType.STRING:  # type: ignore[union-attr]
        st.target, st.filename = "FILE", t.string()
    else:
        w = t.expect("STDIN", "STDOUT")
        if (w == "STDIN") != st.is_from:
            raise _syntax(t.toks[t.i - 1])
        st.target = w
    if t.accept("USING"):
        t.expect("DELIMITERS")
        opts.append(("delimiter", t.string()))
    t.accept("WITH")
    if t.word() == "(":
        t.take()
        while True:
            name = _ident(t.take())
            value: object = True
            nxt = t.peek()
            if nxt is not None and t.word() not in (",", ")"):
                if t.word() == "(":
                    value = t.name_list()
                elif t.word() == "*":
                    t.take()
                    value = "*"
                else:
                    tok = t.take()
                    value = tok.text if tok.token_type in (  # type: ignore[attr-defined]
                        TokenType.STRING, TokenType.NUMBER) else tok.text.lower()  # type: ignore[attr-defined]
            opts.append((name, value))
            if t.accept(")"):
                break
            t.expect(",")
    else:
        while t.peek() is not None and t.word() != "WHERE":
            w = t.expect("BINARY", "CSV", "HEADER", "DELIMITER", "NULL", "QUOTE", "ESCAPE",
                         "FORCE", "ENCODING", "FREEZE", "OIDS")
            if w == "BINARY":
                opts.append(("format", "binary"))
            elif w == "CSV":
                opts.append(("format", "csv"))
            elif w in ("HEADER", "FREEZE"):
                opts.append((w.lower(), True))
            elif w == "OIDS":
                opts.append(("oids", True))
            elif w == "FORCE":
                if t.accept("QUOTE"):
                    opts.append(("force_quote", "*" if t.accept("*") else t.bare_names()))
                elif t.accept("NOT"):
                    t.expect("NULL")
                    opts.append(("force_not_null", t.bare_names()))
                else:
                    t.expect("NULL")
                    opts.append(("force_null", t.bare_names()))
            else:
                t.accept("AS")
                opts.append((w.lower(), t.string()))
    if t.word() == "WHERE":
        raise PgError("COPY FROM ... WHERE is not supported by pgbarrier", sqlstate="0A000")
    if t.peek() is not None:
        raise _syntax(t.peek())
    _apply_options(st, opts)
    return st


def _bool(name: str, value: object) -> bool:
    if value is True:
        return True
    s = str(value).lower()
    if s in ("true", "on", "1", "t", "yes", "y"):
        return True
    if s in ("false", "off", "0", "f", "no", "n"):
        return False
    raise PgError(f"{name} requires a Boolean value", sqlstate="22023")


def _file_encoding(value: str, is_from: bool) -> str:
    """``ENCODING 'x'``: PostgreSQL's name of the encoding the data is in (module rules)."""
    name = encodings.encoding_name(value)
    if name is None:
        raise PgError('argument to option "encoding" must be a valid encoding name',
                      sqlstate="22023")
    if name == "MULE_INTERNAL":  # PostgreSQL has no conversion either
        source, target = (name, "UTF8") if is_from else ("UTF8", name)
        raise PgError(f'default conversion function for encoding "{source}" to "{target}" '
                      "does not exist", sqlstate="42883")
    if encodings.unsupported(name):
        raise PgError(f"conversion between {name} and UTF8 is not supported",
                      sqlstate="0A000", hint="pgbarrier on DuckDB converts these encodings: "
                      f"{encodings.CONVERTED_LIST}.")
    return name


def _apply_options(st: CopyStatement, opts: list[tuple[str, object]]) -> None:
    """PostgreSQL's ProcessCopyOptions."""
    seen: set[str] = set()
    given: dict[str, object] = {}
    for name, value in opts:
        if name in seen:
            raise PgError("conflicting or redundant options", sqlstate="42601")
        seen.add(name)
        if name == "format":
            fmt = str(value).lower()
            if fmt not in ("text", "csv", "binary"):
                raise PgError(f'COPY format "{value}" not recognized', sqlstate="22023")
            st.format = fmt
        elif name == "header":
            if not isinstance(value, list) and str(value).lower() == "match":
                if not st.is_from:
                    raise PgError("cannot use \"match\" with HEADER in COPY TO",
                                  sqlstate="0A000")
                st.header = "match"
            else:
                st.header = _bool("header", value)
        elif name in ("delimiter", "null", "quote", "escape", "encoding"):
            if not isinstance(value, str) or value is True:
                raise PgError(f"{name} requires a parameter", sqlstate="22023")
            given[name] = value
        elif name in ("force_quote", "force_not_null", "force_null"):
            if value is True or (isinstance(value, str) and (value != "*" or name != "force_quote")):
                raise PgError(f'argument to option "{name}" must be a list of column names',
                              sqlstate="22023")
            given[name] = value
        elif name == "freeze":
            _bool(name, value)  # accepted: DuckDB has nothing to freeze
        elif name == "oids":
            if _bool(name, value):
                raise PgError("COPY with OIDS is not supported", sqlstate="0A000")
        else:
            raise PgError(f'option "{name}" not recognized', sqlstate="42601")
    csv = st.format == "csv"
    binary = st.format == "binary"
    if binary and "delimiter" in given:
        raise PgError("cannot specify DELIMITER in BINARY mode", sqlstate="0A000")
    if binary and "null" in given:
        raise PgError("cannot specify NULL in BINARY mode", sqlstate="0A000")
    if binary and st.header:
        raise PgError("cannot specify HEADER in BINARY mode", sqlstate="0A000")
    if csv:
        st.delimiter, st.null = ",", ""
    st.delimiter = str(given.get("delimiter", st.delimiter))
    st.null = str(given.get("null", st.null))
    if len(st.delimiter.encode()) != 1:
        raise PgError("COPY delimiter must be a single one-byte character", sqlstate="0A000")
    if st.delimiter in "\r\n":
        raise PgError("COPY delimiter cannot be newline or carriage return", sqlstate="22023")
    if "\r" in st.null or "\n" in st.null:
        raise PgError("COPY null representation cannot use newline or carriage return",
                      sqlstate="22023")
    if not csv and st.delimiter in "\\.abcdefghijklmnopqrstuvwxyz0123456789":
        raise PgError(f'COPY delimiter cannot be "{st.delimiter}"', sqlstate="22023")
    for name in ("quote", "escape", "force_quote", "force_not_null", "force_null"):
        if name in given and not csv:
            label = {"force_quote": "force quote", "force_not_null": "force not null",
                     "force_null": "force null"}.get(name, name)
            raise PgError(f"COPY {label} available only in CSV mode", sqlstate="0A000")
    if csv:
        st.quote = str(given.get("quote", '"'))
        st.escape = str(given.get("escape", st.quote))
        if len(st.quote.encode()) != 1:
            raise PgError("COPY quote must be a single one-byte character", sqlstate="0A000")
        if len(st.escape.encode()) != 1:
            raise PgError("COPY escape must be a single one-byte character", sqlstate="0A000")
        if st.delimiter == st.quote:
            raise PgError("COPY delimiter and quote must be different", sqlstate="0A000")
        if st.delimiter in st.null:
            raise PgError("COPY delimiter must not appear in the NULL specification",
                          sqlstate="0A000")
        if st.quote in st.null:
            raise PgError("CSV quote character must not appear in the NULL specification",
                          sqlstate="0A000")
    elif st.delimiter in st.null:
        raise PgError("COPY delimiter must not appear in the NULL specification",
                      sqlstate="0A000")
    if "force_quote" in given:
        if st.is_from:
            raise PgError("COPY force quote only available using COPY TO", sqlstate="0A000")
        fq = given["force_quote"]
        st.force_quote = True if fq == "*" else list(fq)  # type: ignore[arg-type]
    for name in ("force_not_null", "force_null"):
        if name in given:
            if not st.is_from:
                label = "force not null" if name == "force_not_null" else "force null"
                raise PgError(f"COPY {label} only available using COPY FROM", sqlstate="0A000")
            setattr(st, name, list(given[name]))  # type: ignore[call-overload]
    if "encoding" in given:
        st.encoding = _file_encoding(str(given["encoding"]), st.is_from)
