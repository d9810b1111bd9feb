"""What DuckDB forgets of a table's declaration: the PostgreSQL column types ``varchar(n)``,
``char(n)`` and ``jsonb``, the precision of ``timestamp(p)``, ``timestamptz(p)`` and
``time(p)``, identity columns, and the names the client gave its constraints.

DuckDB stores ``varchar(120)``, ``char(3)`` and ``text`` all as ``VARCHAR``, and ``jsonb`` as
``JSON``, so a catalog read from DuckDB alone says ``text`` and ``json`` where PostgreSQL says
``character varying(120)`` and ``jsonb`` (SQLAlchemy reflection, Alembic autogenerate and
psql's ``\\d`` then differ from PostgreSQL). Rules this module keeps:

* After a ``CREATE TABLE`` or ``ALTER TABLE`` that succeeded, the declared type of each
  column whose type DuckDB forgets (for ``CREATE TABLE ... AS`` and ``SELECT INTO``: the
  declared type of the query's result column, :func:`made_from_query`, but without a
  length: pgbarrier checks lengths with the checks a CREATE TABLE's declared columns get,
  which a table DuckDB makes from a query does not have, so ``varchar(n)`` is recorded as
  ``character varying`` and ``char(n)`` not at all) is written to the hidden table
  ``pgbarrier.column_types`` of the user database (schema as DuckDB names it, table,
  column, PostgreSQL type OID, type modifier), on the session's cursor: in the client's
  transaction when there is one (a ROLLBACK drops the rows with the table). ``DROP TABLE``,
  ``ALTER TABLE ... RENAME`` / ``RENAME COLUMN`` / ``DROP COLUMN`` / ``ALTER COLUMN ... TYPE``
  keep the rows in step.
* The catalog (``pgb.cols`` in catalog.sql) takes a row only while DuckDB's type of that
  column is still the one the declared type is stored as (``VARCHAR`` for ``varchar(n)``
  and ``char(n)``, ``JSON`` for ``jsonb``, and their arrays; a ``TIMESTAMP[_S|_MS|_NS]``,
  ``TIMESTAMP WITH TIME ZONE`` or ``TIME`` for a precision), so a row left behind by a
  change made some other way can never give a column a type it does not have.
* DuckDB names every constraint itself (``CONSTRAINT uq_x UNIQUE (a, b)`` is ``t_a_b_key``
  there), so a ``CREATE TABLE`` that names one also writes (schema, table, kind ``p``/``u``/
  ``f``/``c``, columns, name) to the hidden ``pgbarrier.constraint_names``; the catalog
  (``pgb.named_cons`` in catalog.sql) gives a constraint, and the index of a primary key or
  unique constraint, the recorded name of its kind and columns, else PostgreSQL's default
  (SQLAlchemy's reflection and Alembic's autogenerate compare these names). A CHECK's
  columns are those its expression reads, as DuckDB lists them. ``ALTER TABLE ... ADD
  CONSTRAINT name`` (and a named constraint of an added column) records its name the same
  way; ``DROP CONSTRAINT name`` forgets it. ``DROP TABLE`` and the
  table and column renames keep these rows in step (DuckDB refuses to drop a column a
  constraint uses, and has no ``ADD CONSTRAINT``, so no other change can leave one stale).
* An identity column (``GENERATED ALWAYS|BY DEFAULT AS IDENTITY``) is a sequence default on
  DuckDB (duckdb_dialect), so its kind (``a`` / ``d``) is written to the hidden
  ``pgbarrier.identity_columns``; the catalog shows the column as PostgreSQL does: an
  ``attidentity``, no default (``pg_attrdef``, ``information_schema.columns``), its sequence
  an internal dependency. A change of the column's type keeps it, a drop forgets it.
* ``DROP SCHEMA`` forgets what was recorded of its tables (``CASCADE`` drops them without a
  ``DROP TABLE``), so nothing recorded of a dropped table can attach to a new one of its
  name; a ``CREATE TABLE`` that records something forgets the old rows first. Only DDL pays
  a parse (and ``CREATE TABLE`` only when its text names one of those types, a constraint
  or an identity: a plain one costs nothing more, as a restore of many tables needs);
  temporary tables are not recorded (their catalog rows would outlive the session's
  objects); a result column that is a declared ``jsonb`` column goes out as ``jsonb`` (OID
  3802, printed as PostgreSQL prints jsonb: :mod:`pgbarrier.pgproto.jsonb`).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from pgbarrier.sql.colnames import PgWritten, parse_single
from pgbarrier.backends.duckdb_numeric import STORAGE as NUMERIC_STORAGE

__all__ = ["COLUMN_TYPES_TABLE", "CONSTRAINT_NAMES_TABLE", "DECLARED_STORAGE", "IDENTITY_COLUMNS_TABLE", "ColumnType",
           "ConstraintName", "Forget", "ForgetSchema", "IdentityColumn", "Rename",
           "declared_changes", "declared_storage_sql", "inherited", "made_from_query"]

#: DuckDB's types of a column a declared type (its OID) still describes: a declaration
#: whose column DuckDB has since stored as something else is stale (one rule for the
#: catalog's join, :func:`declared_storage_sql`, and pgcatalog.origins)
DECLARED_STORAGE: dict[int, tuple[str, ...]] = {
    1043: ("VARCHAR",), 1042: ("VARCHAR",), 1015: ("VARCHAR[]",), 1014: ("VARCHAR[]",),
    3802: ("JSON",), 3807: ("JSON[]",), 1184: ("TIMESTAMP WITH TIME ZONE",), 1083: ("TIME",),
    1114: ("TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS"), 1700: (NUMERIC_STORAGE,),
    1231: (NUMERIC_STORAGE + "[]",)}


def declared_storage_sql(oid: str, data_type: str) -> str:
    """:data:`DECLARED_STORAGE` as a SQL condition on the columns ``oid`` and ``data_type``."""
    whens = " ".join(f"WHEN {k} THEN {data_type} IN ({', '.join(repr(t) for t in v)})"
                     for k, v in DECLARED_STORAGE.items())
    return f"CASE {oid} {whens} ELSE false END"


#: the hidden tables (in schema pgbarrier of the user database)
COLUMN_TYPES_TABLE = "column_types"
CONSTRAINT_NAMES_TABLE = "constraint_names"
IDENTITY_COLUMNS_TABLE = "identity_columns"

_VARCHAR = (exp.DataType.Type.VARCHAR, exp.DataType.Type.NVARCHAR)
_CHAR = (exp.DataType.Type.CHAR, exp.DataType.Type.NCHAR, exp.DataType.Type.BPCHAR)
#: base OID -> array OID
_ARRAY = {1043: 1015, 1042: 1014, 3802: 3807, 1700: 1231}


@dataclass(frozen=True)
class ColumnType:
    """Column ``column`` of ``schema.table`` was declared as ``type_oid`` / ``typmod``."""

    schema: str
    table: str
    column: str
    type_oid: int
    typmod: int


@dataclass(frozen=True)
class ConstraintName:
    """The constraint of kind ``contype`` on ``columns`` of ``schema.table`` is ``name``."""

    schema: str
    table: str
    contype: str
    columns: tuple[str, ...]
    name: str


@dataclass(frozen=True)
class IdentityColumn:
    """Column ``column`` of ``schema.table`` is an identity column: ``a`` ALWAYS, ``d`` BY
    DEFAULT (PostgreSQL's ``attidentity``)."""

    schema: str
    table: str
    column: str
    generation: str


@dataclass(frozen=True)
class Forget:
    """Forget ``schema.table``'s column ``column`` (every column when None); only its
    declared type when ``type_only`` (``ALTER COLUMN ... TYPE``)."""

    schema: str
    table: str
    column: str | None = None
    type_only: bool = False


@dataclass(frozen=True)
class ForgetConstraint:
    """Forget the name ``name`` given to a constraint of ``schema.table`` (``DROP
    CONSTRAINT``): a later constraint of the same kind and columns gets its own."""

    schema: str
    table: str
    name: str


@dataclass(frozen=True)
class ForgetSchema:
    """Forget every table of ``schema`` (``DROP SCHEMA``)."""

    schema: str


@dataclass(frozen=True)
class Rename:
    """``schema.table`` is now ``new_table`` / its column ``column`` is now ``new_column``."""

    schema: str
    table: str
    new_table: str
    column: str | None = None
    new_column: str | None = None


Change = (ColumnType | ConstraintName | IdentityColumn | Forget | ForgetSchema | Rename
          | ForgetConstraint)


def _name(node: exp.Expr | None) -> str | None:
    if isinstance(node, exp.Column):
        node = node.this
    if not isinstance(node, exp.Identifier):
        return None
    return node.name if node.quoted else node.name.lower()


def _table(table: exp.Table) -> tuple[str, str] | None:
    name = _name(table.this)
    if name is None:
        return None
    schema = _name(table.args.get("db")) or "main"
    return ("main" if schema == "public" else schema), name


def pg_declared(kind: exp.DataType) -> tuple[int, int] | None:
    """(OID, typmod) of a declared type DuckDB forgets, else None."""
    if kind.this == exp.DataType.Type.ARRAY and kind.expressions:
        inner = kind.expressions[0]
        found = pg_declared(inner) if isinstance(inner, exp.DataType) else None
        return (_ARRAY[found[0]], found[1]) if found else None
    if kind.this in _VARCHAR or kind.this in _CHAR:
        return declared_type(kind)
    if kind.this == exp.DataType.Type.JSONB:
        return 3802, -1
    if kind.this == exp.DataType.Type.DECIMAL and not kind.expressions:
        return 1700, -1  # stored as DECIMAL(38,10): pgbarrier.backends.duckdb_numeric
    if kind.this in _PRECISION and kind.this != _T.TIMETZ:
        return declared_type(kind)  # DuckDB keeps no precision (timestamp(1) is _MS)
    return None


_T = exp.DataType.Type
#: types whose single parameter is PostgreSQL's typmod as it is (a precision)
_PRECISION = {_T.TIMESTAMP: 1114, _T.TIMESTAMPTZ: 1184, _T.TIME: 1083, _T.TIMETZ: 1266}


def declared_type(kind: exp.DataType) -> tuple[int, int] | None:
    """(OID, typmod) PostgreSQL gives a value of the declared type ``kind`` when that
    has a modifier (``varchar(n)``, ``char[(n)]``, ``numeric(p[,s])``, ``timestamp(p)``...),
    else None: the one reading of a declared typmod (column declarations, casts)."""
    params = [p.this for p in kind.expressions if isinstance(p, exp.DataTypeParam)]
    if not all(isinstance(p, exp.Literal) and p.is_int for p in params):
        return None
    nums = [int(p.name) for p in params]
    if kind.this in _VARCHAR:
        return 1043, (nums[0] + 4 if len(nums) == 1 else -1)
    if kind.this in _CHAR:
        return 1042, (nums[0] if len(nums) == 1 else 1) + 4
    if kind.this == _T.DECIMAL and 1 <= len(nums) <= 2:
        return 1700, ((nums[0] << 16) | (nums[1] if len(nums) == 2 else 0)) + 4
    if kind.this in _PRECISION and len(nums) == 1:
        return _PRECISION[kind.this], nums[0]
    return None


def _columns(schema: str, table: str, defs: list[exp.Expr]) -> list[Change]:
    out: list[Change] = []
    for d in defs:
        if not isinstance(d, exp.ColumnDef) or not isinstance(d.args.get("kind"), exp.DataType):
            continue
        column, found = _name(d.this), pg_declared(d.args["kind"])
        if column is not None and found is not None:
            out.append(ColumnType(schema, table, column, *found))
        identity = [c.kind for c in d.constraints
                    if isinstance(c.kind, exp.GeneratedAsIdentityColumnConstraint)]
        if column is not None and identity:
            out.append(IdentityColumn(schema, table, column,
                                      "a" if identity[0].this is True else "d"))
    return out


def _identifiers(nodes: list[exp.Expr]) -> tuple[str, ...]:
    return tuple(n for n in (_name(x) for x in nodes) if n is not None)


def _named_constraint(kind: exp.Expr, column: str | None) -> tuple[str, tuple[str, ...]] | None:
    """(contype, columns) of a constraint's body; ``column`` when it is a column's."""
    own = (column,) if column is not None else ()
    if isinstance(kind, (exp.PrimaryKeyColumnConstraint, exp.PrimaryKey)):
        return "p", own or _identifiers(kind.expressions)
    if isinstance(kind, exp.UniqueColumnConstraint):
        schema = kind.this
        return "u", own or _identifiers(schema.expressions if isinstance(schema, exp.Schema)
                                        else [])
    if isinstance(kind, exp.ForeignKey):
        return "f", _identifiers(kind.expressions)
    if isinstance(kind, exp.Reference):
        return "f", own
    if isinstance(kind, exp.CheckColumnConstraint):
        read = {c.name if c.this.quoted else c.name.lower()
                for c in kind.this.find_all(exp.Column)}
        return "c", tuple(sorted(read))
    return None


def _constraint_names(schema: str, table: str, defs: list[exp.Expr]) -> list[Change]:
    out: list[Change] = []
    found: list[tuple[exp.Expr, str | None, exp.Expr]] = []  # (name node, column, body)
    for d in defs:
        if isinstance(d, exp.ColumnDef):
            found += [(c.this, _name(d.this), c.kind) for c in d.constraints
                      if isinstance(c, exp.ColumnConstraint) and c.this is not None]
        elif isinstance(d, exp.Constraint):
            found += [(d.this, None, body) for body in d.expressions]
    for name_node, column, body in found:
        name, shape = _name(name_node), _named_constraint(body, column)
        if name is not None and shape is not None and shape[1]:
            out.append(ConstraintName(schema, table, shape[0], shape[1], name))
    return out


def _may_declare(sql: str) -> bool:
    low = sql.lower()
    return ("char" in low or "jsonb" in low or "time" in low or "constraint" in low
            or "identity" in low or "numeric" in low or "decimal" in low)


def made_from_query(sql: str, words: tuple[str, ...]) -> tuple[str, str, str] | None:
    """(schema, table, the query's text) of a ``CREATE TABLE ... AS <query>`` that is not
    temporary, else None: its columns inherit the declared types of the query's result
    columns (:func:`inherited`), as PostgreSQL's do."""
    if words[:1] != ("CREATE",) or "TABLE" not in words[1:3] or " as" not in sql.lower():
        return None
    tree = parse_single(sql)
    if not isinstance(tree, exp.Create) or tree.kind != "TABLE" or \
            not isinstance(tree.expression, exp.Query):
        return None
    if any(isinstance(p, exp.TemporaryProperty)
           for p in (tree.args.get("properties") or exp.Properties()).expressions):
        return None
    schema_node = tree.this
    table = schema_node.this if isinstance(schema_node, exp.Schema) else schema_node
    named = _table(table) if isinstance(table, exp.Table) else None
    return None if named is None else (*named, tree.expression.sql(dialect=PgWritten))


def inherited(schema: str, table: str, columns: list[str],
              types: list[tuple[int, int] | None]) -> list[Change]:
    """The table made by a ``CREATE TABLE ... AS``: what was recorded under its name
    forgotten, then each column (``columns``, in order) recorded with the declared type of
    the query's result column at its position (``types``: (OID, typmod), None where the
    result column has none). The catalog takes a row only while DuckDB's type of the
    column is the declared type's storage (module rules)."""
    kept = [_unchecked(t) if t is not None else None for t in types]
    if len(columns) != len(kept) or not any(kept):
        return []
    return [Forget(schema, table), *(ColumnType(schema, table, c, *t)
                                     for c, t in zip(columns, kept) if t is not None)]


#: what a table DuckDB made from a query holds of a result column declared with a length:
#: no length check (pgbarrier's checks are made with a CREATE TABLE's declared columns), so
#: varchar(n) is character varying without one, and char(n) (whose comparisons pad) text
_UNCHECKED = {1043: (1043, -1), 1015: (1015, -1), 1042: None, 1014: None}


def _unchecked(declared: tuple[int, int]) -> tuple[int, int] | None:
    return _UNCHECKED.get(declared[0], declared)


def declared_changes(sql: str, words: tuple[str, ...]) -> list[Change]:
    """What a successful DDL statement changes in the hidden ``pgbarrier`` tables
    (column types, constraint names, identity columns)."""
    if words[:1] == ("CREATE",) and "TABLE" in words[1:3] and not _may_declare(sql):
        return []  # nothing to record, and nothing recorded under its name (see above)
    tree = parse_single(sql)
    if isinstance(tree, exp.Create) and tree.kind == "TABLE":
        schema_node = tree.this
        table = schema_node.this if isinstance(schema_node, exp.Schema) else schema_node
        temporary = any(isinstance(p, exp.TemporaryProperty)
                        for p in (tree.args.get("properties") or exp.Properties()).expressions)
        named = _table(table) if isinstance(table, exp.Table) else None
        if named is None or temporary:
            return []
        if not isinstance(schema_node, exp.Schema):  # CREATE TABLE ... AS
            return [Forget(*named)]
        return [Forget(*named), *_columns(*named, schema_node.expressions),
                *_constraint_names(*named, schema_node.expressions)]
    if isinstance(tree, exp.Drop) and tree.args.get("kind") == "SCHEMA":
        return [ForgetSchema("main" if s == "public" else s)
                for t in tree.args.get("tables") or []
                if isinstance(t, exp.Table) and (s := _name(t.args.get("db") or t.this))]
    if isinstance(tree, exp.Drop) and tree.args.get("kind") == "TABLE":
        return [Forget(*named) for t in tree.args.get("tables") or []
                if isinstance(t, exp.Table) and (named := _table(t)) is not None]
    if isinstance(tree, exp.Alter) and tree.args.get("kind") == "TABLE" and \
            isinstance(tree.this, exp.Table):
        named = _table(tree.this)
        if named is None:
            return []
        schema, table = named
        out: list[Change] = []
        for action in tree.args.get("actions") or []:
            if isinstance(action, exp.ColumnDef):
                out += _columns(schema, table, [action])
                out += _constraint_names(schema, table, [action])
            elif isinstance(action, exp.AddConstraint):
                out += _constraint_names(schema, table, [
                    c for c in action.expressions if isinstance(c, exp.Constraint)])
            elif isinstance(action, exp.Drop) and action.args.get("kind") == "CONSTRAINT":
                for con in action.args.get("tables") or []:
                    name = _name(con.this if isinstance(con, exp.Table) else con)
                    if name is not None:
                        out.append(ForgetConstraint(schema, table, name))
            elif isinstance(action, exp.AlterColumn) and action.args.get("dtype") is not None:
                column = _name(action.this)
                if column is not None:
                    out.append(Forget(schema, table, column, type_only=True))
                    found = pg_declared(action.args["dtype"])
                    if found is not None:
                        out.append(ColumnType(schema, table, column, *found))
            elif isinstance(action, exp.RenameColumn):
                old, new = _name(action.this), _name(action.args.get("to"))
                if old is not None and new is not None:
                    out.append(Rename(schema, table, table, old, new))
            elif isinstance(action, exp.AlterRename) and isinstance(action.this, exp.Table):
                new_name = _name(action.this.this)
                if new_name is not None:
                    out.append(Rename(schema, table, new_name))
            elif isinstance(action, exp.Drop) and action.args.get("kind") == "COLUMN":
                for col in action.args.get("tables") or []:
                    column = _name(col)
                    if column is not None:
                        out.append(Forget(schema, table, column))
        return out
    return []


def apply_changes(cur, schema: str, changes: list[Change]) -> None:
    """Write ``changes`` to ``<schema>.column_types``, ``<schema>.constraint_names`` and
    ``<schema>.identity_columns`` on the DuckDB cursor ``cur``."""
    table = f"{schema}.{COLUMN_TYPES_TABLE}"
    names = f"{schema}.{CONSTRAINT_NAMES_TABLE}"
    identities = f"{schema}.{IDENTITY_COLUMNS_TABLE}"
    for c in changes:
        if isinstance(c, ForgetSchema):
            for hidden in (table, names, identities):
                cur.execute(f"DELETE FROM {hidden} WHERE schema_name = $1", [c.schema])
            continue
        if isinstance(c, ForgetConstraint):
            cur.execute(f"DELETE FROM {names} WHERE schema_name = $1 AND table_name = $2 "
                        "AND constraint_name = $3", [c.schema, c.table, c.name])
            continue
        if isinstance(c, ConstraintName):
            cur.execute(f"INSERT INTO {names} VALUES ($1, $2, $3, $4, $5)",
                        [c.schema, c.table, c.contype, list(c.columns), c.name])
            continue
        if isinstance(c, IdentityColumn):
            cur.execute(f"INSERT INTO {identities} VALUES ($1, $2, $3, $4)",
                        [c.schema, c.table, c.column, c.generation])
            continue
        _apply_to_names(cur, names, c)
        _apply_to_identities(cur, identities, c)
        if isinstance(c, ColumnType):
            cur.execute(f"DELETE FROM {table} WHERE schema_name = $1 AND table_name = $2 "
                        "AND column_name = $3", [c.schema, c.table, c.column])
            cur.execute(f"INSERT INTO {table} VALUES ($1, $2, $3, $4, $5)",
                        [c.schema, c.table, c.column, c.type_oid, c.typmod])
        elif isinstance(c, Forget) and c.column is None:
            cur.execute(f"DELETE FROM {table} WHERE schema_name = $1 AND table_name = $2",
                        [c.schema, c.table])
        elif isinstance(c, Forget):
            cur.execute(f"DELETE FROM {table} WHERE schema_name = $1 AND table_name = $2 "
                        "AND column_name = $3", [c.schema, c.table, c.column])
        elif c.column is None:
            cur.execute(f"UPDATE {table} SET table_name = $3 WHERE schema_name = $1 "
                        "AND table_name = $2", [c.schema, c.table, c.new_table])
        else:
            cur.execute(f"UPDATE {table} SET column_name = $4 WHERE schema_name = $1 "
                        "AND table_name = $2 AND column_name = $3",
                        [c.schema, c.table, c.column, c.new_column])


def _apply_to_names(cur, names: str, c: Change) -> None:
    """A table's drop or rename, or a column's, on the recorded constraint names."""
    if isinstance(c, Forget) and c.column is None:
        cur.execute(f"DELETE FROM {names} WHERE schema_name = $1 AND table_name = $2",
                    [c.schema, c.table])
    elif isinstance(c, Rename) and c.column is None:
        cur.execute(f"UPDATE {names} SET table_name = $3 WHERE schema_name = $1 "
                    "AND table_name = $2", [c.schema, c.table, c.new_table])
    elif isinstance(c, Rename):
        cur.execute(f"UPDATE {names} SET column_names = list_transform(column_names, "
                    "lambda x: CASE WHEN x = $3 THEN $4 ELSE x END) "
                    "WHERE schema_name = $1 AND table_name = $2",
                    [c.schema, c.table, c.column, c.new_column])


def _apply_to_identities(cur, identities: str, c: Change) -> None:
    """A table's or column's drop or rename on the recorded identity columns."""
    if isinstance(c, Forget) and not c.type_only:
        column = "" if c.column is None else " AND column_name = $3"
        cur.execute(f"DELETE FROM {identities} WHERE schema_name = $1 AND table_name = $2"
                    + column, [c.schema, c.table, *([c.column] if c.column else [])])
    elif isinstance(c, Rename) and c.column is None:
        cur.execute(f"UPDATE {identities} SET table_name = $3 WHERE schema_name = $1 "
                    "AND table_name = $2", [c.schema, c.table, c.new_table])
    elif isinstance(c, Rename):
        cur.execute(f"UPDATE {identities} SET column_name = $4 WHERE schema_name = $1 "
                    "AND table_name = $2 AND column_name = $3",
                    [c.schema, c.table, c.column, c.new_column])
