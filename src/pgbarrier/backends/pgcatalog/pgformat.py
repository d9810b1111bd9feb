"""PostgreSQL's ``format()`` for DuckDB, whose own ``format()`` is fmt-style (``{}``).

Rules this module keeps:

* :func:`pg_format` turns ``format('<literal>', args...)`` into a DuckDB ``concat(...)`` of
  the literal's pieces and the arguments, as PostgreSQL formats them: ``%s`` the value as
  text (NULL is empty), ``%I`` ``quote_ident`` of it, ``%L`` ``quote_literal`` of it (NULL
  is ``NULL``; a value with a backslash is ``E'...'`` with the backslashes doubled), ``%%``
  a ``%``, and ``%n$s`` argument ``n`` (the next plain one is ``n + 1``).
* What cannot be translated exactly is refused, never formatted DuckDB's way: a format
  string that is not a literal, or width and flags (``%-10s``, ``%*s``) are 0A000; a
  missing argument is 22023 (``too few arguments for format()``), an unknown conversion
  22023 (``unrecognized format() type specifier``), as in PostgreSQL.
* A NULL given to ``%I`` is left out (PostgreSQL raises 22004): the result is the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from sqlglot import exp

from pgbarrier.errors import FeatureNotSupported, PgError

__all__ = ["pg_format"]

_SPEC = re.compile(r"%(?:(\d+)\$)?([-0-9*]*)(.)?", re.S)


def _text(arg: exp.Expr) -> exp.Expr:
    return exp.Cast(this=arg.copy(), to=exp.DataType.build("VARCHAR"))


def _literal(arg: exp.Expr) -> exp.Expr:
    text = _text(arg)
    quoted = "'''' || replace({t}, '''', '''''') || ''''"
    sql = (f"CASE WHEN {{t}} IS NULL THEN 'NULL' "
           f"WHEN contains({{t}}, '\\') THEN 'E' || {quoted.format(t='replace({t}, chr(92), chr(92) || chr(92))')} "
           f"ELSE {quoted} END")
    t = text.sql(dialect="duckdb")
    return exp.maybe_parse(sql.format(t=t), dialect="duckdb")


def pg_format(args: list[exp.Expr], quote_ident: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
    """DuckDB SQL for PostgreSQL's ``format(args[0], args[1:]...)``."""
    if not args:
        raise PgError("function format() does not exist", sqlstate="42883")
    fmt = args[0]
    if isinstance(fmt, exp.Null):
        return exp.Null()
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise FeatureNotSupported("format() with a format string that is not a constant is "
                                  "not supported on the DuckDB backend")
    text, values = fmt.name, args[1:]
    parts: list[exp.Expr] = []
    pos, nxt = 0, 0
    for m in _SPEC.finditer(text):
        if m.start() > pos:
            parts.append(exp.Literal.string(text[pos:m.start()]))
        pos = m.end()
        index, flags, kind = m.group(1), m.group(2), m.group(3)
        if kind is None:
            raise PgError("unterminated format() type specifier", sqlstate="22023")
        if kind == "%" and index is None and not flags:
            parts.append(exp.Literal.string("%"))
            continue
        if flags:
            raise FeatureNotSupported("format() widths and flags are not supported on the "
                                      "DuckDB backend")
        if kind not in "sIL":
            raise PgError(f'unrecognized format() type specifier "{kind}"', sqlstate="22023",
                          hint='For a single "%" use "%%".')
        i = int(index) - 1 if index is not None else nxt
        if i < 0 or i >= len(values):
            raise PgError("too few arguments for format()", sqlstate="22023")
        nxt = i + 1
        arg = values[i]
        if kind == "s":
            parts.append(_text(arg))
        elif kind == "I":
            parts.append(quote_ident(_text(arg)))
        else:
            parts.append(_literal(arg))
    if pos < len(text):
        parts.append(exp.Literal.string(text[pos:]))
    if not parts:
        return exp.Literal.string("")
    return exp.Anonymous(this="concat", expressions=parts)
