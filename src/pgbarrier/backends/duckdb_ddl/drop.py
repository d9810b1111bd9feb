"""``DROP TABLE | VIEW | INDEX | SEQUENCE | SCHEMA`` with PostgreSQL's rules on DuckDB.

DuckDB drops a table a view reads (the view breaks later), drops pgbarrier's views as if
they were its own tables and views, and names kinds and dependencies in its own words.
:func:`plan_drop` decides a DROP as PostgreSQL 15 does, from a snapshot of the database
(:mod:`.objects`) and its dependencies (:mod:`.depends`), and answers the DuckDB
statements that carry it out. Rules it keeps:

* Each name resolves as PostgreSQL resolves it (:mod:`.names`). A missing one is
  ``42P01 table "x" does not exist`` (``3F000`` for a missing schema), or with
  ``IF EXISTS`` PostgreSQL's NOTICE ``..., skipping``.
* The wrong kind is ``42809 "x" is not a table`` with PostgreSQL's HINT naming the right
  statement (``Use DROP MATERIALIZED VIEW to remove a materialized view.``), even with
  ``IF EXISTS``, and changes nothing: pgbarrier's batch-refresh and streaming views are
  materialized views, not the DuckDB tables and views they are stored as.
* ``RESTRICT`` (the default) refuses when anything outside the drop depends on it:
  ``2BP01 cannot drop table t because other objects depend on it`` with PostgreSQL's
  DETAIL (one line per dependent, ``view v depends on table t``, at most 100) and HINT.
  ``CASCADE`` drops the dependents too, with PostgreSQL's NOTICE (``drop cascades to
  ...``): views, materialized views, foreign key constraints (their table is rebuilt
  without them, :mod:`.rebuild`), column defaults (``DROP DEFAULT``).
* Owned objects go along silently, as in PostgreSQL: a table's indexes and constraints,
  the sequences of its serial / identity columns.
* pgbarrier's own materialized views that a CASCADE reaches are listed in
  :attr:`Plan.pgbarrier_views`: the control plane drops them (their jobs durably) before
  the rest runs; the backend never drops them behind its back.
* Everything a plan runs is one transaction (the client's, when it is in one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot.tokens import TokenType

from pgbarrier.backends.duckdb_ddl import depends
from pgbarrier.backends.duckdb_ddl.depends import Dependent, Obj
from pgbarrier.backends.duckdb_ddl.names import (Name, duck_schema, find, find_index, read_name,
                                                 schema_exists, tokens, word)
from pgbarrier.backends.duckdb_ddl.objects import TEMP, Rel, Snapshot, pg_schema
from pgbarrier.backends.duckdb_ddl.rebuild import rebuild_statements, table_def, without_fks
from pgbarrier.backends.duckdb_sql import quote_ident
from pgbarrier.errors import Notice, PgError

__all__ = ["Plan", "plan_drop", "dependency_error", "cascade_notice", "MAX_REPORTED"]

#: PostgreSQL's MAX_REPORTED_DEPS
MAX_REPORTED = 100

_KINDS = {"TABLE": "r", "VIEW": "v", "INDEX": "i", "SEQUENCE": "S", "SCHEMA": "n"}
_WORDS = {"r": "table", "v": "view", "m": "materialized view", "i": "index", "S": "sequence"}
_ARTICLE = {"index": "an index"}
_HINTS = {"r": "Use DROP TABLE to remove a table.", "v": "Use DROP VIEW to remove a view.",
          "m": "Use DROP MATERIALIZED VIEW to remove a materialized view.",
          "i": "Use DROP INDEX to remove an index.",
          "S": "Use DROP SEQUENCE to remove a sequence."}


@dataclass
class Plan:
    """What a DDL statement does on DuckDB: ``statements`` in one transaction (after the
    control plane dropped ``pgbarrier_views``), ``notices`` for the client."""

    statements: list[str] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    #: the command tag, when not the statement's own first words
    tag: str | None = None
    pgbarrier_views: list[str] = field(default_factory=list)
    #: tables whose foreign keys to drop (rebuilt without them): (schema, table) -> names
    drop_fks: dict[tuple[str, str], set[str]] = field(default_factory=dict)


def dependency_error(what: str, found: list[Dependent], several: bool = False) -> PgError:
    """PostgreSQL's 2BP01 for dropping ``what`` (``table t``) that ``found`` depend on."""
    lines = [f"{d.what} depends on {d.on_what}" for d in found]
    if len(lines) > MAX_REPORTED:
        lines = lines[:MAX_REPORTED] + [
            f"and {len(found) - MAX_REPORTED} other objects (see server log for list)"]
    message = ("cannot drop desired object(s) because other objects depend on them"
               if several else f"cannot drop {what} because other objects depend on it")
    return PgError(message, sqlstate="2BP01", detail="\n".join(lines),
                   hint="Use DROP ... CASCADE to drop the dependent objects too.")


