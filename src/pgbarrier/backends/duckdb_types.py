"""DuckDB column types as PostgreSQL type OIDs, and parameter types inferred for DuckDB.

Rules this module keeps:

* :func:`pg_type_oid` maps a DuckDB type (as DuckDB prints it) to the OID psql
  and drivers will see; unknown types (STRUCT, MAP, ENUM...) are text.
* :func:`infer_param_types` answers what PostgreSQL's parser answers in a
  ParameterDescription: the type of each ``$n``. DuckDB 2.0 cannot: its
  prepared statements leave parameter types ``UNKNOWN`` until values are bound
  (``duckdb_prepared_statements()`` shows them so), and its Python API has no
  parameter-type call. So pgbarrier reads the statement with sqlglot (only on
  Describe of a statement whose parameter types the client left unspecified,
  never on the execution path) and types each parameter from its context, with
  column types from DuckDB's ``information_schema``:

  - ``$1::t`` / ``CAST($1 AS t)`` -> ``t``;
  - a comparison or arithmetic operator, ``IN``, ``BETWEEN``, ``COALESCE`` ->
    the type of the other operand (sqlglot's type annotation over the tables'
    column types); ``LIKE``/``ILIKE``/``||`` -> text; ``= ANY($1)`` -> an array
    of the other operand's type; ``AND``/``OR``/``NOT``/``WHERE`` -> boolean;
  - ``LIMIT``/``OFFSET`` -> bigint;
  - ``INSERT INTO t [(cols)] VALUES (...)`` -> the target column's type;
    ``UPDATE t SET c = $1`` -> ``c``'s type;
  - anything else (``SELECT $1``, a function argument) -> text, as PostgreSQL
    resolves ``unknown``.

  A statement sqlglot cannot read gets text for every parameter (counted from
  the ``$n`` in its text). Tables are matched by name, the ``main`` schema
  first; a name that is in several other schemas takes the first found.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pgbarrier.pgproto import types as pgt

_SCALAR = {
    "BOOLEAN": pgt.BOOL, "TINYINT": pgt.INT2, "SMALLINT": pgt.INT2, "INTEGER": pgt.INT4,
    "BIGINT": pgt.INT8, "UTINYINT": pgt.INT2, "USMALLINT": pgt.INT4, "UINTEGER": pgt.INT8,
    "UBIGINT": pgt.NUMERIC, "HUGEINT": pgt.NUMERIC, "UHUGEINT": pgt.NUMERIC,
    "FLOAT": pgt.FLOAT4, "DOUBLE": pgt.FLOAT8, "VARCHAR": pgt.TEXT, "BLOB": pgt.BYTEA,
    "DATE": pgt.DATE, "TIME": pgt.TIME, "TIMESTAMP": pgt.TIMESTAMP,
    "TIMESTAMP_S": pgt.TIMESTAMP, "TIMESTAMP_MS": pgt.TIMESTAMP, "TIMESTAMP_NS": pgt.TIMESTAMP,
    "TIMESTAMP WITH TIME ZONE": pgt.TIMESTAMPTZ, "TIME WITH TIME ZONE": pgt.TIMETZ,
    "INTERVAL": pgt.INTERVAL, "UUID": pgt.UUID, "JSON": pgt.JSON, "BIT": pgt.TEXT,
}


def pg_type_oid(duckdb_type: object) -> int:
    """PostgreSQL type OID for a DuckDB type (as printed by DuckDB); text when unknown."""
    name = str(duckdb_type)
    if name.endswith("[]"):  # a list of lists too: PostgreSQL's arrays have one type
        return pgt.ARRAY_OF.get(pg_type_oid(name.rstrip("[]")), pgt.TEXT)
    if name.startswith("DECIMAL"):
        return pgt.NUMERIC
    return _SCALAR.get(name, pgt.TEXT)


# --------------------------------------------------------------------------- parameter types

_PARAM = re.compile(r"\$(\d+)")
#: table name -> ordered {column: DuckDB type}
TableColumns = dict[str, dict[str, str]]


def count_params(sql: str) -> int:
    """Highest ``$n`` in ``sql`` (a text scan: a ``$1`` inside a string counts too)."""
    return max((int(n) for n in _PARAM.findall(sql)), default=0)


def _type_map() -> dict[object, int]:
    from sqlglot import exp

    T = exp.DataType.Type
    names = {
        "BOOLEAN": pgt.BOOL, "TINYINT": pgt.INT2, "UTINYINT": pgt.INT2, "SMALLINT": pgt.INT2,
        "USMALLINT": pgt.INT4, "INT": pgt.INT4, "UINT": pgt.INT8, "BIGINT": pgt.INT8,
        "UBIGINT": pgt.NUMERIC, "INT128": pgt.NUMERIC, "UINT128": pgt.NUMERIC,
        "INT256": pgt.NUMERIC, "UINT256": pgt.NUMERIC, "DECIMAL": pgt.NUMERIC,
        "BIGDECIMAL": pgt.NUMERIC, "UDECIMAL": pgt.NUMERIC, "MONEY": pgt.NUMERIC,
        "FLOAT": pgt.FLOAT4, "DOUBLE": pgt.FLOAT8, "TEXT": pgt.TEXT, "VARCHAR": pgt.VARCHAR,
        "NVARCHAR": pgt.VARCHAR, "CHAR": pgt.BPCHAR, "NCHAR": pgt.BPCHAR, "NAME": pgt.NAME,
        "BINARY": pgt.BYTEA, "VARBINARY": pgt.BYTEA, "BLOB": pgt.BYTEA, "DATE": pgt.DATE,
        "TIME": pgt.TIME, "TIMETZ": pgt.TIMETZ, "TIMESTAMP": pgt.TIMESTAMP,
        "DATETIME": pgt.TIMESTAMP, "TIMESTAMP_S": pgt.TIMESTAMP, "TIMESTAMP_MS": pgt.TIMESTAMP,
        "TIMESTAMP_NS": pgt.TIMESTAMP, "TIMESTAMPNTZ": pgt.TIMESTAMP,
        "TIMESTAMPTZ": pgt.TIMESTAMPTZ, "TIMESTAMPLTZ": pgt.TIMESTAMPTZ,
        "INTERVAL": pgt.INTERVAL, "UUID": pgt.UUID, "JSON": pgt.JSON, "JSONB": pgt.JSONB,
    }
    return {getattr(T, n): oid for n, oid in names.items() if hasattr(T, n)}


_TYPE_MAP: dict[object, int] | None = None


def _oid_of(dtype: object) -> int | None:
    """OID of a sqlglot DataType; None when unknown."""
    global _TYPE_MAP
    from sqlglot import exp

    if not isinstance(dtype, exp.DataType):
        return None
    if _TYPE_MAP is None:
        _TYPE_MAP = _type_map()
    T = exp.DataType.Type
    if dtype.this in (T.ARRAY, getattr(T, "LIST", T.ARRAY)):
        inner = dtype.expressions[0] if dtype.expressions else None
        elem = _oid_of(inner)
        return pgt.ARRAY_OF.get(elem) if elem is not None else None
    return _TYPE_MAP.get(dtype.this)


def _param_index(node: object) -> int | None:
    from sqlglot import exp

    if isinstance(node, exp.Parameter):
        inner = node.this
        name = inner.name if isinstance(inner, exp.Expression) else str(inner)
    elif isinstance(node, exp.Placeholder):
        name = str(node.this or "")
    else:
        return None
    return int(name) if name.isdigit() else None


def _parse(sql: str) -> object | None:
    import sqlglot

    # sqlglot's tokenizer reads "$1,$2" as a dollar-quote: give each $n a trailing space
    text = _PARAM.sub(lambda mt: f"${mt.group(1)} ", sql)
    for dialect in ("postgres", "duckdb"):
        try:
            return sqlglot.parse_one(text, read=dialect)
        except Exception:  # noqa: BLE001 - any parser failure means "cannot infer"
            continue
    return None


def infer_param_types(sql: str, table_columns: Callable[[list[str]], TableColumns]
                      ) -> list[int]:
    """One OID per ``$1..$n`` of ``sql`` (text where the context tells nothing)."""
    n = count_params(sql)
    if n == 0:
        return []
    found: dict[int, int] = {}
    try:
        found = _infer(sql, table_columns)
    except Exception:  # noqa: BLE001 - inference is best effort; text is PostgreSQL's fallback
        found = {}
    n = max([n, *found])
    return [found.get(i, pgt.TEXT) for i in range(1, n + 1)]


def _infer(sql: str, table_columns: Callable[[list[str]], TableColumns]) -> dict[int, int]:
    from sqlglot import exp
    from sqlglot.optimizer.annotate_types import annotate_types
    from sqlglot.optimizer.qualify import qualify
    from sqlglot.schema import MappingSchema

    tree = _parse(sql)
    if not isinstance(tree, exp.Expression):
        return {}
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    names = sorted({t.name for t in tree.find_all(exp.Table)
                    if t.name and t.name.lower() not in ctes})
    tables = table_columns(names) if names else {}
    mapping: dict[str, dict[str, str]] = {}
    for table, cols in tables.items():
        good = {}
        for col, typ in cols.items():
            try:
                exp.DataType.build(typ, dialect="duckdb")
                good[col] = typ
            except Exception:  # noqa: BLE001 - a type sqlglot does not know: leave it out
                continue
        mapping[table] = good
    schema = MappingSchema(mapping, dialect="duckdb") if mapping else None
    typed = tree
    try:
        typed = qualify(tree.copy(), schema=schema, dialect="duckdb", validate_qualify_columns=False,
                        quote_identifiers=False)
    except Exception:  # noqa: BLE001
        typed = tree.copy()
    try:
        typed = annotate_types(typed, schema=schema, dialect="duckdb")
    except Exception:  # noqa: BLE001
        pass
    by_column = {}
    for cols in tables.values():
        for col, typ in cols.items():
            by_column.setdefault(col.lower(), typ)

    def column_oid(name: str, table: str | None = None) -> int | None:
        typ = None
        if table is not None:
            typ = next((t for c, t in tables.get(table, {}).items() if c.lower() == name.lower()),
                       None)
        typ = typ or by_column.get(name.lower())
        return pg_type_oid(typ) if typ else None

    def oid_of_expr(node: exp.Expression) -> int | None:
        if isinstance(node, (exp.Parameter, exp.Placeholder)):
            return None
        if isinstance(node, exp.Literal):
            if node.is_string:
                return pgt.TEXT
            return pgt.INT4 if node.name.lstrip("-").isdigit() else pgt.NUMERIC
        oid = _oid_of(node.type) if node.type is not None else None
        if oid is None and isinstance(node, exp.Column):
            oid = column_oid(node.name)
        return oid

    def target_table(stmt: exp.Expression) -> str | None:
        target = stmt.this
        if isinstance(target, exp.Schema):
            target = target.this
        return target.name if isinstance(target, exp.Table) else None

    def context(node: exp.Expression) -> int | None:
        parent = node.parent
        while isinstance(parent, exp.Paren):
            node, parent = parent, parent.parent
        if parent is None:
            return None
        if isinstance(parent, (exp.Cast, exp.TryCast)):
            return _oid_of(parent.args.get("to"))
        if isinstance(parent, (exp.Like, exp.ILike, exp.DPipe, exp.SimilarTo)):
            return pgt.TEXT
        if isinstance(parent, (exp.And, exp.Or, exp.Not, exp.Where)):
            return pgt.BOOL
        if isinstance(parent, (exp.Limit, exp.Offset, exp.Fetch)):
            return pgt.INT8
        if isinstance(parent, (exp.Any, exp.All)):
            outer = parent.parent
            if isinstance(outer, exp.Binary):
                other = outer.expression if outer.this is parent else outer.this
                elem = oid_of_expr(other)
                return pgt.ARRAY_OF.get(elem) if elem is not None else None
            return None
        if isinstance(parent, exp.EQ) and isinstance(parent.parent, exp.Update) \
                and parent.expression is node and isinstance(parent.this, exp.Column):
            return column_oid(parent.this.name, target_table(parent.parent))
        if isinstance(parent, exp.Binary):
            other = parent.expression if parent.this is node else parent.this
            return oid_of_expr(other)
        if isinstance(parent, exp.In):
            if parent.this is node:
                return next((o for o in map(oid_of_expr, parent.expressions) if o), None)
            return oid_of_expr(parent.this)
        if isinstance(parent, exp.Between):
            if parent.this is node:
                return oid_of_expr(parent.args["low"]) or oid_of_expr(parent.args["high"])
            return oid_of_expr(parent.this)
        if isinstance(parent, exp.Coalesce):
            others = [parent.this, *parent.expressions]
            return next((o for o in (oid_of_expr(x) for x in others if x is not node) if o), None)
        if isinstance(parent, exp.Tuple) and isinstance(parent.parent, exp.Values) \
                and isinstance(parent.parent.parent, exp.Insert):
            insert = parent.parent.parent
            pos = next(i for i, x in enumerate(parent.expressions) if x is node)
            table = target_table(insert)
            cols: list[str] = []
            if isinstance(insert.this, exp.Schema):
                cols = [c.name for c in insert.this.expressions]
            elif table in tables:
                cols = list(tables[table])
            return column_oid(cols[pos], table) if pos < len(cols) else None
        return None

    found: dict[int, int] = {}
    for node in typed.find_all(exp.Parameter, exp.Placeholder):
        idx = _param_index(node)
        if idx is None or idx in found:
            continue
        oid = context(node)
        if oid is not None:
            found[idx] = oid
    return found


# --------------------------------------------------------------------------- asyncpg's type introspection

#: PostgreSQL's built-in types pgbarrier sends on DuckDB: OID -> (typname, regtype name)
_BUILTIN_NAMES = {
    pgt.BOOL: ("bool", "boolean"), pgt.BYTEA: ("bytea", "bytea"), pgt.CHAR: ("char", '"char"'),
    pgt.NAME: ("name", "name"), pgt.INT8: ("int8", "bigint"), pgt.INT2: ("int2", "smallint"),
    pgt.INT4: ("int4", "integer"), pgt.TEXT: ("text", "text"), pgt.OID: ("oid", "oid"),
    pgt.JSON: ("json", "json"), pgt.FLOAT4: ("float4", "real"),
    pgt.FLOAT8: ("float8", "double precision"), pgt.BPCHAR: ("bpchar", "character"),
    pgt.VARCHAR: ("varchar", "character varying"), pgt.DATE: ("date", "date"),
    pgt.TIME: ("time", "time without time zone"),
    pgt.TIMESTAMP: ("timestamp", "timestamp without time zone"),
    pgt.TIMESTAMPTZ: ("timestamptz", "timestamp with time zone"),
    pgt.INTERVAL: ("interval", "interval"), pgt.TIMETZ: ("timetz", "time with time zone"),
    pgt.NUMERIC: ("numeric", "numeric"), pgt.UUID: ("uuid", "uuid"), pgt.JSONB: ("jsonb", "jsonb"),
}

#: the row shape of asyncpg's ``INTRO_LOOKUP_TYPES`` (PostgreSQL >= 14 variant)
TYPE_INTROSPECTION_COLUMNS = (
    ("oid", pgt.OID), ("ns", pgt.NAME), ("name", pgt.NAME), ("kind", pgt.CHAR),
    ("basetype", pgt.OID), ("elemtype", pgt.OID), ("elemdelim", pgt.CHAR),
    ("range_subtype", pgt.OID), ("attrtypoids", pgt.ARRAY_OF[pgt.OID]),
    ("attrnames", pgt.ARRAY_OF[pgt.TEXT]), ("depth", pgt.INT4), ("basetype_name", pgt.TEXT),
    ("elemtype_name", pgt.TEXT), ("range_subtype_name", pgt.TEXT),
)
_INTROSPECTION_HEAD = "WITH RECURSIVE typeinfo_tree("


def is_type_introspection(sql: str) -> bool:
    """Whether ``sql`` is asyncpg's type introspection query (a prefix check)."""
    return sql.lstrip().startswith(_INTROSPECTION_HEAD) and "pg_range" in sql


