"""Answers for values PostgreSQL refuses: input syntax, ranges, casts, JSON, regexes, units.

Rules this module keeps:

* A string that is not input of a type is 22P02 ``invalid input syntax for type X: "v"``
  (22007 for date, time, timestamp and interval), at the literal when PostgreSQL reads the
  literal as that type while parsing, else without a position (:mod:`.carets`); a number
  too large for an integer type is 22003 ``value "v" is out of range for type X``, for
  ``real``/``double precision`` ``"v" is out of range for type X``; a valid date or time
  with a field out of range is 22008 ``date/time field value out of range`` (with
  PostgreSQL's datestyle HINT when the month or day field is too large).
* A run-time overflow is 22003 without a position: ``smallint``/``integer``/``bigint out
  of range``, and ``numeric field overflow`` with PostgreSQL's DETAIL (``A field with
  precision p, scale s must round to an absolute value less than 10^d.``).
* A cast PostgreSQL has not is 42846 ``cannot cast type a to b`` at the cast; assigned to
  a column (INSERT, UPDATE) it is 42804 ``column "c" is of type b but expression is of
  type a`` with PostgreSQL's HINT.
* JSON's DETAIL and CONTEXT are PostgreSQL's own parser's (:mod:`.jsontext`); RE2's
  reasons for a bad regular expression are said in PostgreSQL's words where they mean
  the same (``parentheses () not balanced``).
"""

from __future__ import annotations

import re

from sqlglot import exp

from pgbarrier.backends.duckdb_errors import carets, scopes
from pgbarrier.backends.duckdb_errors.answer import Ctx, err, list_index, literal_at
from pgbarrier.backends.duckdb_errors.argtypes import arg_type
from pgbarrier.backends.duckdb_errors.jsontext import json_error
from pgbarrier.backends.duckdb_errors.names import input_type, pg_type, range_name
from pgbarrier.errors import PgError


# --------------------------------------------------------------------------- input values

_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_FLOAT = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")
_TIME = re.compile(r"^\s*\d{1,2}:\d{1,2}(:\d{1,2}(\.\d+)?)?\s*$")
_TIMESTAMP = re.compile(r"^\s*(\d{1,4})-(\d{1,2})-(\d{1,2})([ T]\d{1,2}:\d{1,2}(:\d{1,2}"
                        r"(\.\d+)?)?)?\s*([+-]\d{1,2}(:?\d{2})?|Z|UTC)?\s*$", re.I)
_DATESTYLE_HINT = 'Perhaps you need a different "datestyle" setting.'


def bad_input(type_name: str, value: str, ctx: Ctx, state: str = "22P02") -> PgError:
    return err(state, f'invalid input syntax for type {type_name}: "{value}"',
               position=literal_at(ctx, value))


def datetime_range(value: str, ctx: Ctx) -> PgError:
    """22008, with PostgreSQL's datestyle HINT when the month field is over 12."""
    m = _TIMESTAMP.match(value)
    hint = _DATESTYLE_HINT if m and (int(m.group(2)) > 12 or int(m.group(3)) > 31) else None
    return err("22008", f'date/time field value out of range: "{value}"', hint=hint,
               position=literal_at(ctx, value))


_ALTER_TYPE = re.compile(r'(?is)^\s*ALTER\s+TABLE\b.*?\bALTER\s+(?:COLUMN\s+)?("[^"]+"|\w+)\s+'
                         r"(?:SET\s+DATA\s+)?TYPE\s+(.+?)\s*;?\s*$")


