"""PostgreSQL's SQL as DuckDB should run it: the dialect translation of the DuckDB backend.

Rules this module keeps:

* :func:`translate` answers the text DuckDB should run for a client statement, or the
  statement itself when DuckDB runs it the same. A cheap gate (:func:`may_differ`, substrings
  that signal a difference) decides whether a statement is parsed at all; a gated one is
  parsed with sqlglot (``read="postgres"``), transformed here, and generated for DuckDB
  only when a transform fired (:data:`_TRANSLATED` nodes count as one, for sqlglot's own
  postgres -> duckdb translations), so a statement merely gated keeps its own text.
  Answers are cached per text in a bounded LRU (:data:`CACHE_SIZE`): the same text is
  never translated twice. A statement sqlglot cannot parse (DuckDB's own syntax) keeps its
  text. What DuckDB cannot do as PostgreSQL does is 0A000 naming the feature.
* Covered (each with PostgreSQL's answer):

  - integer ``/`` truncates and ``x / 0`` / ``x % 0`` fail with 22012: no translation, the
    instance runs with ``integer_division = true`` (set by
    :func:`pgbarrier.backends.duckdb_config.lock_down`; DuckDB then raises on a zero
    divisor for every numeric type, as PostgreSQL does), and
    :mod:`pgbarrier.backends.duckdb_errors` maps the error. This covers every integer
    operand (literals, columns, parameters, expressions) with no type knowledge needed.
    Known difference: ``sum(bigint)`` is ``numeric`` in PostgreSQL but an integer in
    DuckDB, so ``sum(b) / n`` truncates here. DuckDB's ``//`` has no interval form, so a
    dividend that is visibly an interval (a literal or cast, ``age()``, sums and
    differences of those) is divided with DuckDB's ``"/"(a, b)`` function; one that is
    not visibly so (an ``interval`` column, ``max(t) - min(t)``) is 0A000 naming it
    (:mod:`.duckdb_errors`): the message says to write it as one.
  - ``'\\x...'::bytea`` (PostgreSQL's hex format) -> ``from_hex('...')``; a literal that
    is not valid hex is PostgreSQL's 22023 (``invalid hexadecimal digit: "z"``, ``invalid
    hexadecimal data: odd number of digits``).
  - ``INSERT INTO t [(cols)] VALUES (..., '\\x...', ...)``: a bare hex literal bound for a
    ``bytea`` (BLOB) column is read as hex too (DuckDB's own cast would store the text's
    escapes: ``'\\xdeadbeef'`` as 7 bytes). The column types come from the session at each
    execution of such a statement (a translation cached per text and types); a bare literal
    anywhere else (``WHERE b = '\\x..'``) keeps DuckDB's reading.
  - ``'{...}'::T[]`` (PostgreSQL's array text: quotes, NULL, nesting) -> a DuckDB list of
    text literals cast to ``T[]``.
  - ``serial`` / ``bigserial`` / ``smallserial`` and ``GENERATED {ALWAYS|BY DEFAULT} AS
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
    ``OVERRIDING SYSTEM VALUE``). ``pg_get_serial_sequence('t', 'c')`` (the catalog's
    macro) answers ``public.<t>_<c>_seq`` when that sequence exists.
  - ``#>`` / ``#>>`` with a literal path -> ``json_extract`` / ``json_extract_string``
    with a JSON path (a path element of digits indexes an array); a non-literal path is
    0A000. ``->`` / ``->>`` are DuckDB's own, the same (sqlglot's JSON paths when the
    statement is translated for something else).
  - ``a @> b`` / ``a <@ b`` where either side is visibly ``json``/``jsonb`` (a cast) ->
    ``json_contains`` (PostgreSQL's containment, the other side read as JSON); on two
    ``jsonb`` columns DuckDB has no such operator: 0A000 (:mod:`.duckdb_errors`). On
    arrays ``@>`` is DuckDB's own, the same.
  - ``json[b]_build_object`` -> ``json_object``; ``json[b]_build_array`` -> ``json_array``
    (the same values; DuckDB prints JSON without PostgreSQL's blanks);
    ``json[b]_array_length`` -> ``json_array_length`` of an array, else PostgreSQL's
    22023 (DuckDB answers 0); ``json[b]_agg`` ->
    ``json_group_array`` and ``json[b]_object_agg`` -> ``json_group_object`` (with ORDER BY
    or other options: 0A000); ``to_jsonb`` -> ``to_json``; ``json[b]_typeof`` -> DuckDB's
    ``json_type`` named as PostgreSQL does (``object``, ``number``...); ``jsonb ? key`` ->
    a top-level key, string element or the string itself, as PostgreSQL (``?|`` / ``?&``
    are not translated).
  - ``to_char(timestamp, 'literal format')`` -> ``strftime`` for the patterns in
    :data:`_TO_CHAR`; any other pattern, a non-literal format or a number's ``to_char``
    is 0A000.
  - ``generate_series`` in the select list -> ``unnest(generate_series(...))`` (one row
    per value), cast to ``integer`` when every argument is an ``integer`` literal, as
    PostgreSQL types it (DuckDB's values are ``bigint``; other arguments keep that).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import ParseError, TokenError

from pgbarrier.backends.duckdb_ddl import lengths
from pgbarrier.backends.duckdb_numeric import STORAGE as NUMERIC_STORAGE, literal_type
from pgbarrier.errors import FeatureNotSupported, PgError

__all__ = ["CACHE_SIZE", "translate", "translate_cached", "may_differ"]

#: statement texts whose translation is remembered
CACHE_SIZE = 2048

#: substrings of a statement DuckDB may run differently: characters as written, then words
#: in the lower-cased text (plain ``in`` tests: a case-insensitive regex costs ten times more)
_GATE_CHARS = ("{", "#>", "@>", "<@", "'\\x", "?")
_GATE_WORDS = ("char", "numeric", "decimal", "bytea", "tz(", "time(", " bit(", "varbit(", "serial", "identity", "generate_series", "to_char", "_build_", "jsonb",
               "json_agg", "json_object_agg", "json_typeof")

#: sqlglot's own postgres -> duckdb translations that make a generated text worth running
_TRANSLATED = (exp.ExplodingGenerateSeries,)

#: time types DuckDB refuses a precision on (``timestamptz(3)``, ``time(2)``)
_NO_PRECISION = (exp.DataType.Type.TIMESTAMPTZ, exp.DataType.Type.TIME, exp.DataType.Type.TIMETZ)
#: types a length may be declared on (duckdb_ddl.lengths)
_LENGTHS = (exp.DataType.Type.VARCHAR, exp.DataType.Type.NVARCHAR, exp.DataType.Type.CHAR,
            exp.DataType.Type.NCHAR, exp.DataType.Type.BPCHAR)  # a bit(n) cast is DuckDB's
_SERIALS = {exp.DataType.Type.SERIAL: exp.DataType.Type.INT,
            exp.DataType.Type.BIGSERIAL: exp.DataType.Type.BIGINT,
            exp.DataType.Type.SMALLSERIAL: exp.DataType.Type.SMALLINT}
_BINARY = (exp.DataType.Type.VARBINARY, exp.DataType.Type.BINARY, exp.DataType.Type.BLOB)
_JSON_BUILD = {"json_build_object": "json_object", "jsonb_build_object": "json_object",
               "json_build_array": "json_array", "jsonb_build_array": "json_array",
               "jsonb_agg": "json_group_array",
               "to_jsonb": "to_json"}
#: DuckDB's json_type -> PostgreSQL's json[b]_typeof
_JSON_TYPEOF = {"OBJECT": "object", "ARRAY": "array", "VARCHAR": "string",
                "BOOLEAN": "boolean", "NULL": "null", "BIGINT": "number", "UBIGINT": "number",
                "DOUBLE": "number", "HUGEINT": "number", "UHUGEINT": "number"}

#: to_char patterns -> strftime (longest first); other letters are 0A000
_TO_CHAR = [("FMMonth", "%B"), ("FMDay", "%A"), ("FMDD", "%-d"), ("FMMM", "%-m"),
            ("FMHH24", "%-H"), ("FMHH12", "%-I"), ("FMHH", "%-I"), ("FMMI", "%-M"),
            ("FMSS", "%-S"), ("YYYY", "%Y"), ("HH24", "%H"), ("HH12", "%I"), ("Month", None),
            ("Day", None), ("Mon", "%b"), ("Dy", "%a"), ("DDD", "%j"), ("YY", "%y"),
            ("MM", "%m"), ("DD", "%d"), ("HH", "%I"), ("MI", "%M"), ("SS", "%S"),
            ("MS", "%g"), ("US", "%f"), ("AM", "%p"), ("PM", "%p"), ("TZ", "%Z")]
#: PostgreSQL blank-pads Month and Day to 9 characters: strftime cannot
_PADDED = {"Month", "Day"}


class _PostgresText(Postgres):
    """Postgres, with ``to_char`` kept as written (sqlglot maps its format on parsing,
    passing patterns it does not know through as text)."""

    class Parser(Postgres.Parser):
        FUNCTIONS = {**Postgres.Parser.FUNCTIONS,
                     "TO_CHAR": lambda args: exp.Anonymous(this="to_char", expressions=args)}


@dataclass(frozen=True)
class _Answer:
    sql: str | None = None       # the text to run (None: the client's own)
    error: PgError | None = None  # what the client gets instead
    #: an INSERT ... VALUES with bare '\x..' literals: the target table, whose column types
    #: decide which of them are bytea (the translation then depends on them)
    needs_columns: str | None = None


#: a table's (column, DuckDB type) in order, or None when it is not known
ColumnTypes = Callable[[str], "tuple[tuple[str, str], ...] | None"]
_BARE_HEX = re.compile(r"\\x[0-9a-fA-F\s]*\Z")


def may_differ(sql: str) -> bool:
    """The cheap gate: False means DuckDB runs ``sql`` as PostgreSQL would."""
    for chars in _GATE_CHARS:
        if chars in sql:
            return True
    low = sql.lower()
    for word in _GATE_WORDS:
        if word in low:
            return True
    return "/" in sql and ("interval" in low or "age(" in low)


def translate(sql: str, column_types: ColumnTypes | None = None) -> str:
    """The text DuckDB should run for PostgreSQL statement ``sql`` (``sql`` itself, the
    same object, when nothing differs); raises the PgError the client should get.
    ``column_types`` answers a table's columns, for ``INSERT ... VALUES`` of bare
    ``'\\x..'`` literals (asked at each such execution; the translation is cached by the
    text and those types)."""
    if not may_differ(sql):
        return sql
    answer = translate_cached(sql)
    if answer.needs_columns is not None and column_types is not None:
        columns = column_types(answer.needs_columns)
        if columns:
            answer = _translate_typed(sql, columns)
    if answer.error is not None:
        raise answer.error
    return sql if answer.sql is None else answer.sql


@lru_cache(maxsize=CACHE_SIZE)
def translate_cached(sql: str) -> _Answer:
    return _translate(sql, None)


@lru_cache(maxsize=256)
def _translate_typed(sql: str, columns: tuple[tuple[str, str], ...]) -> _Answer:
    return _translate(sql, columns)


def _translate(sql: str, columns: tuple[tuple[str, str], ...] | None) -> _Answer:
    try:
        trees = sqlglot.parse(sql, read=_PostgresText)
    except (ParseError, TokenError):
        return _Answer()
    if len(trees) != 1 or trees[0] is None:
        return _Answer()
    tree = trees[0]
    try:
        fired, prelude = _transform(tree)
        fired = _now_defaults(tree, sql) or fired
        needs = _bare_hex_target(tree) if columns is None else None
        if columns is not None:
            fired = _bare_hex(tree, columns) or fired
    except PgError as err:
        return _Answer(error=err)
    if needs is not None:
        return _Answer(needs_columns=needs)
    if not fired and not any(_in_select_list(n) for n in tree.find_all(*_TRANSLATED)):
        return _Answer()
    try:
        out = tree.sql(dialect="duckdb", unsupported_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.UnsupportedError as err:
        return _Answer(error=FeatureNotSupported(
            f"{str(err).splitlines()[0]} is not supported by pgbarrier on DuckDB"))
    return _Answer(sql="; ".join([*prelude, out]))


def _bare_hex_rows(tree: exp.Expr) -> list[exp.Tuple]:
    """The VALUES rows of an INSERT holding a bare ``'\\x..'`` string literal."""
    if not isinstance(tree, exp.Insert) or not isinstance(tree.expression, exp.Values):
        return []
    return [row for row in tree.expression.expressions if isinstance(row, exp.Tuple) and any(
        isinstance(v, exp.Literal) and v.is_string and _BARE_HEX.match(v.this)
        for v in row.expressions)]


def _bare_hex_target(tree: exp.Expr) -> str | None:
    if not _bare_hex_rows(tree):
        return None
    table = tree.this.this if isinstance(tree.this, exp.Schema) else tree.this
    return table.name if isinstance(table, exp.Table) else None


def _bare_hex(tree: exp.Expr, columns: tuple[tuple[str, str], ...]) -> bool:
    """Read the bare ``'\\x..'`` literals bound for ``BLOB`` columns as PostgreSQL's hex."""
    named = tree.this.expressions if isinstance(tree.this, exp.Schema) else []
    order = [c.name.lower() for c in named] if named else [c.lower() for c, _ in columns]
    types = {c.lower(): t.upper() for c, t in columns}
    fired = False
    for row in _bare_hex_rows(tree):
        for name, value in zip(order, list(row.expressions)):
            if types.get(name) == "BLOB" and isinstance(value, exp.Literal) and \
                    value.is_string and _BARE_HEX.match(value.this):
                value.replace(_bytea(value.this))
                fired = True
    return fired