def cascade_notice(found: list[Dependent]) -> Notice | None:
    if not found:
        return None
    if len(found) == 1:
        return Notice(f"drop cascades to {found[0].what}")
    lines = [f"drop cascades to {d.what}" for d in found]
    if len(lines) > MAX_REPORTED:
        lines = lines[:MAX_REPORTED] + [
            f"and {len(found) - MAX_REPORTED} other objects (see server log for list)"]
    return Notice(f"drop cascades to {len(found)} other objects", detail="\n".join(lines))


@dataclass(frozen=True)
class DropStatement:
    kind: str                # r v i S n
    names: tuple[Name, ...]
    if_exists: bool
    cascade: bool


def parse(sql: str) -> DropStatement | None:
    """``DROP <kind> [CONCURRENTLY] [IF EXISTS] name [, ...] [CASCADE | RESTRICT]``; None
    for anything else (DuckDB's own DROP runs it)."""
    toks = tokens(sql)
    if len(toks) < 3 or word(toks[0]) != "DROP":
        return None
    kind = _KINDS.get(word(toks[1]))
    i = 2
    if word(toks[1]) == "MATERIALIZED" and word(toks[2]) == "VIEW":
        kind, i = "m", 3
    if kind is None:
        return None
    if kind == "i" and i < len(toks) and word(toks[i]) == "CONCURRENTLY":
        i += 1
    if_exists = False
    if i + 1 < len(toks) and word(toks[i]) == "IF" and word(toks[i + 1]) == "EXISTS":
        if_exists, i = True, i + 2
    names: list[Name] = []
    while i < len(toks):
        read = read_name(toks, i)
        if read is None:
            return None
        name, i = read
        names.append(name)
        if i < len(toks) and toks[i].token_type == TokenType.COMMA:
            i += 1
            continue
        break
    cascade = False
    if i < len(toks) and word(toks[i]) in ("CASCADE", "RESTRICT"):
        cascade, i = word(toks[i]) == "CASCADE", i + 1
    if i != len(toks) or not names:
        return None
    return DropStatement(kind, tuple(names), if_exists, cascade)


def _missing(kind: str, name: Name, if_exists: bool, notices: list[Notice]) -> None:
    """PostgreSQL's answer for a name that names nothing (an index's is 42704)."""
    word_ = _WORDS[kind]
    if if_exists:
        notices.append(Notice(f'{word_} "{name.name}" does not exist, skipping'))
        return
    raise PgError(f'{word_} "{name.name}" does not exist',
                  sqlstate="42704" if kind == "i" else "42P01")


def _wrong_kind(kind: str, rel_kind: str, name: str) -> PgError:
    word_ = _WORDS[kind]
    return PgError(f'"{name}" is not {_ARTICLE.get(word_, "a " + word_)}', sqlstate="42809",
                   hint=_HINTS[rel_kind])


def _rel_obj(rel: Rel) -> Obj:
    return ("rel", rel.schema, rel.name)


