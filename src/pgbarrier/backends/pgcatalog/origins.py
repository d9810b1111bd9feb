"""Where a result column comes from: PostgreSQL's RowDescription table OID, attnum, typmod.

PostgreSQL's RowDescription names, for a column that is a plain reference to a table (or
view) column, that relation's OID and the column's attnum, and for every column the type
modifier (``varchar(10)`` 14, ``numeric(12,2)`` ``((12 << 16) | 2) + 4``). DuckDB's result
carries none of that. Rules this module keeps:

* The client's statement is parsed (PostgreSQL's dialect) and qualified by sqlglot against
  the columns of the relations it names, read from the emulated catalog (``pgb.relcols``,
  the rows ``pg_attribute`` serves, read for the relations named only): the table OID, attnum, type and typmod a column gets are
  exactly what ``pg_class`` / ``pg_attribute`` answer for it.
* Origins follow PostgreSQL's ``markTargetListOrigins``: a bare column (aliased or not) of
  a table or view, through subqueries and CTEs in FROM; anything else (expressions,
  aggregates, set operations, VALUES) has table OID 0 and attnum 0. An unqualified table
  is looked up as PostgreSQL does: a temporary one first, then the session's search path.
* The type modifier of a column with an origin is its ``atttypmod``, and a ``varchar(n)``
  / ``char(n)`` column DuckDB stores as ``VARCHAR`` goes out as ``varchar`` / ``bpchar``;
  a cast to a type with a modifier (``::numeric(10,2)``, ``::varchar(5)``,
  ``::timestamp(3)``) gives that modifier, as in PostgreSQL; everything else is -1. A
  declared ``jsonb`` column DuckDB stores as ``JSON`` goes out as ``jsonb``.
* The answer is cached per statement text and search path in the database's
  :class:`OriginCache`, dropped whenever any session runs DDL or ends a transaction that
  ran some (its ``generation``); a statement naming a temporary relation is not cached
  (another session's same text names other relations). The catalog rows of a relation
  are kept per session (:class:`RelationColumns`) for the same generation, so another
  statement text on the same tables costs a parse (under a millisecond), not a read. A statement that does not parse,
  or whose column count differs from DuckDB's result, keeps DuckDB's columns.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
import duckdb
from sqlglot.optimizer.scope import Scope, build_scope
from sqlglot.schema import MappingSchema

from pgbarrier.backends.pgcatalog.declared import DECLARED_STORAGE, declared_type
from pgbarrier.backends.pgcatalog.types import type_oid_of
from pgbarrier.pgproto import types as pgt
from pgbarrier.result import Column
from pgbarrier.sql.colnames import parse_query

__all__ = ["ColumnOrigin", "OriginCache", "RelationColumns", "origins_of", "with_origins"]

_CACHE_SIZE = 1024
#: DuckDB's own columns of the session's relations so named (lower case), in its database
#: and its temporary one; the rest of a catalog row is computed here as catalog.sql's
#: pgb.relcols_named computes it (its macros cost ~20 ms a read: a catalog read follows
#: every DDL)
_COLUMNS_QUERY = (
    "SELECT database_name = 'temp', schema_name, table_name, column_name, column_index, "
    "data_type, numeric_precision, numeric_scale FROM duckdb_columns() "
    "WHERE (database_name = current_database() AND schema_name <> '{marker}' "
    "OR database_name = 'temp' AND schema_name = 'main') "
    "AND list_contains($1::VARCHAR[], lower(table_name)) ORDER BY table_name, column_index")
#: the declared types DuckDB forgets (pgcatalog.declared), of the same relations
_DECLARED_QUERY = (
    "SELECT schema_name, table_name, column_name, type_oid, typmod FROM {marker}.column_types "
    "WHERE list_contains($1::VARCHAR[], lower(table_name))")
def hash_oid(kind: str, nsp: str, name: str) -> int:
    """catalog.sql's ``pgb.hash_oid``: a user object's OID from its kind and names."""
    digest = hashlib.md5(f"{kind}:{nsp}.{name}".encode()).hexdigest()
    return 16384 + int(digest[:8], 16) % 2000000000


def _catalog_rows(cur: Any, names: list[str], marker: str) -> list[CatalogRow]:
    """The catalog rows (see :data:`CatalogRow`) of the relations named ``names``."""
    declared: dict[tuple[str, str, str], tuple[int, int]] = {}
    try:
        for schema, table, column, oid, typmod in cur.execute(
                _DECLARED_QUERY.format(marker=marker), [names]).fetchall():
            declared[(schema, table, column)] = (oid, typmod)
    except duckdb.CatalogException:  # no marker schema (a database made elsewhere)
        pass
    rows = []
    for temp, schema, table, column, index, data_type, precision, scale in cur.execute(
            _COLUMNS_QUERY.format(marker=marker), [names]).fetchall():
        nsp = "pg_temp_1" if temp else ("public" if schema == "main" else schema)
        found = declared.get((schema, table, column)) if not temp else None
        if found is not None and data_type in DECLARED_STORAGE.get(found[0], ()):
            type_oid, typmod = found
        else:
            type_oid = type_oid_of(data_type)
            typmod = ((precision << 16) | scale) + 4 if data_type.startswith("DECIMAL") \
                and not data_type.endswith("[]") else -1
        rows.append((nsp, table, bool(temp), column, int(index), type_oid, typmod,
                     hash_oid("r", nsp, table)))
    return rows


@dataclass(frozen=True)
class ColumnOrigin:
    """One result column's RowDescription fields beyond DuckDB's type."""

    table_oid: int = 0
    attnum: int = 0
    type_oid: int | None = None  # the column's declared type, when it has one
    typmod: int = -1


class OriginCache:
    """Per database: origins per (statement text, search path), and the column types of
    tables per (table, search path) (the dialect translation's, :meth:`columns`), valid
    for one generation."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[str, tuple[str, ...]],
                                   tuple[int, tuple[ColumnOrigin, ...] | None]] = OrderedDict()
        self._columns: OrderedDict[tuple[str, tuple[str, ...]], Any] = OrderedDict()
        self.generation = 0

    def bump(self) -> None:
        """Some session changed (or may have committed a change to) the schema."""
        with self._lock:
            self.generation += 1
            self._entries.clear()
            self._columns.clear()

    def columns(self, key: tuple[str, tuple[str, ...]], generation: int) -> Any:
        """A table's column types another session of the database read at ``generation``
        (None: none kept); only tables of the database itself are kept, never a session's
        temporary ones (:meth:`keep_columns`)."""
        with self._lock:
            return self._columns.get(key) if generation == self.generation else None

    def keep_columns(self, key: tuple[str, tuple[str, ...]], generation: int,
                     columns: Any) -> None:
        with self._lock:
            if generation != self.generation:
                return
            self._columns[key] = columns
            while len(self._columns) > _CACHE_SIZE:
                self._columns.popitem(last=False)

    def get(self, key: tuple[str, tuple[str, ...]]
            ) -> tuple[int, tuple[ColumnOrigin, ...] | None] | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
            return found

    def put(self, key: tuple[str, tuple[str, ...]], generation: int,
            origins: tuple[ColumnOrigin, ...] | None) -> None:
        with self._lock:
            if generation != self.generation:
                return  # DDL ran meanwhile: the answer may be stale already
            self._entries[key] = (generation, origins)
            while len(self._entries) > _CACHE_SIZE:
                self._entries.popitem(last=False)