def _transform(tree: exp.Expr) -> tuple[bool, list[str]]:
    """Rewrite ``tree`` in place; (whether anything changed, statements to run first)."""
    fired = False
    prelude: list[str] = []
    if isinstance(tree, exp.Create) and tree.kind == "TABLE":
        prelude = _serials(tree)
        fired = bool(prelude)
        fired = _length_checks(tree) or fired
    elif isinstance(tree, exp.Alter):
        prelude = _added_serials(tree)
        fired = bool(prelude)
    for node in list(tree.walk()):
        new = _rewrite(node)
        if new is not None and new is not node:
            node.replace(new)
            if node is tree:
                tree = new
            fired = True
    return fired, prelude


def _length_checks(create: exp.Create) -> bool:
    """``varchar(n)`` / ``char(n)`` columns get pgbarrier's length check
    (:mod:`pgbarrier.backends.duckdb_ddl.lengths`)."""
    schema = create.this
    if not isinstance(schema, exp.Schema):
        return False
    fired = False
    for col in schema.expressions:
        kind = col.args.get("kind") if isinstance(col, exp.ColumnDef) else None
        if not isinstance(kind, exp.DataType):
            continue
        check = lengths.column_check(exp.to_identifier(col.name, quoted=True).sql("duckdb"),
                                     kind)
        if check is not None:
            col.append("constraints", exp.ColumnConstraint(kind=exp.CheckColumnConstraint(
                this=sqlglot.parse_one(check, read="duckdb"))))
            fired = True
    return fired


