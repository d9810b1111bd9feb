"""``ALTER TABLE`` as PostgreSQL 15 answers it, carried out on DuckDB.

Migration tools (Alembic, Django, Flyway, Rails) emit ``ALTER TABLE`` for every schema
change. DuckDB does few of them when the table has an index or a foreign key points at it,
has no ``ADD CONSTRAINT CHECK | FOREIGN KEY`` nor ``DROP CONSTRAINT``, and answers in its
own words. :func:`plan_alter` decides each subcommand as PostgreSQL does and answers the
DuckDB statements of the result. Rules it keeps:

* Subcommands apply in order to the table's definition as DuckDB's catalog holds it
  (:class:`~.rebuild.TableDef`); PostgreSQL's refusals come first and change nothing
  (``42701`` a column that exists, ``42703`` one that does not, ``42P16`` a second primary
  key or ``DROP NOT NULL`` of a key column, ``42710`` a constraint name in use, ``42704``
  an unknown constraint, ``42804`` a type change with no assignment cast and no
  ``USING``, ``42P07`` a name in use, ``42809`` an action the relation's kind has not,
  pgbarrier's materialized views included), with ``IF EXISTS`` / ``IF NOT EXISTS``
  NOTICEs as PostgreSQL's.
* Data that a new rule would break is PostgreSQL's error, checked before anything
  changes: ``23502 column "c" of relation "t" contains null values``, ``23505 could not
  create unique index`` with its ``Key (...)=(...) is duplicated.``, ``23514 check
  constraint ... is violated by some row``, ``23503`` for a foreign key, with the error
  fields PostgreSQL sets.
* Dependencies are PostgreSQL's (:mod:`.depends`): ``DROP COLUMN`` of a column a view or
  another table's foreign key uses is ``2BP01`` unless ``CASCADE``; ``ALTER COLUMN TYPE``
  of a column a view reads is ``0A000 cannot alter type of a column used by a view or
  rule``; indexes and the table's own constraints on a dropped column go with it. A
  renamed table or column is followed by the views that read it (:mod:`.viewsql`); a
  batch-refresh view reading it is refused (``0A000``: its query is pgbarrier's record,
  kept by the control plane).
* What DuckDB can do in place on this table (no index of its own, no foreign key to it,
  no constraint on the column) runs as DuckDB's ``ALTER TABLE``; anything else builds
  the table again in the same transaction (:mod:`.rebuild`), so ``ADD CONSTRAINT``,
  ``DROP CONSTRAINT`` and changes on indexed tables all work. Either way the result is
  PostgreSQL's. ``varchar(n)`` / ``char(n)`` keep their length check (:mod:`.lengths`).
* ``OWNER TO`` the session's own user, ``SET STATISTICS``, ``VALIDATE CONSTRAINT``,
  ``SET (storage parameters)`` and the like change nothing DuckDB has and are accepted;
  what pgbarrier cannot do is ``0A000`` naming it, never a DuckDB internal error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import sqlglot
from sqlglot import exp

from pgbarrier.backends.duckdb_ddl import depends, lengths
from pgbarrier.backends.duckdb_ddl.drop import Plan, cascade_notice, dependency_error
from pgbarrier.backends.duckdb_ddl.names import Name, duck_schema, find
from pgbarrier.backends.duckdb_ddl.objects import Rel, Snapshot, pg_schema
from pgbarrier.backends.duckdb_ddl.rebuild import (ColumnDef, ForeignKey, TableDef, qualified,
                                                   rebuild_statements, table_def)
from pgbarrier.backends.duckdb_ddl.viewsql import renamed
from pgbarrier.backends.duckdb_sql import quote_ident
from pgbarrier.backends.pgcatalog import MARKER_SCHEMA
from pgbarrier.backends.pgcatalog.declared import CONSTRAINT_NAMES_TABLE
from pgbarrier.errors import FeatureNotSupported, Notice, PgError

__all__ = ["plan_alter", "own_error"]

#: translates a PostgreSQL statement to DuckDB's (backends.duckdb_dialect)
Translate = Callable[[str], str]

_NO_OPS = re.compile(r"(?is)^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?\S+\s+"
                     r"(?:ALTER\s+(?:COLUMN\s+)?\S+\s+SET\s+(?:STATISTICS|STORAGE|COMPRESSION)\b"
                     r"|VALIDATE\s+CONSTRAINT\b|SET\s*\(|RESET\s*\(|CLUSTER\s+ON\b"
                     r"|SET\s+WITHOUT\s+CLUSTER\b|SET\s+(?:LOGGED|UNLOGGED)\b"
                     r"|(?:ENABLE|DISABLE)\s+(?:ALWAYS\s+|REPLICA\s+)?TRIGGER\b"
                     r"|REPLICA\s+IDENTITY\b|SET\s+ACCESS\s+METHOD\b|SET\s+TABLESPACE\b)")
_OWNER = re.compile(r"(?is)^\s*ALTER\s+(?:TABLE|VIEW)\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?\S+\s+OWNER\s+TO"
                    r"\s+(\"(?:[^\"]|\"\")+\"|\w+)\s*;?\s*$")
_SET_SCHEMA = re.compile(r"(?is)^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?\S+\s+SET\s+SCHEMA\b")
_RENAME_CONSTRAINT = re.compile(
    r"(?is)^\s*ALTER\s+TABLE\s+(?P<exists>IF\s+EXISTS\s+)?(?:ONLY\s+)?(?P<table>\S+)\s+"
    r"RENAME\s+CONSTRAINT\s+(?P<old>\"(?:[^\"]|\"\")+\"|\w+)\s+TO\s+"
    r"(?P<new>\"(?:[^\"]|\"\")+\"|\w+)\s*;?\s*$")
_IDENTITY = re.compile(r"(?is)^\s*ALTER\s+TABLE\s+.*\bALTER\s+(?:COLUMN\s+)?\S+\s+"
                       r"(?:ADD\s+GENERATED\b|DROP\s+IDENTITY\b|SET\s+GENERATED\b|"
                       r"RESTART\b|SET\s+(?:INCREMENT|START|MINVALUE|MAXVALUE|CYCLE|NO)\b)")

_T = exp.DataType.Type


def own_error(code: str, message_sql: str, fields: dict[str, str] | None = None) -> str:
    """A DuckDB expression raising pgbarrier's error ``code`` with the message that the
    SQL expression ``message_sql`` computes, and PostgreSQL's error ``fields`` (by their
    one-letter code: ``D`` detail, ``s``/``t``/``c``/``n`` schema, table, column and
    constraint names) as SQL expressions too (:mod:`pgbarrier.backends.duckdb_errors`
    reads them back)."""
    parts = [f"'pgbarrier:{code}:'", f"({message_sql})"]
    for key, value in (fields or {}).items():
        parts += ["chr(30)", f"'{key}='", f"({value})"]
    return f"error({' || '.join(parts)})"


def _lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _name(node: exp.Expr | None) -> str | None:
    if isinstance(node, (exp.Column, exp.Table)):
        node = node.this
    if isinstance(node, exp.Identifier):
        return node.name if node.quoted else node.name.lower()
    return None


@dataclass
class _Work:
    rel: Rel
    snap: Snapshot
    path: tuple[str, ...]
    translate: Translate
    session_user: str
    td: TableDef
    plan: Plan
    #: DuckDB statements when everything can be done in place (None: a rebuild)
    in_place: list[str] | None = field(default_factory=list)
    #: statements to run first (sequences of new serial columns, validations)
    before: list[str] = field(default_factory=list)
    #: statements to run last (views following a rename)
    after: list[str] = field(default_factory=list)
    #: new column -> its value from the old table (SQL over the old columns)
    fill: dict[str, str] = field(default_factory=dict)
    #: old column name -> new, for renamed columns
    renames: dict[str, str] = field(default_factory=dict)
    dropped: set[str] = field(default_factory=set)
    #: foreign keys of other tables to drop (CASCADE): (schema, table) -> names
    drop_fks: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    views_to_drop: list[Rel] = field(default_factory=list)
    new_name: str | None = None
    #: other tables built again with changed definitions (foreign keys following a rename)
    others: dict[tuple[str, str], TableDef] = field(default_factory=dict)

    @property
    def table(self) -> str:
        return qualified(*self.rel.key)

    @property
    def shown(self) -> str:
        return self.rel.name

    def rebuild(self) -> None:
        self.in_place = None

    def step(self, statement: str) -> None:
        if self.in_place is not None:
            self.in_place.append(statement)

    @property
    def indexed(self) -> bool:
        """DuckDB alters a table in place only without an index of its own and without
        a foreign key of another table pointing at it."""
        if self.snap.indexes_of(self.rel):
            return True
        return any(c.kind == "f" and (c.ref_table or "").lower() == self.rel.name.lower()
                   and t.schema == self.rel.schema
                   for t in self.snap.tables() if t.key != self.rel.key
                   for c in t.constraints)

    def constrained(self, column: str) -> bool:
        """``column`` is in a constraint of the table (DuckDB then alters it only by a
        rebuild)."""
        low = column.lower()
        td = self.td
        return (any(low == c.lower() for c in td.primary or ())
                or any(low in {c.lower() for c in u} for u in td.uniques)
                or any(low in {c.lower() for c in cols} for _, cols in td.checks)
                or any(low in {c.lower() for c in fk.columns} for fk in td.fks))


def _not_null_error(rel: Rel, column: str) -> PgError:
    err = PgError(f'column "{column}" of relation "{rel.name}" contains null values',
                  sqlstate="23502")
    err.fields.update({"s": pg_schema(rel.schema), "t": rel.name, "c": column})
    return err


def _null_error(rel: Rel, column: str) -> str:
    """PostgreSQL's 23502 for a NOT NULL that existing rows break, as SQL."""
    message = _lit(f'column "{column}" of relation "{rel.name}" contains null values')
    return own_error("23502", message, {"s": _lit(pg_schema(rel.schema)),
                                        "t": _lit(rel.name), "c": _lit(column)})


