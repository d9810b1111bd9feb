"""PostgreSQL's result type of each select-list item, inferred on sqlglot's qualified AST.

Rules this module keeps:

* Table and view columns have the types the emulated catalog gives them (``pg_attribute``:
  declared ``varchar(n)``/``char(n)`` kept); derived tables, CTEs, ``VALUES`` lists and
  scalar subqueries are typed by the same rules, recursively; a table function in FROM
  (``generate_series``, ``unnest``) by its call.
* Literals as PostgreSQL's parser types them (``1`` integer, ``3000000000`` bigint, ``1.5``
  numeric, ``'a'`` unknown), casts by their target (with its modifier), operators and
  functions by PostgreSQL's catalog: see :data:`_FIXED` and :func:`_call` (``sum(int4)``
  bigint, ``sum(int8)`` numeric, ``avg(int)`` numeric, ``length()`` integer, ``extract``
  numeric, ``date_part`` double precision, ``ntile`` integer, ``round(numeric)``
  numeric, ``int2 * int4`` integer, ``float4 * int`` double precision, ``date - date``
  integer...). A function result has no type modifier.
* Anything not covered is None: the DuckDB backend then keeps DuckDB's own type for it.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp
from sqlglot.optimizer.scope import Scope

from pgbarrier.backends.duckdb_results import pgtypes as T
from pgbarrier.backends.duckdb_results.pgtypes import PgType, common
from pgbarrier.pgproto import types as pgt
from pgbarrier.sql.colnames import written_name

__all__ = ["Typer", "call_name"]

#: functions whose result type does not depend on their arguments
_FIXED: dict[str, PgType] = {
    **dict.fromkeys(("count", "row_number", "rank", "dense_rank"), T.INT8),
    **dict.fromkeys(("ntile", "length", "char_length", "character_length", "octet_length",
                     "bit_length", "position", "strpos", "ascii", "array_length",
                     "cardinality", "array_position", "array_upper", "array_lower",
                     "array_ndims", "width_bucket", "jsonb_array_length",
                     "json_array_length"), T.INT4),
    **dict.fromkeys(("percent_rank", "cume_dist", "date_part", "pi", "random", "degrees",
                     "radians", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "cot",
                     "cbrt", "percentile_cont", "corr", "covar_pop", "covar_samp",
                     "regr_slope", "regr_intercept", "regr_r2", "regr_count", "regr_avgx",
                     "regr_avgy", "regr_sxx", "regr_syy", "regr_sxy"), T.FLOAT8),
    **dict.fromkeys(("extract", "div", "factorial"), T.NUMERIC),
    **dict.fromkeys(("upper", "lower", "initcap", "btrim", "ltrim", "rtrim", "trim", "replace",
                     "concat", "concat_ws", "left", "right", "lpad", "rpad", "reverse",
                     "repeat", "split_part", "md5", "translate", "to_char", "chr", "format",
                     "quote_ident", "quote_literal", "quote_nullable", "regexp_replace",
                     "array_to_string", "version", "to_hex", "encode", "current_setting",
                     "format_type", "json_typeof", "jsonb_typeof"), T.TEXT),
    **dict.fromkeys(("current_user", "session_user", "current_role", "user",
                     "current_schema", "current_database", "current_catalog"), T.NAME),
    **dict.fromkeys(("now", "current_timestamp", "transaction_timestamp",
                     "statement_timestamp", "clock_timestamp", "to_timestamp",
                     "make_timestamptz"), T.TIMESTAMPTZ),
    **dict.fromkeys(("age", "make_interval", "justify_days", "justify_hours",
                     "justify_interval"), T.INTERVAL),
    **dict.fromkeys(("bool_and", "bool_or", "every", "isfinite", "starts_with"), T.BOOL),
    "current_date": T.DATE, "to_date": T.DATE, "make_date": T.DATE,
    "localtimestamp": T.TIMESTAMP, "make_timestamp": T.TIMESTAMP, "current_time": T.TIMETZ,
    "localtime": T.TIME, "pg_typeof": T.REGTYPE_T, "gen_random_uuid": T.UUID,
    "string_to_array": PgType(1009), "regexp_split_to_array": PgType(1009),
    "array_positions": PgType(1007),
}
#: aggregates typed like their argument (``max(varchar)`` is ``max(text)``: text)
_SAME = frozenset({"min", "max", "abs", "first_value", "last_value", "nth_value", "lag",
                   "lead", "bit_and", "bit_or", "bit_xor", "any_value", "mode"})
_STATS = frozenset({"stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop"})
#: numeric in -> numeric out, anything else -> double precision
_NUMERIC_OR_FLOAT = frozenset({"round", "trunc", "ceil", "ceiling", "floor", "sign", "sqrt",
                               "exp", "ln", "log", "log10", "power", "pow"})
_ARRAY_KEEP = frozenset({"array_append", "array_cat", "array_remove", "array_replace"})
_BOOLEAN_NODES = (exp.Predicate, exp.Not, exp.And, exp.Or, exp.Exists, exp.Xor)


def call_name(node: exp.Expr) -> str | None:
    """The PostgreSQL function a call node is (its written name, lower case)."""
    name = written_name(node)
    return None if name in (None, "?column?") else name


def _args(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Anonymous):
        return list(node.expressions)
    out: list[exp.Expr] = []
    for key in node.arg_types:
        value = node.args.get(key)
        for v in (value if isinstance(value, list) else [value]):
            if isinstance(v, exp.Expr):
                out.append(v.expressions[0] if isinstance(v, exp.Distinct) and v.expressions
                           else v)
    return out


def _int_literal(text: str) -> PgType:
    n = int(text)
    if -2**31 <= n < 2**31:
        return T.INT4
    return T.INT8 if -2**63 <= n < 2**63 else T.NUMERIC


class Typer:
    """Types the expressions of one qualified statement; ``table(db, name)`` answers a
    base table's columns ({name: PgType}), or None."""

    def __init__(self, root: Scope, table: Callable[[str, str], dict[str, PgType] | None]
                 ) -> None:
        self._table = table
        self._scope_of: dict[int, Scope] = {}
        for scope in root.traverse():
            self._scope_of[id(scope.expression)] = scope
        self._selects: dict[int, list[PgType | None]] = {}

    def scope_for(self, node: exp.Expr) -> Scope | None:
        while node is not None:
            found = self._scope_of.get(id(node))
            if found is not None:
                return found
            node = node.parent  # type: ignore[assignment]
        return None

    def outputs(self, scope: Scope) -> list[PgType | None]:
        """The types of a scope's output columns (a SELECT, a set operation, VALUES)."""
        key = id(scope)
        found = self._selects.get(key)
        if found is not None:
            return found
        self._selects[key] = []  # a recursive CTE reads itself: unknown meanwhile
        node = scope.expression
        if isinstance(node, exp.Select):
            out = [self.type_of(e.unalias(), scope) for e in node.expressions]
        elif isinstance(node, exp.SetOperation) and scope.set_operation_scopes:
            branches = [self.outputs(s) for s in scope.set_operation_scopes]
            width = min(len(b) for b in branches)
            out = [common([b[i] for b in branches]) for i in range(width)]
            out = [T.TEXT if t == T.UNKNOWN else t for t in out]
        elif isinstance(node, exp.Values):
            rows = [r.expressions for r in node.expressions if isinstance(r, exp.Tuple)]
            width = min((len(r) for r in rows), default=0)
            out = [common([self.type_of(r[i], scope) for r in rows]) for i in range(width)]
            out = [T.TEXT if t == T.UNKNOWN else t for t in out]
        else:
            out = []
        self._selects[key] = out
        return out

    # -- expressions -------------------------------------------------------------------

    def type_of(self, node: exp.Expr, scope: Scope | None) -> PgType | None:
        try:
            return self._type(node, scope)
        except RecursionError:
            return None

    def _type(self, node: exp.Expr, scope: Scope | None) -> PgType | None:
        t = self._type
        if isinstance(node, (exp.Paren, exp.Alias, exp.Window, exp.Filter, exp.WithinGroup,
                             exp.Collate)):
            return t(node.this, scope)
        if isinstance(node, exp.Column):
            return self._column(node, scope)
        if isinstance(node, exp.Literal):
            if node.is_string:
                return T.UNKNOWN
            text = node.this
            return _int_literal(text) if text.isdigit() else T.NUMERIC
        if isinstance(node, exp.Null):
            return T.UNKNOWN
        if isinstance(node, exp.Boolean) or isinstance(node, _BOOLEAN_NODES):
            return T.BOOL
        if isinstance(node, (exp.Cast, exp.TryCast)):
            return T.of_datatype(node.args.get("to"))
        if isinstance(node, exp.Interval):
            return T.INTERVAL
        if isinstance(node, exp.Neg):
            inner = t(node.this, scope)
            return inner.plain if inner is not None and inner != T.UNKNOWN else None
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod)):
            return _arith(type(node), t(node.this, scope), t(node.expression, scope))
        if isinstance(node, exp.DPipe):
            left, right = t(node.this, scope), t(node.expression, scope)
            for side in (left, right):
                if side is not None and side.element is not None:
                    return side.plain
            return T.TEXT
        if isinstance(node, exp.Pow):
            return _numeric_or_float([t(node.this, scope), t(node.expression, scope)])
        if isinstance(node, (exp.BitwiseAnd, exp.BitwiseOr, exp.BitwiseXor,
                             exp.BitwiseLeftShift, exp.BitwiseRightShift)):
            found = common([t(node.this, scope), t(node.expression, scope)])
            return found if T.is_integer(found) else None
        if isinstance(node, exp.Case):
            branches = [i.args.get("true") for i in node.args.get("ifs") or []]
            if node.args.get("default") is not None:
                branches.append(node.args["default"])
            return common([t(b, scope) for b in branches if b is not None])
        if isinstance(node, exp.Subquery):
            inner = self._scope_of.get(id(node.this))
            outs = self.outputs(inner) if inner is not None else []
            return (T.TEXT if outs[0] == T.UNKNOWN else outs[0]) if outs else None
        if isinstance(node, exp.Array):
            elems = [t(e, scope) for e in node.expressions]
            found = common(elems) if elems else None
            if found == T.UNKNOWN:
                found = T.TEXT
            return found.plain.array() if found is not None else None
        if isinstance(node, exp.Bracket):
            base = t(node.this, scope)
            if base is None or base.element is None:
                return None
            sliced = any(isinstance(e, exp.Slice) for e in node.expressions)
            return base.plain if sliced else base.element
        if isinstance(node, exp.AtTimeZone):
            inner = t(node.this, scope)
            return {T.TIMESTAMP: T.TIMESTAMPTZ, T.TIMESTAMPTZ: T.TIMESTAMP}.get(
                inner.plain if inner is not None else None)  # type: ignore[arg-type]
        if isinstance(node, (exp.Func, exp.Anonymous)):
            return self._call(node, scope)
        return None

    def _column(self, node: exp.Column, scope: Scope | None) -> PgType | None:
        if scope is None:
            return None
        source = scope.sources.get(node.table)
        if source is None and node.table == "":
            return None
        if isinstance(source, exp.Table):
            if isinstance(source.this, (exp.Func, exp.Anonymous)):  # a table function
                alias = source.args.get("alias")
                names = [c.name for c in alias.columns] if alias is not None else []
                if len(names) > 1 and node.name != names[0]:
                    return None  # WITH ORDINALITY's, or a record's other columns
                return self._call(source.this, scope)
            columns = self._table(source.db, source.name)
            return columns.get(node.name) if columns is not None else None
        if isinstance(source, Scope):
            outs = self.outputs(source)
            expr = source.expression
            names: list[str] = []
            if isinstance(expr, exp.Values) or (isinstance(expr, exp.SetOperation)):
                alias = expr.args.get("alias") if isinstance(expr, exp.Values) else None
                if alias is not None:
                    names = [c.name for c in alias.columns]
                elif isinstance(expr, exp.SetOperation):
                    names = list(expr.named_selects)
            elif isinstance(expr, exp.Select):
                names = [e.alias_or_name for e in expr.expressions]
            parent_alias = source.expression.parent
            if isinstance(parent_alias, exp.Subquery) and parent_alias.alias_column_names:
                names = parent_alias.alias_column_names
            for i, name in enumerate(names):
                if name == node.name and i < len(outs):
                    return outs[i]
        return None

    def _call(self, node: exp.Expr, scope: Scope | None) -> PgType | None:
        name = call_name(node)
        if name is None:
            return None
        if isinstance(node, exp.Extract) and name not in ("extract", "date_part"):
            name = "extract"
        fixed = _FIXED.get(name)
        if fixed is not None:
            return fixed
        args = _args(node)
        types = [self._type(a, scope) for a in args]
        first = types[0] if types else None
        if name == "sum":
            return _sum(first)
        if name == "avg":
            return _avg(first)
        if name in _STATS:
            return T.NUMERIC if first is not None and first.oid in (
                pgt.INT2, pgt.INT4, pgt.INT8, pgt.NUMERIC) else \
                T.FLOAT8 if first in (T.FLOAT4, T.FLOAT8) else None
        if name in _SAME:
            if first is None:
                return None
            if first.oid in (pgt.VARCHAR, pgt.NAME) or first == T.UNKNOWN:
                return T.TEXT
            return first.plain
        if name in _NUMERIC_OR_FLOAT:
            if name in ("round", "trunc") and len(types) > 1:
                return T.NUMERIC
            return _numeric_or_float(types)
        if name in ("mod", "gcd", "lcm"):
            found = common(types)
            return found.plain if T.is_integer(found) or found == T.NUMERIC else None
        if name in ("coalesce", "greatest", "least"):
            found = common(types)
            return T.TEXT if found == T.UNKNOWN else found
        if name == "nullif":
            return T.TEXT if first == T.UNKNOWN else first
        if name == "string_agg":
            return T.BYTEA if first == T.BYTEA else T.TEXT
        if name == "array_agg":
            return first.plain.array() if first is not None and first.element is None \
                and first != T.UNKNOWN else None
        if name in ("substring", "substr", "overlay"):
            return T.BYTEA if first == T.BYTEA else T.TEXT
        if name == "date_trunc":
            value = self._type(node.this, scope) if isinstance(node, exp.Func) and \
                not isinstance(node, exp.Anonymous) else (types[1] if len(types) > 1 else None)
            return value.plain if value in (T.TIMESTAMP, T.TIMESTAMPTZ, T.INTERVAL) else None
        if name == "generate_series":
            found = common(types[:2])
            return found.plain if found is not None and found.oid in (
                pgt.INT4, pgt.INT8, pgt.NUMERIC, pgt.TIMESTAMP, pgt.TIMESTAMPTZ) else None
        if name == "unnest":
            return first.element if first is not None else None
        if name in _ARRAY_KEEP:
            return first.plain if first is not None and first.element is not None else None
        if name == "array_prepend":
            return types[1].plain if len(types) > 1 and types[1] is not None else None
        return None