def _result_column(node: exp.Expr) -> bool:
    """``node`` is a SELECT list item itself (perhaps aliased): its value is a result."""
    parent = node.parent
    if isinstance(parent, exp.Alias):
        node, parent = parent, parent.parent
    return isinstance(parent, exp.Select) and node.arg_key == "expressions"


def _rewrite(node: exp.Expr) -> exp.Expr | None:
    if isinstance(node, exp.DataType) and node.this in _NO_PRECISION and node.expressions:
        # DuckDB takes no precision on these: the column keeps microseconds and prints at
        # its declared precision (declared.py records it, pgproto.types rounds on output)
        return exp.DataType(this=node.this)
    if isinstance(node, exp.DataType) and node.this == exp.DataType.Type.DECIMAL and \
            not node.expressions:  # PostgreSQL's unconstrained numeric (duckdb_numeric)
        cast = node.parent
        exact = literal_type(cast.this) if isinstance(cast, exp.Cast) and \
            node.arg_key == "to" else None
        return exp.DataType.build(exact or NUMERIC_STORAGE, dialect="duckdb")
    if isinstance(node, exp.Cast) and isinstance(node.args.get("to"), exp.DataType) and \
            node.args["to"].this in _LENGTHS:
        cut = lengths.cast(node, _result_column(node))
        if cut is not None:
            return cut
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal) and node.this.is_string:
        to = node.args["to"]
        if isinstance(to, exp.DataType) and to.this in _BINARY:
            return _bytea(node.this.this)
        if isinstance(to, exp.DataType) and to.this == exp.DataType.Type.ARRAY \
                and node.this.this.lstrip().startswith("{"):
            return exp.Cast(this=_pg_array(node.this.this), to=to.copy())
    if isinstance(node, (exp.JSONBExtract, exp.JSONBExtractScalar)):
        fn = "json_extract" if isinstance(node, exp.JSONBExtract) else "json_extract_string"
        return exp.Anonymous(this=fn, expressions=[node.this.copy(), _json_path(node.expression)])
    if isinstance(node, exp.Anonymous) and node.name.lower() in _JSON_BUILD:
        return exp.Anonymous(this=_JSON_BUILD[node.name.lower()],
                             expressions=[e.copy() for e in node.expressions])
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("json_typeof", "jsonb_typeof") \
            and len(node.expressions) == 1:
        case = exp.Case(this=exp.Anonymous(this="json_type",
                                           expressions=[node.expressions[0].copy()]))
        for duck, pg in _JSON_TYPEOF.items():
            case = case.when(exp.Literal.string(duck), exp.Literal.string(pg))
        return case
    if isinstance(node, exp.Anonymous) and node.name.lower() in ("json_array_length",
                                                                 "jsonb_array_length") \
            and len(node.expressions) == 1:
        return _array_length(node.expressions[0])
    if isinstance(node, exp.JSONObjectAgg) and len(node.expressions) == 2 and \
            not any(v for k, v in node.args.items() if k != "expressions"):
        return exp.Anonymous(this="json_group_object",
                             expressions=[e.copy() for e in node.expressions])
    if isinstance(node, (exp.JSONArrayAgg, exp.JSONBObjectAgg)):
        plain = {k for k, v in node.args.items() if v is not None and v is not False}
        if isinstance(node, exp.JSONArrayAgg) and plain == {"this"}:
            return exp.Anonymous(this="json_group_array", expressions=[node.this.copy()])
        if isinstance(node, exp.JSONBObjectAgg) and plain == {"this", "expression"}:
            return exp.Anonymous(this="json_group_object",
                                 expressions=[node.this.copy(), node.expression.copy()])
        raise FeatureNotSupported("json_agg / json_object_agg with ORDER BY or options are "
                                  "not supported by pgbarrier on DuckDB")
    if isinstance(node, exp.JSONBContainsTopKey):
        return _key_exists(node.this, node.expression)
    if isinstance(node, (exp.ArrayContainsAll, exp.ArrayContainedBy)) and \
            (_is_json(node.this) or _is_json(node.expression)):
        outer, inner = (node.this, node.expression) if isinstance(node, exp.ArrayContainsAll) \
            else (node.expression, node.this)
        return exp.Anonymous(this="json_contains", expressions=[_as_json(outer),
                                                                 _as_json(inner)])
    if isinstance(node, exp.Div) and _interval_like(node.this):
        # integer_division makes `/` DuckDB's `//`, which has no interval form: call `/`
        return exp.Anonymous(this=exp.to_identifier("/", quoted=True),
                             expressions=[node.this.copy(), node.expression.copy()])
    if isinstance(node, exp.Anonymous) and node.name.lower() == "to_char":
        return _to_char(node)
    if isinstance(node, exp.ExplodingGenerateSeries) and _in_select_list(node) \
            and _int4_args(node):
        return exp.Cast(this=node.copy(), to=exp.DataType.build("INT"))
    return None


