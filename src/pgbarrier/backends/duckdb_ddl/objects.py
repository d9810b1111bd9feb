"""What a DuckDB database holds, read from DuckDB's own catalog, in PostgreSQL's terms.

Rules this module keeps:

* :func:`snapshot` reads the database's relations (tables, views, pgbarrier's
  materialized views from the marker table), indexes, sequences, columns and constraints
  with one catalog query each, on the caller's cursor: inside the client's transaction it
  sees that transaction's own DDL. Nothing is cached across statements: DDL is rare, and a
  snapshot is the truth of the moment.
* Names are DuckDB's (schema ``main`` is PostgreSQL's ``public``; temporary objects are
  in schema ``pg_temp``); :func:`pg_schema` and :meth:`Rel.shown` give PostgreSQL's.
  pgbarrier's hidden schema and its attached catalog database are never listed.
* A relation's ``kind`` is PostgreSQL's ``relkind``: ``r`` table, ``v`` view, ``m``
  materialized view (a batch-refresh view is a DuckDB table, a streaming one a DuckDB
  view; the marker row says which), ``i`` index, ``S`` sequence. ``pgb_name`` is
  pgbarrier's name of a materialized view (its job's name).
* Object identity follows DuckDB's OIDs, which grow with creation order (PostgreSQL's
  OIDs do too): lists of dependents are reported in that order.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pgbarrier.backends.pgcatalog import MARKER_SCHEMA

__all__ = ["Column", "Constraint", "Index", "Rel", "Snapshot", "pg_schema", "snapshot"]

TEMP = "pg_temp"


def pg_schema(duck_schema: str) -> str:
    return "public" if duck_schema == "main" else duck_schema


@dataclass(frozen=True)
class Column:
    name: str
    type: str            # DuckDB's type text (``INTEGER``, ``VARCHAR``, ``DECIMAL(12,2)``)
    default: str | None  # DuckDB's text of the default expression
    not_null: bool
    index: int           # 0-based position


@dataclass(frozen=True)
class Constraint:
    """A table constraint as DuckDB lists it: ``kind`` ``p``/``u``/``f``/``c``/``n``."""

    kind: str
    columns: tuple[str, ...]
    expression: str | None = None          # a CHECK's
    ref_table: str | None = None           # a foreign key's (same schema: DuckDB's rule)
    ref_columns: tuple[str, ...] = ()
    name: str = ""                         # DuckDB's name (``t_a_key``)


@dataclass(frozen=True)
class Index:
    schema: str
    name: str
    table: str
    sql: str
    oid: int


@dataclass
class Rel:
    schema: str          # DuckDB's (``main``), or ``pg_temp``
    name: str
    kind: str            # r v m S i
    oid: int
    sql: str | None = None          # DuckDB's CREATE statement (tables, views)
    definition: str | None = None   # a batch view's query (PostgreSQL's SQL)
    pgb_name: str | None = None     # pgbarrier's name of a materialized view
    pgb_kind: str | None = None     # "batch" or "streaming"
    columns: list[Column] = field(default_factory=list)
    constraints: list[Constraint] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return self.schema, self.name

    @property
    def temporary(self) -> bool:
        return self.schema == TEMP

    def shown(self, path: tuple[str, ...] = ("public",)) -> str:
        """The name PostgreSQL shows in a message: bare when its schema is on the
        search ``path`` (PostgreSQL's names), else ``schema.name``."""
        schema = pg_schema(self.schema)
        if self.temporary or schema in path:
            return self.name
        return f"{schema}.{self.name}"

    @property
    def described(self) -> str:
        """PostgreSQL's word for the kind (``table``, ``view``...)."""
        return _KIND_WORDS[self.kind]

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None) or \
            next((c for c in self.columns if c.name.lower() == name.lower()), None)


_KIND_WORDS = {"r": "table", "v": "view", "m": "materialized view", "i": "index",
               "S": "sequence"}


@dataclass
class Snapshot:
    rels: dict[tuple[str, str], Rel]
    indexes: list[Index]
    schemas: set[str]

    def find(self, schema: str, name: str) -> Rel | None:
        """The relation ``name`` of DuckDB schema ``schema`` (DuckDB's names compare
        without case, so a name differing only in case is the same relation)."""
        rel = self.rels.get((schema, name))
        if rel is not None:
            return rel
        low = (schema.lower(), name.lower())
        return next((r for k, r in self.rels.items() if (k[0].lower(), k[1].lower()) == low),
                    None)

    def tables(self) -> list[Rel]:
        return [r for r in self.rels.values() if r.kind == "r" or
                (r.kind == "m" and r.pgb_kind == "batch")]

    def indexes_of(self, rel: Rel) -> list[Index]:
        return [i for i in self.indexes if (i.schema, i.table) == rel.key]

    def by_pgb_name(self, name: str) -> Rel | None:
        return next((r for r in self.rels.values() if r.pgb_name == name), None)


