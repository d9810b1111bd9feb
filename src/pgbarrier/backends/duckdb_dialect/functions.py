"""PostgreSQL functions DuckDB has under another name or not at all.

Rules this module keeps:

* ``every(x)`` is ``bool_and(x)`` (the SQL standard's name PostgreSQL also takes).
* ``btrim(s [, chars])`` and ``initcap(s)``: sqlglot reads them as its ``Trim`` and
  ``Initcap`` and writes DuckDB's equivalents (``trim``; an ``initcap`` built of list
  functions whose word separators are blanks and ASCII punctuation, as PostgreSQL's are
  any character that is not a letter or digit); this module only marks such a call as
  needing that translation (DuckDB has neither name).
* ``encode(bytea, 'hex' | 'base64')`` is ``to_hex`` (lower case) / ``to_base64``, and
  ``decode(text, 'hex' | 'base64')`` ``from_hex`` / ``from_base64`` (DuckDB's own
  ``encode``/``decode`` are UTF-8 conversions: they answered the input, silently). The
  ``escape`` format and a format that is not a literal are 0A000 naming them. Known
  difference: PostgreSQL's base64 breaks lines every 76 characters, DuckDB's does not.
* ``round(x)`` of a visibly ``double precision`` or ``real`` value rounds half to even, as
  PostgreSQL's (C's ``rint``): DuckDB's ``round`` rounds half away from zero, which is
  PostgreSQL's for ``numeric`` only (``round(2.5::float8)`` answered 3, not 2). A value whose
  type is not visible (:mod:`.typeof`: ``avg(x)``, ``sqrt(x)``) keeps DuckDB's reading.
* ``to_hex(n)`` prints lower-case digits (DuckDB's ``hex``/``to_hex`` print upper case), and
  a negative ``integer`` or ``smallint`` in 32 bits (``to_hex(-1)`` is ``ffffffff``;
  DuckDB's widened it to 64).
* ``substr``/``substring`` with a start before 1 (a literal below 1, or an expression:
  checked as it runs) counts the positions before the string, as PostgreSQL does:
  ``substr('hello', -1, 3)`` is ``h`` (DuckDB counts a negative start from the end: it
  answered ``o``), ``substr('hello', -1)`` the whole string. The pattern form
  (``substring(s from 'regex')``) and a parameter as the start are left alone. Known
  difference: a negative length is PostgreSQL's 22011 and DuckDB's count backwards.
* A ``boolean`` argument of ``concat``/``concat_ws`` prints ``t``/``f`` (DuckDB printed
  ``true``/``false``).
* A string literal cast to ``boolean`` reads as PostgreSQL's ``boolin`` reads it: ``on``,
  ``off``, blanks around the word and unique prefixes (``tr``, ``of``) too, which DuckDB
  refused; anything else keeps DuckDB's reading (its error is PostgreSQL's 22P02).
* ``lpad``/``rpad`` with two arguments pad with blanks (sqlglot writes the third; DuckDB has
  no two-argument form); ``length`` of a visibly ``bytea`` value is its ``octet_length``
  (DuckDB's ``length`` takes no blob); ``num_nulls``/``num_nonnulls`` count their arguments.
* Outside its domain a math function raises PostgreSQL's error, where DuckDB answered a
  value: ``sqrt`` of a negative number and ``power(0, negative)`` or ``power(negative,
  fraction)`` are 2201F, ``ln``/``log`` of zero or a negative number 2201E (they were
  ``NaN``, ``-Infinity``, ``Infinity``). The checks are a ``CASE`` around the call, raising
  with ``error('pgbarrier:SQLSTATE:...')`` (``duckdb_errors``' own errors) for the rows
  that fail them only. ``^`` is checked as ``power`` is, but does not open the gate itself.
* Each name is in the gate (:mod:`.gate`), so a statement without one is not parsed.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect.build import add, bool_text, fn, lit, num, sub
from pgbarrier.backends.duckdb_dialect.typeof import Context
from pgbarrier.errors import FeatureNotSupported

T = exp.DataType.Type


#: (function, format) -> DuckDB's function
_CODECS = {("encode", "hex"): "to_hex", ("encode", "base64"): "to_base64",
           ("decode", "hex"): "from_hex", ("decode", "base64"): "from_base64"}


def _codec(node: exp.Expr) -> exp.Expr:
    name = "encode" if isinstance(node, exp.Encode) else "decode"
    fmt = node.args.get("charset")
    found = _CODECS.get((name, fmt.name.lower())) \
        if isinstance(fmt, exp.Literal) and fmt.is_string else None
    if found is None:
        shown = f"format {fmt.name}" if isinstance(fmt, exp.Literal) \
            else "a format that is not a literal"
        raise FeatureNotSupported(f"{name} with {shown} is not supported by pgbarrier on DuckDB")
    call = exp.Anonymous(this=found, expressions=[node.this.copy()])
    return exp.Lower(this=call) if found == "to_hex" else call


def _type(ctx: Context, node: exp.Expr | None) -> object:
    t = ctx.type_of(node)
    return None if t is None else t.this


def _round(node: exp.Round, ctx: Context) -> exp.Expr | None:
    if node.args.get("decimals") is not None or _type(ctx, node.this) not in (T.DOUBLE, T.FLOAT):
        return None
    return fn("round_even", exp.cast(node.this.copy(), exp.DataType.build("DOUBLE")), num(0))


def _to_hex(node: exp.Hex, ctx: Context) -> exp.Expr:
    value = node.this.copy()
    if _type(ctx, node.this) in (T.INT, T.SMALLINT, T.TINYINT):  # its 32 bits, unsigned
        value = exp.BitwiseAnd(this=exp.cast(value, exp.DataType.build("BIGINT")),
                               expression=num(0xFFFFFFFF))
    return exp.Lower(this=fn("to_hex", value))


def _substring(node: exp.Substring, ctx: Context) -> exp.Expr | None:
    start = node.args.get("start")
    length = node.args.get("length")
    if start is None or isinstance(start, exp.Literal) and \
            (start.is_string or int(float(start.this)) >= 1):
        return None  # from 1 on (DuckDB's reading is PostgreSQL's), or the pattern form
    if _type(ctx, start) in (T.TEXT, T.VARCHAR) or isinstance(start, exp.Placeholder):
        return None
    text = node.this
    if length is None:  # the whole string from the start: all of it before 1
        before: exp.Expr = text.copy()
    else:  # the positions before 1 count against the length
        left = exp.Greatest(this=sub(add(length.copy(), start.copy()), 1), expressions=[num(0)])
        before = exp.Substring(this=text.copy(), start=num(1), length=left)
    if isinstance(start, exp.Literal) or isinstance(start, exp.Neg) and \
            isinstance(start.this, exp.Literal):
        return before
    return exp.Case(ifs=[exp.If(this=exp.LT(this=start.copy(), expression=num(1)), true=before)],
                    default=exp.Substring(this=text.copy(), start=start.copy(),
                                          length=None if length is None else length.copy()))


def _boolean_texts(node: exp.Concat | exp.ConcatWs, ctx: Context) -> exp.Expr | None:
    args = node.expressions
    flags = [_type(ctx, a) == T.BOOLEAN for a in args]
    if not any(flags):
        return None
    new = node.copy()
    new.set("expressions", [bool_text(a) if flag else a.copy() for a, flag in zip(args, flags)])
    return new


#: PostgreSQL's boolean input words (boolin: any unique prefix of them, case and blanks
#: around ignored; "o" alone is ambiguous)
_TRUE_WORDS, _FALSE_WORDS = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def _boolean(text: str) -> bool | None:
    word = text.strip(" \t\n\r\f\v").lower()
    if not word or word == "o":
        return None
    if any(w.startswith(word) for w in _TRUE_WORDS):
        return True
    if any(w.startswith(word) for w in _FALSE_WORDS):
        return False
    return None


def _boolean_input(node: exp.Cast) -> exp.Expr | None:
    value = node.this
    if not (isinstance(value, exp.Literal) and value.is_string) or \
            not node.to.is_type(exp.DataType.Type.BOOLEAN):
        return None
    truth = _boolean(value.this)
    return None if truth is None else exp.Boolean(this=truth)


def _count_nulls(node: exp.Anonymous, nulls: bool) -> exp.Expr:
    terms: list[exp.Expr] = [
        exp.Case(ifs=[exp.If(this=exp.Is(this=a.copy(), expression=exp.Null()),
                             true=num(1 if nulls else 0))],
                 default=num(0 if nulls else 1)) for a in node.expressions]
    total = terms[0] if terms else num(0)
    for term in terms[1:]:
        total = exp.Add(this=total, expression=term)
    return exp.cast(exp.Paren(this=total), exp.DataType.build("INTEGER"))


_ZERO = num(0)


def _raise(sqlstate: str, message: str) -> exp.Expr:
    return fn("error", lit(f"pgbarrier:{sqlstate}:{message}"))


def _guarded(call: exp.Expr, checks: list[tuple[exp.Expr, str, str]]) -> exp.Expr:
    """``call`` where none of ``checks`` (condition, SQLSTATE, message) holds, else the
    first one's error."""
    return exp.Case(ifs=[exp.If(this=cond, true=_raise(state, msg)) for cond, state, msg in checks],
                    default=call.copy())