def convert_string(m: re.Match[str], ctx: Ctx) -> PgError | None:
    value, duck = m.group("value"), m.group("type")
    altered = _ALTER_TYPE.match(ctx.sql or "")
    if altered and not re.search(r"(?i)\bUSING\b", altered.group(2)):
        column = altered.group(1)
        column = column[1:-1] if column.startswith('"') else column.lower()
        name = input_type(duck) if not duck.upper().startswith("DECIMAL") else "numeric"
        return err("42804", f'column "{column}" cannot be cast automatically to type {name}',
                   hint=f'You might need to specify "USING {column}::{name}".')
    if duck.upper().startswith("DECIMAL"):
        return convert_decimal(value, duck, ctx)
    limit = range_name(duck)
    if limit is not None:
        if _INTEGER.match(value):
            return err("22003", f'value "{value}" is out of range for type {limit}',
                       position=literal_at(ctx, value))
        return bad_input(limit, value, ctx)
    if duck.upper() in ("FLOAT", "DOUBLE"):
        name = input_type(duck)
        if _FLOAT.match(value):
            return err("22003", f'"{value}" is out of range for type {name}',
                       position=literal_at(ctx, value))
        return bad_input(name, value, ctx)
    if duck.upper() == "INTERVAL":
        return bad_input("interval", value, ctx, "22007")
    if duck.upper() == "JSON":
        return json_input(value, ctx)
    return bad_input(input_type(duck), value, ctx)


_DECIMAL_TYPE = re.compile(r"DECIMAL\((\d+),(\d+)\)", re.I)


def numeric_overflow(duck: str) -> PgError:
    t = _DECIMAL_TYPE.match(duck)
    precision, scale = (int(t.group(1)), int(t.group(2))) if t else (18, 3)
    digits = precision - scale
    bound = f"10^{digits}" if digits else "1"
    return err("22003", "numeric field overflow",
               detail=f"A field with precision {precision}, scale {scale} must round to an "
                      f"absolute value less than {bound}.")


def convert_decimal(value: str, duck: str, ctx: Ctx) -> PgError:
    if _FLOAT.match(value):
        return numeric_overflow(duck)
    return bad_input("numeric", value, ctx)


def json_input(value: str, ctx: Ctx) -> PgError:
    found = json_error(value)
    detail, context = found if found else (None, None)
    return err("22P02", "invalid input syntax for type json", detail=detail,
               position=literal_at(ctx, value), context=context)


def timestamp_format(m: re.Match[str], ctx: Ctx) -> PgError:
    value = m.group("value")
    where = literal_at(ctx, value)
    typed = carets.literal_cast_type(ctx.written, where) or _target_type(ctx)
    name = "timestamp with time zone" if typed in ("timestamptz", "timestamp with time zone") \
        else "timestamp"
    if _TIMESTAMP.match(value):  # the shape of a timestamp, a field out of range
        return datetime_range(value, ctx)
    return bad_input(name, value, ctx, "22007")


def _target_type(ctx: Ctx) -> str:
    """The type of the column an INSERT value / UPDATE SET at DuckDB's caret is for (PostgreSQL's
    name, lower-cased), or ""."""
    column = _assigned_column(ctx)
    tree = scopes.parse(ctx.sql) if ctx.sql and column else None
    target = tree.this.this if isinstance(tree, exp.Insert) and isinstance(tree.this, exp.Schema) \
        else tree.this if tree is not None else None
    if not isinstance(target, exp.Table) or ctx.columns is None:
        return ""
    for table, cols in ctx.columns([target.name]).items():
        if table.lower() == target.name.lower():
            duck = next((t for c, t in cols.items() if c.lower() == (column or "").lower()), "")
            return pg_type(duck) if duck else ""
    return ""


def time_range(m: re.Match[str], ctx: Ctx) -> PgError:
    value = m.group("value")
    if _TIME.match(value) or _TIMESTAMP.match(value):
        return datetime_range(value, ctx)
    return bad_input("time", value, ctx, "22007")


def cast_range(m: re.Match[str], ctx: Ctx) -> PgError:
    to = m.group("to")
    limit = range_name(to)
    if limit is not None:
        return err("22003", f"{limit} out of range")
    if to.upper().startswith("DECIMAL"):
        return numeric_overflow(to)
    return err("22003", f"value out of range for type {pg_type(to)}")