_RELS = """
SELECT CASE WHEN temporary THEN 'pg_temp' ELSE schema_name END, table_name, 'r', table_oid,
       sql
FROM duckdb_tables() WHERE (database_name = current_database() OR temporary)
  AND schema_name <> '{marker}'
UNION ALL
SELECT CASE WHEN temporary THEN 'pg_temp' ELSE schema_name END, view_name, 'v', view_oid, sql
FROM duckdb_views() WHERE NOT internal AND (database_name = current_database() OR temporary)
  AND schema_name <> '{marker}'
UNION ALL
SELECT CASE WHEN temporary THEN 'pg_temp' ELSE schema_name END, sequence_name, 'S',
       sequence_oid, NULL
FROM duckdb_sequences() WHERE (database_name = current_database() OR temporary)
  AND schema_name <> '{marker}'
"""
_INDEXES = """
SELECT CASE WHEN database_name = 'temp' THEN 'pg_temp' ELSE schema_name END, index_name,
       table_name, sql, index_oid
FROM duckdb_indexes() WHERE (database_name = current_database() OR database_name = 'temp')
  AND schema_name <> '{marker}' AND sql IS NOT NULL
"""
_COLUMNS = """
SELECT CASE WHEN database_name = 'temp' THEN 'pg_temp' ELSE schema_name END, table_name,
       column_name, data_type, column_default, NOT is_nullable, column_index
FROM duckdb_columns() WHERE (database_name = current_database() OR database_name = 'temp')
  AND schema_name <> '{marker}'
ORDER BY 1, 2, column_index
"""
_CONSTRAINTS = """
SELECT CASE WHEN database_name = 'temp' THEN 'pg_temp' ELSE schema_name END, table_name,
       constraint_type, constraint_column_names, expression, referenced_table,
       referenced_column_names, {name}
FROM {source} WHERE (database_name = current_database() OR database_name = 'temp')
  AND schema_name <> '{marker}' AND constraint_type <> 'NOT NULL'
ORDER BY 1, 2, constraint_index
"""
_MARKERS = f"SELECT schema_name, relname, name, kind, definition FROM {MARKER_SCHEMA}.materialized_views"
_SCHEMAS = ("SELECT schema_name FROM duckdb_schemas() WHERE database_name = current_database() "
            f"AND schema_name <> '{MARKER_SCHEMA}'")
_CONSTRAINT_KINDS = {"PRIMARY KEY": "p", "UNIQUE": "u", "FOREIGN KEY": "f", "CHECK": "c",
                     "NOT NULL": "n"}


def snapshot(cur: Any, named_cons: str | None = None) -> Snapshot:
    """The database's objects as the caller's DuckDB cursor ``cur`` sees them now.
    ``named_cons``: the catalog's relation of constraints with PostgreSQL's names
    (``pgb.named_cons``, the one place that names them), else DuckDB's names are used."""
    rels: dict[tuple[str, str], Rel] = {}
    for schema, name, kind, oid, sql in cur.execute(_RELS.format(marker=MARKER_SCHEMA)).fetchall():
        rels[(schema, name)] = Rel(schema, name, kind, int(oid), sql)
    for schema, rel, pgb, kind, definition in cur.execute(_MARKERS).fetchall():
        found = rels.get((schema, rel))
        if found is not None:
            found.kind, found.pgb_name, found.pgb_kind = "m", pgb, kind
            found.definition = definition
    for schema, table, name, typ, default, not_null, index in cur.execute(
            _COLUMNS.format(marker=MARKER_SCHEMA)).fetchall():
        found = rels.get((schema, table))
        if found is not None:
            found.columns.append(Column(name, typ, default, bool(not_null), int(index)))
    for schema, table, kind, cols, expression, ref, ref_cols, cname in cur.execute(
            _CONSTRAINTS.format(marker=MARKER_SCHEMA,
                                source=named_cons or "duckdb_constraints()",
                                name="pg_name" if named_cons else "constraint_name")
            ).fetchall():
        found = rels.get((schema, table))
        if found is not None:
            found.constraints.append(Constraint(
                _CONSTRAINT_KINDS.get(kind, "?"), tuple(cols or ()), expression, ref,
                tuple(ref_cols or ()), cname or ""))
    indexes = [Index(s, n, t, sql, int(oid)) for s, n, t, sql, oid in
               cur.execute(_INDEXES.format(marker=MARKER_SCHEMA)).fetchall()]
    schemas = {r[0] for r in cur.execute(_SCHEMAS).fetchall()}
    return Snapshot(rels, indexes, schemas)
