"""The PostgreSQL column types DuckDB forgets: ``varchar(n)``, ``char(n)``, ``jsonb`` and the
precision of ``timestamp(p)``, ``timestamptz(p)`` and ``time(p)``.

DuckDB stores ``varchar(120)``, ``char(3)`` and ``text`` all as ``VARCHAR``, and ``jsonb`` as
``JSON``, so a catalog read from DuckDB alone says ``text`` and ``json`` where PostgreSQL says
``character varying(120)`` and ``jsonb`` (SQLAlchemy reflection, Alembic autogenerate and
psql's ``\\d`` then differ from PostgreSQL). Rules this module keeps:

* After a ``CREATE TABLE`` or ``ALTER TABLE`` that succeeded, the declared type of each
  column whose type DuckDB forgets is written to the hidden table
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
* Only DDL pays a parse (and CREATE TABLE only when its text names one of those types);
  temporary tables are not recorded (their catalog rows would outlive the session's
  objects); the wire type of a ``jsonb`` value stays ``json`` (OID 114).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from pgbarrier.sql.colnames import parse_single

__all__ = ["COLUMN_TYPES_TABLE", "ColumnType", "Forget", "Rename", "declared_changes"]

#: the hidden table (in schema pgbarrier of the user database)
COLUMN_TYPES_TABLE = "column_types"

_VARCHAR = (exp.DataType.Type.VARCHAR, exp.DataType.Type.NVARCHAR)
_CHAR = (exp.DataType.Type.CHAR, exp.DataType.Type.NCHAR, exp.DataType.Type.BPCHAR)
#: base OID -> array OID
_ARRAY = {1043: 1015, 1042: 1014, 3802: 3807}


@dataclass(frozen=True)
class ColumnType:
    """Column ``column`` of ``schema.table`` was declared as ``type_oid`` / ``typmod``."""

    schema: str
    table: str
    column: str
    type_oid: int
    typmod: int


@dataclass(frozen=True)
class Forget:
    """Forget ``schema.table``'s column ``column`` (every column when None)."""

    schema: str
    table: str
    column: str | None = None


@dataclass(frozen=True)
class Rename:
    """``schema.table`` is now ``new_table`` / its column ``column`` is now ``new_column``."""

    schema: str
    table: str
    new_table: str
    column: str | None = None
    new_column: str | None = None


Change = ColumnType | Forget | Rename


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
    return out


def _mentions_type(sql: str) -> bool:
    low = sql.lower()
    return "char" in low or "jsonb" in low or "time" in low


def declared_changes(sql: str, words: tuple[str, ...]) -> list[Change]:
    """What a successful DDL statement changes in ``pgbarrier.column_types``."""
    if words[:1] == ("CREATE",) and "TABLE" in words[1:3] and not _mentions_type(sql):
        return []
    tree = parse_single(sql)
    if isinstance(tree, exp.Create) and tree.kind == "TABLE":
        schema_node = tree.this
        table = schema_node.this if isinstance(schema_node, exp.Schema) else schema_node
        temporary = any(isinstance(p, exp.TemporaryProperty)
                        for p in (tree.args.get("properties") or exp.Properties()).expressions)
        named = _table(table) if isinstance(table, exp.Table) else None
        if named is None or temporary or not isinstance(schema_node, exp.Schema):
            return []
        return [Forget(*named), *_columns(*named, schema_node.expressions)]
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
            elif isinstance(action, exp.AlterColumn) and action.args.get("dtype") is not None:
                column = _name(action.this)
                if column is not None:
                    out.append(Forget(schema, table, column))
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
    """Write ``changes`` to ``<schema>.column_types`` on the DuckDB cursor ``cur``."""
    table = f"{schema}.{COLUMN_TYPES_TABLE}"
    for c in changes:
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