def _log_checks(value: exp.Expr) -> list[tuple[exp.Expr, str, str]]:
    return [(exp.EQ(this=value.copy(), expression=_ZERO), "2201E", "cannot take logarithm of zero"),
            (exp.LT(this=value.copy(), expression=_ZERO), "2201E",
             "cannot take logarithm of a negative number")]


def _math_domain(node: exp.Expr) -> exp.Expr | None:
    if isinstance(node, exp.Sqrt):
        return _guarded(node, [(exp.LT(this=node.this.copy(), expression=_ZERO), "2201F",
                                "cannot take square root of a negative number")])
    if isinstance(node, exp.Ln) or isinstance(node, exp.Log) and node.expression is None:
        return _guarded(node, _log_checks(node.this))
    if isinstance(node, exp.Log):  # log(base, x)
        return _guarded(node, _log_checks(node.this) + _log_checks(node.expression))
    if isinstance(node, exp.Pow):
        base, power = node.this, node.expression
        return _guarded(node, [
            (exp.and_(exp.EQ(this=base.copy(), expression=_ZERO),
                      exp.LT(this=power.copy(), expression=_ZERO)),
             "2201F", "zero raised to a negative power is undefined"),
            (exp.and_(exp.LT(this=base.copy(), expression=_ZERO),
                      exp.NEQ(this=power.copy(), expression=exp.Floor(this=power.copy()))),
             "2201F", "a negative number raised to a non-integer power yields a complex result")])
    return None


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if isinstance(node, (exp.Encode, exp.Decode)):
        return _codec(node)
    if isinstance(node, (exp.Sqrt, exp.Ln, exp.Log, exp.Pow)):
        return _math_domain(node)
    if isinstance(node, exp.Cast):
        return _boolean_input(node)
    if isinstance(node, exp.Pad):
        return node.copy() if node.args.get("fill_pattern") is None else None
    if isinstance(node, exp.Length) and _type(ctx, node.this) in (T.VARBINARY, T.BINARY):
        return fn("octet_length", node.this.copy())
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("num_nulls", "num_nonnulls"):
        return _count_nulls(node, node.name.lower() == "num_nulls")
    if isinstance(node, exp.Round):
        return _round(node, ctx)
    if isinstance(node, exp.Hex):
        return _to_hex(node, ctx)
    if isinstance(node, exp.Substring):
        return _substring(node, ctx)
    if isinstance(node, (exp.Concat, exp.ConcatWs)):
        return _boolean_texts(node, ctx)
    if isinstance(node, exp.Anonymous) and node.name.lower() == "every" and \
            len(node.expressions) == 1:
        return exp.LogicalAnd(this=node.expressions[0].copy())
    if isinstance(node, exp.Initcap) or isinstance(node, exp.Trim) and \
            "btrim" in ctx.sql.lower():
        return node.copy()  # sqlglot's DuckDB form of it (a trim() is the same either way)
    return None