#: (nspname, relname, temporary, attname, attnum, atttypid, atttypmod, attrelid)
CatalogRow = tuple[str, str, bool, str, int, int, int, int]


def bind_tables(tables: list[exp.Table], rels: dict[tuple[str, str], Any], temps: set[str],
                search_path: Sequence[str]
                ) -> tuple[bool, dict[str, dict[str, dict[str, str]]]]:
    """Qualify each of a statement's ``tables`` with the schema PostgreSQL finds it in
    (``pg_temp`` first, then ``search_path``; ``rels`` keyed by (schema, relation) holds the
    catalog's columns of those that exist), as sqlglot's ``qualify`` needs them; (whether a
    temporary relation is named, the schema mapping for ``qualify``)."""
    named_temp = False
    for t in tables:
        name = _name(t.this)
        schema = _name(t.args.get("db"))
        if schema is None:
            order = (["pg_temp_1"] if name in temps else []) + list(search_path)
            schema = next((s for s in order if (s, name) in rels), None)
            if schema is None:
                continue
            t.set("db", exp.to_identifier(schema, quoted=True))
        t.set("catalog", None)
        named_temp = named_temp or schema == "pg_temp_1"
    mapping: dict[str, dict[str, dict[str, str]]] = {}
    for (nsp, rel), cols in rels.items():
        mapping.setdefault(nsp, {})[rel] = {att: "int" for att in cols}
    return named_temp, mapping


