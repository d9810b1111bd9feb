"""Who depends on what in a DuckDB database, as PostgreSQL's ``pg_depend`` would say.

DuckDB itself refuses some drops (a sequence a default uses, a table a foreign key
references) and allows others PostgreSQL refuses (a table a view reads: DuckDB's views
are text, bound when read). This module answers PostgreSQL's question — what depends on
this object — from one place: DuckDB's own catalog (foreign keys, column defaults,
indexes) and the stored SQL of each view (a plain or streaming view's DuckDB text, a
batch-refresh view's query as its creator wrote it). Rules it keeps:

* A view's reads are found once per view text and the columns of the relations it names
  (sqlglot's ``qualify``: ``*`` expanded, every column bound to its relation), cached; a
  name it does not qualify resolves in the view's schema, then ``main`` (DuckDB's
  binding). A view whose text cannot be analysed depends on every column of every
  relation it names (never fewer: a drop it would break is refused, not allowed).
* Dependents, with PostgreSQL's words for them (:class:`Dependent`):

  - a view or materialized view reading a relation (or a column of it);
  - a foreign key constraint of a table referencing a table (or a referenced column);
  - a column default calling ``nextval`` of a sequence.

  Owned objects go with their owner silently, as PostgreSQL's "auto" dependencies:
  a table's indexes and constraints, and the sequence of a ``serial`` / identity column
  (named ``<table>_<column>_seq``, its column's default).
* :func:`dependents` answers the transitive closure (what ``CASCADE`` drops), each with
  the object it depends on, in creation order; a cycle cannot loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

from pgbarrier.backends.duckdb_ddl.objects import Rel, Snapshot

__all__ = ["Dependent", "Obj", "dependents", "direct_dependents", "owned_sequences",
           "relations_read", "view_reads"]

#: an object: ("rel", schema, name) | ("fk", schema, table, name) |
#: ("default", schema, table, column) | ("column", schema, table, column)
Obj = tuple[str, ...]

_NEXTVAL = re.compile(r"""(?i)^nextval\('((?:[^']|'')+)'(?:::\w+)?\)$""")


@dataclass(frozen=True)
class Dependent:
    """``obj`` depends on ``on``; ``what`` is PostgreSQL's description of ``obj``,
    ``on_what`` of ``on`` (``view v``, ``table t``, ``column b of table t``)."""

    obj: Obj
    on: Obj
    what: str
    on_what: str
    order: int  # creation order (DuckDB OID) of obj


def _describe(obj: Obj, snap: Snapshot, path: tuple[str, ...]) -> str:
    kind = obj[0]
    if kind == "rel":
        rel = snap.rels[(obj[1], obj[2])]
        return f"{rel.described} {rel.shown(path)}"
    table = snap.rels[(obj[1], obj[2])]
    if kind == "fk":
        return f"constraint {obj[3]} on {table.described} {table.shown(path)}"
    if kind == "default":
        return f"default value for column {obj[3]} of {table.described} {table.shown(path)}"
    return f"column {obj[3]} of {table.described} {table.shown(path)}"


