"""PostgreSQL's built-in types as the emulated ``pg_type`` shows them, and DuckDB -> OID SQL.

Rules this module keeps:

* ``pg_type`` lists the PostgreSQL built-in types pgbarrier can send on the DuckDB backend
  (their real OIDs, names, lengths, categories and array types), plus the handful that
  catalog queries name (``oid``, ``name``, ``"char"``, ``regclass``...). This is the wire
  protocol's type table, not a copy of user objects: DuckDB has no user-defined types
  pgbarrier reports (a DuckDB ENUM or STRUCT column is sent as ``text``).
* :func:`type_oid_sql` is the SQL twin of :func:`pgbarrier.backends.duckdb_types.pg_type_oid`,
  generated from it, so a column's ``pg_attribute.atttypid`` is the OID its values carry in
  a RowDescription (one truth for both).
"""

from __future__ import annotations

from pgbarrier.backends import duckdb_types
from pgbarrier.wire import types as pgt

#: oid -> (typname, format_type() name, typlen, typcategory, array oid or 0)
BUILTIN: dict[int, tuple[str, str, int, str, int]] = {
    pgt.BOOL: ("bool", "boolean", 1, "B", 1000),
    pgt.BYTEA: ("bytea", "bytea", -1, "U", 1001),
    pgt.CHAR: ("char", '"char"', 1, "Z", 1002),
    pgt.NAME: ("name", "name", 64, "S", 1003),
    pgt.INT8: ("int8", "bigint", 8, "N", 1016),
    pgt.INT2: ("int2", "smallint", 2, "N", 1005),
    22: ("int2vector", "int2vector", -1, "A", 1006),
    pgt.INT4: ("int4", "integer", 4, "N", 1007),
    24: ("regproc", "regproc", 4, "N", 1008),
    pgt.TEXT: ("text", "text", -1, "S", 1009),
    pgt.OID: ("oid", "oid", 4, "N", 1028),
    30: ("oidvector", "oidvector", -1, "A", 1013),
    pgt.JSON: ("json", "json", -1, "U", 199),
    pgt.FLOAT4: ("float4", "real", 4, "N", 1021),
    pgt.FLOAT8: ("float8", "double precision", 8, "N", 1022),
    pgt.UNKNOWN: ("unknown", "unknown", -2, "X", 0),
    pgt.BPCHAR: ("bpchar", "character", -1, "S", 1014),
    pgt.VARCHAR: ("varchar", "character varying", -1, "S", 1015),
    pgt.DATE: ("date", "date", 4, "D", 1182),
    pgt.TIME: ("time", "time without time zone", 8, "D", 1183),
    pgt.TIMESTAMP: ("timestamp", "timestamp without time zone", 8, "D", 1115),
    pgt.TIMESTAMPTZ: ("timestamptz", "timestamp with time zone", 8, "D", 1185),
    pgt.INTERVAL: ("interval", "interval", 16, "T", 1187),
    pgt.TIMETZ: ("timetz", "time with time zone", 12, "D", 1270),
    pgt.NUMERIC: ("numeric", "numeric", -1, "N", 1231),
    2205: ("regclass", "regclass", 4, "N", 2210),
    2206: ("regtype", "regtype", 4, "N", 2211),
    4089: ("regnamespace", "regnamespace", 4, "N", 4090),
    pgt.UUID: ("uuid", "uuid", 16, "U", 2951),
    pgt.JSONB: ("jsonb", "jsonb", -1, "U", 3807),
    2249: ("record", "record", -1, "P", 2287),
    2279: ("trigger", "trigger", 4, "P", 0),
    2278: ("void", "void", 4, "P", 0),
}

#: pg_type rows: (oid, typname, typlen, typtype, typcategory, typelem, typarray, typinput,
#: typoutput, format name)
def pg_type_rows() -> list[tuple[int, str, int, str, str, int, int, str, str, str]]:
    rows = {}
    for oid, (name, fmt, length, category, array) in BUILTIN.items():
        typtype = "p" if category == "P" else "b"
        rows[oid] = (oid, name, length, typtype, category, 0, array, f"{name}in", f"{name}out",
                     fmt)
        if array and array not in BUILTIN:
            rows[array] = (array, "_" + name, -1, "b", "A", oid, 0, "array_in", "array_out",
                           fmt + "[]")
    return list(rows.values())


def type_oid_sql(arg: str) -> str:
    """A SQL CASE mapping a DuckDB type as ``duckdb_columns().data_type`` prints it to an OID."""
    names = sorted(duckdb_types._SCALAR)
    whens = []
    for name in names:
        whens.append(f"WHEN '{name}' THEN {duckdb_types.pg_type_oid(name)}")
        whens.append(f"WHEN '{name}[]' THEN {duckdb_types.pg_type_oid(name + '[]')}")
    decimal = duckdb_types.pg_type_oid("DECIMAL(18,3)")
    decimal_array = duckdb_types.pg_type_oid("DECIMAL(18,3)[]")
    fallback = duckdb_types.pg_type_oid("STRUCT(a INTEGER)")
    fallback_array = duckdb_types.pg_type_oid("STRUCT(a INTEGER)[]")
    return (f"CASE {arg} {' '.join(whens)} "
            f"ELSE CASE WHEN starts_with({arg}, 'DECIMAL') "
            f"THEN CASE WHEN ends_with({arg}, '[]') THEN {decimal_array} ELSE {decimal} END "
            f"WHEN ends_with({arg}, '[]') THEN {fallback_array} ELSE {fallback} END END")