def _sum(t: PgType | None) -> PgType | None:
    if t is None:
        return None
    return {pgt.INT2: T.INT8, pgt.INT4: T.INT8, pgt.INT8: T.NUMERIC, pgt.NUMERIC: T.NUMERIC,
            pgt.FLOAT4: T.FLOAT4, pgt.FLOAT8: T.FLOAT8, pgt.INTERVAL: T.INTERVAL}.get(t.oid)


def _avg(t: PgType | None) -> PgType | None:
    if t is None:
        return None
    return {pgt.INT2: T.NUMERIC, pgt.INT4: T.NUMERIC, pgt.INT8: T.NUMERIC,
            pgt.NUMERIC: T.NUMERIC, pgt.FLOAT4: T.FLOAT8, pgt.FLOAT8: T.FLOAT8,
            pgt.INTERVAL: T.INTERVAL}.get(t.oid)


def _numeric_or_float(types: list[PgType | None]) -> PgType | None:
    known = [x for x in types if x is not None and x != T.UNKNOWN]
    if not known or len(known) != len([x for x in types if x != T.UNKNOWN]):
        return None
    if not all(T.is_number(x) for x in known):
        return None
    if any(x.oid == pgt.NUMERIC for x in known) and \
            not any(x.oid in (pgt.FLOAT4, pgt.FLOAT8) for x in known):
        return T.NUMERIC
    return T.FLOAT8


