"""The column names PostgreSQL gives unaliased select-list items (its FigureColname).

Rules this module keeps:

* A column reference is named by its column, a function call by its function (a window
  call by its function; ``now()`` ``now``, ``current_timestamp`` its own name), a cast by
  what it casts (or else the type), ``CASE`` by its ``ELSE`` result when that is a column
  or a function (else ``case``), ``ARRAY[...]``/``ARRAY(...)`` ``array``, ``EXISTS``
  ``exists``, a scalar subquery by its own first column; anything else is ``?column?``.
* :func:`postgres_names` answers for a whole query text: DuckDB names unaliased items by
  their SQL text (``1``, ``"version"()``), so the DuckDB backend asks here, and only when
  a result has such a name (plain names never pay for a parse). Unquoted aliases are
  folded to lower case, as PostgreSQL does.
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from pgbarrier.sql.catalog_rewrite import folded
from pgbarrier.sql.dialect import PgBarrier

#: sqlglot function classes whose PostgreSQL name differs from their sql_name()
PG_FUNC_NAMES = {"GroupConcat": "string_agg", "CurrentVersion": "version",
                 "CurrentSchema": "current_schema", "CurrentUser": "current_user",
                 "SessionUser": "session_user", "CurrentDatabase": "current_database",
                 "CurrentSchemas": "current_schemas", "ArrayToString": "array_to_string",
                 "ArrayAgg": "array_agg", "ExplodingGenerateSeries": "generate_series",
                 "Explode": "unnest", "Unnest": "unnest", "Substring": "substring",
                 "Count": "count", "Coalesce": "coalesce", "Nullif": "nullif", "Max": "max",
                 "Min": "min", "Sum": "sum", "Avg": "avg", "RegexpLike": "?column?",
                 "TimestampTrunc": "date_trunc", "DateTrunc": "date_trunc",
                 "TimeToStr": "to_char", "JSONObject": "json_build_object",
                 "ArrayContainsAll": "?column?", "JSONExtract": "?column?",
                 "JSONExtractScalar": "?column?", "JSONBExtract": "?column?",
                 "JSONBExtractScalar": "?column?", "ArrayContainedBy": "?column?",
                 "ArrayOverlaps": "?column?", "JSONBContains": "?column?",
                 "JSONBContainsTopKey": "?column?", "JSONArrayAgg": "json_agg",
                 "JSONObjectAgg": "json_object_agg", "JSONBObjectAgg": "jsonb_object_agg"}


def _called(node: exp.Expr) -> str:
    """``pow`` or ``power``, as the call was written (its name token's length)."""
    return "pow" if node.meta.get("end", 0) - node.meta.get("start", 0) == 2 else "power"


def type_name(dtype: exp.Expr) -> str | None:
    """Lower-case bare name of a cast target (``pg_catalog.`` dropped), ``[]`` suffixed."""
    if isinstance(dtype, exp.ObjectIdentifier):
        return dtype.name.lower()
    if isinstance(dtype, exp.DataType):
        if dtype.this == exp.DataType.Type.ARRAY and dtype.expressions:
            inner = type_name(dtype.expressions[0])
            return inner + "[]" if inner else None
        if dtype.this == exp.DataType.Type.USERDEFINED:
            kind = dtype.args.get("kind")
            if isinstance(kind, exp.Dot):
                kind = kind.expression
            return kind.name.lower() if kind is not None else None
        return dtype.this.value.lower()
    return None


def figure_colname(node: exp.Expr) -> str | None:
    """PostgreSQL's FigureColname: the name an unaliased select-list item gets."""
    if isinstance(node, exp.Column):
        if node.this is None or isinstance(node.this, exp.Star):
            return None
        return folded(node.this)
    if isinstance(node, exp.Dot):
        right = node.expression
        if isinstance(right, exp.Identifier):
            return folded(right)
        return figure_colname(right)
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, exp.Cast):
        inner = figure_colname(node.this)
        if inner is not None:
            return inner
        name = type_name(node.args["to"])
        if name is None:
            return None
        name = name[:-2] if name.endswith("[]") else name
        return {"int4": "int4", "integer": "int4", "int": "int4", "bigint": "int8",
                "smallint": "int2", "varchar": "varchar", "boolean": "bool",
                "double": "float8", "float": "float4", "varbinary": "bytea"}.get(name, name)
    if isinstance(node, exp.Case):
        default = node.args.get("default")
        strong = default is not None and not isinstance(default, (exp.Literal, exp.Null)) and \
            not (isinstance(default, exp.Cast) and figure_colname(default.this) is None)
        return (figure_colname(default) or "case") if strong else "case"
    if isinstance(node, exp.Exists):
        return "exists"
    if isinstance(node, exp.Array):
        return "array"
    if isinstance(node, exp.Subquery):
        query = node.this
        if isinstance(query, exp.Select) and query.expressions:
            first = query.expressions[0]
            return first.alias_or_name if isinstance(first, exp.Alias) else figure_colname(first)
        return None
    if isinstance(node, exp.Paren):
        return figure_colname(node.this)
    if isinstance(node, exp.Window):
        return figure_colname(node.this)
    if isinstance(node, exp.Bracket):  # a subscript is named by what it subscripts
        return figure_colname(node.this)
    if isinstance(node, exp.Pow):  # power(a, b) / pow(a, b) are calls (with a position)
        return _called(node) if "start" in node.meta else None
    if isinstance(node, exp.CurrentTimestamp):
        # sqlglot reads now() and current_timestamp alike; only the call has a position
        return "now" if "start" in node.meta else "current_timestamp"
    if isinstance(node, exp.Func):
        name = PG_FUNC_NAMES.get(type(node).__name__)
        return name if name is not None else node.sql_name().lower()
    return None


def output_names(select: exp.Select) -> list[tuple[int, str]]:
    """(position, PostgreSQL's name) of each unaliased select-list item to alias."""
    out = []
    for i, item in enumerate(select.expressions):
        if isinstance(item, (exp.Alias, exp.Star)) or (
                isinstance(item, exp.Column) and isinstance(item.this, exp.Star)):
            continue
        name = figure_colname(item) or "?column?"
        if isinstance(item, exp.Column) and name == item.name:
            continue  # DuckDB names it so already (and `x AS "x"` confuses its binder)
        out.append((i, name))
    return out


def first_select(node: exp.Expr) -> exp.Select | None:
    while isinstance(node, exp.SetOperation):
        node = node.this
    if isinstance(node, exp.Subquery):
        return first_select(node.this)
    return node if isinstance(node, exp.Select) else None


def parse_single(sql: str) -> exp.Expr | None:
    """``sql`` parsed in pgbarrier's dialect when it is exactly one statement, else None."""
    try:
        statements = sqlglot.parse(sql, read=PgBarrier)
    except (ParseError, TokenError):
        return None
    return statements[0] if len(statements) == 1 else None


@lru_cache(maxsize=512)
def postgres_names(sql: str, width: int) -> tuple[str, ...] | None:
    """PostgreSQL's names for the ``width`` output columns of ``sql``; None when unknown
    (not one SELECT, a ``*`` in the list, or a different width)."""
    tree = parse_single(sql)
    first = first_select(tree) if tree is not None else None
    if first is None or len(first.expressions) != width:
        return None
    names = []
    for item in first.expressions:
        if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and
                                          isinstance(item.this, exp.Star)):
            return None
        if isinstance(item, exp.Alias):
            ident = item.args.get("alias")
            names.append(item.alias if ident is not None and ident.quoted
                         else item.alias.lower())
        else:
            names.append(figure_colname(item) or "?column?")
    return tuple(names)