def _validate_not_null(work: _Work, column: str) -> None:
    """Fail, when it runs, as PostgreSQL does if ``column`` holds a NULL."""
    work.before.append(f"SELECT {_null_error(work.rel, column)} FROM {work.table} "
                       f"WHERE {quote_ident(_old(work, column))} IS NULL LIMIT 1")


def _old(work: _Work, column: str) -> str:
    """The name ``column`` (a current one) had in the table before this statement."""
    for old, new in work.renames.items():
        if new == column:
            return old
    return column


def plan_alter(sql: str, snap: Snapshot, path: tuple[str, ...], translate: Translate,
               session_user: str) -> Plan | None:
    """The plan of an ``ALTER TABLE`` statement, None when DuckDB should run it as written;
    raises PostgreSQL's refusal."""
    if _NO_OPS.match(sql):
        return Plan()  # changes nothing DuckDB has
    owner = _OWNER.match(sql)
    if owner is not None:
        role = owner.group(1)
        role = role[1:-1].replace('""', '"') if role.startswith('"') else role.lower()
        if role not in (session_user, "current_user", "session_user", "current_role"):
            raise PgError(f'role "{role}" does not exist', sqlstate="42704")
        return Plan()
    renamed_con = _RENAME_CONSTRAINT.match(sql)
    if renamed_con is not None:
        return _rename_constraint(renamed_con, snap, path)
    if _IDENTITY.match(sql):
        raise FeatureNotSupported(
            "changing a column's identity with ALTER TABLE is not supported on the DuckDB "
            "backend", hint="Declare the column GENERATED ... AS IDENTITY (or serial) in its "
                            "CREATE TABLE, or give it a sequence default with SET DEFAULT "
                            "nextval('seq').")
    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except Exception:  # noqa: BLE001 - DuckDB's parser answers what sqlglot cannot read
        return None
    if _SET_SCHEMA.match(sql):
        raise FeatureNotSupported("ALTER TABLE ... SET SCHEMA is not supported on the DuckDB "
                                  "backend",
                                  hint="Create the table in the other schema and copy its "
                                       "rows: CREATE TABLE s.t AS TABLE t.")
    if not isinstance(tree, exp.Alter) or tree.args.get("kind") not in ("TABLE", "VIEW") or \
            not isinstance(tree.this, exp.Table):
        return None
    table = tree.this
    name = Name(_name(table.args.get("db")) if table.args.get("db") else None,
                _name(table.this) or table.name, 0)
    plan = Plan()
    rel = find(snap, name, path)
    if rel is None:
        if tree.args.get("exists"):
            plan.notices.append(Notice(f'relation "{name.name}" does not exist, skipping'))
            return plan
        raise PgError(f'relation "{name.name}" does not exist', sqlstate="42P01")
    actions = tree.args.get("actions") or []
    renames = [a for a in actions if isinstance(a, exp.AlterRename)]
    if tree.args.get("kind") == "VIEW":
        if rel.kind != "v":
            raise PgError(f'"{rel.name}" is not a view', sqlstate="42809")
        if len(renames) != 1 or len(actions) != 1:
            return None  # DuckDB's own ALTER VIEW (or its refusal)
    if rel.kind == "v" and len(renames) == 1 and len(actions) == 1:
        target = renames[0].this
        return _rename_view(rel, snap, path, translate, session_user,
                            _name(target.this if isinstance(target, exp.Table) else target)
                            or "")
    if rel.kind != "r":
        _refuse_kind(rel, actions)
    work = _Work(rel, snap, path, translate, session_user, table_def(rel), plan)
    for action in actions:
        _apply(work, action)
    return _finish(work)


