"""The translation table: DuckDB's error messages -> PostgreSQL's errors.

Rules this module keeps:

* :data:`RULES` is the table, in the order it is tried: each :class:`Rule` matches DuckDB's
  message (the first line, without DuckDB's ``Xxx Error:`` prefix and its closing ``!``)
  with a regular expression, optionally only for some DuckDB exception classes, and answers
  PostgreSQL's SQLSTATE, message, DETAIL, HINT, position and error fields (``answer``; None
  lets the next rule try). Each rule carries :class:`Example` statements (set-up, then the
  failing statement) that make DuckDB raise it; tests/functional/test_error_translation.py
  runs every example on PostgreSQL 15 and on pgbarrier's DuckDB and requires the same
  answer. An example's ``differs`` names the fields that knowingly differ, and why.
* Positions are PostgreSQL's (:mod:`.carets`): DuckDB's caret where it points at the same
  thing (a column, a function name), PostgreSQL's own place otherwise (the literal of an
  input error, the operator, the end of the input), none where PostgreSQL gives none
  (a run-time overflow). The HINTs are PostgreSQL's (DuckDB's ``Did you mean`` and
  ``Candidate`` lists are never passed on: PostgreSQL's hints for a missing column follow
  its own rule, :mod:`.scopes`).
* Choices where DuckDB cannot tell what PostgreSQL would: DuckDB converts a string literal
  for a function's argument where PostgreSQL resolves the function first
  (``abs('x')``): its "could not choose a candidate" is 42725 ``function abs(unknown) is not
  unique``; an argument type sqlglot cannot infer is ``unknown``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import duckdb
from sqlglot import exp

from pgbarrier.backends.duckdb_constraint_errors import Lookup, constraint_error
from pgbarrier.backends.duckdb_errors import carets, scopes
from pgbarrier.backends.duckdb_errors.jsontext import json_error
from pgbarrier.backends.duckdb_errors.names import input_type, pg_type, range_name
from pgbarrier.errors import PgError


@dataclass
class Ctx:
    """What a rule's answer may read: DuckDB's error and the statement it ran."""

    exc: BaseException
    sql: str | None
    text: str                 # DuckDB's whole text
    message: str              # its first line, prefix and "!" dropped
    position: int | None      # DuckDB's caret, 1-based in ``sql``
    columns: scopes.ColumnsLookup | None = None
    constraints: Lookup | None = None


@dataclass(frozen=True)
class Example:
    """A statement that makes DuckDB raise a rule's error (after ``setup``)."""

    sql: str
    setup: tuple[str, ...] = ()
    #: fields that knowingly differ from PostgreSQL's answer, and why
    differs: dict[str, str] = field(default_factory=dict)
    #: the SQLSTATE pgbarrier answers where PostgreSQL runs the statement (README's list of
    #: differences); None: PostgreSQL fails too, with the same answer
    own: str | None = None


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    answer: Callable[[re.Match[str], Ctx], PgError | None]
    examples: tuple[Example, ...]
    classes: tuple[type[BaseException], ...] = (duckdb.Error,)


def err(state: str, message: str, *, detail: str | None = None, hint: str | None = None,
        position: int | None = None, context: str | None = None,
        **fields: str) -> PgError:
    e = PgError.by_sqlstate(state)(message, detail=detail, hint=hint, position=position,
                                   sqlstate=state)
    if context:
        e.fields["W"] = context
    for code, value in fields.items():
        if value is not None:
            e.fields[code] = value
    return e


def _fixed(state: str, message: str, *, hint: str | None = None, caret: bool = True
           ) -> Callable[[re.Match[str], Ctx], PgError]:
    """An answer made of templates (``{name}`` is the pattern's group)."""
    def answer(m: re.Match[str], ctx: Ctx) -> PgError:
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        return err(state, message.format(**groups),
                   hint=hint.format(**groups) if hint else None,
                   position=ctx.position if caret else None)
    return answer


# --------------------------------------------------------------------------- input values

_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")
_FLOAT = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")
_TIME = re.compile(r"^\s*\d{1,2}:\d{1,2}(:\d{1,2}(\.\d+)?)?\s*$")
_TIMESTAMP = re.compile(r"^\s*(\d{1,4})-(\d{1,2})-(\d{1,2})([ T]\d{1,2}:\d{1,2}(:\d{1,2}"
                        r"(\.\d+)?)?)?\s*([+-]\d{1,2}(:?\d{2})?|Z|UTC)?\s*$", re.I)
_DATESTYLE_HINT = 'Perhaps you need a different "datestyle" setting.'


def _literal(ctx: Ctx, value: str) -> int | None:
    return carets.literal_position(ctx.sql, value, ctx.position)


def _bad_input(type_name: str, value: str, ctx: Ctx, state: str = "22P02") -> PgError:
    return err(state, f'invalid input syntax for type {type_name}: "{value}"',
               position=_literal(ctx, value))


def _datetime_range(value: str, ctx: Ctx) -> PgError:
    """22008, with PostgreSQL's datestyle HINT when the month field is over 12."""
    m = _TIMESTAMP.match(value)
    hint = _DATESTYLE_HINT if m and (int(m.group(2)) > 12 or int(m.group(3)) > 31) else None
    return err("22008", f'date/time field value out of range: "{value}"', hint=hint,
               position=_literal(ctx, value))


def _convert_string(m: re.Match[str], ctx: Ctx) -> PgError | None:
    value, duck = m.group("value"), m.group("type")
    if duck.upper().startswith("DECIMAL"):
        return _convert_decimal(value, duck, ctx)
    limit = range_name(duck)
    if limit is not None:
        if _INTEGER.match(value):
            return err("22003", f'value "{value}" is out of range for type {limit}',
                       position=_literal(ctx, value))
        return _bad_input(limit, value, ctx)
    if duck.upper() in ("FLOAT", "DOUBLE"):
        name = input_type(duck)
        if _FLOAT.match(value):
            return err("22003", f'"{value}" is out of range for type {name}',
                       position=_literal(ctx, value))
        return _bad_input(name, value, ctx)
    if duck.upper() == "INTERVAL":
        return _bad_input("interval", value, ctx, "22007")
    if duck.upper() == "JSON":
        return _json(value, ctx)
    return _bad_input(input_type(duck), value, ctx)


_DECIMAL_TYPE = re.compile(r"DECIMAL\((\d+),(\d+)\)", re.I)


def _overflow(duck: str) -> PgError:
    t = _DECIMAL_TYPE.match(duck)
    precision, scale = (int(t.group(1)), int(t.group(2))) if t else (18, 3)
    digits = precision - scale
    bound = f"10^{digits}" if digits else "1"
    return err("22003", "numeric field overflow",
               detail=f"A field with precision {precision}, scale {scale} must round to an "
                      f"absolute value less than {bound}.")


def _convert_decimal(value: str, duck: str, ctx: Ctx) -> PgError:
    if _FLOAT.match(value):
        return _overflow(duck)
    return _bad_input("numeric", value, ctx)


def _json(value: str, ctx: Ctx) -> PgError:
    found = json_error(value)
    detail, context = found if found else (None, None)
    return err("22P02", "invalid input syntax for type json", detail=detail,
               position=_literal(ctx, value), context=context)


def _timestamp_format(m: re.Match[str], ctx: Ctx) -> PgError:
    value = m.group("value")
    where = _literal(ctx, value)
    typed = carets.literal_cast_type(ctx.sql, where) or ""
    name = "timestamp with time zone" if typed in ("timestamptz", "timestamp with time zone") \
        else "timestamp"
    if _TIMESTAMP.match(value):  # the shape of a timestamp, a field out of range
        return _datetime_range(value, ctx)
    return _bad_input(name, value, ctx, "22007")


def _time_range(m: re.Match[str], ctx: Ctx) -> PgError:
    value = m.group("value")
    if _TIME.match(value) or _TIMESTAMP.match(value):
        return _datetime_range(value, ctx)
    return _bad_input("time", value, ctx, "22007")


def _cast_range(m: re.Match[str], ctx: Ctx) -> PgError:
    to = m.group("to")
    limit = range_name(to)
    if limit is not None:
        return err("22003", f"{limit} out of range")
    if to.upper().startswith("DECIMAL"):
        return _overflow(to)
    return err("22003", f"value out of range for type {pg_type(to)}")


def _arith_overflow(m: re.Match[str], ctx: Ctx) -> PgError:
    limit = range_name(m.group("type")) or pg_type(m.group("type"))
    return err("22003", f"{limit} out of range")


def _no_cast(m: re.Match[str], ctx: Ctx) -> PgError:
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
    index = _list_index(toks, i)
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


