"""One statement's result plan: PostgreSQL's column types and values for a DuckDB result.

Rules this module keeps:

* :func:`result_plan` reads the client's query once per text, search path and schema
  generation (cached, :class:`PlanCache`), after a cheap gate (:func:`may_retype`: a
  select list of bare columns has DuckDB's types already): the statement is qualified by
  sqlglot against the emulated catalog's columns (as :mod:`pgbarrier.backends.pgcatalog.origins`
  does) and typed by :mod:`.infer`.
* Each output column gets PostgreSQL's type OID and modifier where it is known and DuckDB's
  value can carry it: any number as any number (``sum(int4)`` HUGEINT sent as ``int8``,
  ``avg`` DOUBLE as ``numeric``, ``length()`` BIGINT as ``int4``), text as ``varchar``,
  ``bpchar``, ``name`` or ``regtype``, a type as itself with PostgreSQL's modifier. Other
  columns keep DuckDB's type.
* Values follow the type, in text and binary formats alike: an integer sent as ``numeric`` has
  scale 0; a DuckDB DOUBLE sent as ``numeric`` gets the scale PostgreSQL's operation would
  give (a quotient's ``select_div_scale`` from its own digits, ``round(x, n)`` ``n``), or,
  for a top-level item :mod:`.evaluate` can compute, PostgreSQL's exact value from inputs
  appended to the select list (``avg``, ``stddev``, ``variance``, numeric division, casts to
  ``numeric``, ``extract(second ...)``); those extra columns are dropped from the result.
* ``pg_typeof(x)`` answers PostgreSQL's type name: the call is replaced in the text DuckDB
  runs by the name (``x`` still evaluated, so aggregates keep their grouping) when ``x``'s
  type is known, else by DuckDB's own answer spelled as PostgreSQL spells it; its column is
  ``regtype``.
* Edits to the statement text are insertions and replacements at known offsets: DuckDB's
  error positions are mapped back to the client's text (:meth:`ResultPlan.client_position`).
* Not done: a set operation's or DISTINCT query's items are typed but not computed from
  inputs; a statement naming a temporary relation is planned each time (not cached).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import build_scope
from sqlglot.schema import MappingSchema
from sqlglot.tokens import TokenType

from pgbarrier.backends.duckdb_results import numeric as num
from pgbarrier.backends.duckdb_results import pgtypes as T
from pgbarrier.backends.duckdb_results.evaluate import Eval, Inputs, build
from pgbarrier.backends.duckdb_results.infer import Typer, call_name
from pgbarrier.backends.duckdb_results.pgtypes import PgType
from pgbarrier.backends.pgcatalog.origins import bind_tables
from pgbarrier.pgproto import types as pgt
from pgbarrier.result import Column
from pgbarrier.sql.colnames import PgWritten, parse_query

__all__ = ["PlanCache", "ResultPlan", "may_retype", "result_plan"]

_CACHE_SIZE = 1024
_GATE = re.compile(r"[(:+\-*/%|^]")
#: (nspname, relname, temporary, attname, attnum, atttypid, atttypmod, attrelid)
CatalogRow = tuple[str, str, bool, str, int, int, int, int]
_NUMBERS = frozenset(T.NUMBERS)
#: DuckDB's text carries these PostgreSQL types as they are
_TEXTUAL = frozenset({pgt.TEXT, pgt.VARCHAR, pgt.BPCHAR, pgt.NAME, T.REGTYPE})
_STOP = frozenset({TokenType.FROM, TokenType.WHERE, TokenType.GROUP_BY, TokenType.HAVING,
                   TokenType.WINDOW, TokenType.ORDER_BY, TokenType.LIMIT, TokenType.OFFSET,
                   TokenType.FETCH, TokenType.UNION, TokenType.INTERSECT, TokenType.EXCEPT,
                   TokenType.INTO, TokenType.SEMICOLON, TokenType.QUALIFY, TokenType.FOR})
#: DuckDB's pg_typeof answers -> PostgreSQL's
_DUCK_TYPENAMES = {"double": "double precision", "float": "real", "varchar": "text",
                   "hugeint": "numeric", "blob": "bytea", "tinyint": "smallint",
                   "timestamp": "timestamp without time zone",
                   "time": "time without time zone", "varchar[]": "text[]",
                   "double[]": "double precision[]", "uhugeint": "numeric",
                   "ubigint": "numeric", "uinteger": "bigint", "usmallint": "integer",
                   "utinyint": "smallint"}


def may_retype(sql: str) -> bool:
    """The cheap gate: False when every select-list item can only be a bare column."""
    return _GATE.search(sql) is not None


@dataclass(frozen=True)
class _Out:
    type: PgType | None
    evaluate: Eval | None = None
    #: how a DuckDB float becomes this numeric: a fixed scale, else a quotient's
    scale: str | int | None = None


@dataclass(frozen=True)
class ResultPlan:
    """What to run and how to present its result (see the module docstring)."""

    outputs: tuple[_Out, ...]
    #: the client's text with the plan's edits (None: unchanged)
    sql: str | None = None
    #: columns appended to the select list (dropped from the result)
    hidden: int = 0
    #: (client offset, replaced length, new length) of each edit, in text order
    edits: tuple[tuple[int, int, int], ...] = ()

    def client_position(self, position: int | None) -> int | None:
        """A 1-based position in the edited text as one in the client's."""
        if position is None or not self.edits:
            return position
        offset, delta = position - 1, 0
        for start, old, new in self.edits:
            if offset < start + delta:
                break
            if offset < start + delta + new:
                return start + 1
            delta += new - old
        return offset - delta + 1

    @property
    def computed(self) -> frozenset[int]:
        """Indexes of the columns whose values the plan computes (PostgreSQL's already)."""
        return frozenset(i for i, o in enumerate(self.outputs) if o.evaluate is not None)

    def columns(self, columns: list[Column]) -> list[Column]:
        """``columns`` (DuckDB's result, its own width) with PostgreSQL's types."""
        if len(columns) != len(self.outputs):
            return columns
        return [_typed(c, o) for c, o in zip(columns, self.outputs)]

    @property
    def retypes_only(self) -> bool:
        """The text runs as the client wrote it and no input is appended: the plan may
        change no more than its columns' types (:meth:`value_free` says, once run)."""
        return self.sql is None and not self.hidden

    def value_free(self, duck: list[Column], duck_types: Sequence[str]) -> bool:
        """Whether presenting DuckDB's result (columns ``duck``, DuckDB type names
        ``duck_types``) under this plan changes its columns' types only: no value is
        converted, computed or dropped, and the text ran unedited. Such a result can take
        the columnar path with :meth:`columns`' types (``SELECT * FROM t``: its plan names
        ``varchar(n)`` and ``numeric(p,s)`` where DuckDB's values already are those)."""
        if not self.retypes_only or len(duck) != len(self.outputs) \
                or len(duck_types) != len(duck):
            return False
        for col, name, out in zip(duck, duck_types, self.outputs):
            if out.evaluate is not None:
                return False
            if _converter(col.type_oid, out) is not None and not _same_decimal(name, out):
                return False
        return True

    def rows(self, duck: list[Column]) -> Callable[[list[tuple[Any, ...]]], list[tuple[Any, ...]]] | None:
        """A converter of DuckDB's rows (with the appended inputs) to the client's, for a
        result whose columns DuckDB typed ``duck`` (the client's width); None: as they are."""
        width = len(self.outputs)
        if len(duck) != width:
            return None
        convert: list[tuple[int, Callable[[Any], Any]]] = []
        evaluate: list[tuple[int, Eval]] = []
        for i, (col, out) in enumerate(zip(duck, self.outputs)):
            if out.evaluate is not None:
                evaluate.append((i, out.evaluate))
                continue
            f = _converter(col.type_oid, out)
            if f is not None:
                convert.append((i, f))
        if not convert and not evaluate and not self.hidden:
            return None

        def rows(batch: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
            out = []
            for row in batch:
                values = list(row[:width])
                tail = row[width:]
                for i, f in convert:
                    if values[i] is not None:
                        try:
                            values[i] = f(values[i])
                        except (ArithmeticError, ValueError, TypeError):
                            pass  # DuckDB's value, rather than no answer
                for i, e in evaluate:
                    try:
                        values[i] = e(tail)
                    except (ArithmeticError, ValueError, TypeError, IndexError):
                        pass
                out.append(tuple(values))
            return out
        return rows


def _typed(col: Column, out: _Out) -> Column:
    t = out.type
    if t is None or not _carries(col.type_oid, t.oid, out.evaluate is not None):
        return col
    return replace(col, type_oid=t.oid, type_modifier=t.typmod if t.typmod != -1 else
                   (col.type_modifier if col.type_oid == t.oid and col.table_oid else -1))


def _carries(duck_oid: int, pg_oid: int, computed: bool) -> bool:
    if computed or duck_oid == pg_oid:
        return True
    if duck_oid in _NUMBERS and pg_oid in _NUMBERS:
        # never a DuckDB float as an integer: DuckDB computed something else (a session's
        # own `SET integer_division = false`)
        return not (pg_oid in (pgt.INT2, pgt.INT4, pgt.INT8) and
                    duck_oid in (pgt.FLOAT4, pgt.FLOAT8))
    return duck_oid == pgt.TEXT and pg_oid in _TEXTUAL


def _converter(duck_oid: int, out: _Out) -> Callable[[Any], Any] | None:
    t = out.type
    if t is None or not _carries(duck_oid, t.oid, False):
        return None
    if t.oid in (pgt.INT2, pgt.INT4, pgt.INT8):
        return None if duck_oid in (pgt.INT2, pgt.INT4, pgt.INT8) else _to_int
    if t.oid in (pgt.FLOAT4, pgt.FLOAT8):
        return None if duck_oid in (pgt.FLOAT4, pgt.FLOAT8) else float
    if t.oid == pgt.NUMERIC:
        if duck_oid in (pgt.FLOAT4, pgt.FLOAT8):
            scale = out.scale

            def from_double(v: Any) -> Any:
                # the shortest digits that are the double; a quotient's scale from them
                d = Decimal(repr(v)) if isinstance(v, float) else Decimal(v)
                if not d.is_finite():
                    return d
                if isinstance(scale, int):
                    return num.round_to(d, scale)
                if scale == "as is":
                    return d
                return num.round_to(d, num.div_scale(d, Decimal(1)))
            return from_double
        if t.typmod >= 4:
            mod = t.typmod
            return lambda v: num.typmod(Decimal(v), mod)
        return None
    return None


_DECIMAL = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")


def _same_decimal(duck_type: str, out: _Out) -> bool:
    """A DuckDB ``DECIMAL(p,s)`` whose every value is already its ``numeric(P,S)`` value
    (``num.typmod`` would return it unchanged): the same scale, no more integer digits."""
    t = out.type
    m = _DECIMAL.fullmatch(duck_type)
    if m is None or t is None or t.oid != pgt.NUMERIC or t.typmod < 4:
        return False
    precision, scale = ((t.typmod - 4) >> 16) & 0xFFFF, (t.typmod - 4) & 0xFFFF
    p, s = int(m.group(1)), int(m.group(2))
    return s == scale and p - s <= precision - scale


def _to_int(v: Any) -> Any:
    if isinstance(v, Decimal) and v != v.to_integral_value():
        raise ValueError(v)  # not an integer after all: DuckDB's value stays
    return int(v) if not isinstance(v, bool) else v


class PlanCache:
    """Plans per (statement text, search path), valid for one schema generation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Any, ...], tuple[int, ResultPlan | None]] = \
            OrderedDict()

    def get(self, key: tuple[Any, ...], generation: int) -> tuple[ResultPlan | None] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None or found[0] != generation:
                return None
            self._entries.move_to_end(key)
            return (found[1],)

    def put(self, key: tuple[Any, ...], generation: int, plan: ResultPlan | None) -> None:
        with self._lock:
            self._entries[key] = (generation, plan)
            while len(self._entries) > _CACHE_SIZE:
                self._entries.popitem(last=False)


def result_plan(sql: str, search_path: tuple[str, ...], cache: PlanCache, generation: int,
                lookup: Callable[[list[str]], Sequence[CatalogRow]]) -> ResultPlan | None:
    """The plan of the client's query ``sql`` (None: present DuckDB's result as it is);
    ``lookup(names)`` reads the catalog rows of the relations so named."""
    if not may_retype(sql):
        return None
    key = (sql, search_path)
    found = cache.get(key, generation)
    if found is not None:
        return found[0]
    try:
        plan, temporary = _plan(sql, search_path, lookup)
    except (SqlglotError, RecursionError, ValueError, KeyError, AttributeError, TypeError,
            IndexError):
        plan, temporary = None, False  # sqlglot on a statement it does not expect
    if not temporary:
        cache.put(key, generation, plan)
    return plan


def _name(ident: exp.Expr | None) -> str | None:
    if ident is None:
        return None
    return ident.name if getattr(ident, "quoted", False) else ident.name.lower()


def _plan(sql: str, search_path: tuple[str, ...],
          lookup: Callable[[list[str]], Sequence[CatalogRow]]
          ) -> tuple[ResultPlan | None, bool]:
    tree = parse_query(sql)
    if not isinstance(tree, (exp.Select, exp.SetOperation)):
        return None, False
    originals: dict[int, exp.Expr] = {}
    for i, node in enumerate(tree.walk()):
        node.meta["pgb"] = i
        originals[i] = node
    work = tree.copy()
    ctes = {_name(c.args.get("alias") and c.args["alias"].this) for c in work.find_all(exp.CTE)}
    tables = [t for t in work.find_all(exp.Table)
              if isinstance(t.this, exp.Identifier) and not (t.args.get("db") is None and
                                                             _name(t.this) in ctes)]
    rows = lookup(sorted({t.name for t in tables})) if tables else []
    rels: dict[tuple[str, str], dict[str, PgType]] = {}
    temps: set[str] = set()
    for nsp, rel, temp, att, _attnum, typid, typmod, _relid in rows:
        rels.setdefault((nsp, rel), {})[att] = PgType(typid, typmod)
        if temp:
            temps.add(rel)
    named_temp, mapping = bind_tables(tables, rels, temps, search_path)
    qualified = qualify(work, schema=MappingSchema(mapping, dialect="postgres", normalize=False),
                        dialect="postgres", validate_qualify_columns=False,
                        quote_identifiers=False, identify=False, expand_alias_refs=False)
    root = build_scope(qualified)
    if root is None:
        return None, named_temp
    typer = Typer(root, lambda db, name: rels.get((db, name)))
    top = root.expression
    if not isinstance(top, (exp.Select, exp.SetOperation)):
        return None, named_temp
    selects = top.selects
    if any(isinstance(s, exp.Star) or (isinstance(s, exp.Column) and isinstance(s.this, exp.Star))
           for s in selects):
        return None, named_temp
    types = [T.TEXT if t == T.UNKNOWN else t for t in typer.outputs(root)]
    if len(types) != len(selects):
        return None, named_temp

    def original(node: exp.Expr) -> exp.Expr | None:
        marker = node.meta.get("pgb")
        return originals.get(marker) if marker is not None else None

    outputs = []
    inputs = Inputs()
    computable = isinstance(top, exp.Select) and isinstance(tree, exp.Select) and \
        not top.args.get("distinct") and not top.args.get("into")
    grouped = _grouped(tree) if computable else None
    for item, t in zip(selects, types):
        f = None
        if computable and t is not None and t.oid == pgt.NUMERIC:
            f = build(item, typer, original, inputs, grouped)
        outputs.append(_Out(t, f, _approx_scale(item.unalias(), typer) if t == T.NUMERIC
                            else None))
    edits = _typeof_edits(sql, tree, qualified, typer, original)
    hidden = len(inputs.texts)
    if hidden:
        end = _select_list_end(sql)
        if end is None:  # the inputs cannot be placed: DuckDB's values, PostgreSQL's types
            outputs = [replace(o, evaluate=None) for o in outputs]
            hidden = 0
        else:
            edits.append((end, 0, "".join(", " + t for t in inputs.texts)))
    if not edits and not any(o.type is not None for o in outputs):
        return None, named_temp
    return _finish(tuple(outputs), edits, sql, hidden), named_temp


def _finish(outs: tuple[_Out, ...], edits: list[tuple[int, int, str]], sql: str,
            hidden: int) -> ResultPlan:
    """The plan, its edits (client offset, replaced length, new text) applied to ``sql``."""
    if not edits:
        return ResultPlan(outs)
    edits.sort(key=lambda e: e[0])
    parts, last, spans = [], 0, []
    for start, old, text in edits:
        parts.append(sql[last:start])
        parts.append(text)
        last = start + old
        spans.append((start, old, len(text)))
    parts.append(sql[last:])
    return ResultPlan(outs, "".join(parts), hidden, tuple(spans))


def _grouped(tree: exp.Select) -> list[str] | None:
    """The GROUP BY expressions' texts of an aggregate query; None when it is not one."""
    group = tree.args.get("group")
    aggregate = group is not None or tree.args.get("having") is not None or any(
        isinstance(n, exp.AggFunc) and not isinstance(n.parent, exp.Window)
        for e in tree.expressions for n in e.walk() if not isinstance(n, exp.Subquery))
    if not aggregate:
        return None
    return [g.sql(dialect="postgres") for g in (group.expressions if group is not None else [])]