def origins_of(sql: str, search_path: tuple[str, ...], cache: OriginCache,
               lookup: Callable[[list[str]], list[CatalogRow]]
               ) -> tuple[ColumnOrigin, ...] | None:
    """The origin of each result column of the client's ``sql`` (None: unknown);
    ``lookup(names)`` reads the catalog rows of the relations so named (run it before
    the statement: it uses the session's cursor)."""
    key = (sql, search_path)
    generation = cache.generation
    found = cache.get(key)
    if found is not None and found[0] == generation:
        return found[1]
    origins, temporary = _origins(sql, search_path, lookup)
    if not temporary:
        cache.put(key, generation, origins)
    return origins


def with_origins(columns: list[Column], origins: tuple[ColumnOrigin, ...] | None
                 ) -> list[Column]:
    """``columns`` (DuckDB's result) with PostgreSQL's table OID, attnum and typmod."""
    if origins is None or len(origins) != len(columns):
        return columns
    return [_apply(c, o) for c, o in zip(columns, origins)]


def _apply(col: Column, origin: ColumnOrigin) -> Column:
    if origin.type_oid is None and origin.typmod == col.type_modifier \
            and origin.table_oid == col.table_oid and origin.attnum == col.column_number:
        return col  # nothing to add (a computed column: ``SELECT 1``); Column is frozen
    oid = col.type_oid
    if origin.type_oid in (pgt.VARCHAR, pgt.BPCHAR) and oid == pgt.TEXT:
        oid = origin.type_oid  # DuckDB's VARCHAR of a declared varchar(n) / char(n)
    elif origin.type_oid == pgt.JSONB and oid == pgt.JSON:
        oid = pgt.JSONB  # DuckDB's JSON of a declared jsonb: printed as jsonb (pgproto.jsonb)
    typmod = origin.typmod if origin.type_oid in (None, oid) else -1
    return replace(col, type_oid=oid, type_modifier=typmod, table_oid=origin.table_oid,
                   column_number=origin.attnum)


def _name(ident: exp.Expr | None) -> str | None:
    if ident is None:
        return None
    return ident.name if getattr(ident, "quoted", False) else ident.name.lower()