def _word(text: str) -> str:
    return text[1:-1].replace('""', '"') if text.startswith('"') else text.lower()


def _rename_constraint(m: re.Match[str], snap: Snapshot, path: tuple[str, ...]) -> Plan:
    """``ALTER TABLE t RENAME CONSTRAINT a TO b``: the name pgbarrier records for it (the
    constraint itself is DuckDB's, which keeps no name)."""
    table_text = m.group("table")
    parts = [_word(p) for p in re.findall(r'"(?:[^"]|"")+"|[^.]+', table_text)]
    name = Name(parts[-2] if len(parts) > 1 else None, parts[-1], 0)
    old, new = _word(m.group("old")), _word(m.group("new"))
    plan = Plan(tag="ALTER TABLE")
    rel = find(snap, name, path)
    if rel is None:
        if m.group("exists"):
            plan.notices.append(Notice(f'relation "{name.name}" does not exist, skipping'))
            return plan
        raise PgError(f'relation "{name.name}" does not exist', sqlstate="42P01")
    con = next((c for c in rel.constraints if c.name == old and c.kind in "pufc"), None)
    if con is None or lengths.is_length_check(con.expression):
        raise PgError(f'constraint "{old}" for table "{rel.name}" does not exist',
                      sqlstate="42704")
    taken = any(c.name == new for c in rel.constraints) or snap.find(rel.schema, new) or any(
        i.schema == rel.schema and i.name == new for i in snap.indexes)
    if taken:
        raise PgError(f'constraint "{new}" for relation "{rel.name}" already exists',
                      sqlstate="42710")
    cols = "[" + ", ".join(_lit(c) for c in con.columns) + "]::VARCHAR[]"
    records = f"{MARKER_SCHEMA}.{CONSTRAINT_NAMES_TABLE}"
    plan.statements = [
        f"DELETE FROM {records} WHERE schema_name = {_lit(rel.schema)} AND table_name = "
        f"{_lit(rel.name)} AND constraint_name = {_lit(old)}",
        f"INSERT INTO {records} VALUES ({_lit(rel.schema)}, {_lit(rel.name)}, "
        f"{_lit(con.kind)}, {cols}, {_lit(new)})"]
    return plan


def _rename_view(rel: Rel, snap: Snapshot, path: tuple[str, ...], translate: Translate,
                 session_user: str, new: str) -> Plan:
    """``ALTER VIEW | TABLE v RENAME TO w`` of a plain view: DuckDB's rename, and the
    views that read it follow (PostgreSQL's views are bound to it, not to its name)."""
    if snap.find(rel.schema, new) is not None or any(
            i.schema == rel.schema and i.name.lower() == new.lower() for i in snap.indexes):
        raise PgError(f'relation "{new}" already exists', sqlstate="42P07")
    work = _Work(rel, snap, path, translate, session_user, table_def(rel), Plan())
    _follow(work, table=new)
    work.plan.statements = [f"ALTER VIEW {work.table} RENAME TO {quote_ident(new)}",
                            *work.after]
    return work.plan


def _action_name(action: exp.Expr) -> str:
    if isinstance(action, exp.ColumnDef):
        return "ADD COLUMN"
    if isinstance(action, exp.Drop):
        return f"DROP {action.args.get('kind') or 'COLUMN'}"
    if isinstance(action, exp.AlterColumn):
        if action.args.get("dtype") is not None:
            return "ALTER COLUMN TYPE"
        if action.args.get("default") is not None:
            return "ALTER COLUMN SET DEFAULT"
        if action.args.get("drop") and action.args.get("allow_null") is None:
            return "ALTER COLUMN DROP DEFAULT"
        return "ALTER COLUMN SET NOT NULL" if action.args.get("allow_null") is False \
            else "ALTER COLUMN DROP NOT NULL"
    if isinstance(action, exp.AddConstraint):
        return "ADD CONSTRAINT"
    if isinstance(action, exp.RenameColumn):
        return "RENAME COLUMN"
    return "ALTER TABLE"


def _refuse_kind(rel: Rel, actions: list[exp.Expr]) -> None:
    """PostgreSQL's 42809 for an action a view or materialized view has not; pgbarrier's
    views keep the name they were created with on DuckDB (0A000, as ALTER MATERIALIZED
    VIEW ... RENAME)."""
    kinds = {"v": "views", "m": "materialized views", "S": "sequences"}
    for action in actions:
        if isinstance(action, exp.AlterRename) and rel.kind == "m":
            raise FeatureNotSupported(
                "ALTER TABLE ... RENAME is not supported for pgbarrier's materialized views "
                "on the DuckDB backend",
                detail=f'"{rel.name}" is one of pgbarrier\'s views, which keep the name they '
                       "were created with.",
                hint="Drop it and create it again under the new name.")
        if isinstance(action, exp.AlterRename) or (
                rel.kind == "v" and isinstance(action, exp.AlterColumn)
                and action.args.get("dtype") is None
                and action.args.get("allow_null") is None):
            raise FeatureNotSupported(
                f"{_action_name(action)} of a view is not supported through ALTER TABLE on "
                "the DuckDB backend", hint="Use ALTER VIEW, or create the view again.")
        raise PgError(f'ALTER action {_action_name(action)} cannot be performed on relation '
                      f'"{rel.name}"', sqlstate="42809",
                      detail=f"This operation is not supported for {kinds.get(rel.kind, 'this relation')}.")