def plan_drop(sql: str, snap: Snapshot, path: tuple[str, ...]) -> Plan | None:
    """The plan for a DROP statement, None when it is not one this module decides;
    raises PostgreSQL's error when PostgreSQL would refuse it."""
    stmt = parse(sql)
    if stmt is None:
        return None
    plan = Plan()
    if stmt.kind == "n":
        return _plan_schema_drop(stmt, snap, path, plan)
    targets: list[Rel] = []
    index_drops: list[str] = []
    for name in stmt.names:
        if name.schema is not None and not schema_exists(snap, name.schema):
            if stmt.if_exists:
                plan.notices.append(Notice(f'schema "{name.schema}" does not exist, skipping'))
                continue
            raise PgError(f'schema "{name.schema}" does not exist', sqlstate="3F000")
        if stmt.kind == "i":
            index = find_index(snap, name, path)
            if index is not None:
                index_drops.append(f"DROP INDEX {_qualified(index.schema, index.name)}")
                continue
        rel = find(snap, name, path)
        if rel is None:
            _missing(stmt.kind, name, stmt.if_exists, plan.notices)
            continue
        if rel.kind != stmt.kind:
            raise _wrong_kind(stmt.kind, rel.kind, name.name)
        if rel not in targets:
            targets.append(rel)
    if not targets:
        plan.statements += index_drops
        return plan
    starts = [_rel_obj(r) for r in targets]
    found = depends.dependents(starts, snap, path)
    outside = [d for d in found if not _inside(d.obj, targets)]
    if outside and not stmt.cascade:
        first = targets[0]
        raise dependency_error(f"{first.described} {first.shown(path)}", outside,
                               several=len(targets) > 1)
    notice = cascade_notice(outside)
    if notice is not None:
        plan.notices.append(notice)
    _carry_out(plan, targets, outside, snap)
    plan.statements += index_drops
    return plan


def _inside(obj: Obj, targets: list[Rel]) -> bool:
    """``obj`` is one of the targets, or part of one (its constraint, its default)."""
    return any((obj[1], obj[2]) == t.key for t in targets)


def _qualified(schema: str, name: str) -> str:
    if schema == TEMP:
        return f"temp.main.{quote_ident(name)}"
    return f"{quote_ident(schema)}.{quote_ident(name)}"


def _carry_out(plan: Plan, targets: list[Rel], cascaded: list[Dependent],
               snap: Snapshot) -> None:
    """The DuckDB statements: dependents first (the latest made first), then the targets
    in an order DuckDB accepts (a table before the tables its foreign keys reference),
    then the sequences the dropped tables owned."""
    rels = [snap.rels[(d.obj[1], d.obj[2])] for d in cascaded if d.obj[0] == "rel"]
    dropped = {r.key for r in rels} | {t.key for t in targets}
    for d in cascaded:
        if d.obj[0] == "fk" and (d.obj[1], d.obj[2]) not in dropped:
            plan.drop_fks.setdefault((d.obj[1], d.obj[2]), set()).add(d.obj[3])
    if plan.drop_fks:  # DuckDB has no DROP CONSTRAINT: those tables are built again
        plan.statements += rebuild_statements(snap, {
            key: without_fks(table_def(snap.rels[key]), names)
            for key, names in plan.drop_fks.items()})
    for d in cascaded:
        if d.obj[0] == "default" and (d.obj[1], d.obj[2]) not in dropped:
            plan.statements.append(f"ALTER TABLE {_qualified(d.obj[1], d.obj[2])} "
                                   f"ALTER COLUMN {quote_ident(d.obj[3])} DROP DEFAULT")
    everything = []
    for rel in [*rels, *targets]:
        if rel.pgb_name is not None:  # the control plane's to drop, with its job
            plan.pgbarrier_views.append(rel.pgb_name)
        else:
            everything.append(rel)
    for rel in _drop_order(everything):
        plan.statements.append(_drop_sql(rel, guarded=rel not in targets))
        for seq in depends.owned_sequences(rel, snap) if rel.kind == "r" else ():
            if seq.key not in dropped:
                dropped.add(seq.key)
                plan.statements.append(f"DROP SEQUENCE IF EXISTS {_qualified(*seq.key)}")