def _origins(sql: str, search_path: tuple[str, ...],
             lookup: Callable[[list[str]], list[CatalogRow]]
             ) -> tuple[tuple[ColumnOrigin, ...] | None, bool]:
    """(the origins of each result column or None, whether a temporary relation is named)."""
    tree = parse_query(sql)
    if not isinstance(tree, (exp.Select, exp.SetOperation)):
        return None, False
    ctes = {_name(c.args.get("alias") and c.args["alias"].this) for c in tree.find_all(exp.CTE)}
    tables = [t for t in tree.find_all(exp.Table)
              if isinstance(t.this, exp.Identifier) and not (t.args.get("db") is None and
                                                             _name(t.this) in ctes)]
    if not tables:
        return _expressions_only(tree), False
    rows = lookup(sorted({t.name for t in tables}))
    rels: dict[tuple[str, str], dict[str, tuple[int, int, int, int]]] = {}
    temps: set[str] = set()
    for nsp, rel, temp, att, attnum, typid, typmod, relid in rows:
        rels.setdefault((nsp, rel), {})[att] = (relid, attnum, typid, typmod)
        if temp:
            temps.add(rel)
    named_temp, mapping = bind_tables(tables, rels, temps, search_path)
    try:
        qualified = qualify(tree, schema=MappingSchema(mapping, dialect="postgres",
                                                       normalize=False),
                            dialect="postgres", validate_qualify_columns=False,
                            quote_identifiers=False, identify=False)
        root = build_scope(qualified)
    except SqlglotError:
        return None, named_temp
    if root is None:
        return None, named_temp
    if isinstance(root.expression, exp.SetOperation):
        return _expressions_only(tree), named_temp
    return tuple(_origin(root, s, rels) for s in root.expression.selects), named_temp


def _expressions_only(tree: exp.Expr) -> tuple[ColumnOrigin, ...] | None:
    """No relation column anywhere: only the casts' typmods."""
    selects = tree.selects if isinstance(tree, exp.Select) else \
        tree.this.selects if isinstance(tree, exp.SetOperation) and \
        isinstance(tree.this, exp.Select) else None
    if selects is None or any(isinstance(s, exp.Star) for s in selects):
        return None
    return tuple(_cast_origin(s.unalias()) for s in selects)


def _cast_origin(node: exp.Expr) -> ColumnOrigin:
    if isinstance(node, exp.Cast) and isinstance(node.to, exp.DataType):
        found = declared_type(node.to)
        if found is not None:
            return ColumnOrigin(type_oid=found[0], typmod=found[1])
    return ColumnOrigin()


def _origin(scope: Scope, select: exp.Expr,
            rels: dict[tuple[str, str], dict[str, tuple[int, int, int, int]]],
            depth: int = 0) -> ColumnOrigin:
    node = select.unalias()
    if not isinstance(node, exp.Column) or depth > 32:
        return _cast_origin(node)
    source = scope.sources.get(node.table)
    if isinstance(source, exp.Table):
        found = rels.get((source.db, source.name), {}).get(node.name)
        if found is None:
            return ColumnOrigin()
        relid, attnum, typid, typmod = found
        return ColumnOrigin(relid, attnum, typid, typmod)
    if isinstance(source, Scope) and isinstance(source.expression, exp.Select):
        for inner in source.expression.selects:
            if inner.alias_or_name == node.name:
                return _origin(source, inner, rels, depth + 1)
    return ColumnOrigin()


class RelationColumns:
    """Per session: the catalog rows of relations by (lower-case) name, read on ``cur``
    only for names not read since the database's last DDL (``cache.generation``); a new
    statement text naming known relations then costs a parse, not a read of DuckDB's columns (~1 ms).
    Per session, as a temporary relation is only its session's."""

    def __init__(self, cache: OriginCache, marker: str) -> None:
        self._cache = cache
        self._marker = marker  # the schema of pgbarrier's markers (declared types)
        self._generation = -1
        self._rows: dict[str, list[CatalogRow]] = {}

    def lookup(self, cur: Any) -> Callable[[list[str]], list[CatalogRow]]:
        """``lookup`` for :func:`origins_of` on the DuckDB cursor ``cur``."""
        def read(names: Sequence[str]) -> list[CatalogRow]:
            generation = self._cache.generation
            if generation != self._generation:
                self._rows, self._generation = {}, generation
            wanted = {n.lower() for n in names}
            missing = sorted(wanted - self._rows.keys())
            if missing:  # DuckDB's own catalog and the markers: the emulation is not needed
                for n in missing:
                    self._rows[n] = []
                for row in _catalog_rows(cur, missing, self._marker):
                    self._rows[row[1].lower()].append(row)
            return [row for n in sorted(wanted) for row in self._rows[n]]
        return read
