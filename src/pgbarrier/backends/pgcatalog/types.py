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
from pgbarrier.pgproto import types as pgt

#: PostgreSQL's type categories (pg_type.typcategory)
_CATEGORY = {pgt.BOOL: "B", pgt.BYTEA: "U", pgt.CHAR: "Z", pgt.NAME: "S", pgt.INT8: "N",
             pgt.INT2: "N", pgt.INT4: "N", pgt.TEXT: "S", pgt.OID: "N", pgt.JSON: "U",
             pgt.FLOAT4: "N", pgt.FLOAT8: "N", pgt.BPCHAR: "S", pgt.VARCHAR: "S",
             pgt.DATE: "D", pgt.TIME: "D", pgt.TIMESTAMP: "D", pgt.TIMESTAMPTZ: "D",
             pgt.INTERVAL: "T", pgt.TIMETZ: "D", pgt.NUMERIC: "N", pgt.UUID: "U",
             pgt.JSONB: "U"}

#: oid -> (typname, format_type() name, typlen, typcategory, array oid or 0): the types
#: pgbarrier sends (names from the wire's own table, sizes and array types from
#: pgbarrier.pgproto.types), plus those only catalog queries name
BUILTIN: dict[int, tuple[str, str, int, str, int]] = {
    **{oid: (name, fmt, pgt.TYPE_SIZE.get(oid, -1), _CATEGORY[oid], pgt.ARRAY_OF.get(oid, 0))
       for oid, (name, fmt) in duckdb_types._BUILTIN_NAMES.items()},
    pgt.INT2VECTOR: ("int2vector", "int2vector", -1, "A", 1006),
    24: ("regproc", "regproc", 4, "N", 1008),
    pgt.OIDVECTOR: ("oidvector", "oidvector", -1, "A", 1013),
    pgt.UNKNOWN: ("unknown", "unknown", -2, "X", 0),
    2205: ("regclass", "regclass", 4, "N", 2210),
    2206: ("regtype", "regtype", 4, "N", 2211),
    4089: ("regnamespace", "regnamespace", 4, "N", 4090),
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


def type_oid_of(data_type: str) -> int:
    """:func:`type_oid_sql` in Python, the same answer for a ``duckdb_columns().data_type``."""
    base = data_type[:-2] if data_type.endswith("[]") else data_type
    if base in duckdb_types._SCALAR:
        return duckdb_types.pg_type_oid(data_type)
    array = data_type.endswith("[]")
    if data_type.startswith("DECIMAL"):
        return duckdb_types.pg_type_oid("DECIMAL(18,3)[]" if array else "DECIMAL(18,3)")
    return duckdb_types.pg_type_oid("STRUCT(a INTEGER)[]" if array else "STRUCT(a INTEGER)")


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


#: PostgreSQL 15's default btree operator class of each type (pg_opclass, catalog.sql's
#: pgb.opclasses); varchar's is text_ops
DEFAULT_OPCLASS = {16: 10003, 17: 10006, 18: 10007, 19: 10028, 20: 3124, 21: 1979, 23: 1978,
                   25: 3126, 1043: 3126, 26: 1981, 700: 10012, 701: 3123, 1042: 10004,
                   1082: 3122, 1083: 10038, 1114: 3128, 1184: 3127, 1186: 10022,
                   1266: 10041, 1700: 3125, 2950: 10065, 3802: 10088}


def opclass_case_sql(arg: str) -> str:
    """A constant SQL CASE from a DuckDB scalar type name to its default btree operator
    class OID (0 when PostgreSQL's type has none): computed per index column, so no lookup."""
    whens = " ".join(f"WHEN '{name}' THEN {DEFAULT_OPCLASS[oid]}"
                     for name in sorted(duckdb_types._SCALAR)
                     if (oid := duckdb_types.pg_type_oid(name)) in DEFAULT_OPCLASS)
    return f"CASE {arg} {whens} ELSE 0 END"
