"""``varchar(n)`` and ``char(n)`` as PostgreSQL keeps them, on DuckDB.

DuckDB stores ``varchar(10)`` and ``char(3)`` as plain ``VARCHAR`` and never checks a
length, so a value PostgreSQL refuses (``22001 value too long for type character
varying(10)``) was stored, and a database dumped from pgbarrier failed to restore into
PostgreSQL. Rules this module keeps:

* A column declared ``varchar(n)``, ``character varying(n)``, ``char(n)``,
  ``character(n)``, ``bpchar(n)`` or plain ``char`` / ``character`` (PostgreSQL's
  ``char(1)``) gets a CHECK constraint of DuckDB's
  (:func:`column_check`) that fails with PostgreSQL's error, carried in DuckDB's
  ``error()`` as ``pgbarrier:22001:<message>`` (:mod:`pgbarrier.backends.duckdb_errors`
  answers it as that SQLSTATE and message). DuckDB checks it on every write: INSERT,
  UPDATE, ``INSERT ... SELECT``, COPY, ``ON CONFLICT``, a table rebuilt by ALTER TABLE.
  The elements of an array of ``varchar(n)`` are not checked: DuckDB allows no lambda in
  a CHECK, and no other function measures each element.
* The length counts characters, as PostgreSQL's does; trailing blanks beyond the length
  are allowed, as PostgreSQL allows them (PostgreSQL cuts them off; here they are kept).
  A ``char(n)`` value is kept without its padding (PostgreSQL pads it on output, which
  pgbarrier's output does from the column's type modifier).
* The check is pgbarrier's, not the client's: :data:`MARKER` marks it, the catalog
  (``pg_constraint``, ``\\d``, pg_dump, ``information_schema``) does not list it, and
  ALTER TABLE keeps it in step with the column's declared type.
* ``bit(n)`` (and plain ``bit``, ``bit(1)``) holds exactly ``n`` bits: any other length is
  ``22026 bit string length 2 does not match type bit(3)``.
* Explicit casts are PostgreSQL's (:func:`cast`): ``x::varchar(n)`` cuts to ``n``
  characters, ``x::char(n)`` cuts and, where the value is a result column, pads with
  blanks (``'x'::char(3)`` prints ``x  ``); inside an expression a ``char(n)`` value
  compares and concatenates without its padding, as PostgreSQL's ``bpchar`` does.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_sql import LENGTH_CHECK_MARKER

__all__ = ["MARKER", "column_check", "declared_length", "is_length_check", "cast"]

#: the text every type check of pgbarrier's carries (in its error() message)
MARKER = LENGTH_CHECK_MARKER

_T = exp.DataType.Type
_VARCHAR = (_T.VARCHAR, _T.NVARCHAR)
_CHAR = (_T.CHAR, _T.NCHAR, _T.BPCHAR)


def declared_length(kind: exp.DataType) -> tuple[str, int, int] | None:
    """(PostgreSQL's type name, length, array depth) of a ``varchar(n)`` / ``char(n)``
    type, or of an array of one; None for any other type (``varchar``, ``text``...)."""
    depth = 0
    while kind.this == _T.ARRAY and kind.expressions and \
            isinstance(kind.expressions[0], exp.DataType):
        kind, depth = kind.expressions[0], depth + 1
    params = [p.this for p in kind.expressions if isinstance(p, exp.DataTypeParam)]
    if params and not (len(params) == 1 and isinstance(params[0], exp.Literal)
                       and params[0].is_int):
        return None
    n = int(params[0].name) if params else None
    if kind.this in _VARCHAR and n is not None:
        return f"character varying({n})", n, depth
    if kind.this in _CHAR and not (kind.this == _T.BPCHAR and n is None):
        n = 1 if n is None else n
        return f"character({n})", n, depth
    if kind.this == _T.BIT:  # bit is bit(1), as PostgreSQL reads it
        n = 1 if n is None else n
        return f"bit({n})", n, depth
    return None


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def column_check(column: str, kind: exp.DataType) -> str | None:
    """DuckDB's CHECK expression enforcing ``kind``'s length on ``column`` (a quoted
    DuckDB identifier), or None when ``kind`` declares no length."""
    found = declared_length(kind)
    if found is None:
        return None
    name, n, depth = found
    if depth:  # DuckDB allows no lambda in a CHECK: an array's elements go unchecked
        return None
    if name.startswith("bit("):  # PostgreSQL's bit(n) holds exactly n bits
        message = (f"'{MARKER}026:bit string length ' || bit_length({column}) || "
                   f"' does not match type {name}'")
        return (f"CASE WHEN {column} IS NULL OR bit_length({column}) = {n} THEN true "
                f"ELSE error({message}) END")
    message = _literal(f"{MARKER}001:value too long for type {name}")
    return (f"CASE WHEN {column} IS NULL OR length(rtrim({column}, ' ')) <= {n} THEN true "
            f"ELSE error({message}) END")


def is_length_check(expression: str | None) -> bool:
    return expression is not None and MARKER in expression


def cast(node: exp.Cast, top_level: bool) -> exp.Expr | None:
    """PostgreSQL's explicit cast to ``varchar(n)`` / ``char(n)`` (not to an array of
    one): cut to ``n`` characters; a ``char(n)`` result column padded with blanks, else
    without trailing blanks (``bpchar``'s meaning inside expressions). None for any
    other cast."""
    to = node.args.get("to")
    if not isinstance(to, exp.DataType):
        return None
    found = declared_length(to)
    if found is None or found[2] or found[0].startswith("bit("):
        return None
    name, n, _ = found
    text = exp.Cast(this=node.this.copy(), to=exp.DataType.build("VARCHAR"))
    cut = exp.Anonymous(this="left", expressions=[text, exp.Literal.number(n)])
    if name.startswith("character varying"):
        return cut
    if top_level:
        return exp.Anonymous(this="rpad", expressions=[cut, exp.Literal.number(n),
                                                        exp.Literal.string(" ")])
    return exp.Anonymous(this="rtrim", expressions=[cut, exp.Literal.string(" ")])