def _apply(work: _Work, action: exp.Expr) -> None:
    if isinstance(action, exp.ColumnDef):
        _add_column(work, action)
    elif isinstance(action, exp.Drop) and (action.args.get("kind") or "COLUMN") == "COLUMN":
        for col in action.args.get("tables") or [action.this]:
            _drop_column(work, _name(col) or "", bool(action.args.get("exists")),
                         bool(action.args.get("cascade")))
    elif isinstance(action, exp.Drop) and action.args.get("kind") == "CONSTRAINT":
        for con in action.args.get("tables") or [action.this]:
            _drop_constraint(work, _name(con) or "", bool(action.args.get("exists")),
                             bool(action.args.get("cascade")))
    elif isinstance(action, exp.AlterColumn):
        _alter_column(work, action)
    elif isinstance(action, exp.RenameColumn):
        _rename_column(work, _name(action.this) or "", _name(action.args.get("to")) or "",
                       bool(action.args.get("exists")))
    elif isinstance(action, exp.AlterRename):
        target = action.this
        _rename_table(work, _name(target.this if isinstance(target, exp.Table) else target)
                      or "")
    elif isinstance(action, exp.AddConstraint):
        _add_constraint(work, action)
    else:
        raise FeatureNotSupported(f"ALTER TABLE ... {action.sql('postgres')} is not supported "
                                  "on the DuckDB backend")


# -- columns ----------------------------------------------------------------------------


def _column(work: _Work, name: str, *, of_relation: bool = True) -> ColumnDef:
    col = work.td.column(name)
    if col is None:
        suffix = f' of relation "{work.shown}"' if of_relation else ""
        raise PgError(f'column "{name}"{suffix} does not exist', sqlstate="42703")
    return col


def _duck_type(work: _Work, kind: exp.DataType) -> str:
    """DuckDB's type for PostgreSQL's ``kind`` (through the dialect translation)."""
    text = work.translate(f"SELECT CAST(NULL AS {kind.sql('postgres')})")
    tree = sqlglot.parse_one(text, read="duckdb")
    cast = tree.find(exp.Cast)
    if cast is None:
        raise FeatureNotSupported(f"type {kind.sql('postgres')} is not supported on the "
                                  "DuckDB backend")
    return cast.args["to"].sql("duckdb")


def _duck_expr(work: _Work, expr: exp.Expr) -> str:
    """DuckDB's text of PostgreSQL expression ``expr`` (through the dialect translation)."""
    text = work.translate(f"SELECT {expr.sql('postgres')}")
    tree = sqlglot.parse_one(text, read="duckdb")
    if not isinstance(tree, exp.Select) or len(tree.expressions) != 1:
        return expr.sql("duckdb")
    return tree.expressions[0].sql("duckdb")


def _add_column(work: _Work, coldef: exp.ColumnDef) -> None:
    name = _name(coldef.this) or coldef.name
    if work.td.column(name) is not None:
        message = f'column "{name}" of relation "{work.shown}" already exists'
        if coldef.args.get("exists"):
            work.plan.notices.append(Notice(message + ", skipping", sqlstate="42701"))
            return
        raise PgError(message, sqlstate="42701")
    kind = coldef.args.get("kind")
    if not isinstance(kind, exp.DataType):
        raise PgError(f'syntax error at or near "{name}"', sqlstate="42601")
    serial = kind.this in (_T.SERIAL, _T.BIGSERIAL, _T.SMALLSERIAL)
    default: str | None = None
    not_null = False
    constraints: list[exp.Expr] = []
    for c in coldef.constraints:
        k = c.kind
        if isinstance(k, exp.DefaultColumnConstraint):
            default = _duck_expr(work, k.this)
        elif isinstance(k, exp.NotNullColumnConstraint):
            not_null = not k.args.get("allow_null")
        elif isinstance(k, exp.GeneratedAsIdentityColumnConstraint):
            serial = True
        else:
            constraints.append(c)
    if serial:  # a sequence of its own, filling every row (duckdb_dialect's serial rule)
        seq = f"{work.rel.name}_{name}_seq"
        if kind.this in (_T.SERIAL, _T.BIGSERIAL, _T.SMALLSERIAL):
            kind = exp.DataType.build({_T.SERIAL: "INT", _T.BIGSERIAL: "BIGINT",
                                       _T.SMALLSERIAL: "SMALLINT"}[kind.this])
        work.before.append(f"CREATE SEQUENCE IF NOT EXISTS {qualified(work.rel.schema, seq)}")
        default = f"nextval({_lit(_seq_text(work.rel.schema, seq))})"
        not_null = True
    col = ColumnDef(name, _duck_type(work, kind), default, not_null)
    work.td.columns.append(col)
    work.fill[name] = default if default is not None else "NULL"
    check = lengths.column_check(quote_ident(name), kind)
    if check is not None:
        work.td.checks.append((check, (name,)))
    if not_null and default is None:  # every row would get a NULL
        work.before.append(f"SELECT {_null_error(work.rel, name)} FROM {work.table} LIMIT 1")
    # DuckDB cannot fill a NOT NULL column from a sequence in place inside a transaction
    in_place = check is None and not constraints and not serial and not work.indexed
    if in_place:
        text = f"ALTER TABLE {work.table} ADD COLUMN {quote_ident(name)} {col.type}"
        if default is not None:
            text += f" DEFAULT ({default})"
        work.step(text + (" NOT NULL" if not_null else ""))
    else:
        work.rebuild()
    for c in constraints:  # PRIMARY KEY, UNIQUE, REFERENCES, CHECK on the new column
        _add_constraint_body(work, _name(c.this) if c.this is not None else None, c.kind,
                             name)


def _seq_text(schema: str, seq: str) -> str:
    return seq if schema == "main" else f"{quote_ident(schema)}.{quote_ident(seq)}"


