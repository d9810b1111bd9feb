"""DuckDB column types as PostgreSQL type OIDs (the OID psql and drivers will see)."""

from __future__ import annotations

from pgbarrier.wire import types as pgt

_SCALAR = {
    "BOOLEAN": pgt.BOOL, "TINYINT": pgt.INT2, "SMALLINT": pgt.INT2, "INTEGER": pgt.INT4,
    "BIGINT": pgt.INT8, "UTINYINT": pgt.INT2, "USMALLINT": pgt.INT4, "UINTEGER": pgt.INT8,
    "UBIGINT": pgt.NUMERIC, "HUGEINT": pgt.NUMERIC, "UHUGEINT": pgt.NUMERIC,
    "FLOAT": pgt.FLOAT4, "DOUBLE": pgt.FLOAT8, "VARCHAR": pgt.VARCHAR, "BLOB": pgt.BYTEA,
    "DATE": pgt.DATE, "TIME": pgt.TIME, "TIMESTAMP": pgt.TIMESTAMP,
    "TIMESTAMP_S": pgt.TIMESTAMP, "TIMESTAMP_MS": pgt.TIMESTAMP, "TIMESTAMP_NS": pgt.TIMESTAMP,
    "TIMESTAMP WITH TIME ZONE": pgt.TIMESTAMPTZ, "TIME WITH TIME ZONE": pgt.TIMETZ,
    "INTERVAL": pgt.INTERVAL, "UUID": pgt.UUID, "JSON": pgt.JSON, "BIT": pgt.TEXT,
}


def pg_type_oid(duckdb_type: object) -> int:
    """PostgreSQL type OID for a DuckDB type (as printed by DuckDB); text when unknown."""
    name = str(duckdb_type)
    if name.endswith("[]"):
        return pgt.ARRAY_OF.get(pg_type_oid(name[:-2]), pgt.TEXT)
    if name.startswith("DECIMAL"):
        return pgt.NUMERIC
    return _SCALAR.get(name, pgt.TEXT)