_DATE_ARITH = {
    (exp.Add, pgt.DATE, pgt.INT4): T.DATE, (exp.Add, pgt.INT4, pgt.DATE): T.DATE,
    (exp.Sub, pgt.DATE, pgt.INT4): T.DATE, (exp.Sub, pgt.DATE, pgt.DATE): T.INT4,
    (exp.Add, pgt.DATE, pgt.INTERVAL): T.TIMESTAMP, (exp.Add, pgt.INTERVAL, pgt.DATE): T.TIMESTAMP,
    (exp.Sub, pgt.DATE, pgt.INTERVAL): T.TIMESTAMP,
    (exp.Add, pgt.TIMESTAMP, pgt.INTERVAL): T.TIMESTAMP,
    (exp.Add, pgt.INTERVAL, pgt.TIMESTAMP): T.TIMESTAMP,
    (exp.Sub, pgt.TIMESTAMP, pgt.INTERVAL): T.TIMESTAMP,
    (exp.Add, pgt.TIMESTAMPTZ, pgt.INTERVAL): T.TIMESTAMPTZ,
    (exp.Add, pgt.INTERVAL, pgt.TIMESTAMPTZ): T.TIMESTAMPTZ,
    (exp.Sub, pgt.TIMESTAMPTZ, pgt.INTERVAL): T.TIMESTAMPTZ,
    (exp.Sub, pgt.TIMESTAMP, pgt.TIMESTAMP): T.INTERVAL,
    (exp.Sub, pgt.TIMESTAMPTZ, pgt.TIMESTAMPTZ): T.INTERVAL,
    (exp.Sub, pgt.TIMESTAMP, pgt.DATE): T.INTERVAL, (exp.Sub, pgt.DATE, pgt.TIMESTAMP): T.INTERVAL,
    (exp.Add, pgt.INTERVAL, pgt.INTERVAL): T.INTERVAL,
    (exp.Sub, pgt.INTERVAL, pgt.INTERVAL): T.INTERVAL,
    (exp.Add, pgt.DATE, pgt.TIME): T.TIMESTAMP, (exp.Add, pgt.TIME, pgt.INTERVAL): T.TIME,
    (exp.Sub, pgt.TIME, pgt.INTERVAL): T.TIME, (exp.Sub, pgt.TIME, pgt.TIME): T.INTERVAL,
}


def _arith(op: type, a: PgType | None, b: PgType | None) -> PgType | None:
    """PostgreSQL's operator resolution for ``+ - * / %``."""
    if a is None or b is None:
        return None
    if a == T.UNKNOWN and b == T.UNKNOWN:
        return None
    a = b if a == T.UNKNOWN else a.plain
    b = a if b == T.UNKNOWN else b.plain
    if T.is_number(a) and T.is_number(b):
        oids = {a.oid, b.oid}
        if oids == {pgt.FLOAT4}:
            return T.FLOAT4
        if oids & {pgt.FLOAT4, pgt.FLOAT8}:
            return T.FLOAT8
        if pgt.NUMERIC in oids:
            return T.NUMERIC
        return PgType(max(oids, key=T.NUMBERS.index))
    if op in (exp.Add, exp.Sub):
        key_b = pgt.INT4 if T.is_integer(b) else b.oid
        key_a = pgt.INT4 if T.is_integer(a) else a.oid
        return _DATE_ARITH.get((op, key_a, key_b))
    if op in (exp.Mul, exp.Div) and a == T.INTERVAL and T.is_number(b):
        return T.INTERVAL
    if op == exp.Mul and b == T.INTERVAL and T.is_number(a):
        return T.INTERVAL
    return None