def _drop_column(work: _Work, name: str, if_exists: bool, cascade: bool) -> None:
    col = work.td.column(name)
    if col is None:
        message = f'column "{name}" of relation "{work.shown}" does not exist'
        if if_exists:
            work.plan.notices.append(Notice(message + ", skipping"))
            return
        raise PgError(message, sqlstate="42703")
    name = col.name
    old = _old(work, name)
    if work.rel.column(old) is not None:  # a column of the table before this statement
        found = depends.dependents([("column", work.rel.schema, work.rel.name, old)],
                                   work.snap, work.path)
        found = [d for d in found if not (d.obj[0] in ("fk", "default")
                                          and (d.obj[1], d.obj[2]) == work.rel.key)]
        if found and not cascade:
            raise dependency_error(f"column {name} of table {work.rel.shown(work.path)}", found)
        notice = cascade_notice(found)
        if notice is not None:
            work.plan.notices.append(notice)
        _cascade(work, found)
    if len(work.td.columns) == 1:
        raise FeatureNotSupported(f'cannot drop column "{name}", the only column of table '
                                  f'"{work.shown}", on the DuckDB backend',
                                  detail="DuckDB has no tables without columns.")
    low = name.lower()
    td = work.td
    constrained = work.constrained(name)
    td.columns = [c for c in td.columns if c.name != name]
    if td.primary and low in {c.lower() for c in td.primary}:
        td.primary = None
    td.uniques = [u for u in td.uniques if low not in {c.lower() for c in u}]
    td.checks = [(e, cols) for e, cols in td.checks if low not in {c.lower() for c in cols}]
    td.fks = [fk for fk in td.fks if low not in {c.lower() for c in fk.columns}]
    work.fill.pop(name, None)
    work.dropped.add(old)
    for seq in depends.owned_sequences(work.rel, work.snap, old):
        work.after.append(f"DROP SEQUENCE IF EXISTS {qualified(*seq.key)}")
    keys = work.rel.constraints and any(c.kind in ("p", "u", "f")
                                        for c in work.rel.constraints)
    if constrained or work.indexed or keys:  # DuckDB refuses a drop before a key's column
        work.rebuild()
    else:
        work.step(f"ALTER TABLE {work.table} DROP COLUMN {quote_ident(name)}")


def _cascade(work: _Work, found: list[depends.Dependent]) -> None:
    for d in found:
        if d.obj[0] == "rel":
            rel = work.snap.rels[(d.obj[1], d.obj[2])]
            if rel.pgb_name is not None:
                work.plan.pgbarrier_views.append(rel.pgb_name)
            elif rel not in work.views_to_drop:
                work.views_to_drop.append(rel)
        elif d.obj[0] == "fk":
            work.drop_fks.setdefault((d.obj[1], d.obj[2]), set()).add(d.obj[3])


def _readers(work: _Work, column: str | None) -> list[depends.Dependent]:
    """The views (and materialized views) that read the table, or its ``column``."""
    obj = ("rel", work.rel.schema, work.rel.name) if column is None else \
        ("column", work.rel.schema, work.rel.name, column)
    return [d for d in depends.direct_dependents(obj, work.snap, work.path)
            if d.obj[0] == "rel"]


def _alter_column(work: _Work, action: exp.AlterColumn) -> None:
    name = _name(action.this) or ""
    col = _column(work, name)
    name = col.name
    q = quote_ident(name)
    using = action.args.get("using")
    if action.args.get("dtype") is not None:
        _alter_type(work, col, action.args["dtype"],
                    using if isinstance(using, exp.Expr) else None)
    elif action.args.get("default") is not None:
        col.default = _duck_expr(work, action.args["default"])
        work.step(f"ALTER TABLE {work.table} ALTER COLUMN {q} SET DEFAULT ({col.default})")
    elif action.args.get("drop") and action.args.get("allow_null") is None:
        col.default = None
        work.step(f"ALTER TABLE {work.table} ALTER COLUMN {q} DROP DEFAULT")
    elif action.args.get("allow_null") is False:
        if not col.not_null:
            _validate_not_null(work, name)
        col.not_null = True
        if work.indexed:
            work.rebuild()
        else:
            work.step(f"ALTER TABLE {work.table} ALTER COLUMN {q} SET NOT NULL")
    elif action.args.get("allow_null") is True:
        if work.td.primary and name.lower() in {c.lower() for c in work.td.primary}:
            raise PgError(f'column "{name}" is in a primary key', sqlstate="42P16")
        col.not_null = False
        if work.indexed:
            work.rebuild()
        else:
            work.step(f"ALTER TABLE {work.table} ALTER COLUMN {q} DROP NOT NULL")
    else:
        raise FeatureNotSupported(f"ALTER TABLE ... {action.sql('postgres')} is not supported "
                                  "on the DuckDB backend")


def _alter_type(work: _Work, col: ColumnDef, kind: exp.DataType, using: exp.Expr | None
                ) -> None:
    name = col.name
    new_type = _duck_type(work, kind)
    if using is None:
        _require_assignment_cast(work, col, kind, new_type)
        value = f"CAST({quote_ident(_old(work, name))} AS {new_type})"
    else:
        value = f"CAST(({_duck_expr(work, _old_names(work, using))}) AS {new_type})"
    readers = _readers(work, _old(work, name))
    if readers:
        rel = work.snap.rels[(readers[0].obj[1], readers[0].obj[2])]
        raise FeatureNotSupported("cannot alter type of a column used by a view or rule",
                                  detail=f"rule _RETURN on {rel.described} "
                                         f"{rel.shown(work.path)} depends on column \"{name}\"")
    low = name.lower()
    keyed = [fk for fk in work.td.fks if low in {c.lower() for c in fk.columns}] + [
        c for t in work.snap.tables() if t.key != work.rel.key for c in t.constraints
        if c.kind == "f" and (c.ref_table or "").lower() == work.rel.name.lower()
        and low in {x.lower() for x in c.ref_columns}]
    if keyed and new_type != col.type:
        raise FeatureNotSupported(
            f'changing the type of column "{name}", which a foreign key uses, is not supported '
            "on the DuckDB backend",
            detail="DuckDB requires the columns of a foreign key to have the types of the "
                   "columns they reference.",
            hint="Drop the foreign key, change the types on both sides, and add it again.")
    blocked = work.constrained(name) or work.indexed  # DuckDB alters it only by a rebuild
    col.type = new_type
    work.td.checks = [(e, cols) for e, cols in work.td.checks
                      if not (lengths.is_length_check(e) and {c.lower() for c in cols} == {low})]
    check = lengths.column_check(quote_ident(name), kind)
    if check is not None:
        work.td.checks.append((check, (name,)))
    work.fill[name] = value
    if blocked or check is not None or using is not None:
        work.rebuild()  # a too-long value fails the new length check as PostgreSQL's 22001
    else:
        work.step(f"ALTER TABLE {work.table} ALTER COLUMN {quote_ident(name)} TYPE {new_type}")