_JSON_TYPES = (exp.DataType.Type.JSON, exp.DataType.Type.JSONB)


def _is_json(node: exp.Expr) -> bool:
    to = node.args.get("to") if isinstance(node, exp.Cast) else None
    return isinstance(to, exp.DataType) and to.this in _JSON_TYPES


def _as_json(node: exp.Expr) -> exp.Expr:
    if _is_json(node):
        return node.copy()
    return exp.Cast(this=node.copy(), to=exp.DataType.build("JSON"))


def _key_exists(value: exp.Expr, key: exp.Expr) -> exp.Expr:
    """PostgreSQL's ``jsonb ? text``: a top-level key of an object, a string element of an
    array, or the string itself."""
    doc = _as_json(value)
    kind = exp.Anonymous(this="json_type", expressions=[doc.copy()])
    keys = exp.Anonymous(this="json_keys", expressions=[doc.copy()])
    elements = exp.Anonymous(this="json_extract", expressions=[doc.copy(),
                                                               exp.Literal.string("$[*]")])
    as_json = exp.Anonymous(this="to_json", expressions=[exp.cast(key.copy(), "VARCHAR")])
    return exp.Case(this=kind).when(
        exp.Literal.string("OBJECT"),
        exp.Anonymous(this="list_contains", expressions=[keys, key.copy()])).when(
        exp.Literal.string("ARRAY"),
        exp.Anonymous(this="list_contains", expressions=[elements, as_json])).when(
        exp.Literal.string("VARCHAR"),
        exp.EQ(this=exp.Anonymous(this="json_extract_string",
                                  expressions=[doc.copy(), exp.Literal.string("$")]),
               expression=key.copy())).else_(
        exp.Case().when(exp.Is(this=doc.copy(), expression=exp.Null()), exp.Null())
        .else_(exp.false()))


