"""Rebuilding DuckDB tables: how pgbarrier carries out what DuckDB cannot alter in place.

DuckDB refuses most ``ALTER TABLE`` on a table with an index or one a foreign key
references (``Cannot alter entry ... because there are entries that depend on it``), and
has no ``ADD CONSTRAINT ... CHECK | FOREIGN KEY`` nor ``DROP CONSTRAINT`` at all. PostgreSQL
does all of these. Where DuckDB cannot, pgbarrier gives PostgreSQL's result by building
the table again, inside the statement's transaction. Rules this module keeps:

* A table's definition is read from DuckDB's catalog (:class:`TableDef`: columns with
  DuckDB's type, default and NOT NULL texts; primary key, unique, check and foreign key
  constraints), changed by the caller, and written back as DuckDB DDL: DuckDB's own
  texts are pasted, never re-generated, so nothing is lost in a round trip.
* :func:`rebuild_statements` answers the statements, in order: every table of the set is
  copied to a temporary table, dropped (the tables whose foreign keys reference one of
  them are part of the set: DuckDB drops a referenced table only after them), created
  again from its (new) definition, filled from its copy (the caller's expressions for a
  changed column: ``USING``, a cast), its indexes created again (the caller's texts for
  renamed or dropped columns), and the copies dropped. The statements run in one
  transaction (the caller's), so a failure leaves everything as it was.
* Views read tables by name when queried (DuckDB's), so they keep working; pgbarrier's
  batch-refresh views are tables of their own and are not touched.
* A table with generated columns is not rebuilt (DuckDB lists no generation expression
  in its catalog): 0A000.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, replace

from pgbarrier.backends.duckdb_ddl.objects import TEMP, Rel, Snapshot
from pgbarrier.backends.duckdb_sql import quote_ident
from pgbarrier.errors import FeatureNotSupported

__all__ = ["ColumnDef", "ForeignKey", "TableDef", "create_sql", "qualified",
           "rebuild_statements", "table_def"]

_GENERATED = re.compile(r"\bGENERATED\s+ALWAYS\s+AS\b", re.I)
_COUNTER = itertools.count(1)


def qualified(schema: str, name: str) -> str:
    if schema == TEMP:
        return f"temp.main.{quote_ident(name)}"
    return f"{quote_ident(schema)}.{quote_ident(name)}"


@dataclass
class ColumnDef:
    name: str
    type: str
    default: str | None = None
    not_null: bool = False


@dataclass
class ForeignKey:
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]
    name: str = ""


@dataclass
class TableDef:
    schema: str
    name: str
    columns: list[ColumnDef]
    primary: tuple[str, ...] | None = None
    uniques: list[tuple[str, ...]] = field(default_factory=list)
    #: DuckDB's texts of CHECK expressions, each with the columns it reads
    checks: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    fks: list[ForeignKey] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return self.schema, self.name

    def column(self, name: str) -> ColumnDef | None:
        return next((c for c in self.columns if c.name == name), None) or \
            next((c for c in self.columns if c.name.lower() == name.lower()), None)


def table_def(rel: Rel) -> TableDef:
    """``rel``'s definition as DuckDB's catalog holds it."""
    if rel.sql and _GENERATED.search(rel.sql):
        raise FeatureNotSupported(
            f'altering table "{rel.name}" is not supported on the DuckDB backend: it has '
            "generated columns", hint="Create the table again with the new definition.")
    td = TableDef(rel.schema, rel.name,
                  [ColumnDef(c.name, c.type, c.default, c.not_null) for c in rel.columns])
    for con in rel.constraints:
        if con.kind == "p":
            td.primary = con.columns
        elif con.kind == "u":
            td.uniques.append(con.columns)
        elif con.kind == "c" and con.expression is not None:
            td.checks.append((con.expression, con.columns))
        elif con.kind == "f" and con.ref_table is not None:
            td.fks.append(ForeignKey(con.columns, con.ref_table, con.ref_columns, con.name))
    return td


def _cols(names: tuple[str, ...]) -> str:
    return ", ".join(quote_ident(n) for n in names)


def create_sql(td: TableDef) -> str:
    """DuckDB's ``CREATE TABLE`` for ``td``."""
    parts = []
    for col in td.columns:
        text = f"{quote_ident(col.name)} {col.type}"
        if col.default is not None:
            text += f" DEFAULT ({col.default})"
        if col.not_null:
            text += " NOT NULL"
        parts.append(text)
    if td.primary:
        parts.append(f"PRIMARY KEY ({_cols(td.primary)})")
    parts += [f"UNIQUE ({_cols(u)})" for u in td.uniques]
    parts += [f"CHECK ({expr})" for expr, _ in td.checks]
    parts += [f"FOREIGN KEY ({_cols(fk.columns)}) REFERENCES {quote_ident(fk.ref_table)} "
              f"({_cols(fk.ref_columns)})" for fk in td.fks]
    temp = "TEMPORARY " if td.schema == TEMP else ""
    name = quote_ident(td.name) if td.schema == TEMP else qualified(td.schema, td.name)
    return f"CREATE {temp}TABLE {name} ({', '.join(parts)})"