def _old_names(work: _Work, expr: exp.Expr) -> exp.Expr:
    """``expr`` (over the current column names) over the names before this statement."""
    if not work.renames:
        return expr
    back = {new.lower(): old for old, new in work.renames.items()}
    expr = expr.copy()
    for col in expr.find_all(exp.Column):
        old = back.get(col.name.lower())
        if old is not None and not col.table:
            col.set("this", exp.to_identifier(old, quoted=True))
    return expr


def _require_assignment_cast(work: _Work, col: ColumnDef, kind: exp.DataType,
                             new_type: str) -> None:
    """PostgreSQL's 42804 when no implicit or assignment cast leads to the new type."""
    from pgbarrier.backends.duckdb_types import _oid_of, pg_type_oid
    from pgbarrier.backends.pgcatalog.builtins import CASTS
    from pgbarrier.backends.pgcatalog.types import BUILTIN

    source, target = pg_type_oid(col.type), _oid_of(kind) or pg_type_oid(new_type)
    if source == target or (source == 25 and target in (1043, 1042)):
        return
    if any(s == source and t == target and ctx in ("i", "a") for s, t, _, ctx, _ in CASTS):
        return
    shown = kind.sql("postgres").lower()
    name = BUILTIN[target][1] if target in BUILTIN and not kind.expressions else shown
    raise PgError(f'column "{col.name}" cannot be cast automatically to type {name}',
                  sqlstate="42804",
                  hint=f'You might need to specify "USING {col.name}::{name}".')


def _rename_column(work: _Work, old: str, new: str, if_exists: bool) -> None:
    col = work.td.column(old)
    if col is None:
        raise PgError(f'column "{old}" does not exist', sqlstate="42703")
    if work.td.column(new) is not None:
        raise PgError(f'column "{new}" of relation "{work.shown}" already exists',
                      sqlstate="42701")
    old = col.name
    original = _old(work, old)
    _follow(work, column=(original, new))
    col.name = new
    work.renames[original] = new
    if old in work.fill:
        work.fill[new] = work.fill.pop(old)
    low = old.lower()
    td = work.td
    td.primary = _renamed(td.primary, low, new) if td.primary else None
    td.uniques = [_renamed(u, low, new) for u in td.uniques]
    td.checks = [(_rename_in_expr(e, old, new), _renamed(cols, low, new))
                 for e, cols in td.checks]
    td.fks = [replace(fk, columns=_renamed(fk.columns, low, new)) for fk in td.fks]
    for t in _referencing(work):  # their foreign keys follow the new column name
        td_t = work.others.setdefault(t.key, table_def(t))
        td_t.fks = [replace(fk, ref_columns=_renamed(fk.ref_columns, low, new))
                    if fk.ref_table.lower() == work.rel.name.lower() else fk
                    for fk in td_t.fks]
    if work.indexed:
        work.rebuild()
    else:
        work.step(f"ALTER TABLE {work.table} RENAME COLUMN {quote_ident(old)} TO "
                  f"{quote_ident(new)}")


def _renamed(cols: tuple[str, ...], low: str, new: str) -> tuple[str, ...]:
    return tuple(new if c.lower() == low else c for c in cols)


def _rename_in_expr(expr: str, old: str, new: str) -> str:
    try:
        tree = sqlglot.parse_one(expr, read="duckdb")
    except Exception:  # noqa: BLE001
        return expr
    changed = False
    for col in tree.find_all(exp.Column):
        if col.name.lower() == old.lower() and not col.table:
            col.set("this", exp.to_identifier(new, quoted=True))
            changed = True
    return tree.sql("duckdb") if changed else expr


def _rename_table(work: _Work, new: str) -> None:
    if work.snap.find(work.rel.schema, new) is not None or any(
            i.schema == work.rel.schema and i.name.lower() == new.lower()
            for i in work.snap.indexes):
        raise PgError(f'relation "{new}" already exists', sqlstate="42P07")
    _follow(work, table=new)
    work.new_name = new
    # PostgreSQL keeps a constraint's name when its table is renamed (t_pkey stays t_pkey);
    # the catalog derives unrecorded names from the table's, so each is recorded now
    # (declared.py moves the records to the new name with the table)
    for con in work.rel.constraints:
        if con.kind in ("p", "u", "f", "c") and con.name:
            cols = "[" + ", ".join(_lit(c) for c in con.columns) + "]::VARCHAR[]"
            work.before.append(
                f"INSERT INTO {MARKER_SCHEMA}.{CONSTRAINT_NAMES_TABLE} VALUES "
                f"({_lit(work.rel.schema)}, {_lit(work.rel.name)}, {_lit(con.kind)}, {cols}, "
                f"{_lit(con.name)})")
    referencing = _referencing(work)
    for t in referencing:  # their foreign keys follow the new name (built again)
        td = work.others.setdefault(t.key, table_def(t))
        td.fks = [replace(fk, ref_table=new) if fk.ref_table.lower() == work.rel.name.lower()
                  else fk for fk in td.fks]
    if work.snap.indexes_of(work.rel) or referencing:
        work.rebuild()
    else:
        work.step(f"ALTER TABLE {work.table} RENAME TO {quote_ident(new)}")


def _referencing(work: _Work) -> list[Rel]:
    """The other tables with a foreign key to this one."""
    return [t for t in work.snap.tables() if t.key != work.rel.key and t.schema == work.rel.schema
            and any(c.kind == "f" and (c.ref_table or "").lower() == work.rel.name.lower()
                    for c in t.constraints)]