def type_introspection_rows(oids: list[int] | None) -> list[tuple[object, ...]]:
    """What PostgreSQL answers to asyncpg's type introspection for built-in ``oids``.

    DuckDB's ``pg_catalog`` has neither ``pg_range`` nor PostgreSQL's array types,
    so the query cannot run there; asyncpg sends it for array types (its codecs for
    arrays are built from this answer). Unknown OIDs get no row, as PostgreSQL
    gives none for an OID it does not have.
    """
    rows: dict[tuple[int, int], tuple[object, ...]] = {}

    def add(oid: int, depth: int) -> None:
        elem = pgt.ELEMENT_OF.get(oid)
        if elem is not None and elem in _BUILTIN_NAMES:
            name = "_" + _BUILTIN_NAMES[elem][0]
            rows[(oid, depth)] = (oid, "pg_catalog", name, "b", None, elem, ",", None, None, None,
                                  depth, None, _BUILTIN_NAMES[elem][1], None)
            add(elem, depth + 1)
        elif oid in _BUILTIN_NAMES:
            rows[(oid, depth)] = (oid, "pg_catalog", _BUILTIN_NAMES[oid][0], "b", None, 0, None,
                                  None, None, None, depth, None, "-", None)

    for oid in oids or []:
        if oid is not None:
            add(int(oid), 0)
    return sorted(rows.values(), key=lambda r: -int(r[10]))  # type: ignore[arg-type]
