"""``ALTER INDEX`` on DuckDB, as PostgreSQL answers it.

DuckDB has no ``ALTER INDEX``; migration tools rename indexes with it (Alembic's
``op.rename_table`` companions, Django's index renames). Rules this module keeps:

* ``ALTER INDEX [IF EXISTS] i RENAME TO j``: an index made by ``CREATE INDEX`` is created
  again under the new name (DuckDB's own text of it) and the old one dropped, in one
  transaction; the index of a primary key or unique constraint is the constraint's, whose
  name pgbarrier records (:mod:`pgbarrier.backends.pgcatalog.declared`), so the record
  changes. A name in use is ``42P07``, a missing index ``42P01`` (or the ``IF EXISTS``
  NOTICE), as PostgreSQL answers.
* Other ``ALTER INDEX`` actions (storage parameters, tablespace, statistics) change nothing
  DuckDB has and are accepted.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from pgbarrier.backends.duckdb_ddl.drop import Plan
from pgbarrier.backends.duckdb_ddl.names import find_index, read_name, tokens, word
from pgbarrier.backends.duckdb_ddl.objects import Snapshot
from pgbarrier.backends.duckdb_ddl.rebuild import qualified
from pgbarrier.backends.duckdb_sql import literal
from pgbarrier.backends.pgcatalog import MARKER_SCHEMA
from pgbarrier.backends.pgcatalog.declared import CONSTRAINT_NAMES_TABLE
from pgbarrier.errors import Notice, PgError

__all__ = ["plan_alter_index"]


def plan_alter_index(sql: str, snap: Snapshot, path: tuple[str, ...]) -> Plan | None:
    toks = tokens(sql)
    if len(toks) < 3 or word(toks[0]) != "ALTER" or word(toks[1]) != "INDEX":
        return None
    i = 2
    if_exists = False
    if i + 1 < len(toks) and word(toks[i]) == "IF" and word(toks[i + 1]) == "EXISTS":
        if_exists, i = True, i + 2
    read = read_name(toks, i)
    if read is None:
        return None
    name, i = read
    rest = [word(t) for t in toks[i:]]
    if rest[:2] != ["RENAME", "TO"]:
        return Plan(tag="ALTER INDEX")  # storage, tablespace, statistics: nothing here
    target = read_name(toks, i + 2)
    if target is None or target[1] != len(toks):
        return None
    new = target[0].name
    plan = Plan(tag="ALTER INDEX")
    index = find_index(snap, name, path)
    constraint = None
    table = None
    if index is None:
        for rel in snap.tables():
            for con in rel.constraints:
                if con.kind in ("p", "u") and con.name == name.name and \
                        (name.schema is None or rel.schema == name.schema):
                    constraint, table = con, rel
    if index is None and constraint is None:
        if if_exists:
            plan.notices.append(Notice(f'relation "{name.name}" does not exist, skipping'))
            return plan
        raise PgError(f'relation "{name.name}" does not exist', sqlstate="42P01")
    schema = index.schema if index is not None else table.schema  # type: ignore[union-attr]
    taken = snap.find(schema, new) is not None or any(
        x.schema == schema and x.name.lower() == new.lower() for x in snap.indexes) or any(
        c.kind in ("p", "u") and c.name == new for r in snap.tables() if r.schema == schema
        for c in r.constraints)
    if taken:
        raise PgError(f'relation "{new}" already exists', sqlstate="42P07")
    if index is not None:
        tree = sqlglot.parse_one(index.sql.rstrip(";"), read="duckdb")
        idx = tree.this
        if isinstance(idx, exp.Index):
            idx.set("this", exp.to_identifier(new, quoted=True))
        plan.statements += [f"DROP INDEX {qualified(index.schema, index.name)}",
                            tree.sql(dialect="duckdb")]
        return plan
    assert constraint is not None and table is not None
    cols = "[" + ", ".join(literal(c) for c in constraint.columns) + "]::VARCHAR[]"
    records = f"{MARKER_SCHEMA}.{CONSTRAINT_NAMES_TABLE}"
    plan.statements += [
        f"DELETE FROM {records} WHERE schema_name = {literal(table.schema)} AND "
        f"table_name = {literal(table.name)} AND constraint_name = {literal(name.name)}",
        f"INSERT INTO {records} VALUES ({literal(table.schema)}, {literal(table.name)}, "
        f"{literal(constraint.kind)}, {cols}, {literal(new)})"]
    return plan
