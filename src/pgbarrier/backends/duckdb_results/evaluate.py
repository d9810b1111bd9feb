"""Select-list items whose PostgreSQL value DuckDB cannot compute, computed from exact inputs.

DuckDB answers ``avg(int)``, ``numeric / numeric``, ``stddev(int)`` and ``x::numeric`` as a
DOUBLE or a DECIMAL(18,3); PostgreSQL answers a numeric of a scale chosen per value
(:mod:`.numeric`). For such a top-level select-list item the DuckDB backend appends to the
select list the exact inputs (``sum(x)`` and ``count(x)`` for ``avg(x)``, the operands of a
division...), and this module's :class:`Eval` computes PostgreSQL's value from them, row by
row. Rules this module keeps:

* :func:`build` makes an evaluation of a typed, qualified item, or None when it holds
  something it cannot compute exactly (the item then keeps DuckDB's value, its type and
  scale PostgreSQL's). Leaves are the DuckDB expressions whose values are exact: integers,
  DECIMALs (added, subtracted, multiplied), their sums, counts, min and max, numbers
  written as literals; floats only as what a cast to numeric reads.
* Covered operations: ``avg``, ``stddev``/``variance`` (and their ``_samp``/``_pop``) of
  integers and numerics (not ``DISTINCT``), ``/`` ``*`` ``+`` ``-`` on numerics, unary
  minus, ``round``/``trunc`` (with a literal scale), ``ceil``/``floor``/``abs``,
  ``coalesce``, casts to ``numeric[(p,s)]``, and ``extract``'s ``second``,
  ``milliseconds`` and ``epoch`` of a timestamp (DuckDB's are whole seconds and a float).
* An item of an aggregate query only uses leaves that are aggregates, window calls,
  constants or the GROUP BY's own expressions (anything else would not bind); a volatile
  call (``random()``) anywhere makes the item not computed (its inputs would be other
  draws).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from sqlglot import exp

from pgbarrier.backends.duckdb_results import numeric as num
from pgbarrier.backends.duckdb_results import pgtypes as T
from pgbarrier.backends.duckdb_results.infer import Typer, call_name
from pgbarrier.errors import PgError
from pgbarrier.pgproto import types as pgt

__all__ = ["Eval", "Inputs", "build"]

_VOLATILE = frozenset({"random", "nextval", "setval", "gen_random_uuid", "clock_timestamp",
                       "uuid", "random_uuid", "timeofday"})
_EXACT = frozenset({pgt.INT2, pgt.INT4, pgt.INT8, pgt.NUMERIC})
_STATS = {"stddev": ("stddev", True), "stddev_samp": ("stddev", True),
          "stddev_pop": ("stddev", False), "variance": ("variance", True),
          "var_samp": ("variance", True), "var_pop": ("variance", False)}


@dataclass
class Inputs:
    """The DuckDB expressions appended to the select list (PostgreSQL text), deduplicated."""

    texts: list[str] = field(default_factory=list)

    def add(self, node: exp.Expr) -> int:
        text = node.sql(dialect="postgres")
        if text not in self.texts:
            self.texts.append(text)
        return self.texts.index(text)


#: an evaluation: a function of the appended values (the row's tail)
Eval = Callable[[tuple[Any, ...]], Any]


class _Abort(Exception):
    pass


def _dec(v: Any) -> Decimal | None:
    if v is None or isinstance(v, Decimal):
        return v
    if isinstance(v, bool):
        raise _Abort
    if isinstance(v, int):
        return Decimal(v)
    if isinstance(v, float):
        return num.from_float(v)
    try:
        return Decimal(str(v).strip())
    except InvalidOperation:
        raise PgError(f'invalid input syntax for type numeric: "{v}"', sqlstate="22P02") from None


class _Builder:
    def __init__(self, typer: Typer, original: Callable[[exp.Expr], exp.Expr | None],
                 inputs: Inputs, grouped: list[str] | None) -> None:
        self.typer = typer
        self.original = original  # qualified node -> the client's own node
        self.inputs = inputs
        self.grouped = grouped  # GROUP BY expressions' texts; None: not an aggregate query
        self.fired = False  # something DuckDB cannot compute exactly was met

    def type(self, node: exp.Expr) -> T.PgType | None:
        return self.typer.type_of(node, self.typer.scope_for(node))

    def leaf(self, node: exp.Expr) -> Eval:
        """An input DuckDB computes exactly (or a literal)."""
        if isinstance(node, exp.Paren):
            return self.leaf(node.this)
        if isinstance(node, exp.Literal) and not node.is_string:
            value = Decimal(node.this)
            return lambda row: value
        if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and \
                not node.this.is_string:
            value = -Decimal(node.this.this)
            return lambda row: value
        if isinstance(node, exp.Null):
            return lambda row: None
        mine = self.original(node)
        if mine is None:
            raise _Abort
        if self.grouped is not None and not self._bindable(mine):
            raise _Abort
        index = self.inputs.add(mine)
        return lambda row: row[index]

    def _bindable(self, node: exp.Expr) -> bool:
        """Whether ``node`` binds in the aggregate query: no column outside an aggregate
        or window call unless it is a GROUP BY expression."""
        if isinstance(node, (exp.AggFunc, exp.Window)) or \
                node.sql(dialect="postgres") in (self.grouped or ()):
            return True
        if isinstance(node, exp.Column):
            return False
        return all(self._bindable(c) for c in node.iter_expressions())

    def exact(self, node: exp.Expr) -> Eval:
        """``node`` (an integer or numeric) as an evaluation."""
        t = self.type(node)
        if t is None or t.oid not in _EXACT:
            raise _Abort
        return self.build(node)

    def build(self, node: exp.Expr) -> Eval:
        if isinstance(node, exp.Paren):
            return self.build(node.this)
        t = self.type(node)
        name = call_name(node) if isinstance(node, (exp.Func, exp.Anonymous)) else None
        if name in _VOLATILE:
            raise _Abort
        if isinstance(node, (exp.Cast, exp.TryCast)) and t is not None and t.oid == pgt.NUMERIC:
            return self._cast(node, t)
        agg = node.this if isinstance(node, (exp.Window, exp.Filter)) else node
        if isinstance(agg, exp.Filter):
            agg = agg.this
        agg_name = call_name(agg) if isinstance(agg, (exp.Func, exp.Anonymous)) else None
        if agg_name == "avg" and t == T.NUMERIC:
            return self._avg(node, agg)
        if agg_name in _STATS and t == T.NUMERIC:
            return self._stats(node, agg, *_STATS[agg_name])
        if isinstance(node, exp.Extract) and name == "extract":
            return self._extract(node)
        if t is None or t.oid not in _EXACT:
            raise _Abort
        if isinstance(node, exp.Div) and t == T.NUMERIC:
            a, b = self.exact(node.this), self.exact(node.expression)
            self.fired = True
            return lambda row: _both(a(row), b(row), num.div)
        if isinstance(node, (exp.Add, exp.Sub, exp.Mul)) and t == T.NUMERIC:
            a, b = self.exact(node.this), self.exact(node.expression)
            op = {exp.Add: num.add, exp.Sub: num.sub, exp.Mul: num.mul}[type(node)]
            return lambda row: _both(a(row), b(row), op)
        if isinstance(node, exp.Neg) and t == T.NUMERIC:
            a = self.exact(node.this)
            return lambda row: _one(a(row), lambda d: -d)
        if t == T.NUMERIC and name in ("round", "trunc") and isinstance(node, exp.Func):
            args = [v for v in (node.this, node.args.get("decimals") or
                                node.args.get("expression")) if v is not None]
            places = 0
            if len(args) > 1:
                if not (isinstance(args[1], exp.Literal) and args[1].this.lstrip("-").isdigit()
                        or isinstance(args[1], exp.Neg) and isinstance(args[1].this, exp.Literal)):
                    raise _Abort
                places = int(args[1].sql())
            a = self.exact(args[0])
            f = num.round_to if name == "round" else num.trunc_to
            return lambda row: _one(a(row), lambda d: f(d, places))
        if t == T.NUMERIC and name in ("ceil", "ceiling", "floor", "abs"):
            a = self.exact(node.this)
            f = {"ceil": num.ceil, "ceiling": num.ceil, "floor": num.floor,
                 "abs": abs}[name]  # type: ignore[dict-item]
            return lambda row: _one(a(row), f)
        if t == T.NUMERIC and name == "coalesce":
            parts = [self.exact(a) for a in [node.this, *node.expressions]]
            return lambda row: next((v for v in (_dec(p(row)) for p in parts) if v is not None),
                                    None)
        return self.leaf(node)

    def _cast(self, node: exp.Expr, t: T.PgType) -> Eval:
        inner = node.this
        source = self.type(inner)
        if source is None:
            raise _Abort
        if source.oid in _EXACT:
            a = self.build(inner)
            if t.typmod == -1 and not self.fired and source.oid != pgt.NUMERIC:
                self.fired = True  # DuckDB's ::numeric is DECIMAL(18,3)
        elif source.oid in (pgt.FLOAT4, pgt.FLOAT8):
            a = self.leaf(inner)
            float4 = source.oid == pgt.FLOAT4
            self.fired = True
            mod = t.typmod
            return lambda row: _one(a(row),
                                    lambda v: num.typmod(num.from_float(float(v), float4), mod))
        elif source.oid in (pgt.TEXT, pgt.VARCHAR, pgt.UNKNOWN, pgt.BPCHAR):
            if isinstance(inner, exp.Literal) and inner.is_string:
                # a literal DuckDB casts exactly (duckdb_dialect.declared keeps its scale), or
                # refuses with the error and caret PostgreSQL gives (duckdb_errors)
                raise _Abort
            a = self.leaf(inner)
            self.fired = True
        else:
            raise _Abort
        if t.typmod == -1:
            self.fired = True
        mod = t.typmod
        return lambda row: _one(_dec(a(row)), lambda d: num.typmod(d, mod))

    def _aggregate_leaf(self, top: exp.Expr, agg: exp.Expr, make: exp.Expr) -> Eval:
        """The input ``top`` (the call with its FILTER / OVER) with ``agg`` replaced."""
        mine_top, mine_agg = self.original(top), self.original(agg)
        if mine_top is None or mine_agg is None:
            raise _Abort
        if mine_top is mine_agg:
            new = make
        else:
            marker = mine_agg.meta.get("pgb")
            new = mine_top.copy()
            target = next((n for n in new.walk() if n.meta.get("pgb") == marker), None)
            if target is None:
                raise _Abort
            if target is new:
                new = make
            else:
                target.replace(make)
        index = self.inputs.add(new)
        return lambda row: row[index]

    def _argument(self, agg: exp.Expr) -> exp.Expr:
        arg = agg.this
        if isinstance(arg, exp.Distinct) or arg is None:
            raise _Abort
        t = self.type(arg)
        if t is None or t.oid not in _EXACT:
            raise _Abort
        mine = self.original(arg)
        if mine is None:
            raise _Abort
        return mine

    def _avg(self, top: exp.Expr, agg: exp.Expr) -> Eval:
        arg = agg.this
        distinct = isinstance(arg, exp.Distinct)
        inner = arg.expressions[0] if distinct and len(arg.expressions) == 1 else arg
        t = self.type(inner) if inner is not None else None
        mine = self.original(inner) if inner is not None else None
        if t is None or t.oid not in _EXACT or mine is None:
            raise _Abort

        def wrap(x: exp.Expr) -> exp.Expr:
            return exp.Distinct(expressions=[x]) if distinct else x
        total = self._aggregate_leaf(top, agg, exp.Sum(this=wrap(mine.copy())))
        count = self._aggregate_leaf(top, agg, exp.Count(this=wrap(mine.copy())))
        self.fired = True
        return lambda row: num.avg(total(row), count(row))

    def _stats(self, top: exp.Expr, agg: exp.Expr, kind: str, sample: bool) -> Eval:
        mine = self._argument(agg)
        t = self.type(agg.this)
        x = mine.copy()
        if t is not None and t.oid != pgt.NUMERIC:
            x = exp.Cast(this=exp.Paren(this=x), to=exp.DataType.build("DECIMAL(38, 0)"))
        square = exp.Mul(this=x.copy(), expression=x.copy())
        n = self._aggregate_leaf(top, agg, exp.Count(this=mine.copy()))
        s = self._aggregate_leaf(top, agg, exp.Sum(this=mine.copy()))
        s2 = self._aggregate_leaf(top, agg, exp.Sum(this=square))
        f = num.stddev if kind == "stddev" else num.variance
        self.fired = True
        return lambda row: f(n(row), s(row), s2(row), sample)

    def _extract(self, node: exp.Extract) -> Eval:
        unit = node.this.name.lower() if isinstance(node.this, (exp.Var, exp.Column)) else ""
        value = node.expression
        t = self.type(value)
        mine = self.original(value)
        if mine is None or t is None:
            raise _Abort
        if unit in ("second", "seconds", "milliseconds", "millisecond") and \
                t.oid in (pgt.TIMESTAMP, pgt.TIMESTAMPTZ, pgt.TIME):
            micros = exp.Extract(this=exp.var("MICROSECONDS"), expression=mine.copy())
            scale = 6 if unit.startswith("second") else 3
        elif unit == "epoch" and t.oid in (pgt.TIMESTAMP, pgt.TIMESTAMPTZ):
            micros = exp.Anonymous(this="epoch_us", expressions=[mine.copy()])
            scale = 6
        else:
            raise _Abort
        if self.grouped is not None and not self._bindable(mine):
            raise _Abort
        index = self.inputs.add(micros)
        self.fired = True
        return lambda row: None if row[index] is None else \
            Decimal(int(row[index])).scaleb(-scale)


def _one(a: Any, f: Callable[[Decimal], Any]) -> Any:
    d = _dec(a)
    return None if d is None else f(d)


def _both(a: Any, b: Any, f: Callable[[Decimal, Decimal], Any]) -> Any:
    x, y = _dec(a), _dec(b)
    return None if x is None or y is None else f(x, y)


def build(item: exp.Expr, typer: Typer, original: Callable[[exp.Expr], exp.Expr | None],
          inputs: Inputs, grouped: list[str] | None) -> Eval | None:
    """PostgreSQL's value of ``item`` from appended inputs; None: DuckDB's is used."""
    builder = _Builder(typer, original, inputs, grouped)
    mark = len(inputs.texts)
    try:
        f = builder.build(item.unalias())
    except _Abort:
        del inputs.texts[mark:]
        return None
    if not builder.fired:
        del inputs.texts[mark:]
        return None
    return f