def arith_overflow(m: re.Match[str], ctx: Ctx) -> PgError:
    limit = range_name(m.group("type")) or pg_type(m.group("type"))
    return err("22003", f"{limit} out of range")


def no_cast(m: re.Match[str], ctx: Ctx) -> PgError:
    src, dst = pg_type(m.group("src")), pg_type(m.group("dst"))
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    if i is not None and (toks[i].text == "::" or toks[i].text.upper() == "CAST"):
        return err("42846", f"cannot cast type {src} to {dst}",
                   position=_cast_position(ctx, i))
    target = _assigned_column(ctx)
    if target is not None:
        return err("42804", f'column "{target}" is of type {dst} but expression is of type '
                            f"{src}", hint="You will need to rewrite or cast the expression.",
                   position=ctx.position)
    return err("42846", f"cannot cast type {src} to {dst}", position=ctx.position)


def _cast_position(ctx: Ctx, i: int) -> int | None:
    toks = carets.tokens(ctx.sql)
    if toks[i].text == "::":
        return toks[i].start + 1
    return ctx.position


def _assigned_column(ctx: Ctx) -> str | None:
    """The target column of the INSERT value / UPDATE SET expression at DuckDB's caret."""
    tree = scopes.parse(ctx.sql) if ctx.sql else None
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    if tree is None or i is None:
        return None
    if isinstance(tree, exp.Update):
        depth = 0
        for j in range(i - 1, -1, -1):
            if toks[j].kind.name == "R_PAREN":
                depth += 1
            elif toks[j].kind.name == "L_PAREN":
                depth -= 1
            elif depth == 0 and toks[j].text == "=" and j >= 1:
                return toks[j - 1].text if toks[j - 1].kind.name == "IDENTIFIER" \
                    else toks[j - 1].text.lower()
        return None
    if not isinstance(tree, exp.Insert):
        return None
    index = list_index(toks, i)
    if index is None:
        return None
    if isinstance(tree.this, exp.Schema) and tree.this.expressions:
        names = [scopes._folded(c) if isinstance(c, exp.Identifier) else c.name
                 for c in tree.this.expressions]
    else:
        table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        found = ctx.columns([table.name]) if ctx.columns and isinstance(table, exp.Table) else {}
        names = next((list(cols) for name, cols in found.items()
                      if name.lower() == table.name.lower()), [])
    return names[index] if index < len(names) else None


def bad_regex(m: re.Match[str], ctx: Ctx) -> PgError:
    reason = m.group("reason")
    for re2, pg in _REGEX_REASONS:
        if reason.startswith(re2):
            return err("2201B", f"invalid regular expression: {pg}")
    return err("2201B", f"invalid regular expression: {reason}")


#: RE2's reasons -> PostgreSQL's (Spencer's regex library) for the common mistakes
_REGEX_REASONS = [
    ("missing )", "parentheses () not balanced"), ("unexpected )", "parentheses () not balanced"),
    ("missing ]", "brackets [] not balanced"), ("trailing \\", "invalid escape \\ sequence"),
    ("invalid escape sequence", "invalid escape \\ sequence"),
    ("missing argument to repetition operator", "quantifier operand invalid"),
    ("bad repetition operator", "invalid repetition count(s)"),
    ("invalid character class range", "invalid character range"),
]


def interval_input(m: re.Match[str], ctx: Ctx) -> PgError | None:
    """DuckDB names the unknown unit: the literal that holds it is the input."""
    unit = m.group("unit")
    toks = carets.tokens(ctx.sql)
    lit = next((t for t in toks if t.kind.name == "STRING" and unit in t.text), None)
    return None if lit is None else bad_input("interval", lit.text, ctx, "22007")