def _approx_scale(node: exp.Expr, typer: Typer) -> str | int | None:
    """How a DOUBLE DuckDB computed for this numeric item gets PostgreSQL's scale."""
    while isinstance(node, exp.Paren):
        node = node.this
    name = call_name(node) if isinstance(node, (exp.Func, exp.Anonymous)) else None
    inner = node.this if isinstance(node, (exp.Window, exp.Filter)) else None
    if inner is not None and isinstance(inner, (exp.Func, exp.Anonymous)):
        name = call_name(inner)
    if isinstance(node, exp.Div) or name in ("avg", "stddev", "stddev_samp", "stddev_pop",
                                             "variance", "var_samp", "var_pop"):
        return "quotient"
    if name in ("round", "trunc") and isinstance(node, exp.Func):
        places = node.args.get("decimals") or node.args.get("expression")
        if places is None:
            return 0
        if isinstance(places, exp.Literal) and places.this.isdigit():
            return int(places.this)
        return "as is"  # a scale not known before the row: DuckDB's digits
    if name in ("ceil", "ceiling", "floor"):
        return 0
    if isinstance(node, exp.Extract):  # PostgreSQL's scales of extract's fields
        unit = node.this.name.lower() if isinstance(node.this, (exp.Var, exp.Column)) else ""
        return 6 if unit in ("epoch", "second", "seconds") else \
            3 if unit in ("milliseconds", "millisecond") else 0
    return None