def _list_index(toks: tuple[carets.Tok, ...], i: int) -> int | None:
    """Which element of its comma list (a VALUES row, a select list) token ``i`` starts."""
    depth, commas = 0, 0
    for j in range(i - 1, -1, -1):
        kind = toks[j].kind.name
        if kind == "R_PAREN":
            depth += 1
        elif kind == "L_PAREN":
            if depth == 0:
                return commas
            depth -= 1
        elif kind == "COMMA" and depth == 0:
            commas += 1
        elif kind in ("SELECT", "DISTINCT") and depth == 0:
            return commas
    return None


# --------------------------------------------------------------------------- names

def _ident_name(name: str, ctx: Ctx) -> str:
    """A name as PostgreSQL folds it: lower-cased unless the statement quoted it."""
    if ctx.sql and f'"{name}"' in ctx.sql:
        return name
    return name.lower()


def _missing_column(m: re.Match[str], ctx: Ctx) -> PgError:
    groups = m.groupdict()
    name = _ident_name(groups["name"], ctx)
    qualifier = _ident_name(groups["table"], ctx) if groups.get("table") else None
    levels, col = scopes.range_tables(ctx.sql, name, qualifier, ctx.position, ctx.columns)
    hint = scopes.missing_column_hint(levels, name, qualifier) if levels else None
    position = scopes.column_start(col) if col is not None else ctx.position
    text = f"column {qualifier}.{name} does not exist" if qualifier \
        else f'column "{name}" does not exist'
    return err("42703", text, hint=hint, position=position)


def _missing_table_ref(m: re.Match[str], ctx: Ctx) -> PgError:
    name = _ident_name(m.group("name"), ctx)
    tree = scopes.parse(ctx.sql) if ctx.sql else None
    col = None
    if tree is not None:
        col = next((c for c in tree.find_all(exp.Column) if isinstance(
            c.args.get("table"), exp.Identifier) and scopes._folded(c.args["table"]) == name),
            None)
    position = scopes.column_start(col) if col is not None else ctx.position
    levels: list[list[scopes.Rte]] = []
    if col is not None:
        levels, _ = scopes.range_tables(ctx.sql, col.name if not isinstance(
            col.this, exp.Star) else "*", name, position, ctx.columns)
    if not levels and tree is not None:
        levels, _ = scopes.range_tables(ctx.sql, "\x00", None, None, ctx.columns)
    hint = scopes.missing_table_hint(levels, name)
    if hint is not None:
        return err("42P01", f'invalid reference to FROM-clause entry for table "{name}"',
                   hint=hint, position=position)
    return err("42P01", f'missing FROM-clause entry for table "{name}"', position=position)


