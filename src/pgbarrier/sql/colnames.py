"""The column names PostgreSQL gives unaliased select-list items (its FigureColname).

Rules this module keeps:

* PostgreSQL's FigureColnameInternal, with its strengths: a column reference is named by
  its column, a function call by its function's name as the client wrote it (lower case
  unless quoted; a window call by its function), PostgreSQL's special forms by the
  function they are (``trim(...)`` ``btrim`` / ``ltrim`` / ``rtrim``, ``position``,
  ``substring``, ``overlay``, ``extract``, ``date_part``, ``current_date``,
  ``current_timestamp``, ``now``...), ``coalesce`` / ``greatest`` / ``least`` /
  ``nullif`` by themselves, a cast by what it casts when that has a name (a column or a
  function), else by the target type's internal name (``int4``, ``int8``, ``numeric``,
  ``bpchar``, ``varchar``, ``float8``, ``bool``, ``timestamptz``...), ``CASE`` by its
  ``ELSE`` result when that is a column or a function (else ``case``),
  ``ARRAY[...]``/``ARRAY(...)`` ``array``, ``ROW(...)`` ``row``, ``EXISTS`` ``exists``, a
  scalar subquery by its own first column, a subscript by what it subscripts; anything
  else (operators, literals) is ``?column?``.
* Statements are parsed with :class:`PgWritten`: pgbarrier's dialect keeping, on every
  function node, the name its call was written with (sqlglot normalises ``array_length``
  to ``ARRAY_SIZE``, ``strpos`` to ``STR_POSITION``...).
* :func:`postgres_names` answers for a whole query text: DuckDB names unaliased items by
  their SQL text (``1``, ``"version"()``) or by its own function names, so the DuckDB
  backend asks here (cached per text). Unquoted aliases are folded to lower case, as
  PostgreSQL does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from pgbarrier.errors import PgError
from pgbarrier.sql.catalog_rewrite import folded
from pgbarrier.sql.dialect import PgBarrier

#: meta key of the name a function call was written with
WRITTEN = "pg_name"


def _marked(parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A special-form parser (``TRIM(...)``, ``EXTRACT(...)``) whose node keeps its name."""
    def run(self: Any) -> Any:
        name = self._tokens[self._index - 2].text if self._index >= 2 else None
        node = parse(self)
        if isinstance(node, exp.Expr) and name is not None:
            node.meta.setdefault(WRITTEN, name)
        return node
    return run


class _WrittenParser(PgBarrier.Parser):
    FUNCTION_PARSERS = {k: _marked(v) for k, v in PgBarrier.Parser.FUNCTION_PARSERS.items()}


class PgWritten(PgBarrier):
    """pgbarrier's dialect, function nodes keeping the names they were written with."""

    ORIGINAL_NAME_META_KEY = WRITTEN
    Parser = _WrittenParser


#: sqlglot function classes (no written name: keyword forms) -> PostgreSQL's name
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
                 "JSONObjectAgg": "json_object_agg", "JSONBObjectAgg": "jsonb_object_agg",
                 "CurrentDate": "current_date", "CurrentTime": "current_time",
                 "CurrentTimestamp": "current_timestamp", "Localtime": "localtime",
                 "Localtimestamp": "localtimestamp", "CurrentRole": "current_role",
                 "CurrentCatalog": "current_catalog", "Greatest": "greatest",
                 "Least": "least", "StrPosition": "position", "Extract": "extract",
                 "Overlay": "overlay", "AtTimeZone": "timezone",
                 "StructExtract": "?column?"}

#: a cast's target type (sqlglot's name, lower case) -> PostgreSQL's internal type name
PG_TYPE_NAMES = {"int": "int4", "integer": "int4", "bigint": "int8", "smallint": "int2",
                 "tinyint": "int2", "decimal": "numeric", "bigdecimal": "numeric",
                 "double": "float8", "float": "float4", "real": "float4",
                 "boolean": "bool", "char": "bpchar", "nchar": "bpchar", "nvarchar": "varchar",
                 "timestamptz": "timestamptz", "timestampltz": "timestamptz",
                 "datetime": "timestamp", "timestampntz": "timestamp",
                 "varbinary": "bytea", "binary": "bytea", "blob": "bytea", "bit": "bit",
                 "varbit": "varbit", "serial": "int4", "bigserial": "int8",
                 "smallserial": "int2", "money": "money", "timetz": "timetz"}


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