def _drop_sql(rel: Rel, guarded: bool = False) -> str:
    """DuckDB's DROP of ``rel`` (``guarded``: a dependent, ``IF EXISTS``)."""
    kind = {"r": "TABLE", "v": "VIEW", "S": "SEQUENCE"}.get(rel.kind)
    if rel.kind == "m":
        kind = "TABLE" if rel.pgb_kind == "batch" else "VIEW"
    return f"DROP {kind} {'IF EXISTS ' if guarded else ''}{_qualified(*rel.key)}"


def _drop_order(rels: list[Rel]) -> list[Rel]:
    """Views first (latest made first: a view before the views it reads), then tables,
    each before the tables its foreign keys reference, then sequences."""
    views = sorted((r for r in rels if r.kind in ("v", "m") and not _is_table(r)),
                   key=lambda r: -r.oid)
    tables = [r for r in rels if _is_table(r)]
    ordered: list[Rel] = []
    pending = list(tables)
    while pending:
        for rel in pending:
            referencing = [t for t in pending if t is not rel and any(
                c.kind == "f" and (c.ref_table or "").lower() == rel.name.lower()
                and t.schema == rel.schema for c in t.constraints)]
            if not referencing:
                ordered.append(rel)
                pending.remove(rel)
                break
        else:  # a cycle of foreign keys: DuckDB cannot make one, take the rest as they are
            ordered += pending
            break
    sequences = [r for r in rels if r.kind == "S"]
    return views + ordered + sequences


def _is_table(rel: Rel) -> bool:
    return rel.kind == "r" or (rel.kind == "m" and rel.pgb_kind == "batch")


def _plan_schema_drop(stmt: DropStatement, snap: Snapshot, path: tuple[str, ...],
                      plan: Plan) -> Plan:
    """``DROP SCHEMA``: what is in it depends on it (PostgreSQL lists each); with CASCADE
    those go, and whatever outside depends on them."""
    schemas: list[str] = []
    for name in stmt.names:
        if name.schema is not None:
            raise PgError(f"improper qualified name (too many dotted names): {name}",
                          sqlstate="42601")
        duck = duck_schema(name.name)
        if duck not in snap.schemas:
            if stmt.if_exists:
                plan.notices.append(Notice(f'schema "{name.name}" does not exist, skipping'))
                continue
            raise PgError(f'schema "{name.name}" does not exist', sqlstate="3F000")
        if duck == "main":
            return plan  # the caller's own refusal of DROP SCHEMA public stands
        schemas.append(duck)
    if not schemas:
        return plan
    members = sorted((r for r in snap.rels.values() if r.schema in schemas),
                     key=lambda r: r.oid)
    inside = {_rel_obj(r) for r in members}
    found: list[Dependent] = []
    seen: set[Obj] = set()
    for rel in members:  # each depends on its schema; then what outside depends on it
        obj = _rel_obj(rel)
        seen.add(obj)
        found.append(Dependent(obj, ("schema", rel.schema),
                               f"{rel.described} {rel.shown(path)}",
                               f"schema {pg_schema(rel.schema)}", rel.oid))
        for dep in depends.dependents([obj], snap, path, skip=seen | inside):
            seen.add(dep.obj)
            found.append(dep)
    if found and not stmt.cascade:
        raise dependency_error(f"schema {pg_schema(schemas[0])}", found,
                               several=len(schemas) > 1)
    notice = cascade_notice(found)
    if notice is not None:
        plan.notices.append(notice)
    targets = [snap.rels[(d.obj[1], d.obj[2])] for d in found if d.obj[0] == "rel"]
    _carry_out(plan, targets, [d for d in found if d.obj[0] != "rel"], snap)
    plan.statements += [f"DROP SCHEMA {quote_ident(s)} CASCADE" for s in schemas]
    return plan