def _group_by(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    levels, col = scopes.range_tables(ctx.sql, _ident_name(name, ctx), None, ctx.position,
                                      ctx.columns)
    qualifier = col.table if col is not None and col.table else None
    if qualifier is None:
        owner = scopes.owner_of(levels, _ident_name(name, ctx))
        qualifier = owner.name if owner is not None else None
    shown = f"{qualifier}.{name}" if qualifier else name
    return err("42803", f'column "{shown}" must appear in the GROUP BY clause or be used in an '
                        "aggregate function",
               position=scopes.column_start(col) if col is not None else ctx.position)


def _duplicate_column(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    sql = ctx.sql or ""
    alter = re.match(r"(?is)\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?"
                     r"((?:\"[^\"]+\"|[^\s.]+)\.)?(\"[^\"]+\"|[^\s.]+)", sql)
    if alter:
        table = alter.group(2)
        table = table[1:-1] if table.startswith('"') else table.lower()
        return err("42701", f'column "{name}" of relation "{table}" already exists')
    return err("42701", f'column "{name}" specified more than once')


def _alter_column_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name, table = m.group("name"), m.group("table")
    sql = ctx.sql or ""
    if re.match(r"(?is)\s*ALTER\s+TABLE\b.*\bRENAME\b", sql):
        return err("42703", f'column "{name}" does not exist')
    if re.match(r"(?is)\s*INSERT\b", sql):
        return err("42703", f'column "{name}" of relation "{table}" does not exist',
                   position=carets.identifier_position(sql, name))
    return err("42703", f'column "{name}" of relation "{table}" does not exist')


def _update_column_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    table = None
    tree = scopes.parse(ctx.sql) if ctx.sql else None
    if isinstance(tree, exp.Update) and isinstance(tree.this, exp.Table):
        table = tree.this.name
    return err("42703", f'column "{name}" of relation "{table or "?"}" does not exist',
               position=carets.identifier_position(ctx.sql, name))


# --------------------------------------------------------------------------- functions

_FUNC_HINT = ("No function matches the given name and argument types. You might need to add "
              "explicit type casts.")
_OP_HINT = ("No operator matches the given name and argument types. You might need to add "
            "explicit type casts.")
_UNARY_HINT = ("No operator matches the given name and argument type. You might need to add "
               "an explicit type cast.")
_OPERATOR = re.compile(r"^[^\w\s]+$")
#: DuckDB's function names of PostgreSQL's operators (integer_division makes / DuckDB's //)
_OPERATORS = {"//": "/", "~~": "~~", "!~~": "!~~", "~~*": "~~*", "!~~*": "!~~*"}


def _split_types(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _operator_position(ctx: Ctx, op: str) -> int | None:
    """PostgreSQL points at the operator: the first ``op`` token at the caret's depth."""
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    if i is None:
        return ctx.position
    depth = 0
    for tok in toks[i:]:
        if tok.kind.name == "L_PAREN":
            depth += 1
        elif tok.kind.name == "R_PAREN":
            depth -= 1
            if depth < 0:
                break
        elif depth == 0 and _is_op(tok, op):
            return tok.start + 1
    depth = 0
    for tok in reversed(toks[:i]):
        if tok.kind.name == "R_PAREN":
            depth += 1
        elif tok.kind.name == "L_PAREN":
            depth -= 1
            if depth < 0:
                break
        elif depth == 0 and _is_op(tok, op):
            return tok.start + 1
    return ctx.position


def _is_op(tok: carets.Tok, op: str) -> bool:
    return tok.text == op or (op == "~~" and tok.text.upper() == "LIKE") or \
        (op == "~~*" and tok.text.upper() == "ILIKE")


def _no_match(m: re.Match[str], ctx: Ctx) -> PgError:
    name, args = m.group("name"), [pg_type(a) for a in _split_types(m.group("args"))]
    if _OPERATOR.match(name):
        op = _OPERATORS.get(name, name)
        if len(args) == 1:
            return err("42883", f"operator does not exist: {op} {args[0]}", hint=_UNARY_HINT,
                       position=_operator_position(ctx, op))
        return err("42883", f"operator does not exist: {args[0]} {op} {args[1]}",
                   hint=_OP_HINT, position=_operator_position(ctx, op))
    return err("42883", f"function {name}({', '.join(args)}) does not exist", hint=_FUNC_HINT,
               position=ctx.position)


def _not_unique(m: re.Match[str], ctx: Ctx) -> PgError:
    name, args = m.group("name"), [pg_type(a) for a in _split_types(m.group("args"))]
    if _OPERATOR.match(name):
        op = _OPERATORS.get(name, name)
        shown = f"{op} {args[0]}" if len(args) == 1 else f"{args[0]} {op} {args[1]}"
        return err("42725", f"operator is not unique: {shown}",
                   hint="Could not choose a best candidate operator. You might need to add "
                        "explicit type casts.", position=_operator_position(ctx, op))
    return err("42725", f"function {name}({', '.join(args)}) is not unique",
               hint="Could not choose a best candidate function. You might need to add "
                    "explicit type casts.", position=ctx.position)


def _concat_lists(m: re.Match[str], ctx: Ctx) -> PgError:
    return err("42883", f"operator does not exist: {pg_type(m.group('a'))} || "
                        f"{pg_type(m.group('b'))}", hint=_OP_HINT,
               position=_operator_position(ctx, "||"))


_SQL_TYPES = {
    "INT": "integer", "BIGINT": "bigint", "SMALLINT": "smallint", "TEXT": "text",
    "VARCHAR": "character varying", "CHAR": "character", "DECIMAL": "numeric",
    "DOUBLE": "double precision", "FLOAT": "real", "BOOLEAN": "boolean", "DATE": "date",
    "TIMESTAMP": "timestamp without time zone", "TIMESTAMPTZ": "timestamp with time zone",
    "TIME": "time without time zone", "INTERVAL": "interval", "JSON": "json",
    "JSONB": "jsonb", "UUID": "uuid", "VARBINARY": "bytea", "BLOB": "bytea",
}


def _sql_type(dt: exp.DataType) -> str:
    if dt.this == exp.DataType.Type.ARRAY and dt.expressions:
        return _sql_type(dt.expressions[0]) + "[]"
    return _SQL_TYPES.get(dt.this.name, dt.this.name.lower())


def _arg_type(arg: exp.Expr, levels: list[list[scopes.Rte]]) -> str:
    if isinstance(arg, exp.Paren):
        return _arg_type(arg.this, levels)
    if isinstance(arg, exp.Literal):
        if arg.is_string:
            return "unknown"
        text = arg.this
        if re.fullmatch(r"\d+", text):
            n = int(text)
            return "integer" if n < 2 ** 31 else "bigint" if n < 2 ** 63 else "numeric"
        return "numeric"
    if isinstance(arg, exp.Null):
        return "unknown"
    if isinstance(arg, exp.Boolean):
        return "boolean"
    if isinstance(arg, exp.Neg):
        return _arg_type(arg.this, levels)
    if isinstance(arg, exp.Cast) and isinstance(arg.args.get("to"), exp.DataType):
        return _sql_type(arg.args["to"])
    if isinstance(arg, exp.Column) and isinstance(arg.this, exp.Identifier):
        name = scopes._folded(arg.this) or arg.name
        qual = arg.table or None
        for level in levels:
            for rte in level:
                if (qual is None or rte.name == qual) and name in rte.types:
                    return pg_type(rte.types[name])
    return "unknown"


def _function_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    tree = scopes.parse(ctx.sql) if ctx.sql else None
    types: list[str] = []
    call = None
    if tree is not None:
        calls = [n for n in tree.find_all(exp.Anonymous, exp.Func)
                 if (n.name if isinstance(n, exp.Anonymous) else n.sql_name()).lower() ==
                 name.lower()]
        call = calls[0] if calls else None
    if call is not None:
        levels, _ = scopes.range_tables(ctx.sql, "\x00", None, None, ctx.columns)
        args = call.expressions if isinstance(call, exp.Anonymous) else \
            [a for a in call.args.values() if isinstance(a, exp.Expr)]
        types = [_arg_type(a, levels) for a in args]
    return err("42883", f"function {name.lower()}({', '.join(types)}) does not exist",
               hint=_FUNC_HINT, position=ctx.position)


# --------------------------------------------------------------------------- syntax

def _syntax(m: re.Match[str], ctx: Ctx) -> PgError:
    """DuckDB names the last token when the input ended too early; PostgreSQL says so."""
    sql = ctx.sql
    if sql is not None and ctx.position is not None and _ends_early(sql):
        return err("42601", "syntax error at end of input", position=carets.end_of_input(sql))
    return err("42601", f'syntax error at or near "{m.group("near")}"', position=ctx.position)


def _ends_early(sql: str) -> bool:
    """The statement's error is at its end: another token after it moves (or mends) it."""
    probe = duckdb.connect(":memory:")
    try:
        try:
            probe.extract_statements(sql)
            return False
        except duckdb.ParserException as first:
            before = str(first)
        try:
            probe.extract_statements(sql + "\n)")
            return True
        except duckdb.ParserException as second:
            return carets.duckdb_position(str(second), sql + "\n)") != \
                carets.duckdb_position(before, sql)
    finally:
        probe.close()


def _unterminated(kind: str) -> Callable[[re.Match[str], Ctx], PgError]:
    def answer(m: re.Match[str], ctx: Ctx) -> PgError:
        rest = (ctx.sql or "")[(ctx.position or 1) - 1:]
        return err("42601", f'unterminated {kind} at or near "{rest}"', position=ctx.position)
    return answer


# --------------------------------------------------------------------------- catalog

def _relation_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    sql = ctx.sql or ""
    drop = re.match(r"(?is)\s*DROP\s+(TABLE|VIEW|SEQUENCE|INDEX|MATERIALIZED\s+VIEW)\b", sql)
    if drop:
        kind = " ".join(drop.group(1).lower().split())
        state = "42704" if kind == "index" else "42P01"
        return err(state, f'{kind} "{name}" does not exist')
    position = ctx.position or carets.identifier_position(sql, name.split(".")[-1])
    if not re.match(r"(?is)\s*(SELECT|WITH|INSERT|UPDATE|DELETE|TABLE|VALUES|MERGE|COPY)\b",
                    sql):
        position = None
    return err("42P01", f'relation "{name}" does not exist', position=position)


def _schema_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    position = None
    if re.match(r"(?is)\s*CREATE\b", ctx.sql or ""):
        position = carets.identifier_position(ctx.sql, name)
    return err("3F000", f'schema "{name}" does not exist', position=position)


def _type_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    return err("42704", f'type "{m.group("name")}" does not exist', position=ctx.position)


def _sequence_missing(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    if re.match(r"(?is)\s*DROP\s+SEQUENCE\b", ctx.sql or ""):
        return err("42P01", f'sequence "{name}" does not exist')
    toks = carets.tokens(ctx.sql)
    position = next((t.start + 1 for t in toks if t.kind.name == "STRING" and
                     t.text.split(".")[-1].strip('"').lower() == name.lower()), None)
    return err("42P01", f'relation "{name}" does not exist', position=position)


def _insert_count(more: str) -> Callable[[re.Match[str], Ctx], PgError]:
    def answer(m: re.Match[str], ctx: Ctx) -> PgError:
        position = None
        tree = scopes.parse(ctx.sql) if ctx.sql else None
        toks = carets.tokens(ctx.sql)
        if isinstance(tree, exp.Insert):
            cols = tree.this.expressions if isinstance(tree.this, exp.Schema) else []
            values = tree.expression
            row = values.expressions[0] if isinstance(values, exp.Values) and \
                values.expressions else None
            n = len(row.expressions) if isinstance(row, exp.Tuple) else None
            if more == "expressions" and n is not None:
                limit = len(cols) if cols else int(m.groupdict().get("cols") or 0)
                position = _nth_in_values(toks, limit)
            elif more == "target columns" and n is not None and len(cols) > n:
                ident = cols[n]
                start = ident.meta.get("start") if isinstance(ident, exp.Identifier) else None
                position = None if start is None else start + 1
        return err("42601", f"INSERT has more {more} than target columns"
                   if more == "expressions" else
                   "INSERT has more target columns than expressions", position=position)
    return answer


def _nth_in_values(toks: tuple[carets.Tok, ...], n: int) -> int | None:
    """Position of the ``n``-th (0-based) element of the first VALUES row."""
    for i, t in enumerate(toks):
        if t.kind.name == "VALUES" and i + 1 < len(toks) and toks[i + 1].kind.name == "L_PAREN":
            depth, index = 0, 0
            for tok in toks[i + 2:]:
                if index == n and depth == 0:
                    return tok.start + 1
                if tok.kind.name == "L_PAREN":
                    depth += 1
                elif tok.kind.name == "R_PAREN":
                    if depth == 0:
                        return None
                    depth -= 1
                elif tok.kind.name == "COMMA" and depth == 0:
                    index += 1
    return None


def _order_position(word: str) -> Callable[[re.Match[str], Ctx], PgError]:
    def answer(m: re.Match[str], ctx: Ctx) -> PgError | None:
        toks = carets.tokens(ctx.sql)
        # the out-of-range number: the first integer after ORDER/GROUP BY beyond the bound
        bound = int(m.group("hi"))
        seen = False
        for t in toks:
            if " ".join(t.text.upper().split()) == word:
                seen = True
            elif seen and t.kind.name == "NUMBER" and t.text.isdigit() and \
                    (int(t.text) > bound or int(t.text) < 1):
                return err("42P10", f"{word} position {t.text} is not in select list",
                           position=t.start + 1)
        return None
    return answer


def _limit(m: re.Match[str], ctx: Ctx) -> PgError:
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    word = "LIMIT"
    if i is not None and i >= 1 and toks[i - 1].text.upper() == "OFFSET":
        word = "OFFSET"
    state = "2201X" if word == "OFFSET" else "2201W"
    return err(state, f"{word} must not be negative")


def _dependents(m: re.Match[str], ctx: Ctx) -> PgError:
    sql = ctx.sql or ""
    kind = re.match(r"(?is)\s*DROP\s+(TABLE|VIEW|SEQUENCE|SCHEMA|TYPE)\s+(?:IF\s+EXISTS\s+)?"
                    r"(?:\S+\.)?(\"[^\"]+\"|[^\s;,]+)", sql)
    word = kind.group(1).lower() if kind else "table"
    name = m.groupdict().get("name") or (kind.group(2).strip('"') if kind else "?")
    rows = ctx.constraints() if ctx.constraints is not None else []
    lines = [f"constraint {r[6] or r[0] + '_' + '_'.join(r[2]) + '_fkey'} on table {r[0]} "
             f"depends on {word} {name}" for r in rows
             if r[1] == "FOREIGN KEY" and (r[4] or "").lower() == name.lower()]
    return err("2BP01", f"cannot drop {word} {name} because other objects depend on it",
               detail="\n".join(lines) or None,
               hint="Use DROP ... CASCADE to drop the dependent objects too.")


def _regex(m: re.Match[str], ctx: Ctx) -> PgError:
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


def _interval(m: re.Match[str], ctx: Ctx) -> PgError | None:
    """DuckDB names the unknown unit: the literal that holds it is the input."""
    unit = m.group("unit")
    toks = carets.tokens(ctx.sql)
    lit = next((t for t in toks if t.kind.name == "STRING" and unit in t.text), None)
    return None if lit is None else _bad_input("interval", lit.text, ctx, "22007")


# --------------------------------------------------------------------------- more binder errors

_KIND = {"Table": "table", "View": "view", "Index": "index", "Sequence": "sequence",
         "Type": "type", "Schema": "schema", "Macro": "function", "Macro Function": "function"}
_ARTICLE = {"index": "an index"}


def _wrong_kind(m: re.Match[str], ctx: Ctx) -> PgError | None:
    name, have, want = m.group("name"), _KIND.get(m.group("have")), _KIND.get(m.group("want"))
    if have is None or want is None:
        return None
    return err("42809", f'"{name}" is not a{"n" if want[0] in "aeiou" else ""} {want}',
               hint=f"Use DROP {have.upper()} to remove {_ARTICLE.get(have, 'a ' + have)}.")


def _items(toks: tuple[carets.Tok, ...], open_i: int) -> list[tuple[int, int]]:
    """The comma-separated items inside the bracket opened at token ``open_i``:
    (first token, one past the last token) each."""
    out, depth, start = [], 0, open_i + 1
    for j in range(open_i + 1, len(toks)):
        kind = toks[j].kind.name
        if kind in ("L_PAREN", "L_BRACKET"):
            depth += 1
        elif kind in ("R_PAREN", "R_BRACKET"):
            if depth == 0:
                if j > start:
                    out.append((start, j))
                return out
            depth -= 1
        elif kind == "COMMA" and depth == 0:
            out.append((start, j))
            start = j + 1
    return out


def _enclosing_open(toks: tuple[carets.Tok, ...], i: int) -> int | None:
    """The unmatched ``(`` / ``[`` before token ``i``."""
    depth = 0
    for j in range(i - 1, -1, -1):
        kind = toks[j].kind.name
        if kind in ("R_PAREN", "R_BRACKET"):
            depth += 1
        elif kind in ("L_PAREN", "L_BRACKET"):
            if depth == 0:
                return j
            depth -= 1
    return None


def _item_type(ctx: Ctx, toks: tuple[carets.Tok, ...], a: int, b: int) -> str:
    from sqlglot import parse_one

    text = (ctx.sql or "")[toks[a].start:toks[b - 1].end]
    try:
        node = parse_one(text, read="postgres")
    except Exception:  # noqa: BLE001 - an item sqlglot cannot read has no known type
        return "unknown"
    levels, _ = scopes.range_tables(ctx.sql, "\x00", None, None, ctx.columns)
    return _arg_type(node, levels)


def _case_results(toks: tuple[carets.Tok, ...], i: int) -> list[tuple[int, int]]:
    """The THEN / ELSE results of the CASE at token ``i``."""
    out: list[tuple[int, int]] = []
    depth, start = 0, None
    for j in range(i + 1, len(toks)):
        kind, word = toks[j].kind.name, toks[j].text.upper()
        if kind == "L_PAREN" or word == "CASE":
            depth += 1
        elif kind == "R_PAREN" or (word == "END" and depth > 0):
            depth -= 1
        elif depth == 0 and word in ("WHEN", "ELSE", "END", "THEN"):
            if start is not None and j > start:
                out.append((start, j))
            start = j + 1 if word in ("THEN", "ELSE") else None
            if word == "END":
                break
    return out


def _mixed(construct: str | None) -> Callable[[re.Match[str], Ctx], PgError | None]:
    """``X types a and b cannot be matched`` (42804), at the first item of the second type;
    ``construct`` None: the function (GREATEST, LEAST) or ARRAY around DuckDB's caret."""
    def answer(m: re.Match[str], ctx: Ctx) -> PgError | None:
        a, b = pg_type(m.group("a")), pg_type(m.group("b"))
        toks = carets.tokens(ctx.sql)
        i = carets.token_at(ctx.sql, ctx.position)
        if i is None:
            return None
        word, open_i = construct, None
        if construct is None:
            open_i = _enclosing_open(toks, i)
            if open_i is None or open_i == 0:
                return None
            word = toks[open_i - 1].text.upper()
            if word not in ("GREATEST", "LEAST", "ARRAY"):
                return None
        elif construct == "COALESCE":
            open_i = i + 1 if i + 1 < len(toks) and toks[i + 1].kind.name == "L_PAREN" else None
        items = _items(toks, open_i) if open_i is not None else _case_results(toks, i)
        position = next((toks[x].start + 1 for x, y in items
                         if _item_type(ctx, toks, x, y) == b), None)
        return err("42804", f"{word} types {a} and {b} cannot be matched",
                   position=position or ctx.position)
    return answer


def _deduce(m: re.Match[str], ctx: Ctx) -> PgError | None:
    """DuckDB's list_value template (an ARRAY[...] of mixed types)."""
    inferred = re.findall(r" - '([^']+)', (?:from first occurrence|which is incompatible)",
                          ctx.text)
    if len(inferred) < 2:
        return None
    fake = re.match(r"(?P<a>.+)\n(?P<b>.+)", f"{inferred[0]}\n{inferred[-1]}")
    assert fake is not None
    return _mixed(None)(fake, ctx)


def _set_columns(m: re.Match[str], ctx: Ctx) -> PgError:
    toks = carets.tokens(ctx.sql)
    word, position, depth = "UNION", None, 0
    for j, t in enumerate(toks):
        kind = t.kind.name
        if kind == "L_PAREN":
            depth += 1
        elif kind == "R_PAREN":
            depth -= 1
        elif depth == 0 and kind in ("UNION", "INTERSECT", "EXCEPT"):
            word = kind
            for k in range(j + 1, len(toks)):
                if toks[k].kind.name == "SELECT":
                    nxt = k + 1
                    while nxt < len(toks) and toks[nxt].text.upper() in ("DISTINCT", "ALL"):
                        nxt += 1
                    position = toks[nxt].start + 1 if nxt < len(toks) else None
                    break
            break
    return err("42601", f"each {word} query must have the same number of columns",
               position=position)


def _subquery_columns(m: re.Match[str], ctx: Ctx) -> PgError:
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    if i is not None and i >= 1 and toks[i - 1].text.upper() in ("IN", "ANY", "SOME", "ALL"):
        return err("42601", "subquery has too many columns", position=toks[i - 1].start + 1)
    return err("42601", "subquery must return only one column", position=ctx.position)


def _window_here(m: re.Match[str], ctx: Ctx) -> PgError | None:
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    if i is None or i + 1 >= len(toks) or toks[i + 1].kind.name != "L_PAREN":
        return None
    items_end = _items(toks, i + 1)
    end = items_end[-1][1] if items_end else i + 2
    if end < len(toks) and toks[end].kind.name == "R_PAREN":
        end += 1
    if end < len(toks) and toks[end].text.upper() == "OVER":
        return None
    return err("42809", f"window function {toks[i].text.lower()} requires an OVER clause",
               position=ctx.position)


def _using_column(m: re.Match[str], ctx: Ctx) -> PgError:
    return err("42703", f'column "{m.group("name")}" specified in USING clause does not exist '
                        f'in {m.group("side")} table')


def _unit(m: re.Match[str], ctx: Ctx) -> PgError | None:
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
        typ = _arg_type(value, levels)
        if typ == "unknown" and isinstance(value, (exp.CurrentTimestamp, exp.Anonymous)):
            typ = "timestamp with time zone"
        if typ == "unknown":
            typ = "timestamp with time zone"
        return err("22023", f'unit "{unit}" not recognized for type {typ}')
    return None


def _parameter(m: re.Match[str], ctx: Ctx) -> PgError:
    n = m.group("n").split(",")[0].strip()
    found = re.search(r"\$" + n + r"(?!\d)", ctx.sql or "")
    position = found.start() + 1 if found else None
    return err("42P02", f"there is no parameter ${n}", position=position)


def _percentile(m: re.Match[str], ctx: Ctx) -> PgError | None:
    found = re.search(r"(?i)percentile_(?:cont|disc)\s*\(\s*([-+]?[\d.]+)\s*\)", ctx.sql or "")
    if found is None:
        return None
    return err("22003", f"percentile value {found.group(1)} is not between 0 and 1")


def _make_date(m: re.Match[str], ctx: Ctx) -> PgError:
    y, mo, d = m.group("y"), m.group("m"), m.group("d")
    return err("22008", f"date field value out of range: {int(y):04d}-{int(mo):02d}-{int(d):02d}")


def _key_column(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    at = carets.identifier_position(ctx.sql, name)
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, at)
    position = at
    for j in range((i or 0) - 1, -1, -1):  # PostgreSQL points at the constraint
        if " ".join(toks[j].text.upper().split()) in ("PRIMARY KEY", "UNIQUE", "PRIMARY"):
            position = toks[j].start + 1
            if j >= 2 and toks[j - 2].text.upper() == "CONSTRAINT":
                position = toks[j - 2].start + 1
            break
    return err("42703", f'column "{name}" named in key does not exist', position=position)


def _check_column(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    return err("42703", f'column "{name}" does not exist',
               position=carets.identifier_position(ctx.sql, name))


def _distinct_order(m: re.Match[str], ctx: Ctx) -> PgError:
    toks = carets.tokens(ctx.sql)
    position, seen = None, False
    for j, t in enumerate(toks):
        if t.text.upper() == "DISTINCT":
            seen = True
        elif seen and " ".join(t.text.upper().split()) == "ORDER BY" and j + 1 < len(toks):
            position = toks[j + 1].start + 1
            break
    return err("42P10", "in an aggregate with DISTINCT, ORDER BY expressions must appear in "
                        "argument list", position=position)


def _array_literal(m: re.Match[str], ctx: Ctx) -> PgError:
    value = m.group("value")
    detail = None if value.lstrip().startswith(("{", "[")) else \
        'Array value must start with "{" or dimension information.'
    return err("22P02", f'malformed array literal: "{value}"', detail=detail,
               position=_literal(ctx, value))


def _row_compare(m: re.Match[str], ctx: Ctx) -> PgError:
    return err("42601", "unequal number of entries in row expressions",
               position=_operator_position(ctx, "="))


def _alter_dependents(m: re.Match[str], ctx: Ctx) -> PgError:
    name = m.group("name")
    return err("0A000", f'altering table "{name}" while an index depends on it is not '
                        "supported by pgbarrier on DuckDB",
               detail="DuckDB cannot alter a table that has an index (a PRIMARY KEY, UNIQUE "
                      "or CREATE INDEX) in this way.",
               hint="Drop the index, alter the table, then create the index again.")


# --------------------------------------------------------------------------- the table

_C = duckdb.ConversionException
_I = duckdb.InvalidInputException
_B = duckdb.BinderException
_K = duckdb.CatalogException
_P = duckdb.ParserException


def _r(name: str, pattern: str, answer: Callable[[re.Match[str], Ctx], PgError | None],
       *examples: Example, classes: tuple[type[BaseException], ...] = (duckdb.Error,)) -> Rule:
    return Rule(name, re.compile(pattern, re.S), answer, tuple(examples), classes)


def _ex(sql: str, *setup: str, own: str | None = None, **differs: str) -> Example:
    """An example; a set-up statement written ``!...`` is one that fails (in a block)."""
    return Example(sql, tuple(setup), dict(differs), own)


_T = "CREATE TABLE t (a int, b text, c numeric(5,2), d date, e timestamptz)"

_P_C = ("CREATE TABLE p (id int PRIMARY KEY, u int UNIQUE, n int NOT NULL DEFAULT 0, "
        "c int CHECK (c > 0))")
_FK = ("CREATE TABLE p (id int PRIMARY KEY)", "CREATE TABLE c (pid int REFERENCES p (id))")

RULES: list[Rule] = [
    # ---- constraint violations (duckdb_constraint_errors)
    _r("constraint violation", r".", lambda m, ctx: constraint_error(
        ctx.message, ctx.sql, ctx.constraints),
       _ex("INSERT INTO p (id) VALUES (1), (1)", _P_C),
       _ex("INSERT INTO p (id) VALUES (1)", _P_C, "INSERT INTO p (id) VALUES (1)"),
       _ex("INSERT INTO p (id) VALUES (2), (1)", _P_C, "INSERT INTO p (id) VALUES (1)"),
       _ex("INSERT INTO p (id) SELECT 1", _P_C, "INSERT INTO p (id) VALUES (1)"),
       _ex("UPDATE p SET id = 1 WHERE id = 2", _P_C, "INSERT INTO p (id) VALUES (1), (2)"),
       _ex("INSERT INTO p (id, u) VALUES (2, 5)", _P_C, "INSERT INTO p (id, u) VALUES (1, 5)"),
       _ex("INSERT INTO p (id, u) VALUES (1, 6) ON CONFLICT (u) DO NOTHING", _P_C,
           "INSERT INTO p (id, u) VALUES (1, 5)"),
       _ex("INSERT INTO p (id, u) VALUES (2, 5) ON CONFLICT (id) DO UPDATE SET u = 7", _P_C,
           "INSERT INTO p (id, u) VALUES (1, 5)"),
       _ex("INSERT INTO p (id, n) VALUES (1, NULL)", _P_C,
           detail="DuckDB does not give the failing row"),
       _ex("UPDATE p SET n = NULL", _P_C, "INSERT INTO p (id) VALUES (1)",
           detail="DuckDB does not give the failing row"),
       _ex("INSERT INTO p (id, c) VALUES (1, 0)", _P_C,
           detail="DuckDB does not give the failing row"),
       _ex("UPDATE p SET c = -1", _P_C, "INSERT INTO p (id) VALUES (1)",
           detail="DuckDB does not give the failing row"),
       _ex("INSERT INTO c VALUES (5)", *_FK),
       _ex("DELETE FROM p", *_FK, "INSERT INTO p VALUES (5)", "INSERT INTO c VALUES (5)"),
       _ex("INSERT INTO p VALUES (1)", "CREATE TABLE p (id int, CONSTRAINT mypk PRIMARY KEY (id))",
           "INSERT INTO p VALUES (1)"),
       _ex("INSERT INTO p VALUES (1, 'abcd')",
           "CREATE TABLE p (id int, v text, CONSTRAINT vchk CHECK (length(v) < 3))",
           detail="DuckDB does not give the failing row"),
       _ex("INSERT INTO s.p VALUES (1)", "CREATE SCHEMA s", "CREATE TABLE s.p (id int UNIQUE)",
           "INSERT INTO s.p VALUES (1)"),
       classes=(duckdb.ConstraintException,)),
    # ---- input values: invalid syntax, out of range
    _r("string conversion", r"^(?:Failed to cast value: )?Could not convert string '(?P<value>.*)' "
       r"to (?P<type>[A-Z0-9_]+(?:\(\d+,\d+\))?)(?: when casting from source column \S+)?$",
       _convert_string,
       _ex("SELECT 'abc'::int"), _ex("SELECT CAST('abc' AS bigint)"),
       _ex("SELECT 'abc'::smallint"), _ex("SELECT '40000'::smallint"),
       _ex("SELECT '99999999999'::int"), _ex("SELECT 'x'::real"),
       _ex("SELECT 'x'::double precision"), _ex("SELECT 'maybe'::boolean"),
       _ex("SELECT 'x'::uuid"), _ex("SELECT ''::int"), _ex("SELECT 1 = 'x'"),
       _ex("SELECT 'abc'::interval"),
       _ex("INSERT INTO t (a) VALUES ('x')", _T),
       _ex("SELECT 'x'::text::int"),
       _ex("SELECT b::int FROM t", _T, "INSERT INTO t (b) VALUES ('x')")),
    _r("decimal conversion", r'^Could not convert string "(?P<value>.*)" to '
       r"(?P<type>DECIMAL\(\d+,\d+\))$", lambda m, ctx: _convert_decimal(
           m.group("value"), m.group("type"), ctx),
       _ex("SELECT 'abc'::numeric"), _ex("SELECT '12345.6'::numeric(5,2)"),
       _ex("SELECT 'abc'::numeric(5,2)")),
    _r("date format", r'^invalid date field format: "(?P<value>.*)", expected format',
       lambda m, ctx: _bad_input("date", m.group("value"), ctx, "22007"),
       _ex("SELECT 'abc'::date"), _ex("SELECT '2020/01/xx'::date")),
    _r("date range", r'^date field value out of range: "(?P<value>.*)"',
       lambda m, ctx: _datetime_range(m.group("value"), ctx),
       _ex("SELECT '2020-13-01'::date"), _ex("SELECT '2021-02-30'::date"),
       _ex("SELECT '2020-01-32'::date")),
    _r("time", r'^time field value out of range: "(?P<value>.*)", expected format', _time_range,
       _ex("SELECT 'abc'::time"), _ex("SELECT '25:00'::time"), _ex("SELECT '10:61'::time")),
    _r("timestamp format", r'^invalid timestamp field format: "(?P<value>.*)", expected format',
       _timestamp_format, _ex("SELECT 'abc'::timestamp"), _ex("SELECT 'abc'::timestamptz"),
       _ex("SELECT '2020-01-01 10:61'::timestamp"),
       _ex("INSERT INTO t (e) VALUES ('yesterday-ish')", _T,
           message="DuckDB does not tell the column's type: timestamp is said")),
    _r("timestamp range", r'^timestamp field value out of range: "(?P<value>.*)"',
       lambda m, ctx: _datetime_range(m.group("value"), ctx),
       _ex("SELECT '2020-13-45 10:00'::timestamp"), _ex("SELECT '2020-01-01 25:00'::timestamp")),
    _r("unit", r'^extract specifier "(?P<unit>.*)" not recognized$', _unit,
       _ex("SELECT date_trunc('nosuch', now())"), _ex("SELECT extract(nosuch FROM now())"),
       _ex("SELECT date_part('nosuch', now())"),
       _ex("SELECT extract(nosuch FROM '2020-01-01'::date)"),
       _ex("SELECT date_trunc('nosuch', '2020-01-01'::timestamp)"), classes=(_C,)),
    _r("make_date", r"^Date out of range: (?P<y>-?\d+)-(?P<m>-?\d+)-(?P<d>-?\d+)$", _make_date,
       _ex("SELECT make_date(2020, 13, 1)")),
    _r("array literal", r"^Type VARCHAR with value '(?P<value>.*)' can't be cast to the "
       r"destination type .+\[\]$", _array_literal, _ex("SELECT 'x'::int[]")),
    _r("percentile", r"^PERCENTILEs can only take parameters in the range \[0, 1\]", _percentile,
       _ex("SELECT percentile_cont(2) WITHIN GROUP (ORDER BY 1)"),
       _ex("SELECT percentile_disc(1.5) WITHIN GROUP (ORDER BY 1)")),
    _r("series step", r"^interval cannot be 0", lambda m, ctx: err(
        "22023", "step size cannot equal zero"), _ex("SELECT * FROM generate_series(1, 3, 0)")),
    _r("parameter", r"^Values were not provided for the following parameters: (?P<n>[\d, ]+)",
       _parameter, _ex("SELECT $1"), _ex("SELECT 1 WHERE 1 = $2")),
    _r("interval unit", r'^extract specifier "(?P<unit>.*)" not recognized$', _interval,
       _ex("SELECT '1 fortnight'::interval"), classes=(_C,)),
    _r("json", r'^Malformed JSON at byte \d+ of input: .*?\.  Input: "(?P<value>.*)"$',
       lambda m, ctx: _json(m.group("value"), ctx),
       _ex("SELECT 'abc'::json"), _ex("SELECT '{\"a\":1'::json"),
       _ex("SELECT '{\"a\" 1}'::json"), _ex("SELECT '{\"a\":1}}'::json"),
       _ex("SELECT ''::json"), _ex("SELECT '{\"a\": tru}'::json"),
       _ex("SELECT '[1 2]'::json"), _ex("SELECT '{\"x\": \"\\q\"}'::json")),
    _r("cast out of range", r"^Type (?P<src>[A-Z0-9_]+(?:\(\d+,\d+\))?) with value .* can't be "
       r"cast because the value is out of range for the destination type "
       r"(?P<to>[A-Z0-9_]+(?:\(\d+,\d+\))?)$", _cast_range,
       _ex("SELECT 40000::smallint"), _ex("SELECT 3000000000::int"),
       _ex("SELECT 99999999999999999999::bigint"), _ex("SELECT 1e10::int"),
       _ex("INSERT INTO t (a) VALUES (3000000000)", _T)),
    _r("decimal out of range", r'^(?:Casting value "[^"]*" to type (?P<a>DECIMAL\(\d+,\d+\)) '
       r"failed: value is out of range|Could not cast value .* to (?P<b>DECIMAL\(\d+,\d+\)))$",
       lambda m, ctx: _overflow(m.group("a") or m.group("b")),
       _ex("SELECT 1234.5::numeric(5,2)"), _ex("SELECT 5::numeric(2,2)"),
       _ex("INSERT INTO t (c) VALUES (1234.5)", _T),
       _ex("SELECT 123456789012345678901234567890123456789::numeric(38,0) * 10::numeric(38,0)")),
    _r("arithmetic overflow", r"^Overflow in (?:addition|subtraction|multiplication|negation|"
       r"division) of (?P<type>[A-Z0-9_]+)", _arith_overflow,
       _ex("SELECT 2147483647 + 1"), _ex("SELECT 9223372036854775807 * 2"),
       _ex("SELECT 32767::smallint + 1::smallint"), _ex("SELECT -2147483647 - 2")),
    _r("no cast", r"^Unimplemented type for cast \((?P<src>.+) -> (?P<dst>.+)\)$", _no_cast,
       _ex("SELECT 1::int::date"), _ex("SELECT CAST(1 AS date)"),
       _ex("INSERT INTO t (d) VALUES (1)", _T), _ex("INSERT INTO t (a, d) SELECT 1, 2", _T)),
    _r("division by zero", r"^Division by zero in expression",
       lambda m, ctx: err("22012", "division by zero"),
       _ex("SELECT 1/0"), _ex("SELECT 5 % 0"), _ex("SELECT 1.5 / 0")),
    # ---- what pgbarrier on DuckDB cannot do (0A000), DuckDB's limits
    _r("interval division", r"^No function matches the given name and argument types "
       r"'//\((\"?INTERVAL\"?)", lambda m, ctx: err(
           "0A000", "dividing an interval that is not written as one (a cast to interval, an "
                    "interval literal) is not supported by pgbarrier on DuckDB"),
       _ex("SELECT i / 2 FROM iv", "CREATE TABLE iv (i interval)", own="0A000")),
    _r("jsonb containment", r"^No function matches the given name and argument types "
       r"'(?P<op>@>|<@)\(\"?JSON", lambda m, ctx: err(
           "0A000", f"jsonb containment ({m.group('op')}) of values not cast to jsonb is not "
                    "supported by pgbarrier on DuckDB"),
       _ex("SELECT j @> j FROM tj", "CREATE TABLE tj (j jsonb)", own="0A000")),
    _r("foreign key actions", r"^FOREIGN KEY constraints cannot use (?P<what>CASCADE, SET NULL "
       r"or SET DEFAULT)", _fixed("0A000", "foreign keys with ON DELETE / ON UPDATE {what} are "
                                           "not supported by pgbarrier on DuckDB", caret=False),
       _ex("CREATE TABLE c (pid int REFERENCES p (id) ON DELETE CASCADE)",
           "CREATE TABLE p (id int PRIMARY KEY)", own="0A000")),
    _r("aborted transaction", r"^Current transaction is aborted", lambda m, ctx: err(
        "25P02", "current transaction is aborted, commands ignored until end of transaction "
                 "block"), _ex("SELECT 1", "BEGIN", "!SELECT 1/0")),
    _r("expression depth", r"^Max expression depth limit of (\d+) exceeded", lambda m, ctx: err(
        "54001", "stack depth limit exceeded"),
       _ex("SELECT " + "(" * 1200 + "1" + ")" * 1200, own="54001")),
    # ---- names: columns, tables
    _r("ambiguous column", r'^Ambiguous reference to column name "(?P<name>[^"]+)"',
       lambda m, ctx: err("42702", f'column reference "{m.group("name")}" is ambiguous',
                          position=ctx.position),
       _ex("SELECT a FROM t, t u", _T),
       _ex("SELECT a FROM t JOIN t AS u ON t.a = u.a", _T)),
    _r("missing column", r'^Referenced column "(?P<name>[^"]+)" (?:not found in FROM clause|'
       r"was not found because the FROM clause is missing)", _missing_column,
       _ex("SELECT x FROM t", _T), _ex("SELECT bb FROM t", _T), _ex("SELECT aa FROM t", _T),
       _ex("SELECT * FROM t WHERE dd = 1", _T), _ex("SELECT nosuch"),
       _ex("SELECT abx FROM t1 JOIN t2 ON true", "CREATE TABLE t1 (abc int)",
           "CREATE TABLE t2 (abd int)"),
       _ex("SELECT ae FROM t1", "CREATE TABLE t1 (ab int, ac int, ad int)"),
       _ex("SELECT (SELECT bb) FROM t", _T),
       _ex("UPDATE t SET a = 1 WHERE nosuch = 2", _T),
       _ex("DELETE FROM t WHERE bx = 2", _T)),
    _r("missing qualified column", r'^(?:Table|Values list) "(?P<table>[^"]+)" does not have a '
       r'column named "(?P<name>[^"]+)"', _missing_column,
       _ex("SELECT t.x FROM t", _T), _ex("SELECT t.bb FROM t", _T),
       _ex("SELECT s.abd FROM (SELECT a AS abc FROM t) s", _T)),
    _r("missing table reference", r'^Referenced table "(?P<name>[^"]+)" not found',
       _missing_table_ref, _ex("SELECT x.a FROM t", _T), _ex("SELECT t.a FROM t AS x", _T),
       _ex("SELECT t.x")),
    _r("duplicate alias", r'^Ambiguous reference to table "(?P<name>[^"]+)" \(duplicate alias',
       lambda m, ctx: err("42712", f'table name "{m.group("name").split(".")[-1]}" specified '
                                   "more than once"),
       _ex("SELECT * FROM t a JOIN t a ON true", _T), _ex("SELECT * FROM t JOIN t ON true", _T)),
    _r("alias columns", r'^table "(?P<name>[^"]+)" has (?P<n>\d+) columns available but '
       r"(?P<m>\d+) columns specified", _fixed(
           "42P10", 'table "{name}" has {n} columns available but {m} columns specified',
           caret=False),
       _ex("SELECT * FROM (SELECT 1) s(a, b)")),
    _r("group by", r'^column "(?P<name>[^"]+)" must appear in the GROUP BY clause', _group_by,
       _ex("SELECT a, count(*) FROM t", _T), _ex("SELECT a, b FROM t GROUP BY a", _T),
       _ex("SELECT x.a, count(*) FROM t x", _T)),
    _r("aggregate in WHERE", r"^WHERE clause cannot contain aggregates",
       lambda m, ctx: err("42803", "aggregate functions are not allowed in WHERE",
                          position=ctx.position),
       _ex("SELECT * FROM t WHERE count(*) > 1", _T)),
    _r("order by position", r"^ORDER term out of range - should be between (?P<lo>\d+) and "
       r"(?P<hi>\d+)", _order_position("ORDER BY"),
       _ex("SELECT * FROM t ORDER BY 9", _T)),
    _r("group by position", r"^GROUP BY term out of range - should be between (?P<lo>\d+) and "
       r"(?P<hi>\d+)", _order_position("GROUP BY"),
       _ex("SELECT count(*) FROM t GROUP BY 3", _T)),
    _r("negative limit", r"^LIMIT/OFFSET cannot be negative", _limit,
       _ex("SELECT * FROM t LIMIT -1", _T), _ex("SELECT * FROM t OFFSET -1", _T)),
    _r("insert more values", r'^table "(?P<table>[^"]+)" has (?P<cols>\d+) columns but '
       r"(?P<vals>\d+) values were supplied", _insert_count("expressions"),
       _ex("INSERT INTO t VALUES (1, 'a', 1, '2020-01-01', now(), 6)", _T)),
    _r("insert column count", r"^Column name/value mismatch for insert on \"[^\"]+\": expected "
       r"(?P<cols>\d+) columns but (?P<vals>\d+) values were supplied", lambda m, ctx:
       _insert_count("target columns" if int(m.group("cols")) > int(m.group("vals"))
                     else "expressions")(m, ctx),
       _ex("INSERT INTO t (a, b) VALUES (1)", _T), _ex("INSERT INTO t (a) VALUES (1, 2)", _T)),
    _r("duplicate column", r'^Column with name "?(?P<name>[^"]+?)"? already exists',
       _duplicate_column, _ex("CREATE TABLE t2 (a int, a int)"),
       _ex("ALTER TABLE t ADD COLUMN a text", _T),
       _ex("ALTER TABLE t RENAME COLUMN a TO b", _T)),
    _r("missing column of table", r'^Table "(?P<table>[^"]+)" does not have a column with name '
       r'"(?P<name>[^"]+)"', _alter_column_missing,
       _ex("ALTER TABLE t DROP COLUMN nosuch", _T),
       _ex("ALTER TABLE t RENAME COLUMN nosuch TO y", _T),
       _ex("INSERT INTO t (nosuch) VALUES (1)", _T)),
    _r("missing update column", r"^Referenced update column (?P<name>\S+) not found in table",
       _update_column_missing, _ex("UPDATE t SET nosuch = 1", _T)),
    # ---- functions and operators
    _r("no matching function", r"^No function matches the given name and argument types "
       r"'(?P<name>.+?)\((?P<args>.*)\)'\. You might need", _no_match,
       _ex("SELECT lower(1)"), _ex("SELECT length(1)"), _ex("SELECT 1 + 'a'::text"),
       _ex("SELECT 'a'::text + 1"), _ex("SELECT a + b FROM t", _T),
       _ex("SELECT -b FROM t", _T), _ex("SELECT b / 2 FROM t", _T),
       _ex("SELECT * FROM t WHERE a LIKE 'x'", _T), _ex("SELECT sum(b) FROM t", _T),
       _ex("SELECT max(a, b) FROM t", _T), _ex("SELECT lower(1.5)")),
    _r("ambiguous function", r'^Could not choose a best candidate function for the function '
       r'call "(?P<name>.+?)\((?P<args>.*)\)"', _not_unique,
       _ex("SELECT avg('x')"), _ex("SELECT '2020-01-01'::date + 'x'"), _ex("SELECT -'x'")),
    _r("list concatenation", r"^Cannot concatenate lists of types (?P<a>\S+) and (?P<b>\S+) - ",
       _concat_lists, _ex("SELECT ARRAY[1] || ARRAY['a']")),
    _r("missing function", r"^(?:Scalar|Table|Aggregate) Function with name (?P<name>\S+) does "
       r"not exist", _function_missing,
       _ex("SELECT nosuchfn(1)"),
       _ex("SELECT nosuchfn(1, 'a', 1.5, NULL, true, 'x'::text, 3000000000)"),
       _ex("SELECT nosuchfn(a, b, c, e) FROM t", _T), _ex("SELECT * FROM nosuchfn(1)")),
    # ---- syntax
    _r("syntax error", r'^syntax error at or near "(?P<near>.*)"$', _syntax,
       _ex("SELEC 1"), _ex("SELECT 1 +"), _ex("SELECT * FROM"), _ex("SELECT (1"),
       _ex("INSERT INTO"), _ex("SELECT 'a' 'b'"), _ex("CREATE TABLE (a int)"),
       _ex("SELECT 1 FROM t WHERE a = = 1", _T), _ex("SELECT a FROM t ORDER", _T),
       _ex("SELECT count("), classes=(_P,)),
    _r("unterminated string", r"^unterminated string literal", _unterminated("quoted string"),
       _ex("SELECT 'abc"), classes=(_P,)),
    _r("unterminated identifier", r"^unterminated quoted identifier",
       _unterminated("quoted identifier"), _ex('SELECT "abc'), classes=(_P,)),
    _r("mixed COALESCE", r"^Cannot mix values of type (?P<a>.+?) and (?P<b>.+?) in COALESCE "
       r"operator", _mixed("COALESCE"),
       _ex("SELECT COALESCE(1, 'a'::text)"), _ex("SELECT COALESCE(1, 2, 'x'::text)")),
    _r("mixed CASE", r"^Cannot mix values of type (?P<a>.+?) and (?P<b>.+?) in CASE expression",
       _mixed("CASE"), _ex("SELECT CASE WHEN true THEN 1 ELSE 'a'::text END")),
    _r("mixed GREATEST", r"^Cannot combine types of (?P<a>.+?) and (?P<b>.+?) - an explicit",
       _mixed(None), _ex("SELECT GREATEST(1, 'a'::text)"), _ex("SELECT LEAST('a'::text, 1)"),
       _ex("SELECT GREATEST(1, 2, 'a'::text)")),
    _r("mixed ARRAY", r"^Cannot deduce template type 'T' in function: 'list_value", _deduce,
       _ex("SELECT ARRAY[1, 'a'::text]"), _ex("SELECT ARRAY['a'::text, 1]"),
       _ex("SELECT ARRAY[1, 2, 'a'::text]")),
    _r("set operation columns", r"^Set operations can only apply to expressions with the same "
       r"number of result columns", _set_columns,
       _ex("SELECT a FROM t UNION SELECT a, b FROM t", _T),
       _ex("SELECT 1 INTERSECT SELECT 1, 2"), _ex("SELECT 1, 2 EXCEPT SELECT 1")),
    _r("subquery columns", r"^Subquery returns \d+ columns - expected 1", _subquery_columns,
       _ex("SELECT 1 FROM t WHERE a IN (SELECT a, b FROM t)", _T),
       _ex("SELECT a FROM t WHERE a = (SELECT a, b FROM t)", _T)),
    _r("window without OVER", r"^Window functions are not supported here", _window_here,
       _ex("SELECT rank() FROM t", _T)),
    _r("window in WHERE", r"^WHERE clause cannot contain window functions", lambda m, ctx: err(
        "42P20", "window functions are not allowed in WHERE", position=ctx.position),
       _ex("SELECT * FROM t WHERE rank() OVER () > 1", _T)),
    _r("nested aggregate", r"^aggregate function calls cannot be nested", lambda m, ctx: err(
        "42803", "aggregate function calls cannot be nested", position=ctx.position),
       _ex("SELECT sum(sum(a)) FROM t", _T)),
    _r("USING column", r'^Column "(?P<name>[^"]+)" does not exist on (?P<side>left|right) side '
       r"of join", _using_column, _ex("SELECT * FROM t JOIN t u USING (nosuch)", _T),
       _ex("SELECT * FROM t JOIN u USING (a)", _T, "CREATE TABLE u (z int)")),
    _r("DISTINCT aggregate order", r"^In a DISTINCT aggregate, ORDER BY expressions must appear",
       _distinct_order, _ex("SELECT array_agg(DISTINCT a ORDER BY b) FROM t", _T)),
    _r("key column", r'^table "(?P<table>[^"]+)" does not have a column named "(?P<name>[^"]+)"',
       _key_column, _ex("CREATE TABLE tt (a int, PRIMARY KEY (nosuch))"),
       _ex("CREATE TABLE tt (a int, CONSTRAINT k UNIQUE (a, nosuch))")),
    _r("check column", r'^Table does not contain column "(?P<name>[^"]+)" referenced in check',
       _check_column, _ex("CREATE TABLE tt (a int CHECK (nosuch > 0))")),
    _r("foreign key target", r"^Failed to create foreign key: (?:there is no primary key or "
       r'unique constraint for referenced table "(?P<name>[^"]+)"|referenced table "(?P<name2>'
       r'[^"]+)" does not have a primary key or unique constraint)', lambda m, ctx: err(
           "42830", "there is no unique constraint matching given keys for referenced table "
                    f'"{m.group("name") or m.group("name2")}"'),
       _ex("CREATE TABLE tt (a int REFERENCES t (b))", _T)),
    _r("ON CONFLICT target", r"^The specified columns as conflict target are not referenced by",
       lambda m, ctx: err("42P10", "there is no unique or exclusion constraint matching the ON "
                                   "CONFLICT specification"),
       _ex("INSERT INTO p (id) VALUES (1) ON CONFLICT (n) DO NOTHING", _P_C)),
    _r("unnest", r"^UNNEST\(\) can only be applied to lists, structs and NULL, not (?P<t>.+)$",
       lambda m, ctx: err("42883", f"function unnest({pg_type(m.group('t'))}) does not exist",
                          hint=_FUNC_HINT, position=ctx.position),
       _ex("SELECT unnest(1)")),
    _r("row comparison", r"^Type (?:TUPLE|STRUCT)\(.*Cannot cast STRUCTs of different size",
       _row_compare, _ex("SELECT (1,2) = (1,2,3)")),
    # ---- catalog
    _r("missing relation", r'^(?:Table|View) with name "?(?P<name>[^"!]+?)"? does not exist'
       r'(?: because schema "[^"]+" does not exist)?', _relation_missing,
       _ex("SELECT * FROM nosuch"), _ex("SELECT * FROM nosch.t"), _ex("DROP TABLE nosuch"),
       _ex("DROP VIEW nosuch"), _ex("INSERT INTO nosuch VALUES (1)"),
       _ex("ALTER TABLE nosuch ADD COLUMN a int")),
    _r("existing relation", r'^(?:Table|View) with name "?(?P<name>[^"!]+?)"? already exists',
       _fixed("42P07", 'relation "{name}" already exists', caret=False),
       _ex("CREATE TABLE t (a int)", _T)),
    _r("existing index", r'^Index with name "?(?P<name>[^"!]+?)"? already exists',
       _fixed("42P07", 'relation "{name}" already exists', caret=False),
       _ex("CREATE INDEX i ON t (a)", _T, "CREATE INDEX i ON t (a)")),
    _r("wrong kind", r'^Existing object "?(?P<name>[^"]+?)"? is of type (?P<have>[A-Za-z ]+?), '
       r"trying to (?:drop|replace|alter) type (?P<want>[A-Za-z ]+)$", _wrong_kind,
       _ex("DROP TABLE v", "CREATE VIEW v AS SELECT 1 AS a"), _ex("DROP VIEW t", _T)),
    _r("altered with dependents", r'^Cannot alter entry "(?P<name>[^"]+)" because there are '
       r"entries that depend on it", _alter_dependents,
       _ex("ALTER TABLE t ALTER COLUMN b SET NOT NULL", _T, "CREATE UNIQUE INDEX ui ON t (b)",
           own="0A000")),
    _r("sequence bounds", r'^setval: value (?P<v>-?\d+) is out of bounds for sequence '
       r'"(?P<name>[^"]+)" \((?P<lo>-?\d+)\.\.(?P<hi>-?\d+)\)', _fixed(
           "22003", 'setval: value {v} is out of bounds for sequence "{name}" ({lo}..{hi})',
           caret=False),
       _ex("SELECT setval('sq', 100)", "CREATE SEQUENCE sq MAXVALUE 2")),
    _r("sequence exhausted", r'^nextval: reached (?P<which>maximum|minimum) value of sequence '
       r'"(?P<name>[^"]+)" \((?P<v>-?\d+)\)', _fixed(
           "2200H", 'nextval: reached {which} value of sequence "{name}" ({v})', caret=False),
       _ex("SELECT nextval('sq'), nextval('sq'), nextval('sq')", "CREATE SEQUENCE sq MAXVALUE 2")),
    _r("missing index", r"^Index with name (?P<name>\S+) does not exist",
       _fixed("42704", 'index "{name}" does not exist', caret=False), _ex("DROP INDEX nosuch")),
    _r("missing schema", r'^Schema with name "?(?P<name>[^"!]+?)"? does not exist',
       _schema_missing, _ex("DROP SCHEMA nosuch"), _ex("CREATE TABLE nosch.t (a int)")),
    _r("existing schema", r'^Schema with name "?(?P<name>[^"!]+?)"? already exists',
       _fixed("42P06", 'schema "{name}" already exists', caret=False),
       _ex("CREATE SCHEMA s", "CREATE SCHEMA s")),
    _r("missing sequence", r'^Sequence with name "?(?P<name>[^"!]+?)"? does not exist',
       _sequence_missing, _ex("SELECT nextval('nosuchseq')"), _ex("DROP SEQUENCE nosuch")),
    _r("missing type", r'^Type with name "?(?P<name>[^"!]+?)"? does not exist', _type_missing,
       _ex("SELECT 1::nosuchtype"), _ex("CREATE TABLE t2 (a nosuchtype)")),
    _r("dependents", r'^(?:Cannot drop entry "(?P<name>[^"]+)" because there are entries that '
       r"depend on it|Could not drop the table because this table is main key table of the "
       r'table "(?P<child>[^"]+)")', _dependents,
       _ex("DROP TABLE p", "CREATE TABLE p (id int PRIMARY KEY)",
           "CREATE TABLE c (pid int REFERENCES p (id))")),
    # ---- values a function refuses
    _r("scalar subquery", r"^More than one row returned by a subquery used as an expression",
       lambda m, ctx: err("21000", "more than one row returned by a subquery used as an "
                                   "expression"),
       _ex("SELECT (SELECT x FROM (VALUES (1), (2)) v(x))")),
    _r("time zone", r"^Unknown TimeZone '(?P<zone>.*)'",
       _fixed("22023", 'time zone "{zone}" not recognized', caret=False),
       _ex("SELECT now() AT TIME ZONE 'Nowhere/Zone'")),
    _r("regular expression", r"^(?P<reason>(?:missing|unexpected|trailing|invalid|bad) .*)$",
       _regex, _ex("SELECT regexp_matches('a', '(')"), _ex("SELECT 'a' ~ 'a)'"),
       classes=(_I,)),
    _r("escape", r"^Invalid escape string\. Escape string must be empty or one character",
       lambda m, ctx: err("22025", "invalid escape string",
                          hint="Escape string must be empty or one character."),
       _ex("SELECT 'a' LIKE 'a' ESCAPE 'xx'")),
    _r("chr", r"^Invalid UTF8 Codepoint (?P<n>-?\d+)", lambda m, ctx: err(
        "22023", "character number must be positive") if int(m.group("n")) <= 0 else err(
        "54000", f"requested character too large for encoding: {m.group('n')}"),
       _ex("SELECT chr(-1)")),
]