def written_name(node: exp.Expr) -> str | None:
    """The name a function call was written with, as PostgreSQL names its column (lower
    case unless it was quoted); None for a node that is not such a call."""
    if isinstance(node, exp.Anonymous):
        this = node.this
        if isinstance(this, exp.Identifier):
            return this.name if this.quoted else this.name.lower()
        return node.name.lower()
    if not isinstance(node, exp.Func):
        return None
    name = node.meta.get(WRITTEN)
    if isinstance(name, str):
        low = name.lower()
        if low == "trim" and isinstance(node, exp.Trim):
            where = str(node.args.get("position") or "").upper()
            return {"LEADING": "ltrim", "TRAILING": "rtrim"}.get(where, "btrim")
        return low
    if isinstance(node, exp.Pow):
        return _called(node) if "start" in node.meta else None
    found = PG_FUNC_NAMES.get(type(node).__name__)
    return found if found is not None else node.sql_name().lower()


def _figure(node: exp.Expr) -> tuple[str | None, int]:
    """(name, strength) as PostgreSQL's FigureColnameInternal: 2 a strong name (a column,
    a function), 1 a cast's type name or ``case``, 0 none."""
    if isinstance(node, exp.Column):
        if node.this is None or isinstance(node.this, exp.Star):
            return None, 0
        return folded(node.this), 2
    if isinstance(node, exp.Dot):
        right = node.expression
        if isinstance(right, exp.Identifier):
            return folded(right), 2
        return _figure(right)
    if isinstance(node, (exp.Cast, exp.TryCast)):
        name, strength = _figure(node.this)
        if strength > 1:
            return name, strength
        found = type_name(node.args["to"])
        if found is None:
            return None, 0
        found = found.rstrip("[]") if found.endswith("[]") else found
        return PG_TYPE_NAMES.get(found, found), 1
    if isinstance(node, exp.Case):
        default = node.args.get("default")
        if default is not None:
            name, strength = _figure(default)
            if strength > 1:
                return name, strength
        return "case", 1
    if isinstance(node, exp.Interval):
        return "interval", 1  # interval '1 day': a cast of a literal
    if isinstance(node, exp.Exists):
        return "exists", 2
    if isinstance(node, exp.Array):
        return "array", 2
    if isinstance(node, exp.Struct) or (isinstance(node, exp.Anonymous) and
                                         node.name.lower() == "row"):
        return "row", 2
    if isinstance(node, exp.Subquery):
        query = node.this
        while isinstance(query, (exp.SetOperation, exp.Subquery)):  # its first arm names it
            query = query.this
        if isinstance(query, exp.Values):
            return "column1", 2
        if isinstance(query, exp.Select) and query.expressions:
            first = query.expressions[0]
            if isinstance(first, exp.Alias):
                return first.alias_or_name, 2
            return (figure_colname(first) or "?column?"), 2
        return None, 0
    if isinstance(node, (exp.Paren, exp.Window, exp.Filter, exp.WithinGroup)):
        return _figure(node.this)
    if isinstance(node, exp.Bracket):  # a subscript is named by what it subscripts
        return _figure(node.this)
    if isinstance(node, exp.Collate):
        return _figure(node.this)
    if isinstance(node, exp.Binary) and isinstance(node.meta.get(WRITTEN), str):
        return node.meta[WRITTEN].lower(), 2  # mod(a, b): a call sqlglot reads as `%`
    if isinstance(node, exp.Binary) and isinstance(node, exp.Func) and \
            not isinstance(node, exp.Pow) and not isinstance(node.meta.get(WRITTEN), str):
        return None, 0  # an operator sqlglot reads as a function (AND, OR, ~*): no name
    if isinstance(node, exp.AtTimeZone):
        return "timezone", 2  # PostgreSQL's call behind it
    if isinstance(node, (exp.Func, exp.Anonymous)):
        name = written_name(node)
        if name is None or name == "?column?":
            return None, 0
        return name, 2
    return None, 0


def figure_colname(node: exp.Expr) -> str | None:
    """PostgreSQL's FigureColname: the name an unaliased select-list item gets."""
    return _figure(node)[0]


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
        statements = sqlglot.parse(sql, read=PgWritten)
    except (ParseError, TokenError):
        return None
    return statements[0] if len(statements) == 1 else None


def parse_query(sql: str) -> exp.Expr | None:
    """:func:`parse_single`, a query in parentheses as the query itself: ``(SELECT 1)`` and
    ``((SELECT 1))`` are the SELECT (parentheses with nothing of their own, no alias, order
    or limit; PostgreSQL's ``select_with_parens``)."""
    tree = parse_single(sql)
    while isinstance(tree, exp.Subquery) and not any(
            v for k, v in tree.args.items() if k != "this"):
        tree = tree.this
    return tree


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


def duplicate_column(names: Iterable[str]) -> PgError | None:
    """PostgreSQL's 42701 ``column "a" specified more than once`` for the first of a
    relation's column ``names`` that repeats, else None."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return PgError(f'column "{name}" specified more than once', sqlstate="42701")
        seen.add(name)
    return None