@lru_cache(maxsize=4096)
def view_reads(sql: str, dialect: str, schema: str,
               columns: tuple[tuple[str, str, tuple[str, ...]], ...]
               ) -> frozenset[tuple[str, str, str | None]] | None:
    """What the view text ``sql`` reads: (schema, relation, column) and (schema, relation,
    None) for each relation; unqualified names resolved in ``schema`` then ``main``.
    ``columns`` are the columns of the relations it may name, (schema, name, columns).
    None when the text cannot be analysed."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except Exception:  # noqa: BLE001 - sqlglot raises several kinds
        return None
    if isinstance(tree, exp.Create):
        tree = tree.expression
    if not isinstance(tree, exp.Query):
        return None
    known = {(s.lower(), n.lower()): (s, n) for s, n, _ in columns}

    def place(db: str, name: str) -> tuple[str, str]:
        if db:
            db = "main" if db.lower() == "public" else db
            return known.get((db.lower(), name.lower()), (db, name))
        for s in (schema, "main"):
            if (s.lower(), name.lower()) in known:
                return known[(s.lower(), name.lower())]
        return schema, name

    mapping: dict[str, dict[str, dict[str, str]]] = {}
    for s, n, cols in columns:
        mapping.setdefault(s, {})[n] = {c: "UNKNOWN" for c in cols}
    # unqualified names: the view's schema first, as DuckDB binds them (not a CTE's name)
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    for table in tree.find_all(exp.Table):
        if not table.args.get("db") and isinstance(table.this, exp.Identifier) and \
                table.name and table.name.lower() not in ctes:
            s, _ = place("", table.name)
            table.set("db", exp.to_identifier(s, quoted=True))
    try:
        tree = qualify(tree, schema=mapping or None, dialect=dialect, validate_qualify_columns=False,
                       quote_identifiers=False, identify=False)
        reads: set[tuple[str, str, str | None]] = set()
        for scope in traverse_scope(tree):
            for source in scope.sources.values():
                if isinstance(source, exp.Table) and source.name:
                    reads.add((*place(source.db, source.name), None))
            for col in scope.columns:
                source = scope.sources.get(col.table)
                if isinstance(source, exp.Table) and source.name:
                    reads.add((*place(source.db, source.name), col.name))
    except Exception:  # noqa: BLE001 - sqlglot's optimizer on a text it does not expect
        return None
    return frozenset(reads)


def _reads(rel: Rel, snap: Snapshot) -> set[tuple[str, str, str | None]] | None:
    """What view or batch view ``rel`` reads (see :func:`view_reads`)."""
    if rel.kind == "v" or (rel.kind == "m" and rel.pgb_kind == "streaming"):
        sql, dialect, schema = rel.sql, "duckdb", rel.schema
    elif rel.kind == "m" and rel.definition:
        sql, dialect, schema = rel.definition, "postgres", "main"
    else:
        return set()
    if not sql:
        return set()
    low = sql.lower()
    named = tuple(sorted((r.schema, r.name, tuple(c.name for c in r.columns))
                         for r in snap.rels.values()
                         if r.kind in ("r", "v", "m") and r.key != rel.key
                         and r.name.lower() in low))
    found = view_reads(sql, dialect, schema, named)
    if found is None:  # every column of every relation it names
        return {(s, n, None) for s, n, _ in named} | \
               {(s, n, c) for s, n, cols in named for c in cols}
    return set(found)


def relations_read(rel: Rel, snap: Snapshot) -> list[tuple[str, str]]:
    """The relations view ``rel`` reads (keys of ``snap``; none for a table), in order."""
    found = {(s, n) for s, n, _ in _reads(rel, snap) or ()}
    keys = {r.key for r in (snap.find(s, n) for s, n in found) if r is not None}
    return sorted(keys)


def direct_dependents(obj: Obj, snap: Snapshot, path: tuple[str, ...]) -> list[Dependent]:
    """What depends on ``obj`` directly (a relation, or ("column", schema, table, col))."""
    out: list[Dependent] = []
    if obj[0] not in ("rel", "column"):
        return out
    schema, name = obj[1], obj[2]
    column = obj[3] if obj[0] == "column" else None
    target = snap.rels.get((schema, name))
    if target is None:
        return out
    on_what = _describe(obj, snap, path)
    for rel in sorted(snap.rels.values(), key=lambda r: r.oid):
        if rel.key == target.key:
            continue
        if rel.kind in ("v", "m") and target.kind in ("r", "v", "m"):
            reads = _reads(rel, snap) or set()
            keyed = {(s.lower(), n.lower(), c.lower() if c else None) for s, n, c in reads}
            if (schema.lower(), name.lower(), column.lower() if column else None) in keyed:
                dep = ("rel", rel.schema, rel.name)
                out.append(Dependent(dep, obj, _describe(dep, snap, path), on_what, rel.oid))
        if rel.kind in ("r", "m") and target.kind in ("r", "m"):
            for con in rel.constraints:
                if con.kind != "f" or (con.ref_table or "").lower() != name.lower() \
                        or rel.schema != schema:
                    continue
                if column is not None and column.lower() not in \
                        {c.lower() for c in con.ref_columns}:
                    continue
                dep = ("fk", rel.schema, rel.name, con.name)
                out.append(Dependent(dep, obj, _describe(dep, snap, path), on_what, rel.oid))
        if target.kind == "S" and rel.kind in ("r", "m"):
            for col in rel.columns:
                seq = _nextval(col.default)
                if seq is not None and _same_sequence(seq, target, rel.schema) and \
                        not _owns(rel, col.name, target):
                    dep = ("default", rel.schema, rel.name, col.name)
                    out.append(Dependent(dep, obj, _describe(dep, snap, path), on_what, rel.oid))
    return out


def dependents(starts: list[Obj], snap: Snapshot, path: tuple[str, ...],
               skip: set[Obj] | None = None) -> list[Dependent]:
    """Every object that depends on one of ``starts``, directly or through others, each
    once, with what it depends on: depth first, each object's own dependents right after
    it (PostgreSQL's order); starts themselves, and ``skip``, are not listed."""
    seen: set[Obj] = set(starts) | (skip or set())
    out: list[Dependent] = []
    stack: list[Dependent] = []
    for start in reversed(starts):
        stack += reversed(direct_dependents(start, snap, path))
    while stack:
        dep = stack.pop()
        if dep.obj in seen:
            continue
        seen.add(dep.obj)
        out.append(dep)
        if dep.obj[0] == "rel":
            stack += reversed(direct_dependents(dep.obj, snap, path))
    return out


def _nextval(default: str | None) -> str | None:
    m = _NEXTVAL.match(default.strip()) if default else None
    return m.group(1).replace("''", "'") if m else None


def _same_sequence(written: str, seq: Rel, schema: str) -> bool:
    parts = [p.strip('"') for p in written.split(".")]
    if len(parts) == 1:
        return parts[0].lower() == seq.name.lower() and seq.schema == schema
    return parts[-1].lower() == seq.name.lower() and \
        ("main" if parts[-2].lower() == "public" else parts[-2]).lower() == seq.schema.lower()


def _owns(table: Rel, column: str, seq: Rel) -> bool:
    """The sequence of a serial / identity column (``<table>_<column>_seq``), owned by it."""
    return seq.schema == table.schema and \
        seq.name.lower() == f"{table.name}_{column}_seq".lower()


def owned_sequences(table: Rel, snap: Snapshot, column: str | None = None) -> list[Rel]:
    """The sequences owned by ``table``'s columns (or by ``column`` only)."""
    out = []
    for col in table.columns:
        if column is not None and col.name != column:
            continue
        seq_name = _nextval(col.default)
        if seq_name is None:
            continue
        seq = next((r for r in snap.rels.values() if r.kind == "S"
                    and _same_sequence(seq_name, r, table.schema)), None)
        if seq is not None and _owns(table, col.name, seq):
            out.append(seq)
    return out