def _follow(work: _Work, table: str | None = None,
            column: tuple[str, str] | None = None) -> None:
    """Rewrite the views that read the renamed table or column so they keep their
    meaning; a batch-refresh view among them refuses the rename."""
    readers = _readers(work, column[0] if column else None)
    relations = tuple(sorted((r.schema, r.name, tuple(c.name for c in r.columns))
                             for r in work.snap.rels.values() if r.kind in ("r", "v", "m")))
    for dep in readers:
        view = work.snap.rels[(dep.obj[1], dep.obj[2])]
        if view.kind == "m" and view.pgb_kind == "batch":
            what = f'column "{column[0]}"' if column else f'table "{work.shown}"'
            raise FeatureNotSupported(
                f"cannot rename {what}: batch refresh materialized view "
                f'"{view.pgb_name}" reads it', sqlstate="0A000",
                hint="Drop the materialized view, rename, and create it again.")
        text = renamed(view.sql or "", view.schema, relations, work.rel.key,
                       new_table=(work.rel.schema, table) if table else None,
                       column=column[0] if column else None,
                       new_column=column[1] if column else None)
        if text is None:
            raise FeatureNotSupported(
                f"cannot rename: view \"{view.shown(work.path)}\" reads "
                f"{'the table' if table else 'the column'} and pgbarrier cannot follow it "
                "on the DuckDB backend",
                hint="Drop the view, rename, and create it again.")
        work.after.append(text)


# -- constraints ------------------------------------------------------------------------


def _constraint_names(work: _Work) -> set[str]:
    return {c.name for c in work.rel.constraints} | {i.name for i in work.snap.indexes_of(work.rel)}


def _add_constraint(work: _Work, action: exp.AddConstraint) -> None:
    for item in action.expressions:
        if isinstance(item, exp.Constraint):
            for body in item.expressions:
                _add_constraint_body(work, _name(item.this), body, None)
        else:
            _add_constraint_body(work, None, item, None)


def _cols(nodes: list[exp.Expr]) -> tuple[str, ...]:
    return tuple(n for n in (_name(x) for x in nodes) if n)


def _add_constraint_body(work: _Work, cname: str | None, body: exp.Expr,
                         column: str | None) -> None:
    rel, td = work.rel, work.td
    if cname is not None and cname in _constraint_names(work):
        raise PgError(f'constraint "{cname}" for relation "{rel.name}" already exists',
                      sqlstate="42710")
    own = (column,) if column else ()
    if isinstance(body, (exp.PrimaryKeyColumnConstraint, exp.PrimaryKey)):
        cols = own or _cols(body.expressions)
        for c in cols:
            _column(work, c, of_relation=False)
        if td.primary:
            raise PgError(f'multiple primary keys for table "{rel.name}" are not allowed',
                          sqlstate="42P16")
        name = cname or f"{rel.name}_pkey"
        for c in cols:
            col = _column(work, c)
            if not col.not_null:
                _validate_not_null(work, col.name)
                col.not_null = True
        _validate_unique(work, cols, name)
        td.primary = cols
    elif isinstance(body, exp.UniqueColumnConstraint):
        schema = body.this
        cols = own or _cols(schema.expressions if isinstance(schema, exp.Schema) else [])
        for c in cols:
            _column(work, c, of_relation=False)
        name = cname or f"{rel.name}_{'_'.join(cols)}_key"
        _validate_unique(work, cols, name)
        td.uniques.append(cols)
    elif isinstance(body, exp.CheckColumnConstraint):
        expr = body.this
        duck = _duck_expr(work, expr)
        cols = tuple(sorted({_name(c) or c.name for c in expr.find_all(exp.Column)}))
        name = cname or f"{rel.name}_{cols[0] if cols else ''}_check".replace("__", "_")
        old_expr = _duck_expr(work, _old_names(work, expr))
        message = _lit(f'check constraint "{name}" of relation "{rel.name}" is violated by '
                       "some row")
        error = own_error("23514", message, {"s": _lit(pg_schema(rel.schema)),
                                             "t": _lit(rel.name), "n": _lit(name)})
        work.before.append(f"SELECT {error} FROM {work.table} WHERE ({old_expr}) = false "
                           "LIMIT 1")
        td.checks.append((duck, cols))
    elif isinstance(body, (exp.ForeignKey, exp.Reference)):
        _add_foreign_key(work, cname, body, own)
        return
    else:
        raise FeatureNotSupported(f"ADD CONSTRAINT {body.sql('postgres')} is not supported on "
                                  "the DuckDB backend")
    work.rebuild()


def _validate_unique(work: _Work, cols: tuple[str, ...], name: str) -> None:
    """PostgreSQL's 23505 when existing rows repeat a key of the new unique index."""
    rel = work.rel
    olds = [quote_ident(_old(work, c)) for c in cols]
    key = ", ".join(cols)
    values = " || ', ' || ".join(f"coalesce(CAST({c} AS VARCHAR), 'null')" for c in olds)
    detail = f"'Key ({key})=(' || {values} || ') is duplicated.'"
    error = own_error("23505", _lit(f'could not create unique index "{name}"'),
                      {"D": detail, "s": _lit(pg_schema(rel.schema)), "t": _lit(rel.name),
                       "n": _lit(name)})
    present = " AND ".join(f"{c} IS NOT NULL" for c in olds)
    work.before.append(f"SELECT {error} FROM {work.table} WHERE {present} "
                       f"GROUP BY {', '.join(olds)} HAVING count(*) > 1 LIMIT 1")