def _array_length(value: exp.Expr) -> exp.Expr:
    """PostgreSQL's json[b]_array_length: an error for anything but an array (DuckDB: 0)."""
    doc = _as_json(value)
    kind = exp.Anonymous(this="json_type", expressions=[doc.copy()])

    def error(text: str) -> exp.Expr:
        return exp.Anonymous(this="error", expressions=[exp.Literal.string(text)])

    return exp.Case(this=kind).when(
        exp.Literal.string("ARRAY"), exp.cast(
            exp.Anonymous(this="json_array_length", expressions=[doc.copy()]), "INT")).when(
        exp.Literal.string("OBJECT"), error("cannot get array length of a non-array")).else_(
        exp.Case().when(exp.Is(this=doc.copy(), expression=exp.Null()), exp.Null())
        .else_(error("cannot get array length of a scalar")))


def _interval_like(node: exp.Expr) -> bool:
    """``node`` is visibly an interval: a literal or cast, ``age()``, or arithmetic on one."""
    if isinstance(node, exp.Interval):
        return True
    if isinstance(node, exp.Cast):
        to = node.args.get("to")
        return isinstance(to, exp.DataType) and to.this == exp.DataType.Type.INTERVAL
    if isinstance(node, exp.Paren):
        return _interval_like(node.this)
    if isinstance(node, (exp.Add, exp.Sub)):
        return _interval_like(node.this) and _interval_like(node.expression)
    if isinstance(node, (exp.Mul, exp.Div)):
        return _interval_like(node.this)
    return isinstance(node, exp.Anonymous) and node.name.lower() in (
        "age", "justify_days", "justify_hours", "justify_interval")


