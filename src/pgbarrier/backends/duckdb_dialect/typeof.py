"""What type an operand of a client statement visibly has: what the transforms decide by.

PostgreSQL picks an operator or a function by its operands' types (``arr || 4`` appends,
``'a' || 'b'`` concatenates, a bare ``'{1,2}'`` compared with an ``int[]`` column is an
array); DuckDB would need the same knowledge written out. Rules this module keeps:

* :class:`Context` answers :meth:`Context.type_of` for an expression of the statement as a
  sqlglot ``DataType`` (as DuckDB names its types), or None when it is not known. Known:
  casts, literals (a string literal is :data:`UNKNOWN`, PostgreSQL's ``unknown``),
  ``ARRAY[...]``, subscripts and slices, ``||``, date/time arithmetic, JSON operators,
  the functions of :data:`_RESULT` and columns.
* A column's type comes from the session's column types of the tables the statement names
  (not CTEs), matched by qualifier (table or alias) or, unqualified, by a name only one
  type answers for. Those types are only asked for when a transform needs one: on the
  first pass (:attr:`Context.columns` None) a question about a column marks
  :attr:`Context.wants_columns`, and the translation is made again with the types
  (``duckdb_dialect.translate``). A column of a subquery in FROM that renames it, a
  parameter, or anything else is None: the transforms then leave DuckDB's reading.
* ``jsonb`` and ``json`` are both DuckDB's ``JSON`` for a column (DuckDB keeps no
  difference); a cast or a ``jsonb_*`` function says which.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlglot import exp

__all__ = ["Context", "UNKNOWN", "build", "is_array", "is_json", "is_text", "is_unknown",
           "element", "kind"]

T = exp.DataType.Type

#: PostgreSQL's ``unknown``: a string literal (or NULL) whose type its context decides
UNKNOWN = exp.DataType(this=T.UNKNOWN)

_TEXT = (T.TEXT, T.VARCHAR, T.NVARCHAR, T.CHAR, T.NCHAR, T.BPCHAR, T.NAME)
_JSON = (T.JSON, T.JSONB)
_INTS = (T.TINYINT, T.SMALLINT, T.INT, T.BIGINT, T.UTINYINT, T.USMALLINT, T.UINT, T.UBIGINT,
         T.INT128, T.UINT128)
_NUMBERS = (*_INTS, T.DECIMAL, T.FLOAT, T.DOUBLE, T.BIGDECIMAL)
_TIMESTAMPS = (T.TIMESTAMP, T.DATETIME, T.TIMESTAMP_S, T.TIMESTAMP_MS, T.TIMESTAMP_NS,
               T.TIMESTAMPNTZ)
_TIMESTAMPTZ = (T.TIMESTAMPTZ, T.TIMESTAMPLTZ)


def build(text: str, dialect: str = "duckdb") -> exp.DataType | None:
    """A DataType from its name (DuckDB's by default); None when sqlglot cannot read it."""
    try:
        return exp.DataType.build(text, dialect=dialect)
    except Exception:  # noqa: BLE001 - a user type, an ENUM...: not known here
        return None


def kind(t: exp.DataType | None) -> str | None:
    """A coarse name of ``t``: array, json, jsonb, text, int, number, bool, date, timestamp,
    timestamptz, time, interval, bytea, unknown; None otherwise."""
    if t is None:
        return None
    this = t.this
    if this in (T.ARRAY, T.LIST):
        return "array"
    if this == T.JSONB:
        return "jsonb"
    if this == T.JSON:
        return "json"
    if this in _TEXT:
        return "text"
    if this in _INTS:
        return "int"
    if this in _NUMBERS:
        return "number"
    if this == T.BOOLEAN:
        return "bool"
    if this == T.DATE:
        return "date"
    if this in _TIMESTAMPS:
        return "timestamp"
    if this in _TIMESTAMPTZ:
        return "timestamptz"
    if this in (T.TIME, T.TIMETZ):
        return "time"
    if this == T.INTERVAL:
        return "interval"
    if this in (T.VARBINARY, T.BINARY, T.BLOB):
        return "bytea"
    if this == T.UNKNOWN:
        return "unknown"
    return None


def is_array(t: exp.DataType | None) -> bool:
    return kind(t) == "array"


def is_json(t: exp.DataType | None) -> bool:
    return kind(t) in ("json", "jsonb")


def is_text(t: exp.DataType | None) -> bool:
    return kind(t) == "text"


def is_unknown(t: exp.DataType | None) -> bool:
    return kind(t) == "unknown"


def element(t: exp.DataType) -> exp.DataType | None:
    """The element type of array type ``t``."""
    return t.expressions[0] if t.expressions and isinstance(t.expressions[0], exp.DataType) \
        else None


def array_of(t: exp.DataType | None) -> exp.DataType | None:
    if t is None:
        return None
    return exp.DataType(this=T.ARRAY, expressions=[t.copy()], nested=True)


_DATE, _TS, _TSTZ, _INTERVAL, _TIME = (build(n) for n in
                                       ("DATE", "TIMESTAMP", "TIMESTAMPTZ", "INTERVAL", "TIME"))
_INT4, _INT8, _NUMERIC, _FLOAT8 = (build(n) for n in ("INT", "BIGINT", "DECIMAL", "DOUBLE"))
_BOOL, _TEXT_T, _JSON_T, _JSONB_T = (build(n) for n in ("BOOLEAN", "TEXT", "JSON", "JSONB"))

#: functions (lower case) -> their result type, or the index of the argument whose type it is
_RESULT: dict[str, exp.DataType | int] = {
    "now": _TSTZ, "transaction_timestamp": _TSTZ, "statement_timestamp": _TSTZ,
    "clock_timestamp": _TSTZ, "to_timestamp": _TSTZ, "make_timestamptz": _TSTZ,
    "make_timestamp": _TS, "make_date": _DATE, "to_date": _DATE, "make_time": _TIME,
    "make_interval": _INTERVAL, "age": _INTERVAL, "justify_days": _INTERVAL,
    "justify_hours": _INTERVAL, "justify_interval": _INTERVAL,
    "date_part": _FLOAT8, "to_char": _TEXT_T, "to_number": _NUMERIC,
    "array_append": 0, "array_prepend": 1, "array_cat": 0, "array_remove": 0,
    "array_replace": 0, "string_to_array": build("TEXT[]"), "array_to_string": _TEXT_T,
    "array_length": _INT4, "array_upper": _INT4, "array_lower": _INT4,
    "array_ndims": _INT4, "cardinality": _INT4, "array_position": _INT4,
    "array_positions": build("INT[]"), "array_dims": _TEXT_T,
    "to_json": _JSON_T, "to_jsonb": _JSONB_T, "json_build_object": _JSON_T,
    "jsonb_build_object": _JSONB_T, "json_build_array": _JSON_T,
    "jsonb_build_array": _JSONB_T, "json_agg": _JSON_T, "jsonb_agg": _JSONB_T,
    "json_object_agg": _JSON_T, "jsonb_object_agg": _JSONB_T, "jsonb_set": _JSONB_T,
    "jsonb_insert": _JSONB_T, "jsonb_strip_nulls": _JSONB_T, "json_strip_nulls": _JSON_T,
    "jsonb_pretty": _TEXT_T, "json_extract_path": _JSON_T, "jsonb_extract_path": _JSONB_T,
    "json_extract_path_text": _TEXT_T, "jsonb_extract_path_text": _TEXT_T,
    "json_typeof": _TEXT_T, "jsonb_typeof": _TEXT_T, "array_to_json": _JSON_T,
    "row_to_json": _JSON_T, "json_array_length": _INT4, "jsonb_array_length": _INT4,
    "json_array_elements": _JSON_T, "jsonb_array_elements": _JSONB_T,
    "json_array_elements_text": _TEXT_T, "jsonb_array_elements_text": _TEXT_T,
    "json_object_keys": _TEXT_T, "jsonb_object_keys": _TEXT_T,
    "length": _INT4, "lower": _TEXT_T, "upper": _TEXT_T, "concat": _TEXT_T,
    "substring": _TEXT_T, "substr": _TEXT_T, "trim": _TEXT_T, "replace": _TEXT_T,
    "coalesce": -1, "nullif": 0, "greatest": -1, "least": -1,
}


def _function_name(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    if isinstance(node, exp.Func):
        return node.sql_name().lower()
    return None


class Context:
    """The type knowledge of one statement (see the module's rules)."""

    def __init__(self, tree: exp.Expr,
                 columns: Mapping[str, Mapping[str, exp.DataType]] | None,
                 sql: str = "") -> None:
        #: the statement's text (an error's position is found in it)
        self.sql = sql
        #: table (lower case) -> {column (lower case): type}; None: not asked for yet
        self.columns = columns
        #: a transform asked for a column's type the first pass could not know
        self.wants_columns = False
        #: id -> (node, its type before the rewrite that made it)
        self._known: dict[int, tuple[exp.Expr, exp.DataType]] = {}
        ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
        self.tables: list[str] = []
        self.aliases: dict[str, str] = {}
        for table in tree.find_all(exp.Table):
            if not isinstance(table.this, exp.Identifier):
                continue
            name = table.name.lower()
            if table.args.get("db") is None and name in ctes:
                continue
            if name not in self.tables:
                self.tables.append(name)
            self.aliases[name] = name
            if table.alias:
                self.aliases[table.alias.lower()] = name

    # -- columns -----------------------------------------------------------------

    def column_type(self, column: exp.Column) -> exp.DataType | None:
        if not self.tables:
            return None
        if self.columns is None:
            self.wants_columns = True
            return None
        name = column.name.lower()
        qualifier = column.table.lower() if column.table else None
        if qualifier is not None:
            table = self.aliases.get(qualifier)
            found = [self.columns.get(table, {}).get(name)] if table else []
        else:
            found = [cols.get(name) for t in self.tables
                     if (cols := self.columns.get(t)) is not None]
        types = {t.sql("duckdb"): t for t in found if t is not None}
        return next(iter(types.values())) if len(types) == 1 else None

    def target_type(self, table: exp.Expr, column: str) -> exp.DataType | None:
        """The type of ``column`` of the table an INSERT / UPDATE writes."""
        if not isinstance(table, exp.Table):
            return None
        if self.columns is None:
            self.wants_columns = True
            return None
        return self.columns.get(table.name.lower(), {}).get(column.lower())

    def target_columns(self, table: exp.Expr) -> list[str] | None:
        """The columns of ``table`` in order (an INSERT without a column list)."""
        if not isinstance(table, exp.Table):
            return None
        if self.columns is None:
            self.wants_columns = True
            return None
        cols = self.columns.get(table.name.lower())
        return list(cols) if cols is not None else None

    # -- expressions -------------------------------------------------------------

    def remember(self, new: exp.Expr, t: exp.DataType | None) -> None:
        """``new`` replaces a node of type ``t`` (its type, whatever ``new`` looks like)."""
        if t is not None:
            self._known[id(new)] = (new, t)

    def type_of(self, node: exp.Expr | None) -> exp.DataType | None:
        """``node``'s type as far as it is visible, or None."""
        if node is None:
            return None
        hit = self._known.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        if isinstance(node, (exp.Paren, exp.Alias, exp.Filter, exp.Window)):
            return self.type_of(node.this)
        if isinstance(node, (exp.JSONBDeleteAtPath, exp.JSONBObjectAgg)):
            return _JSONB_T
        if isinstance(node, (exp.JSONObjectAgg, exp.JSONArrayAgg)):
            return _JSON_T
        if isinstance(node, (exp.Cast, exp.TryCast)):
            to = node.args.get("to")
            return to if isinstance(to, exp.DataType) else None
        if isinstance(node, exp.Literal):
            if node.is_string:
                return UNKNOWN
            text = node.this
            if text.isdigit():
                return _INT4 if int(text) < 2**31 else _INT8 if int(text) < 2**63 else _NUMERIC
            return _NUMERIC
        if isinstance(node, exp.Null):
            return UNKNOWN
        if isinstance(node, exp.Boolean):
            return _BOOL
        if isinstance(node, exp.Neg):
            return self.type_of(node.this)
        if isinstance(node, exp.Column):
            return self.column_type(node)
        if isinstance(node, exp.Array):
            return self._array(node)
        if isinstance(node, exp.Bracket):
            base = self.type_of(node.this)
            if not is_array(base):
                return None
            if any(isinstance(e, exp.Slice) for e in node.expressions):
                return base
            inner = element(base)
            for _ in node.expressions[1:]:
                inner = element(inner) if is_array(inner) else None
            return inner
        if isinstance(node, exp.DPipe):
            left, right = self.type_of(node.this), self.type_of(node.expression)
            for side in (left, right):
                if is_array(side):
                    return side
            for side in (left, right):
                if is_json(side):
                    return _JSONB_T
            return _TEXT_T
        if isinstance(node, (exp.JSONExtract, exp.JSONBExtract)):
            base = self.type_of(node.this)
            return base if is_json(base) else _JSON_T
        if isinstance(node, (exp.JSONExtractScalar, exp.JSONBExtractScalar)):
            return _TEXT_T
        if isinstance(node, (exp.Add, exp.Sub)):
            return self._arithmetic(node)
        if isinstance(node, (exp.Mul, exp.Div)):
            left = self.type_of(node.this)
            return left if kind(left) == "interval" else self._numeric(node)
        if isinstance(node, (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.And,
                             exp.Or, exp.Not, exp.Is, exp.In, exp.Like, exp.ILike)):
            return _BOOL
        if isinstance(node, (exp.CurrentDate,)):
            return _DATE
        if isinstance(node, exp.CurrentTimestamp):
            return _TSTZ
        if isinstance(node, (exp.Localtimestamp,)):
            return _TS
        if isinstance(node, exp.Interval):
            return _INTERVAL
        if isinstance(node, exp.Case):
            for branch in [*(i.args.get("true") for i in node.args.get("ifs") or []),
                           node.args.get("default")]:
                t = self.type_of(branch)
                if t is not None and not is_unknown(t):
                    return t
            return None
        if isinstance(node, exp.Coalesce):
            for arg in [node.this, *node.expressions]:
                t = self.type_of(arg)
                if t is not None and not is_unknown(t):
                    return t
            return None
        name = _function_name(node)
        if name is not None and name in _RESULT:
            result = _RESULT[name]
            if isinstance(result, exp.DataType):
                return result
            args = node.expressions if isinstance(node, exp.Anonymous) else \
                [a for a in node.args.values() if isinstance(a, exp.Expr)]
            if result < 0:
                for arg in args:
                    t = self.type_of(arg)
                    if t is not None and not is_unknown(t):
                        return t
                return None
            return self.type_of(args[result]) if result < len(args) else None
        return None

    def _array(self, node: exp.Array) -> exp.DataType | None:
        inner: exp.DataType | None = None
        for item in node.expressions:
            t = self.type_of(item)
            if t is not None and not is_unknown(t):
                inner = t
                break
        else:
            if node.expressions and all(is_unknown(self.type_of(i)) for i in node.expressions):
                inner = _TEXT_T
        return array_of(inner)

    def _numeric(self, node: exp.Binary) -> exp.DataType | None:
        left, right = self.type_of(node.this), self.type_of(node.expression)
        kinds = (kind(left), kind(right))
        if kinds == ("int", "int"):
            return left if left.this == T.BIGINT else right
        if all(k in ("int", "number") for k in kinds):
            return _FLOAT8 if T.DOUBLE in (left.this, right.this) else _NUMERIC
        return None

    def _arithmetic(self, node: exp.Add | exp.Sub) -> exp.DataType | None:
        left, right = self.type_of(node.this), self.type_of(node.expression)
        kl, kr = kind(left), kind(right)
        sub = isinstance(node, exp.Sub)
        if kl == "date":
            if kr == "int":
                return _DATE
            if kr in ("date",) and sub:
                return _INT4
            if kr == "unknown" and sub:
                return _INT4
            if kr in ("interval", "time"):
                return _TS
        if kl in ("timestamp", "timestamptz"):
            if kr == "interval":
                return left
            if kr in ("timestamp", "timestamptz", "unknown") and sub:
                return _INTERVAL
            if kr == "unknown":
                return left
        if kl == "int" and kr == "date" and not sub:
            return _DATE
        if kl in ("interval", "time") and kr == "date" and not sub:
            return _TS
        if kl == "interval" and kr in ("timestamp", "timestamptz") and not sub:
            return right
        if kl == "interval" and kr == "interval":
            return _INTERVAL
        if kl == "time" and kr == "interval":
            return _TIME
        if kl == "time" and kr == "time" and sub:
            return _INTERVAL
        if kl in ("json", "jsonb") and sub:
            return _JSONB_T
        return self._numeric(node)