def unit_refused(m: re.Match[str], ctx: Ctx) -> PgError | None:
    """``extract``/``date_trunc``/``date_part`` of a unit DuckDB does not know."""
    unit = m.group("unit")
    tree = scopes.parse(ctx.sql) if ctx.sql else None
    if tree is None:
        return None
    levels, _ = scopes.range_tables(ctx.sql, "\x00", None, None, ctx.columns)
    for node in tree.find_all(exp.Extract, exp.TimestampTrunc, exp.DateTrunc, exp.Anonymous,
                              exp.Func):
        name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
        if isinstance(node, exp.Extract):
            value = node.expression
        elif name in ("date_trunc", "date_part", "timestamp_trunc", "datetime_trunc",
                      "date_part") or isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)):
            value = node.this if isinstance(node, (exp.TimestampTrunc, exp.DateTrunc)) \
                else (node.expressions[1] if isinstance(node, exp.Anonymous) and
                      len(node.expressions) > 1 else node.args.get("expression"))
        else:
            continue
        if not isinstance(value, exp.Expr):
            continue
        typ = arg_type(value, levels)
        if typ == "unknown" and isinstance(value, (exp.CurrentTimestamp, exp.Anonymous)):
            typ = "timestamp with time zone"
        if typ == "unknown":
            typ = "timestamp with time zone"
        return err("22023", f'unit "{unit}" not recognized for type {typ}')
    return None


def bad_percentile(m: re.Match[str], ctx: Ctx) -> PgError | None:
    found = re.search(r"(?i)percentile_(?:cont|disc)\s*\(\s*([-+]?[\d.]+)\s*\)", ctx.sql or "")
    if found is None:
        return None
    return err("22003", f"percentile value {found.group(1)} is not between 0 and 1")


def make_date(m: re.Match[str], ctx: Ctx) -> PgError:
    y, mo, d = m.group("y"), m.group("m"), m.group("d")
    return err("22008", f"date field value out of range: {int(y):04d}-{int(mo):02d}-{int(d):02d}")


def array_literal(m: re.Match[str], ctx: Ctx) -> PgError:
    value = m.group("value")
    detail = None if value.lstrip().startswith(("{", "[")) else \
        'Array value must start with "{" or dimension information.'
    return err("22P02", f'malformed array literal: "{value}"', detail=detail,
               position=literal_at(ctx, value))


_HEX = "0123456789abcdefABCDEF"


def bytea_input(m: re.Match[str], ctx: Ctx) -> PgError | None:
    """PostgreSQL's reading of a ``\\x`` bytea literal DuckDB could not convert."""
    value = m.group("value")
    if not value.startswith("\\x"):
        return err("22P02", "invalid input syntax for type bytea", position=literal_at(ctx, value))
    digits = value[2:]
    i = 0
    while i < len(digits):
        c = digits[i]
        if c in " \t\n\r":
            i += 1
            continue
        if c not in _HEX:
            return err("22023", f'invalid hexadecimal digit: "{c}"',
                       position=literal_at(ctx, value))
        if i + 1 >= len(digits):
            return err("22023", "invalid hexadecimal data: odd number of digits",
                       position=literal_at(ctx, value))
        if digits[i + 1] not in _HEX:
            return err("22023", f'invalid hexadecimal digit: "{digits[i + 1]}"',
                       position=literal_at(ctx, value))
        i += 2
    return None


def bit_digit(m: re.Match[str], ctx: Ctx) -> PgError:
    kind = "binary" if m.group("kind") == "Bit" else "hexadecimal"
    letter = "b" if kind == "binary" else "x"
    # sqlglot does not tokenize a bit string with a wrong digit: found in the text
    where = next((f.start() + 1 for f in re.finditer(r"(?i)(?<![\w'])" + letter + r"'([^']*)'",
                                                     ctx.sql or "") if m.group("c") in f.group(1)),
                 None)
    return err("22P02", f'"{m.group("c")}" is not a valid {kind} digit', position=where)
