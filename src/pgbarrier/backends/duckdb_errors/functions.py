"""Answers for functions and operators PostgreSQL would not find, and for syntax errors.

Rules this module keeps:

* DuckDB's ``No function matches 'f(T, ...)'`` is 42883 ``function f(t, ...) does not
  exist`` (or ``operator does not exist: a + b`` / ``- b``, at the operator) with
  PostgreSQL's HINT; its types are said in PostgreSQL's names (:mod:`.names`). A name
  DuckDB does not know at all says no types: they are inferred from the call
  (:mod:`.argtypes`). "Could not choose a best candidate" is 42725 ``... is not unique``.
* A syntax error that DuckDB reports at the last token while the input ended too early is
  PostgreSQL's ``syntax error at end of input`` one past the end: DuckDB's parser is asked
  again with a token appended (if the error moves or goes, the input ended too early).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import duckdb
from sqlglot import exp

from pgbarrier.backends.duckdb_errors import carets, scopes
from pgbarrier.backends.duckdb_errors.answer import Ctx, err, operator_position
from pgbarrier.backends.duckdb_errors.argtypes import arg_type
from pgbarrier.backends.duckdb_errors.names import pg_type
from pgbarrier.errors import PgError


# --------------------------------------------------------------------------- functions

FUNC_HINT = ("No function matches the given name and argument types. You might need to add "
              "explicit type casts.")
OP_HINT = ("No operator matches the given name and argument types. You might need to add "
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


def no_match(m: re.Match[str], ctx: Ctx) -> PgError:
    name, args = m.group("name"), [pg_type(a) for a in _split_types(m.group("args"))]
    if _OPERATOR.match(name):
        op = _OPERATORS.get(name, name)
        if len(args) == 1:
            return err("42883", f"operator does not exist: {op} {args[0]}", hint=_UNARY_HINT,
                       position=operator_position(ctx, op))
        return err("42883", f"operator does not exist: {args[0]} {op} {args[1]}",
                   hint=OP_HINT, position=operator_position(ctx, op))
    return err("42883", f"function {name}({', '.join(args)}) does not exist", hint=FUNC_HINT,
               position=ctx.position)


def not_unique(m: re.Match[str], ctx: Ctx) -> PgError:
    name, args = m.group("name"), [pg_type(a) for a in _split_types(m.group("args"))]
    if _OPERATOR.match(name):
        op = _OPERATORS.get(name, name)
        shown = f"{op} {args[0]}" if len(args) == 1 else f"{args[0]} {op} {args[1]}"
        return err("42725", f"operator is not unique: {shown}",
                   hint="Could not choose a best candidate operator. You might need to add "
                        "explicit type casts.", position=operator_position(ctx, op))
    return err("42725", f"function {name}({', '.join(args)}) is not unique",
               hint="Could not choose a best candidate function. You might need to add "
                    "explicit type casts.", position=ctx.position)


def concat_lists(m: re.Match[str], ctx: Ctx) -> PgError:
    """``||`` of types DuckDB will not join: PostgreSQL's answer where it has none either;
    an array and its element (PostgreSQL appends it) is 0A000 naming DuckDB's function;
    arrays of other dimensions are PostgreSQL's 2202E."""
    a, b = pg_type(m.group("a")), pg_type(m.group("b"))
    base_a, base_b = a.rstrip("[]"), b.rstrip("[]")
    if base_a == base_b and a != b:
        if a.endswith("[]") and b.endswith("[]"):
            return err("2202E", "cannot concatenate incompatible arrays",
                       detail="Arrays with differing dimensions are not compatible for "
                              "concatenation.")
        return err("0A000", "array || element is not supported by pgbarrier on DuckDB",
                   hint="Use array_append(array, element) or array_prepend(element, array).",
                   position=operator_position(ctx, "||"))
    return err("42883", f"operator does not exist: {a} || {b}", hint=OP_HINT,
               position=operator_position(ctx, "||"))


def function_missing(m: re.Match[str], ctx: Ctx) -> PgError:
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
        types = [arg_type(a, levels) for a in args]
    return err("42883", f"function {name.lower()}({', '.join(types)}) does not exist",
               hint=FUNC_HINT, position=ctx.position)


# --------------------------------------------------------------------------- syntax

def syntax_error(m: re.Match[str], ctx: Ctx) -> PgError:
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


def unterminated(kind: str) -> Callable[[re.Match[str], Ctx], PgError]:
    def answer(m: re.Match[str], ctx: Ctx) -> PgError:
        rest = (ctx.sql or "")[(ctx.position or 1) - 1:]
        return err("42601", f'unterminated {kind} at or near "{rest}"', position=ctx.position)
    return answer