def _referencing(snap: Snapshot, keys: set[tuple[str, str]]) -> list[Rel]:
    """Tables with a foreign key to one of ``keys``, and theirs in turn."""
    found: list[Rel] = []
    frontier = set(keys)
    seen = set(keys)
    while frontier:
        nxt = set()
        for rel in snap.tables():
            if rel.key in seen:
                continue
            if any(c.kind == "f" and (rel.schema, (c.ref_table or "")) in
                   {(s, n) for s, n in frontier} or c.kind == "f" and
                   (rel.schema, (c.ref_table or "").lower()) in
                   {(s, n.lower()) for s, n in frontier} for c in rel.constraints):
                found.append(rel)
                seen.add(rel.key)
                nxt.add(rel.key)
        frontier = nxt
    return found


def rebuild_statements(snap: Snapshot, new: dict[tuple[str, str], TableDef],
                       fill: dict[tuple[str, str], list[tuple[str, str]]] | None = None,
                       indexes: dict[tuple[str, str], list[str]] | None = None) -> list[str]:
    """The statements that give the tables of ``new`` (by their current key) their new
    definitions, keeping every row. ``fill[key]`` lists (new column, expression over the
    old columns) for a changed table (default: every new column from the old one of its
    name); ``indexes[key]`` the CREATE INDEX texts for its indexes after the change
    (default: as they are)."""
    fill = fill or {}
    indexes = indexes or {}
    defs = dict(new)
    for rel in _referencing(snap, set(new)):
        defs.setdefault(rel.key, table_def(rel))
    order = _creation_order(defs)
    statements: list[str] = []
    keep: dict[tuple[str, str], str] = {}
    for key in order:
        keep[key] = f"pgb_rebuild_{next(_COUNTER)}"
        statements.append(f"CREATE TEMPORARY TABLE {quote_ident(keep[key])} AS "
                          f"SELECT * FROM {qualified(*key)}")
    for key in reversed(order):
        statements.append(f"DROP TABLE {qualified(*key)}")
    for key in order:
        td = defs[key]
        statements.append(create_sql(td))
        pairs = fill.get(key) or [(c.name, quote_ident(c.name)) for c in td.columns
                                  if snap.rels[key].column(c.name) is not None]
        if pairs:
            statements.append(
                f"INSERT INTO {qualified(td.schema, td.name)} ({_cols(tuple(p[0] for p in pairs))}) "
                f"SELECT {', '.join(p[1] for p in pairs)} FROM {quote_ident(keep[key])}")
    for key in order:
        rel = snap.rels[key]
        texts = indexes.get(key)
        if texts is None:
            texts = [i.sql.rstrip(";") for i in snap.indexes_of(rel)]
        statements += texts
    statements += [f"DROP TABLE {quote_ident(name)}" for name in keep.values()]
    return statements


def _creation_order(defs: dict[tuple[str, str], TableDef]) -> list[tuple[str, str]]:
    """Referenced tables before the tables whose foreign keys name them (by the names
    they will have)."""
    order: list[tuple[str, str]] = []
    pending = list(defs)

    def named(key: tuple[str, str]) -> tuple[str, str]:
        return defs[key].schema, defs[key].name.lower()

    while pending:
        for key in pending:
            td = defs[key]
            needs = {(td.schema, fk.ref_table.lower()) for fk in td.fks} - {named(key)}
            if not any(named(k) in needs for k in pending if k != key):
                order.append(key)
                pending.remove(key)
                break
        else:
            order += pending
            break
    return order


def without_fks(td: TableDef, names: set[str]) -> TableDef:
    return replace(td, fks=[fk for fk in td.fks if fk.name not in names])
