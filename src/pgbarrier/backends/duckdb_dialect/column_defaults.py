"""Column definitions DuckDB reads differently: serial / identity columns, ``now()`` defaults.

Rules this module keeps:

* ``serial`` / ``bigserial`` / ``smallserial`` and ``GENERATED {ALWAYS|BY DEFAULT} AS
  IDENTITY`` columns -> ``CREATE OR REPLACE SEQUENCE <table>_<col>_seq`` before the
  ``CREATE TABLE`` (same schema, ``TEMP`` for a temporary table) and the column
  ``integer``/``bigint``/``smallint DEFAULT nextval('<seq>') NOT NULL``. Choices:
  DuckDB does not drop the sequence with the table, so ``OR REPLACE`` restarts an orphan
  left by an earlier ``DROP TABLE`` (a table still using it makes the create fail, as
  PostgreSQL's would); ``CREATE TABLE IF NOT EXISTS`` uses ``CREATE SEQUENCE IF NOT
  EXISTS`` instead (so an existing table is left alone, and an orphan sequence goes on
  from where it was); ``ALTER TABLE t ADD COLUMN c serial`` likewise, without ``NOT
  NULL`` (DuckDB cannot add one inside a transaction; every row gets its value);
  ``GENERATED ALWAYS`` accepts an explicit value (PostgreSQL refuses it without
  ``OVERRIDING SYSTEM VALUE``); identity sequence options are 0A000.
  ``pg_get_serial_sequence('t', 'c')`` (the catalog's macro) answers
  ``public.<t>_<c>_seq`` when that sequence exists.
* sqlglot reads ``now()`` and ``CURRENT_TIMESTAMP`` as one node and writes the latter;
  DuckDB keeps a column default as written, and PostgreSQL shows each as the client wrote
  it, so a table's ``DEFAULT now()`` stays ``now()`` when the statement has no
  ``CURRENT_TIMESTAMP`` to tell it from.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.errors import FeatureNotSupported

__all__ = ["now_defaults", "sequences"]

_SERIALS = {exp.DataType.Type.SERIAL: exp.DataType.Type.INT,
            exp.DataType.Type.BIGSERIAL: exp.DataType.Type.BIGINT,
            exp.DataType.Type.SMALLSERIAL: exp.DataType.Type.SMALLINT}


def sequences(tree: exp.Expr) -> list[str]:
    """Make serial and identity columns of a CREATE / ALTER TABLE sequence defaults; the
    CREATE SEQUENCEs to run first."""
    if isinstance(tree, exp.Create) and tree.kind == "TABLE":
        return _serials(tree)
    if isinstance(tree, exp.Alter):
        return _added_serials(tree)
    return []


def now_defaults(tree: exp.Expr, sql: str) -> bool:
    """``DEFAULT now()`` kept as written (see the module's rules); whether one was."""
    if not isinstance(tree, (exp.Create, exp.Alter)):
        return False
    low = sql.lower()
    if "now(" not in low or "current_timestamp" in low:
        return False
    fired = False
    for node in list(tree.find_all(exp.DefaultColumnConstraint)):
        if isinstance(node.this, exp.CurrentTimestamp) and not node.this.args:
            node.set("this", exp.Anonymous(this="now", expressions=[]))
            fired = True
    return fired


def _serials(create: exp.Create) -> list[str]:
    schema = create.this
    if not isinstance(schema, exp.Schema) or not isinstance(schema.this, exp.Table):
        return []
    props = create.args.get("properties")
    temp = props is not None and any(isinstance(p, exp.TemporaryProperty)
                                     for p in props.expressions)
    made = (_serial_column(col, schema.this, temp, bool(create.args.get("exists")), True)
            for col in schema.expressions)
    return [stmt for stmt in made if stmt is not None]


def _added_serials(alter: exp.Alter) -> list[str]:
    """``ALTER TABLE t ADD COLUMN c serial``: the same, without NOT NULL (DuckDB cannot add
    a NOT NULL column inside a transaction; the default fills every row anyway)."""
    if alter.args.get("kind") != "TABLE" or not isinstance(alter.this, exp.Table):
        return []
    made = (_serial_column(col, alter.this, False, False, False)
            for col in alter.args.get("actions") or [])
    return [stmt for stmt in made if stmt is not None]


def _serial_column(col: exp.Expr, table: exp.Table, temp: bool, if_not_exists: bool,
                   not_null: bool) -> str | None:
    """Make ``col`` a sequence default if it is serial / identity; its CREATE SEQUENCE."""
    if not isinstance(col, exp.ColumnDef) or not isinstance(col.args.get("kind"), exp.DataType):
        return None
    kind = col.args["kind"]
    identity = [c for c in col.constraints
                if isinstance(c.kind, exp.GeneratedAsIdentityColumnConstraint)]
    if kind.this not in _SERIALS and not identity:
        return None
    if kind.this in _SERIALS:
        col.set("kind", exp.DataType(this=_SERIALS[kind.this]))
    for c in identity:
        if c.kind.args.get("start") is not None or c.kind.args.get("increment") is not None:
            raise FeatureNotSupported("identity sequence options are not supported by "
                                      "pgbarrier on DuckDB")
        c.pop()
    seq = exp.Table(this=exp.to_identifier(f"{table.name}_{col.name}_seq"),
                    db=table.args.get("db") and table.args["db"].copy(),
                    catalog=table.args.get("catalog") and table.args["catalog"].copy())
    seq_sql = seq.sql(dialect="duckdb")
    if seq.args.get("db") is not None and seq.db == "public":  # PostgreSQL's public: main
        seq_sql = exp.Table(this=seq.this.copy(), db=exp.to_identifier("main")).sql("duckdb")
    nextval = exp.Anonymous(this="nextval", expressions=[exp.Literal.string(seq_sql)])
    constraints = [c for c in col.constraints
                   if not isinstance(c.kind, (exp.DefaultColumnConstraint,
                                              exp.NotNullColumnConstraint))]
    col.set("constraints", [
        exp.ColumnConstraint(kind=exp.DefaultColumnConstraint(this=nextval)),
        *([exp.ColumnConstraint(kind=exp.NotNullColumnConstraint())] if not_null else []),
        *constraints])
    temp_kw = "TEMP " if temp else ""
    return (f"CREATE {temp_kw}SEQUENCE IF NOT EXISTS {seq_sql}" if if_not_exists else
            f"CREATE OR REPLACE {temp_kw}SEQUENCE {seq_sql}")