def _add_foreign_key(work: _Work, cname: str | None, body: exp.Expr,
                     own: tuple[str, ...]) -> None:
    rel, td = work.rel, work.td
    if isinstance(body, exp.ForeignKey):
        cols = _cols(body.expressions)
        ref = body.args.get("reference")
    else:
        cols, ref = own, body
    for opt in body.args.get("options") or []:
        text = str(opt).upper()
        if "CASCADE" in text or "SET NULL" in text or "SET DEFAULT" in text:
            raise FeatureNotSupported("foreign keys with ON DELETE / ON UPDATE CASCADE, SET "
                                      "NULL or SET DEFAULT are not supported by pgbarrier on "
                                      "DuckDB")
    target = ref.this if isinstance(ref, exp.Reference) else None
    if isinstance(target, exp.Schema):
        ref_table_node, ref_cols = target.this, _cols(target.expressions)
    else:
        ref_table_node, ref_cols = target, ()
    if not isinstance(ref_table_node, exp.Table):
        raise FeatureNotSupported("this foreign key is not supported on the DuckDB backend")
    ref_name = Name(_name(ref_table_node.args.get("db")) if ref_table_node.args.get("db")
                    else None, _name(ref_table_node.this) or ref_table_node.name, 0)
    ref_rel = find(work.snap, ref_name, work.path)
    if ref_rel is None and ref_name.name.lower() == rel.name.lower():
        ref_rel = rel
    if ref_rel is None:
        raise PgError(f'relation "{ref_name.name}" does not exist', sqlstate="42P01")
    if ref_rel.schema != rel.schema:
        raise FeatureNotSupported("a foreign key to a table of another schema is not "
                                  "supported on the DuckDB backend")
    if not ref_cols:
        primary = next((c.columns for c in ref_rel.constraints if c.kind == "p"), None)
        if primary is None:
            raise PgError(f'there is no primary key for referenced table "{ref_rel.name}"',
                          sqlstate="42830")
        ref_cols = primary
    for c in cols:
        _column(work, c, of_relation=False)
    name = cname or f"{rel.name}_{'_'.join(cols)}_fkey"
    olds = [quote_ident(_old(work, c)) for c in cols]
    key = ", ".join(cols)
    values = " || ', ' || ".join(f"CAST(x.{c} AS VARCHAR)" for c in olds)
    detail = (f"'Key ({key})=(' || {values} || ') is not present in table "
              f"\"{ref_rel.name}\".'")
    match = " AND ".join(f"r.{quote_ident(rc)} = x.{c}" for rc, c in zip(ref_cols, olds))
    message = f'insert or update on table "{rel.name}" violates foreign key constraint "{name}"'
    error = own_error("23503", _lit(message), {"D": detail, "s": _lit(pg_schema(rel.schema)),
                                               "t": _lit(rel.name), "n": _lit(name)})
    present = " AND ".join(f"x.{c} IS NOT NULL" for c in olds)
    work.before.append(f"SELECT {error} FROM {work.table} x WHERE {present} AND NOT EXISTS "
                       f"(SELECT 1 FROM {qualified(*ref_rel.key)} r WHERE {match}) LIMIT 1")
    td.fks.append(ForeignKey(cols, ref_rel.name, tuple(ref_cols), name))
    work.rebuild()


def _drop_constraint(work: _Work, name: str, if_exists: bool, cascade: bool) -> None:
    rel, td = work.rel, work.td
    con = next((c for c in rel.constraints if c.name == name), None)
    if con is None:
        message = f'constraint "{name}" of relation "{rel.name}" does not exist'
        if if_exists:
            work.plan.notices.append(Notice(message + ", skipping"))
            return
        raise PgError(message, sqlstate="42704")
    low = {c.lower() for c in con.columns}
    if con.kind in ("p", "u"):
        users = [(t, c) for t in work.snap.tables() if t.key != rel.key
                 for c in t.constraints if c.kind == "f"
                 and (c.ref_table or "").lower() == rel.name.lower()
                 and {x.lower() for x in c.ref_columns} == low]
        if users and not cascade:
            found = [depends.Dependent(("fk", t.schema, t.name, c.name), ("index",),
                                       f"constraint {c.name} on table {t.shown(work.path)}",
                                       f"index {name}", t.oid) for t, c in users]
            raise dependency_error(f"constraint {name} on table {rel.shown(work.path)}", found)
        for t, c in users:
            work.drop_fks.setdefault(t.key, set()).add(c.name)
            work.plan.notices.append(Notice(
                f"drop cascades to constraint {c.name} on table {t.shown(work.path)}"))
    if con.kind == "p":
        td.primary = None
    elif con.kind == "u":
        for i, u in enumerate(td.uniques):
            if {c.lower() for c in u} == low:
                del td.uniques[i]
                break
    elif con.kind == "c":
        for i, (e, cols) in enumerate(td.checks):
            if e == con.expression and not lengths.is_length_check(e):
                del td.checks[i]
                break
    elif con.kind == "f":
        td.fks = [fk for fk in td.fks if fk.name != con.name]
    work.rebuild()


# -- the result -------------------------------------------------------------------------


def _finish(work: _Work) -> Plan:
    plan = work.plan
    rel = work.rel
    statements: list[str] = list(work.before)
    for view in sorted(work.views_to_drop, key=lambda r: -r.oid):
        statements.append(f"DROP VIEW IF EXISTS {qualified(*view.key)}")
    if work.drop_fks:
        statements += rebuild_statements(work.snap, {
            key: replace(table_def(work.snap.rels[key]),
                         fks=[fk for fk in table_def(work.snap.rels[key]).fks
                              if fk.name not in names])
            for key, names in work.drop_fks.items() if key != rel.key})
        own = work.drop_fks.get(rel.key)
        if own:
            work.td.fks = [fk for fk in work.td.fks if fk.name not in own]
            work.rebuild()
    if work.in_place is not None:
        statements += work.in_place
    else:
        statements += _rebuild(work)
    statements += work.after
    plan.statements = statements
    plan.tag = "ALTER TABLE"
    return plan


def _rebuild(work: _Work) -> list[str]:
    rel, td = work.rel, work.td
    if work.new_name is not None:
        td.name = work.new_name
    fill = [(c.name, work.fill.get(c.name, quote_ident(_old(work, c.name))))
            for c in td.columns]
    indexes = []
    for index in work.snap.indexes_of(rel):
        text = _index_after(index.sql, work)
        if text is not None:
            indexes.append(text)
    return rebuild_statements(work.snap, {**work.others, rel.key: td}, {rel.key: fill},
                              {rel.key: indexes})


def _index_after(sql: str, work: _Work) -> str | None:
    """An index's CREATE INDEX after the statement: its columns renamed, its table
    renamed; None when it reads a dropped column (PostgreSQL drops it with the column)."""
    try:
        tree = sqlglot.parse_one(sql.rstrip(";"), read="duckdb")
    except Exception:  # noqa: BLE001
        return sql.rstrip(";")
    dropped = {d.lower() for d in work.dropped}
    renames = {k.lower(): v for k, v in work.renames.items()}
    for col in tree.find_all(exp.Column):
        if col.name.lower() in dropped:
            return None
        new = renames.get(col.name.lower())
        if new is not None:
            col.set("this", exp.to_identifier(new, quoted=True))
    if work.new_name is not None:
        for table in tree.find_all(exp.Table):
            if table.name.lower() == work.rel.name.lower():
                table.set("this", exp.to_identifier(work.new_name, quoted=True))
    return tree.sql("duckdb")