def _in_select_list(node: exp.Expr) -> bool:
    """``node`` is (inside) an item of a SELECT's list, not a FROM item."""
    child, parent = node, node.parent
    while parent is not None:
        if isinstance(parent, exp.Select):
            return child.arg_key == "expressions"
        if isinstance(parent, (exp.From, exp.Join, exp.Subquery)):
            return False
        child, parent = parent, parent.parent
    return False


def _int4_args(node: exp.Expr) -> bool:
    """Every argument an integer literal PostgreSQL types ``integer``."""
    args = [a for a in node.args.values() if isinstance(a, exp.Expr)]
    return bool(args) and all(
        isinstance(a, exp.Literal) and not a.is_string and a.this.isdigit()
        and int(a.this) < 2**31 or isinstance(a, exp.Neg) and isinstance(a.this, exp.Literal)
        and a.this.this.isdigit() and int(a.this.this) <= 2**31 for a in args)


# -- bytea ---------------------------------------------------------------------------


def _bytea(text: str) -> exp.Expr | None:
    if not text.startswith("\\x"):
        return None  # PostgreSQL's escape format: DuckDB reads \nnn the same way
    digits = re.sub(r"\s", "", text[2:])
    bad = re.search(r"[^0-9a-fA-F]", digits)
    if bad:
        raise PgError.by_sqlstate("22023")(f'invalid hexadecimal digit: "{bad.group()}"',
                                           sqlstate="22023")
    if len(digits) % 2:
        raise PgError.by_sqlstate("22023")("invalid hexadecimal data: odd number of digits",
                                           sqlstate="22023")
    return exp.Anonymous(this="from_hex", expressions=[exp.Literal.string(digits)])


# -- arrays --------------------------------------------------------------------------


def _pg_array(text: str) -> exp.Expr:
    """PostgreSQL's array text as a DuckDB list of text literals (nested for nesting)."""
    value, end = _array_items(text, text.index("{") + 1)
    if text[end:].strip():
        raise _malformed(text)
    return value