def _tokens(sql: str) -> list[Any]:
    return PgWritten().tokenize(sql)


def _select_list_end(sql: str) -> int | None:
    """The offset just after the last item of the statement's main select list."""
    tokens = _tokens(sql)
    depth, seen = 0, False
    for i, tok in enumerate(tokens):
        kind = tok.token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and not seen and kind == TokenType.SELECT:
            seen = True
        elif depth == 0 and seen and kind in _STOP:
            return tokens[i - 1].end + 1 if i else None
    return tokens[-1].end + 1 if seen and tokens else None


def _call_span(tokens: list[Any], start: int) -> tuple[int, int, int] | None:
    """(name start, argument text start, end after ')') of the call whose name starts at
    ``start``."""
    for i, tok in enumerate(tokens):
        if tok.start == start and i + 1 < len(tokens) and \
                tokens[i + 1].token_type == TokenType.L_PAREN:
            depth = 0
            for j in range(i + 1, len(tokens)):
                kind = tokens[j].token_type
                if kind == TokenType.L_PAREN:
                    depth += 1
                elif kind == TokenType.R_PAREN:
                    depth -= 1
                    if depth == 0:
                        return tok.start, tokens[i + 1].end + 1, tokens[j].end + 1
            return None
    return None


def _typeof_edits(sql: str, tree: exp.Expr, qualified: exp.Expr, typer: Typer,
                  original: Callable[[exp.Expr], exp.Expr | None]
                  ) -> list[tuple[int, int, str]]:
    calls = [n for n in qualified.find_all(exp.Anonymous) if n.name.lower() == "pg_typeof"
             and len(n.expressions) == 1]
    if not calls:
        return []
    tokens = _tokens(sql)
    edits: list[tuple[int, int, str]] = []
    for call in calls:
        mine = original(call)
        if mine is None or "start" not in mine.meta or \
                any(a is not call and isinstance(a, exp.Anonymous) and
                    a.name.lower() == "pg_typeof" for a in call.iter_expressions()):
            continue
        span = _call_span(tokens, mine.meta["start"])
        if span is None:
            continue
        start, arg_start, end = span
        arg = sql[arg_start:end - 1]
        t = typer.type_of(call.expressions[0], typer.scope_for(call))
        name = T.regtype_name(t) if t is not None else None
        if name is not None:
            text = f"(CASE WHEN ({arg}) IS NULL THEN '{name}' ELSE '{name}' END)"
        else:
            duck = f"pg_typeof({arg})"
            whens = " ".join(f"WHEN '{d}' THEN '{p}'" for d, p in _DUCK_TYPENAMES.items())
            text = (f"(CASE WHEN {duck} LIKE 'decimal%' THEN 'numeric' "
                    f"ELSE CASE {duck} {whens} ELSE {duck} END END)")
        if any(s < end and start < s + o for s, o, _ in edits):
            continue  # nested in another edited call
        edits.append((start, end - start, text))
    return edits
