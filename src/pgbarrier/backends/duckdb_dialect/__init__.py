"""PostgreSQL's SQL as DuckDB should run it: the dialect translation of the DuckDB backend.

Rules this package keeps:

* :func:`translate` answers the text DuckDB should run for a client statement, or the
  statement itself (the same object) when DuckDB runs it the same. A cheap gate
  (:func:`may_differ`, :mod:`.gate`: substrings that signal a difference) decides whether a
  statement is parsed at all; a gated one is parsed with sqlglot (:mod:`.parse`),
  transformed here, and generated for DuckDB only when a transform fired (or sqlglot's own
  postgres -> duckdb translation of a node in :data:`_TRANSLATED` is needed), so a
  statement merely gated keeps its own text. A statement sqlglot cannot parse (DuckDB's own
  syntax) keeps its text. What DuckDB cannot do as PostgreSQL does is 0A000 naming it.
* Answers are cached per text in a bounded LRU (:data:`CACHE_SIZE`): the same text is never
  translated twice. Where a transform needs a column's type (:mod:`.typeof`: a bare
  ``'{1,2}'`` bound for an ``int[]`` column, ``arr || 4``, ``jsonb_col - 'k'``...) the first
  answer names the tables whose column types decide (``needs_columns``); :func:`translate`
  then asks the session (``column_types``) and translates again, cached per text and types
  (:func:`_translate_typed`). Without column types the first answer stands (DuckDB's
  reading where a type was needed).
* :func:`_transform` is the one place the transforms are applied: statement-level ones
  first (:mod:`.column_defaults`), then every node bottom-up (children before their
  parent, so a parent sees its rewritten operands; each node's type is remembered from
  before its rewrite) through :data:`_REWRITES` in order, the first answer winning.
  A hook for another module's transform goes into :data:`_REWRITES`.
* What each module translates, with PostgreSQL's answers: :mod:`.bytea` (hex text),
  :mod:`.arrays` (array text, ``||``, array functions), :mod:`.jsonb` (operators and
  functions), :mod:`.datetimes` (date/time arithmetic, ``extract``, ``date_trunc``,
  ``justify_*``), :mod:`.formatting` (``to_char``, ``to_date``, ``to_timestamp``,
  ``to_number``), :mod:`.series` (``generate_series`` in a select list),
  :mod:`.column_defaults` (serial / identity, ``now()`` defaults), :mod:`.values`
  (PostgreSQL's ``column1``... names of a ``VALUES`` list), :mod:`.similar` (``SIMILAR
  TO`` patterns), :mod:`.like` (``LIKE``'s default escape), :mod:`.functions`
  (``every``, ``btrim``, ``initcap``), :mod:`.declared`
  (``varchar(n)``/``char(n)``/``bit(n)`` checks and casts, unconstrained ``numeric``, time
  precisions). Known differences are
  listed in each module's rules.
* Integer ``/`` truncates and ``x / 0`` / ``x % 0`` fail with 22012 with no translation:
  the instance runs with ``integer_division = true``
  (:func:`pgbarrier.backends.duckdb_config.lock_down`) and
  :mod:`pgbarrier.backends.duckdb_errors` maps the error. Known difference: ``sum(bigint)``
  is ``numeric`` in PostgreSQL but an integer in DuckDB, so ``sum(b) / n`` truncates here.
* An error a translation raises is cached with its answer and raised as a fresh copy each
  time (callers may adjust its position).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp

from pgbarrier.backends.duckdb_dialect import (
    arrays, bytea, column_defaults, datetimes, declared, formatting, functions, jsonb, like,
    series, similar, values)
from pgbarrier.backends.duckdb_dialect.gate import may_differ
from pgbarrier.backends.duckdb_dialect.parse import parse
from pgbarrier.backends.duckdb_dialect.typeof import Context, build, kind
from pgbarrier.errors import FeatureNotSupported, PgError
from pgbarrier.pgproto import types as pgt

__all__ = ["CACHE_SIZE", "ColumnTypes", "may_differ", "result_types", "translate",
           "translate_cached"]

#: statement texts whose translation is remembered
CACHE_SIZE = 2048

#: a table's (column, DuckDB type) in order, or None when it is not known
ColumnTypes = Callable[[str], "tuple[tuple[str, str], ...] | None"]

#: sqlglot's own postgres -> duckdb translations that make a generated text worth running
_TRANSLATED = (*series.TRANSLATED, *datetimes.TRANSLATED)

#: the node transforms, in order: each answers a replacement or None (see _transform)
_REWRITES: tuple[Callable[[exp.Expr, Context], exp.Expr | None], ...] = (
    declared.rewrite, bytea.rewrite, arrays.rewrite, jsonb.rewrite, datetimes.rewrite,
    formatting.rewrite, series.rewrite, values.rewrite, similar.rewrite, like.rewrite,
    functions.rewrite,
)

#: the column types of the tables a translation depended on: ((table, ((col, type)...))...)
_Columns = tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


@dataclass(frozen=True)
class _Answer:
    sql: str | None = None        # the text to run (None: the client's own)
    error: PgError | None = None  # what the client gets instead
    #: the tables whose column types decide the translation (translate asks for them)
    needs_columns: tuple[str, ...] = ()
    #: result columns (by position) PostgreSQL types jsonb, which DuckDB's JSON cannot say
    jsonb_columns: tuple[int, ...] = ()


def _answer(sql: str, column_types: ColumnTypes | None) -> _Answer:
    answer = translate_cached(sql)
    if answer.needs_columns and column_types is not None:
        known = []
        for table in answer.needs_columns:
            cols = column_types(table)
            if cols:
                known.append((table, tuple(cols)))
        if known:
            answer = _translate_typed(sql, tuple(known))
    return answer


def translate(sql: str, column_types: ColumnTypes | None = None) -> str:
    """The text DuckDB should run for PostgreSQL statement ``sql`` (``sql`` itself, the
    same object, when nothing differs); raises the PgError the client should get.
    ``column_types`` answers a table's columns, asked at each execution of a statement
    whose translation depends on them (the translation is cached by the text and those
    types)."""
    if not may_differ(sql):
        return sql
    answer = _answer(sql, column_types)
    if answer.error is not None:
        raise copy.copy(answer.error)
    return sql if answer.sql is None else answer.sql


def result_types(sql: str, column_types: ColumnTypes | None = None) -> dict[int, int]:
    """PostgreSQL's type OID of the result columns of ``sql`` (by position) where it is
    not DuckDB's: a visibly ``jsonb`` expression (a cast, a ``jsonb_*`` function, a jsonb
    operator) is ``jsonb``, not DuckDB's ``json``."""
    if not may_differ(sql):
        return {}
    return {i: pgt.JSONB for i in _answer(sql, column_types).jsonb_columns}