def _malformed(text: str) -> PgError:
    return PgError.by_sqlstate("22P02")(f'malformed array literal: "{text}"', sqlstate="22P02")


def _array_items(text: str, i: int) -> tuple[exp.Expr, int]:
    items: list[exp.Expr] = []
    n = len(text)
    while True:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            raise _malformed(text)
        ch = text[i]
        if ch == "}" and not items:
            return exp.Array(expressions=items), i + 1
        if ch == "{":
            item, i = _array_items(text, i + 1)
        elif ch == '"':
            buf, i = [], i + 1
            while i < n and text[i] != '"':
                if text[i] == "\\" and i + 1 < n:
                    i += 1
                buf.append(text[i])
                i += 1
            if i >= n:
                raise _malformed(text)
            item, i = exp.Literal.string("".join(buf)), i + 1
        else:
            start = i
            while i < n and text[i] not in ",}":
                i += 1
            word = text[start:i].strip()
            if not word or "{" in word or '"' in word:
                raise _malformed(text)
            item = exp.Null() if word.upper() == "NULL" else exp.Literal.string(word)
        items.append(item)
        while i < n and text[i].isspace():
            i += 1
        if i < n and text[i] == ",":
            i += 1
            continue
        if i < n and text[i] == "}":
            return exp.Array(expressions=items), i + 1
        raise _malformed(text)


# -- now() defaults -------------------------------------------------------------------


def _now_defaults(tree: exp.Expr, sql: str) -> bool:
    """sqlglot reads ``now()`` and ``CURRENT_TIMESTAMP`` as one node and writes the latter;
    DuckDB keeps a column default as written, and PostgreSQL shows each as the client wrote
    it, so a table's ``DEFAULT now()`` stays ``now()`` when the statement has no
    ``CURRENT_TIMESTAMP`` to tell it from."""
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


# -- serial / identity ---------------------------------------------------------------


def _serials(create: exp.Create) -> list[str]:
    """Make serial and identity columns sequence defaults; the CREATE SEQUENCEs to run."""
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


# -- json paths ----------------------------------------------------------------------


def _json_path(path: exp.Expr) -> exp.Expr:
    if not (isinstance(path, exp.Literal) and path.is_string):
        raise FeatureNotSupported("#> and #>> with a path that is not a literal are not "
                                  "supported by pgbarrier on DuckDB")
    text = path.this.strip()
    if not (text.startswith("{") and text.endswith("}")):
        raise _malformed(path.this)
    items = _pg_array(text).expressions
    parts = ["$"]
    for item in items:
        if not isinstance(item, exp.Literal):
            raise FeatureNotSupported("a NULL element in a JSON path is not supported by "
                                      "pgbarrier on DuckDB")
        key = item.this
        if key.isdigit():
            parts.append(f"[{key}]")
        else:
            parts.append('."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"')
    return exp.Literal.string("".join(parts))


# -- to_char -------------------------------------------------------------------------


def _to_char(node: exp.Anonymous) -> exp.Expr:
    if len(node.expressions) != 2:
        return node  # DuckDB's error for the wrong number of arguments
    value, fmt = node.expressions
    if isinstance(value, exp.Literal) and not value.is_string:
        raise FeatureNotSupported("to_char of a number is not supported by pgbarrier on DuckDB")
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise FeatureNotSupported("to_char with a format that is not a literal is not "
                                  "supported by pgbarrier on DuckDB")
    return exp.Anonymous(this="strftime", expressions=[value.copy(),
                                                       exp.Literal.string(_strftime(fmt.this))])


def _strftime(fmt: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(fmt):
        ch = fmt[i]
        if ch == '"':
            end = fmt.find('"', i + 1)
            end = len(fmt) if end < 0 else end
            out.append(fmt[i + 1:end].replace("%", "%%"))
            i = end + 1
            continue
        for pattern, code in _TO_CHAR:
            if fmt.startswith(pattern, i):
                if code is None:
                    raise FeatureNotSupported(f'to_char pattern "{pattern}" is not supported '
                                              f"by pgbarrier on DuckDB (FM{pattern} is)")
                out.append(code)
                i += len(pattern)
                break
        else:
            if ch.isalpha():
                raise FeatureNotSupported(f'to_char format "{fmt}" is not supported by '
                                          "pgbarrier on DuckDB")
            out.append("%%" if ch == "%" else ch)
            i += 1
    return "".join(out)