@lru_cache(maxsize=CACHE_SIZE)
def translate_cached(sql: str) -> _Answer:
    return _translate(sql, None)


@lru_cache(maxsize=256)
def _translate_typed(sql: str, columns: _Columns) -> _Answer:
    return _translate(sql, columns)


def _schema(columns: _Columns) -> dict[str, dict[str, exp.DataType]]:
    schema: dict[str, dict[str, exp.DataType]] = {}
    for table, cols in columns:
        types = schema.setdefault(table.lower(), {})
        for name, typ in cols:
            t = build(typ)
            if t is not None:
                types.setdefault(name.lower(), t)
    return schema


def _translate(sql: str, columns: _Columns | None) -> _Answer:
    tree = parse(sql)
    if tree is None:
        return _Answer()
    ctx = Context(tree, _schema(columns) if columns is not None else None, sql)
    try:
        fired, prelude, tree = _transform(tree, ctx, sql)
    except PgError as err:
        return _Answer(error=err)
    jsonb = _jsonb_columns(tree, ctx)
    needs = tuple(ctx.tables) if ctx.wants_columns else ()
    if not fired and not any(series.in_select_list(n) for n in tree.find_all(*_TRANSLATED)):
        return _Answer(needs_columns=needs, jsonb_columns=jsonb)
    try:
        out = tree.sql(dialect="duckdb", unsupported_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.UnsupportedError as err:
        return _Answer(error=FeatureNotSupported(
            f"{str(err).splitlines()[0]} is not supported by pgbarrier on DuckDB"),
            needs_columns=needs)
    return _Answer(sql="; ".join([*prelude, out]), needs_columns=needs, jsonb_columns=jsonb)


def _jsonb_columns(tree: exp.Expr, ctx: Context) -> tuple[int, ...]:
    """The positions of the select list's visibly jsonb items (none after a ``*``)."""
    select = tree
    while isinstance(select, exp.SetOperation):
        select = select.this
    if isinstance(select, exp.Subquery):
        select = select.unnest()
    if not isinstance(select, exp.Select):
        return ()
    out = []
    for i, item in enumerate(select.expressions):
        if isinstance(item, exp.Star) or isinstance(item, exp.Column) and \
                isinstance(item.this, exp.Star):
            break
        value = item.this if isinstance(item, exp.Alias) else item
        if kind(ctx.type_of(value)) == "jsonb":
            out.append(i)
    return tuple(out)


def _transform(tree: exp.Expr, ctx: Context, sql: str
               ) -> tuple[bool, list[str], exp.Expr]:
    """Rewrite ``tree`` (the one place transforms are applied); (whether anything changed,
    statements to run first, the tree)."""
    prelude = column_defaults.sequences(tree)
    fired = bool(prelude)
    fired = column_defaults.now_defaults(tree, sql) or fired
    fired = declared.length_checks(tree) or fired
    for target, value in _bound_literals(tree, ctx):
        new = bytea.bound_literal(value, target) or arrays.bound_literal(value, target) or \
            jsonb.bound_literal(value, target)
        if new is not None:
            value.replace(new)
            fired = True
    # children before parents: reversed pre-order visits every descendant first
    for node in reversed(list(tree.walk(bfs=False))):
        if node.parent is None and node is not tree:
            continue  # taken out by a rewrite of an enclosing node: not in the tree
        for rewrite in _REWRITES:
            new = rewrite(node, ctx)
            if new is None:
                continue
            if new is not node:
                ctx.remember(new, ctx.type_of(node))
                node.replace(new)
                if node is tree:
                    tree = new
            fired = True
            break
    return fired, prelude, tree


def _bound_literals(tree: exp.Expr, ctx: Context) -> list[tuple[exp.DataType | None, exp.Expr]]:
    """(the column's type, the bare string literal) of each value an INSERT or UPDATE
    writes into a column: ``VALUES`` rows, a ``SELECT``'s list, ``SET col = '...'``."""
    out: list[tuple[exp.DataType | None, exp.Expr]] = []
    if isinstance(tree, exp.Insert):
        target = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
        named = tree.this.expressions if isinstance(tree.this, exp.Schema) else []
        source = tree.expression
        rows: list[list[exp.Expr]] = []
        if isinstance(source, exp.Values):
            rows = [list(r.expressions) for r in source.expressions if isinstance(r, exp.Tuple)]
        else:
            for select in _selects(source):
                rows.append([_unaliased(e) for e in select.expressions])
        if not any(_bare(v) for row in rows for v in row):
            return out
        order = [c.name for c in named] if named else ctx.target_columns(target)
        if order is None:
            return out
        for row in rows:
            for name, value in zip(order, row):
                if _bare(value):
                    out.append((ctx.target_type(target, name), value))
    elif isinstance(tree, exp.Update):
        for eq in tree.expressions:
            if isinstance(eq, exp.EQ) and isinstance(eq.this, exp.Column) and _bare(eq.expression):
                out.append((ctx.target_type(tree.this, eq.this.name), eq.expression))
    return out


def _selects(node: exp.Expr | None) -> list[exp.Select]:
    if isinstance(node, exp.Select):
        return [node]
    if isinstance(node, exp.SetOperation):
        return _selects(node.this) + _selects(node.expression)
    if isinstance(node, exp.Subquery):
        return _selects(node.this)
    return []


def _bare(value: exp.Expr) -> bool:
    """A string literal that may be array text or bytea hex (others need no column type)."""
    return isinstance(value, exp.Literal) and value.is_string and \
        (value.this.lstrip().startswith(("{", "[")) or value.this.startswith("\\x"))


def _unaliased(value: exp.Expr) -> exp.Expr:
    return value.this if isinstance(value, exp.Alias) else value
