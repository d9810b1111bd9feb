"""The translation table: DuckDB's error messages -> PostgreSQL's errors.

Rules this module keeps:

* :data:`RULES` is the table, in the order it is tried: each :class:`Rule` matches DuckDB's
  message (the first line, without DuckDB's ``Xxx Error:`` prefix and its closing ``!``)
  with a regular expression, optionally only for some DuckDB exception classes, and answers
  PostgreSQL's SQLSTATE, message, DETAIL, HINT, position and error fields (``answer``; None
  lets the next rule try). Each rule carries :class:`Example` statements (set-up, then the
  failing statement) that make DuckDB raise it; tests/functional/test_error_translation.py
  runs every example on PostgreSQL 15 and on pgbarrier's DuckDB and requires the same
  answer (tests/unit/test_duckdb_errors.py, that the example is answered by its own rule).
  An example's ``differs`` names the fields that knowingly differ, and why; ``own`` marks
  a statement PostgreSQL runs and pgbarrier refuses (README's differences: DuckDB cannot),
  ``other`` the statements a second session runs first (a write conflict).
* The first rule is the constraint violations' (:mod:`pgbarrier.backends.duckdb_constraint_errors`,
  which finds the names, the DETAILs and the fields); the others follow DuckDB's error
  classes: input values and casts, names, shapes, functions and operators, syntax, catalog
  objects, values a function refuses.
* Positions are PostgreSQL's (:mod:`.carets`): DuckDB's caret where it points at the same
  thing (a column, a function name), PostgreSQL's own place otherwise (the literal of an
  input error, the operator, the end of the input), none where PostgreSQL gives none
  (a run-time overflow). The HINTs are PostgreSQL's (DuckDB's ``Did you mean`` and
  ``Candidate`` lists are never passed on: PostgreSQL's hints for a missing column follow
  its own rule, :mod:`.scopes`).
* Choices where DuckDB cannot tell what PostgreSQL would: DuckDB converts a string literal
  for a function's argument where PostgreSQL resolves the function first
  (``abs('x')``): its "could not choose a candidate" is 42725 ``function abs(unknown) is not
  unique``; an argument type sqlglot cannot infer is ``unknown``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import duckdb

from pgbarrier.backends.duckdb_constraint_errors import constraint_error
from pgbarrier.backends.duckdb_errors.answer import Ctx, err, fixed_answer
from pgbarrier.backends.duckdb_errors.functions import (
    FUNC_HINT,
    concat_lists,
    function_missing,
    no_match,
    not_unique,
    syntax_error,
    unterminated,
)
from pgbarrier.backends.duckdb_errors.references import (
    no_comparison,
    numeric_typmod,
    renamed_onto,
    commit_duplicate,
    build_object,
    insert_values,
    alter_column_missing,
    alter_dependents,
    check_column,
    dependents,
    distinct_order,
    duplicate_column,
    group_by,
    insert_count,
    key_column,
    missing_column,
    missing_parameter,
    missing_table_ref,
    mixed_array,
    mixed_types,
    negative_limit,
    order_position,
    relation_missing,
    row_compare,
    schema_missing,
    sequence_missing,
    set_columns,
    subquery_columns,
    type_missing,
    update_column_missing,
    using_column,
    window_here,
    wrong_kind,
)
from pgbarrier.backends.duckdb_errors.values import (
    bit_digit,
    bytea_input,
    arith_overflow,
    array_literal,
    bad_input,
    bad_percentile,
    bad_regex,
    cast_range,
    convert_decimal,
    convert_string,
    datetime_range,
    interval_input,
    json_input,
    make_date,
    no_cast,
    numeric_overflow,
    time_range,
    timestamp_format,
    unit_refused,
)
from pgbarrier.backends.duckdb_errors.names import pg_type
from pgbarrier.errors import PgError


@dataclass(frozen=True)
class Example:
    """A statement that makes DuckDB raise a rule's error (after ``setup``)."""

    sql: str
    setup: tuple[str, ...] = ()
    #: fields that knowingly differ from PostgreSQL's answer, and why
    differs: dict[str, str] = field(default_factory=dict)
    #: the SQLSTATE pgbarrier answers where PostgreSQL runs the statement (README's list of
    #: differences); None: PostgreSQL fails too, with the same answer
    own: str | None = None
    #: statements another session runs after ``setup`` (its transaction left open): a
    #: conflict PostgreSQL would wait on, so it is run on pgbarrier only (with ``own``)
    other: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rule:
    name: str
    pattern: re.Pattern[str]
    answer: Callable[[re.Match[str], Ctx], PgError | None]
    examples: tuple[Example, ...]
    classes: tuple[type[BaseException], ...] = (duckdb.Error,)


# --------------------------------------------------------------------------- the table

_C = duckdb.ConversionException
_I = duckdb.InvalidInputException
_P = duckdb.ParserException


def _r(name: str, pattern: str, answer: Callable[[re.Match[str], Ctx], PgError | None],
       *examples: Example, classes: tuple[type[BaseException], ...] = (duckdb.Error,)) -> Rule:
    return Rule(name, re.compile(pattern, re.S), answer, tuple(examples), classes)


def _ex(sql: str, *setup: str, own: str | None = None, other: tuple[str, ...] = (),
        **differs: str) -> Example:
    """An example; a set-up statement written ``!...`` is one that fails (in a block)."""
    return Example(sql, tuple(setup), dict(differs), own, other)


_T = "CREATE TABLE t (a int, b text, c numeric(5,2), d date, e timestamptz)"

_P_C = ("CREATE TABLE p (id int PRIMARY KEY, u int UNIQUE, n int NOT NULL DEFAULT 0, "
        "c int CHECK (c > 0))")
_SERIAL = ("CREATE TABLE q (id serial, name text NOT NULL, ok boolean, at timestamp, "
           "note varchar(100))")
_FK = ("CREATE TABLE p (id int PRIMARY KEY)", "CREATE TABLE c (pid int REFERENCES p (id))")

RULES: list[Rule] = [
    # ---- constraint violations (duckdb_constraint_errors)
    _r("constraint violation", r".", lambda m, ctx: constraint_error(
        ctx.message, ctx.sql, ctx.constraints, ctx.query, ctx.params),
       _ex("INSERT INTO p (id) VALUES (1), (1)", _P_C),
       _ex("INSERT INTO p (id) VALUES (1)", _P_C, "INSERT INTO p (id) VALUES (1)"),
       _ex("INSERT INTO p (id) VALUES (2), (1)", _P_C, "INSERT INTO p (id) VALUES (1)"),
       _ex("INSERT INTO p (id) SELECT 1", _P_C, "INSERT INTO p (id) VALUES (1)"),
       _ex("UPDATE p SET id = 1 WHERE id = 2", _P_C, "INSERT INTO p (id) VALUES (1), (2)"),
       _ex("INSERT INTO p (id, u) VALUES (2, 5)", _P_C, "INSERT INTO p (id, u) VALUES (1, 5)"),
       _ex("INSERT INTO p (id, u) VALUES (1, 6) ON CONFLICT (u) DO NOTHING", _P_C,
           "INSERT INTO p (id, u) VALUES (1, 5)"),
       _ex("INSERT INTO p (id, u) VALUES (2, 5) ON CONFLICT (id) DO UPDATE SET u = 7", _P_C,
           "INSERT INTO p (id, u) VALUES (1, 5)"),
       _ex("INSERT INTO p (id, n) VALUES (1, NULL)", _P_C),
       _ex("UPDATE p SET n = NULL", _P_C, "INSERT INTO p (id) VALUES (1)"),
       _ex("INSERT INTO p (id, c) VALUES (1, 0)", _P_C),
       _ex("UPDATE p SET c = -1", _P_C, "INSERT INTO p (id) VALUES (1)"),
       _ex("INSERT INTO c VALUES (5)", *_FK),
       _ex("DELETE FROM p", *_FK, "INSERT INTO p VALUES (5)", "INSERT INTO c VALUES (5)"),
       _ex("INSERT INTO p VALUES (1)", "CREATE TABLE p (id int, CONSTRAINT mypk PRIMARY KEY (id))",
           "INSERT INTO p VALUES (1)"),
       _ex("INSERT INTO p VALUES (1, 'abcd')",
           "CREATE TABLE p (id int, v text, CONSTRAINT vchk CHECK (length(v) < 3))"),
       _ex("INSERT INTO s.p VALUES (1)", "CREATE SCHEMA s", "CREATE TABLE s.p (id int UNIQUE)",
           "INSERT INTO s.p VALUES (1)"),
       _ex("INSERT INTO q (name) VALUES ('a'), (NULL)", _SERIAL),
       _ex("INSERT INTO s.w VALUES (1, NULL)", "CREATE SCHEMA s",
           "CREATE TABLE w (a int, b text, c text)", "CREATE TABLE s.w (a int, b text NOT NULL)"),
       _ex("INSERT INTO q2 (name, ok, at) VALUES ('b', true, NULL), ('" + "x" * 80 + "', false, "
           "'2024-01-02 03:04:05')", "CREATE TABLE q2 (id serial, name text CHECK (length(name) "
           "< 50), ok boolean, at timestamp)"),
       _ex("INSERT INTO p (id, c) VALUES (1, 5), (2, -5)", _P_C),
       _ex("UPDATE p SET c = c - 10 WHERE id > 1", _P_C,
           "INSERT INTO p (id, c) VALUES (1, 50), (2, 5), (3, 8)"),
       _ex("INSERT INTO w VALUES (1, 'x', NULL)",
           "CREATE TABLE w (a int, b text DEFAULT 'd', c numeric(4,1) NOT NULL)"),
       _ex("INSERT INTO w (a) VALUES (1)",
           "CREATE TABLE w (a int, b text DEFAULT 'd', c numeric(4,1) NOT NULL)"),
       classes=(duckdb.ConstraintException,)),
    # ---- input values: invalid syntax, out of range
    _r("string conversion", r"^(?:Failed to cast value: )?Could not convert string '(?P<value>.*)' "
       r"to (?P<type>[A-Z0-9_]+(?:\(\d+,\d+\))?)(?: when casting from source column \S+)?$",
       convert_string,
       _ex("SELECT 'abc'::int"), _ex("SELECT CAST('abc' AS bigint)"),
       _ex("SELECT 'abc'::smallint"), _ex("SELECT '40000'::smallint"),
       _ex("SELECT '99999999999'::int"), _ex("SELECT 'x'::real"),
       _ex("SELECT 'x'::double precision"), _ex("SELECT 'maybe'::boolean"),
       _ex("SELECT 'x'::uuid"), _ex("SELECT ''::int"), _ex("SELECT 1 = 'x'"),
       _ex("SELECT 'abc'::interval"),
       _ex("INSERT INTO t (a) VALUES ('x')", _T),
       _ex("SELECT 'x'::text::int"),
       _ex("SELECT b::int FROM t", _T, "INSERT INTO t (b) VALUES ('x')"),
       _ex("ALTER TABLE t ALTER COLUMN b TYPE int USING b::int", _T,
           "INSERT INTO t (b) VALUES ('x')")),
    _r("decimal conversion", r'^Could not convert string "(?P<value>.*)" to '
       r"(?P<type>DECIMAL\(\d+,\d+\))$", lambda m, ctx: convert_decimal(
           m.group("value"), m.group("type"), ctx),
       _ex("SELECT 'abc'::numeric"), _ex("SELECT '12345.6'::numeric(5,2)"),
       _ex("SELECT 'abc'::numeric(5,2)")),
    _r("date format", r'^invalid date field format: "(?P<value>.*)", expected format',
       lambda m, ctx: bad_input("date", m.group("value"), ctx, "22007"),
       _ex("SELECT 'abc'::date"), _ex("SELECT '2020/01/xx'::date")),
    _r("date range", r'^date field value out of range: "(?P<value>.*)"',
       lambda m, ctx: datetime_range(m.group("value"), ctx),
       _ex("SELECT '2020-13-01'::date"), _ex("SELECT '2021-02-30'::date"),
       _ex("SELECT '2020-01-32'::date")),
    _r("time", r'^time field value out of range: "(?P<value>.*)", expected format', time_range,
       _ex("SELECT 'abc'::time"), _ex("SELECT '25:00'::time"), _ex("SELECT '10:61'::time")),
    _r("timestamp format", r'^invalid timestamp field format: "(?P<value>.*)", expected format',
       timestamp_format, _ex("SELECT 'abc'::timestamp"), _ex("SELECT 'abc'::timestamptz"),
       _ex("SELECT '2020-01-01 10:61'::timestamp"),
       _ex("INSERT INTO t (e) VALUES ('yesterday-ish')", _T),
       _ex("UPDATE t SET e = 'yesterday-ish'", _T, "INSERT INTO t (a) VALUES (1)")),
    _r("timestamp range", r'^timestamp field value out of range: "(?P<value>.*)"',
       lambda m, ctx: datetime_range(m.group("value"), ctx),
       _ex("SELECT '2020-13-45 10:00'::timestamp"), _ex("SELECT '2020-01-01 25:00'::timestamp")),
    _r("unit", r'^extract specifier "(?P<unit>.*)" not recognized$', unit_refused,
       _ex("SELECT date_trunc('nosuch', now())"), _ex("SELECT extract(nosuch FROM now())"),
       _ex("SELECT date_part('nosuch', now())"),
       _ex("SELECT extract(nosuch FROM '2020-01-01'::date)"),
       _ex("SELECT date_trunc('nosuch', '2020-01-01'::timestamp)"), classes=(_C,)),
    _r("bytea", r'^Invalid hex escape code encountered in string -> blob conversion of string '
       r'"(?P<value>.*)": ', bytea_input,
       _ex("INSERT INTO t2 (b) VALUES ('\\xzz')", "CREATE TABLE t2 (b bytea)"),
       _ex("SELECT '\\x1g'::text::bytea")),
    _r("bit digits", r"^(?P<kind>Bit|Hex) string literal contains a non-(?:binary|hexadecimal) "
       r"character '(?P<c>.)'", bit_digit, _ex("SELECT B'102'"), _ex("SELECT X'1g'")),
    _r("NUL in a string", r"^Null character not permitted in escape string literal",
       lambda m, ctx: err("22021", 'invalid byte sequence for encoding "UTF8": 0x00'),
       _ex("SELECT E'a\\0'")),
    _r("timestamp range", r"^(?:Epoch seconds out of range for TIMESTAMP|ICU date overflows "
       r"timestamp range)", lambda m, ctx: err("22008", "timestamp out of range"),
       _ex("SELECT now() - interval '1000000 years'")),
    _r("numeric beyond DuckDB", r"^Unimplemented type for cast \(BIGNUM -> DECIMAL",
       lambda m, ctx: err("0A000", "numeric values of more than 38 digits are not supported by "
                                   "pgbarrier on DuckDB"),
       _ex("SELECT 10000000000000000000000000000000000000000::numeric", own="0A000")),
    _r("make_date", r"^Date out of range: (?P<y>-?\d+)-(?P<m>-?\d+)-(?P<d>-?\d+)$", make_date,
       _ex("SELECT make_date(2020, 13, 1)")),
    _r("percentile", r"^PERCENTILEs can only take parameters in the range \[0, 1\]", bad_percentile,
       _ex("SELECT percentile_cont(2) WITHIN GROUP (ORDER BY 1)"),
       _ex("SELECT percentile_disc(1.5) WITHIN GROUP (ORDER BY 1)")),
    _r("series step", r"^interval cannot be 0", lambda m, ctx: err(
        "22023", "step size cannot equal zero"), _ex("SELECT * FROM generate_series(1, 3, 0)")),
    _r("parameter", r"^Values were not provided for the following parameters: (?P<n>[\d, ]+)",
       missing_parameter, _ex("SELECT $1"), _ex("SELECT 1 WHERE 1 = $2")),
    _r("interval unit", r'^extract specifier "(?P<unit>.*)" not recognized$', interval_input,
       _ex("SELECT '1 fortnight'::interval"), classes=(_C,)),
    _r("json", r'^Malformed JSON at byte \d+ of input: .*?\.  Input: "(?P<value>.*)"$',
       lambda m, ctx: json_input(m.group("value"), ctx),
       _ex("SELECT 'abc'::json"), _ex("SELECT '{\"a\":1'::json"),
       _ex("SELECT '{\"a\" 1}'::json"), _ex("SELECT '{\"a\":1}}'::json"),
       _ex("SELECT ''::json"), _ex("SELECT '{\"a\": tru}'::json"),
       _ex("SELECT '[1 2]'::json"), _ex("SELECT '{\"x\": \"\\q\"}'::json")),
    _r("cast out of range", r"^Type (?P<src>[A-Z0-9_]+(?:\(\d+,\d+\))?) with value .* can't be "
       r"cast because the value is out of range for the destination type "
       r"(?P<to>[A-Z0-9_]+(?:\(\d+,\d+\))?)$", cast_range,
       _ex("SELECT 40000::smallint"), _ex("SELECT 3000000000::int"),
       _ex("SELECT 99999999999999999999::bigint"), _ex("SELECT 1e10::int"),
       _ex("INSERT INTO t (a) VALUES (3000000000)", _T)),
    _r("decimal out of range", r'^(?:Casting value "[^"]*" to type (?P<a>DECIMAL\(\d+,\d+\)) '
       r"failed: value is out of range|Could not cast value .* to (?P<b>DECIMAL\(\d+,\d+\)))$",
       lambda m, ctx: numeric_overflow(m.group("a") or m.group("b")),
       _ex("SELECT 1234.5::numeric(5,2)"), _ex("SELECT 5::numeric(2,2)"),
       _ex("INSERT INTO t (c) VALUES (1234.5)", _T),
       _ex("SELECT 123456789012345678901234567890123456789::numeric(38,0) * 10::numeric(38,0)")),
    _r("arithmetic overflow", r"^Overflow in (?:addition|subtraction|multiplication|negation|"
       r"division) of (?P<type>[A-Z0-9_]+)", arith_overflow,
       _ex("SELECT 2147483647 + 1"), _ex("SELECT 9223372036854775807 * 2"),
       _ex("SELECT 32767::smallint + 1::smallint"), _ex("SELECT -2147483647 - 2")),
    _r("no cast", r"^Unimplemented type for cast \((?P<src>.+) -> (?P<dst>.+)\)$", no_cast,
       _ex("SELECT 1::int::date"), _ex("SELECT CAST(1 AS date)"),
       _ex("INSERT INTO t (d) VALUES (1)", _T), _ex("INSERT INTO t (a, d) SELECT 1, 2", _T)),
    _r("division by zero", r"^Division by zero in expression",
       lambda m, ctx: err("22012", "division by zero"),
       _ex("SELECT 1/0"), _ex("SELECT 5 % 0"), _ex("SELECT 1.5 / 0")),
    # ---- what pgbarrier on DuckDB cannot do (0A000), DuckDB's limits
    _r("interval division", r"^No function matches the given name and argument types "
       r"'//\((\"?INTERVAL\"?)", lambda m, ctx: err(
           "0A000", "dividing an interval that is not written as one (a cast to interval, an "
                    "interval literal) is not supported by pgbarrier on DuckDB"),
       _ex("SELECT i / 2 FROM iv", "CREATE TABLE iv (i interval)", own="0A000")),
    _r("foreign key actions", r"^FOREIGN KEY constraints cannot use (?P<what>CASCADE, SET NULL "
       r"or SET DEFAULT)", fixed_answer("0A000", "foreign keys with ON DELETE / ON UPDATE {what} are "
                                           "not supported by pgbarrier on DuckDB", caret=False),
       _ex("CREATE TABLE c (pid int REFERENCES p (id) ON DELETE CASCADE)",
           "CREATE TABLE p (id int PRIMARY KEY)", own="0A000")),
    _r("write conflict", r"^Conflict on (?:update|tuple deletion)", lambda m, ctx: err(
        "40001", "could not serialize access due to concurrent update"),
       _ex("UPDATE wc SET b = 3 WHERE a = 1", "CREATE TABLE wc (a int PRIMARY KEY, b int)",
           "INSERT INTO wc VALUES (1, 1)", "BEGIN", own="40001",
           other=("BEGIN", "UPDATE wc SET b = 2 WHERE a = 1"))),
    _r("duplicate at commit", r'^Failed to commit: PRIMARY KEY or UNIQUE constraint violation: '
       r'duplicate key "(?P<key>.*)"', commit_duplicate,
       _ex("COMMIT", "CREATE TABLE wc (a int PRIMARY KEY)", "BEGIN", "INSERT INTO wc VALUES (5)",
           own="23505", other=("INSERT INTO wc VALUES (5)",))),
    _r("unnamed index", r"^Please provide an index name", lambda m, ctx: err(
        "0A000", "CREATE INDEX without a name is not supported by pgbarrier on DuckDB",
        hint="Name the index: CREATE INDEX name ON table (columns)."),
       _ex("CREATE INDEX ON t (a)", _T, own="0A000")),
    _r("several objects dropped", r"^Can only drop one object at a time", lambda m, ctx: err(
        "0A000", "dropping several objects in one statement is not supported by pgbarrier on "
                 "DuckDB", hint="Drop them one at a time."),
       _ex("DROP TYPE m1, m2", "CREATE TYPE m1 AS ENUM ('a')", "CREATE TYPE m2 AS ENUM ('b')",
           own="0A000")),
    _r("aborted transaction", r"^Current transaction is aborted", lambda m, ctx: err(
        "25P02", "current transaction is aborted, commands ignored until end of transaction "
                 "block"), _ex("SELECT 1", "BEGIN", "!SELECT 1/0")),
    _r("expression depth", r"^Max expression depth limit of (\d+) exceeded", lambda m, ctx: err(
        "54001", "stack depth limit exceeded"),
       _ex("SELECT " + "(" * 1200 + "1" + ")" * 1200, own="54001")),
    # ---- names: columns, tables
    _r("ambiguous column", r'^Ambiguous reference to column name "(?P<name>[^"]+)"',
       lambda m, ctx: err("42702", f'column reference "{m.group("name")}" is ambiguous',
                          position=ctx.position),
       _ex("SELECT a FROM t, t u", _T),
       _ex("SELECT a FROM t JOIN t AS u ON t.a = u.a", _T)),
    _r("missing column", r'^Referenced column "(?P<name>[^"]+)" (?:not found in FROM clause|'
       r"was not found because the FROM clause is missing)", missing_column,
       _ex("SELECT x FROM t", _T), _ex("SELECT bb FROM t", _T), _ex("SELECT aa FROM t", _T),
       _ex("SELECT * FROM t WHERE dd = 1", _T), _ex("SELECT nosuch"),
       _ex("SELECT abx FROM t1 JOIN t2 ON true", "CREATE TABLE t1 (abc int)",
           "CREATE TABLE t2 (abd int)"),
       _ex("SELECT ae FROM t1", "CREATE TABLE t1 (ab int, ac int, ad int)"),
       _ex("SELECT (SELECT bb) FROM t", _T),
       _ex("UPDATE t SET a = 1 WHERE nosuch = 2", _T),
       _ex("DELETE FROM t WHERE bx = 2", _T),
       _ex("SELECT a,\n       b,\n       nosuch\nFROM t", _T),
       _ex("SELECT nosuch FROM t WHERE '\\x41'::bytea IS NOT NULL", _T),
       _ex("SELECT " + ", ".join(f"a AS c{i}" for i in range(30)) + ", bb, c FROM t", _T)),
    _r("missing qualified column", r'^(?:Table|Values list) "(?P<table>[^"]+)" does not have a '
       r'column named "(?P<name>[^"]+)"', missing_column,
       _ex("SELECT t.x FROM t", _T), _ex("SELECT t.bb FROM t", _T),
       _ex("SELECT s.abd FROM (SELECT a AS abc FROM t) s", _T)),
    _r("missing table reference", r'^Referenced table "(?P<name>[^"]+)" not found',
       missing_table_ref, _ex("SELECT x.a FROM t", _T), _ex("SELECT t.a FROM t AS x", _T),
       _ex("SELECT t.x")),
    _r("duplicate alias", r'^Ambiguous reference to table "(?P<name>[^"]+)" \(duplicate alias',
       lambda m, ctx: err("42712", f'table name "{m.group("name").split(".")[-1]}" specified '
                                   "more than once"),
       _ex("SELECT * FROM t a JOIN t a ON true", _T), _ex("SELECT * FROM t JOIN t ON true", _T)),
    _r("alias columns", r'^table "(?P<name>[^"]+)" has (?P<n>\d+) columns available but '
       r"(?P<m>\d+) columns specified", fixed_answer(
           "42P10", 'table "{name}" has {n} columns available but {m} columns specified',
           caret=False),
       _ex("SELECT * FROM (SELECT 1) s(a, b)")),
    _r("group by", r'^column "(?P<name>[^"]+)" must appear in the GROUP BY clause', group_by,
       _ex("SELECT a, count(*) FROM t", _T), _ex("SELECT a, b FROM t GROUP BY a", _T),
       _ex("SELECT x.a, count(*) FROM t x", _T)),
    _r("aggregate in WHERE", r"^WHERE clause cannot contain aggregates",
       lambda m, ctx: err("42803", "aggregate functions are not allowed in WHERE",
                          position=ctx.position),
       _ex("SELECT * FROM t WHERE count(*) > 1", _T)),
    _r("order by position", r"^ORDER term out of range - should be between (?P<lo>\d+) and "
       r"(?P<hi>\d+)", order_position("ORDER BY"),
       _ex("SELECT * FROM t ORDER BY 9", _T)),
    _r("group by position", r"^GROUP BY term out of range - should be between (?P<lo>\d+) and "
       r"(?P<hi>\d+)", order_position("GROUP BY"),
       _ex("SELECT count(*) FROM t GROUP BY 3", _T)),
    _r("negative limit", r"^LIMIT/OFFSET cannot be negative", negative_limit,
       _ex("SELECT * FROM t LIMIT -1", _T), _ex("SELECT * FROM t OFFSET -1", _T)),
    _r("insert values", r'^table "(?P<table>[^"]+)" has (?P<cols>\d+) columns but '
       r"(?P<vals>\d+) values were supplied", insert_values,
       _ex("INSERT INTO t VALUES (1, 'a', 1, '2020-01-01', now(), 6)", _T),
       _ex("INSERT INTO t VALUES (1)", _T, own="0A000")),
    _r("insert column count", r"^Column name/value mismatch for insert on \"[^\"]+\": expected "
       r"(?P<cols>\d+) columns but (?P<vals>\d+) values were supplied", lambda m, ctx:
       insert_count("target columns" if int(m.group("cols")) > int(m.group("vals"))
                     else "expressions")(m, ctx),
       _ex("INSERT INTO t (a, b) VALUES (1)", _T), _ex("INSERT INTO t (a) VALUES (1, 2)", _T),
       _ex("INSERT INTO t (a, b) SELECT 1", _T), _ex("INSERT INTO t (a) SELECT 1, 'x'", _T)),
    _r("missing column of table", r'^Table "(?P<table>[^"]+)" does not have a column with name '
       r'"(?P<name>[^"]+)"', alter_column_missing,
       _ex("INSERT INTO t (nosuch) VALUES (1)", _T)),
    _r("missing update column", r"^Referenced update column (?P<name>\S+) not found in table",
       update_column_missing, _ex("UPDATE t SET nosuch = 1", _T),
       _ex("INSERT INTO p (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET nosuch = 1", _P_C)),
    # ---- functions and operators
    _r("no matching function", r"^No function matches the given name and argument types "
       r"'(?P<name>.+?)\((?P<args>.*)\)'\. You might need", no_match,
       _ex("SELECT lower(1)"), _ex("SELECT length(1)"), _ex("SELECT 1 + 'a'::text"),
       _ex("SELECT 'a'::text + 1"), _ex("SELECT a + b FROM t", _T),
       _ex("SELECT -b FROM t", _T), _ex("SELECT b / 2 FROM t", _T),
       _ex("SELECT * FROM t WHERE a LIKE 'x'", _T), _ex("SELECT sum(b) FROM t", _T),
       _ex("SELECT max(a, b) FROM t", _T), _ex("SELECT lower(1.5)")),
    _r("ambiguous function", r'^Could not choose a best candidate function for the function '
       r'call "(?P<name>.+?)\((?P<args>.*)\)"', not_unique,
       _ex("SELECT avg('x')"), _ex("SELECT -'x'")),
    _r("list concatenation", r"^Cannot concatenate (?:lists of )?types (?P<a>\S+) and "
       r"(?P<b>\S+) - ", concat_lists,
       # (types the dialect translation knows are refused before DuckDB: duckdb_dialect.arrays)
       _ex("SELECT (SELECT ARRAY[1]) || (SELECT ARRAY['a'])"),
       _ex("SELECT (SELECT ARRAY[1]) || (SELECT 'x'::text)")),
    _r("missing function", r"^(?:Scalar|Table|Aggregate) Function with name (?P<name>\S+) does "
       r"not exist", function_missing,
       _ex("SELECT nosuchfn(1)"),
       _ex("SELECT nosuchfn(1, 'a', 1.5, NULL, true, 'x'::text, 3000000000)"),
       _ex("SELECT nosuchfn(a, b, c, e) FROM t", _T), _ex("SELECT * FROM nosuchfn(1)"),
       _ex("SELECT '\\x41'::bytea, nosuchfn(1)")),
    # ---- syntax
    _r("syntax error", r'^syntax error at or near "(?P<near>.*)"$', syntax_error,
       _ex("SELEC 1"), _ex("SELECT 1 +"), _ex("SELECT * FROM"), _ex("SELECT (1"),
       _ex("INSERT INTO"), _ex("SELECT 'a' 'b'"), _ex("CREATE TABLE (a int)"),
       _ex("SELECT 1 FROM t WHERE a = = 1", _T), _ex("SELECT a FROM t ORDER", _T),
       _ex("SELECT count("), classes=(_P,)),
    _r("unterminated string", r"^unterminated string literal", unterminated("quoted string"),
       _ex("SELECT 'abc"), classes=(_P,)),
    _r("unterminated identifier", r"^unterminated quoted identifier",
       unterminated("quoted identifier"), _ex('SELECT "abc'), classes=(_P,)),
    _r("no comparison", r"^Cannot compare values of type (?P<a>.+?) and (?:type )?(?P<b>.+?)"
       r"(?P<inany> in IN/ANY/ALL clause)? - an explicit cast is required", no_comparison,
       _ex("SELECT * FROM t WHERE d > 5", _T), _ex("SELECT * FROM t WHERE b > 5", _T),
       _ex("SELECT * FROM t WHERE a IN (SELECT b FROM t)", _T)),
    _r("mixed COALESCE", r"^Cannot mix values of type (?P<a>.+?) and (?P<b>.+?) in COALESCE "
       r"operator", mixed_types("COALESCE"),
       _ex("SELECT COALESCE(1, 'a'::text)"), _ex("SELECT COALESCE(1, 2, 'x'::text)")),
    _r("mixed CASE", r"^Cannot mix values of type (?P<a>.+?) and (?P<b>.+?) in CASE expression",
       mixed_types("CASE"), _ex("SELECT CASE WHEN true THEN 1 ELSE 'a'::text END")),
    _r("mixed GREATEST", r"^Cannot combine types of (?P<a>.+?) and (?P<b>.+?) - an explicit",
       mixed_types(None), _ex("SELECT GREATEST(1, 'a'::text)"), _ex("SELECT LEAST('a'::text, 1)"),
       _ex("SELECT GREATEST(1, 2, 'a'::text)")),
    _r("mixed ARRAY", r"^Cannot deduce template type 'T' in function: 'list_value", mixed_array,
       _ex("SELECT ARRAY[1, 'a'::text]"), _ex("SELECT ARRAY['a'::text, 1]"),
       _ex("SELECT ARRAY[1, 2, 'a'::text]")),
    _r("set operation columns", r"^Set operations can only apply to expressions with the same "
       r"number of result columns", set_columns,
       _ex("SELECT a FROM t UNION SELECT a, b FROM t", _T),
       _ex("SELECT 1 INTERSECT SELECT 1, 2"), _ex("SELECT 1, 2 EXCEPT SELECT 1")),
    _r("subquery columns", r"^Subquery returns \d+ columns - expected 1", subquery_columns,
       _ex("SELECT 1 FROM t WHERE a IN (SELECT a, b FROM t)", _T),
       _ex("SELECT a FROM t WHERE a = (SELECT a, b FROM t)", _T)),
    _r("window without OVER", r"^Window functions are not supported here", window_here,
       _ex("SELECT rank() FROM t", _T)),
    _r("window in WHERE", r"^WHERE clause cannot contain window functions", lambda m, ctx: err(
        "42P20", "window functions are not allowed in WHERE", position=ctx.position),
       _ex("SELECT * FROM t WHERE rank() OVER () > 1", _T)),
    _r("nested aggregate", r"^aggregate function calls cannot be nested", lambda m, ctx: err(
        "42803", "aggregate function calls cannot be nested", position=ctx.position),
       _ex("SELECT sum(sum(a)) FROM t", _T)),
    _r("USING column", r'^Column "(?P<name>[^"]+)" does not exist on (?P<side>left|right) side '
       r"of join", using_column, _ex("SELECT * FROM t JOIN t u USING (nosuch)", _T),
       _ex("SELECT * FROM t JOIN u USING (a)", _T, "CREATE TABLE u (z int)")),
    _r("DISTINCT aggregate order", r"^In a DISTINCT aggregate, ORDER BY expressions must appear",
       distinct_order, _ex("SELECT array_agg(DISTINCT a ORDER BY b) FROM t", _T)),
    _r("key column", r'^table "(?P<table>[^"]+)" does not have a column named "(?P<name>[^"]+)"',
       key_column, _ex("CREATE TABLE tt (a int, PRIMARY KEY (nosuch))"),
       _ex("CREATE TABLE tt (a int, CONSTRAINT k UNIQUE (a, nosuch))")),
    _r("check column", r'^Table does not contain column "(?P<name>[^"]+)" referenced in check',
       check_column, _ex("CREATE TABLE tt (a int CHECK (nosuch > 0))")),
    _r("foreign key target", r"^Failed to create foreign key: (?:there is no primary key or "
       r'unique constraint for referenced table "(?P<name>[^"]+)"|referenced table "(?P<name2>'
       r'[^"]+)" does not have a primary key or unique constraint)', lambda m, ctx: err(
           "42830", "there is no unique constraint matching given keys for referenced table "
                    f'"{m.group("name") or m.group("name2")}"'),
       _ex("CREATE TABLE tt (a int REFERENCES t (b))", _T)),
    _r("ON CONFLICT target", r"^The specified columns as conflict target are not referenced by",
       lambda m, ctx: err("42P10", "there is no unique or exclusion constraint matching the ON "
                                   "CONFLICT specification"),
       _ex("INSERT INTO p (id) VALUES (1) ON CONFLICT (n) DO NOTHING", _P_C)),
    _r("unnest", r"^UNNEST\(\) can only be applied to lists, structs and NULL, not (?P<t>.+)$",
       lambda m, ctx: err("42883", f"function unnest({pg_type(m.group('t'))}) does not exist",
                          hint=FUNC_HINT, position=ctx.position),
       _ex("SELECT unnest(1)")),
    _r("row comparison", r"^Type (?:TUPLE|STRUCT)\(.*Cannot cast STRUCTs of different size",
       row_compare, _ex("SELECT (1,2) = (1,2,3)")),
    _r("json_build_object", r"^json_object\(\) requires an even number of arguments",
       build_object, _ex("SELECT json_build_object('a')"),
       _ex("SELECT jsonb_build_object(1, 2, 3)")),
    # ---- catalog
    _r("missing relation", r'^(?:Table|View) with name "?(?P<name>[^"!]+?)"? does not exist'
       r'(?: because schema "[^"]+" does not exist)?', relation_missing,
       _ex("SELECT * FROM nosuch"), _ex("SELECT * FROM nosch.t"),
       _ex("INSERT INTO nosuch VALUES (1)")),
    _r("existing relation", r'^(?:Table|View) with name "?(?P<name>[^"!]+?)"? already exists',
       fixed_answer("42P07", 'relation "{name}" already exists', caret=False),
       _ex("CREATE TABLE t (a int)", _T)),
    _r("view aliases", r"^More VIEW aliases than columns in query result", lambda m, ctx: err(
        "42601", "CREATE VIEW specifies more column names than columns"),
       _ex("CREATE VIEW v (a, b, c) AS SELECT 1, 2")),
    _r("numeric precision", r"^(?:DECIMAL type width must be between 1 and 38|DECIMAL type scale "
       r'cannot be greater than width|Type "DECIMAL" does not accept type parameters)',
       numeric_typmod, _ex("CREATE TABLE n (a numeric(0))"),
       _ex("CREATE TABLE n (a numeric(1001))"), _ex("SELECT 1::numeric(39, 0)", own="0A000")),
    _r("existing index", r'^Index with name "?(?P<name>[^"!]+?)"? already exists',
       fixed_answer("42P07", 'relation "{name}" already exists', caret=False),
       _ex("CREATE INDEX i ON t (a)", _T, "CREATE INDEX i ON t (a)")),
    _r("wrong kind", r'^Existing object "?(?P<name>[^"]+?)"? is of type (?P<have>[A-Za-z ]+?), '
       r"trying to (?:drop|replace(?: with)?|alter) type (?P<want>[A-Za-z ]+)$", wrong_kind,
       _ex("CREATE OR REPLACE VIEW t AS SELECT 1 AS a", _T)),
    _r("sequence bounds", r'^setval: value (?P<v>-?\d+) is out of bounds for sequence '
       r'"(?P<name>[^"]+)" \((?P<lo>-?\d+)\.\.(?P<hi>-?\d+)\)', fixed_answer(
           "22003", 'setval: value {v} is out of bounds for sequence "{name}" ({lo}..{hi})',
           caret=False),
       _ex("SELECT setval('sq', 100)", "CREATE SEQUENCE sq MAXVALUE 2")),
    _r("sequence exhausted", r'^nextval: reached (?P<which>maximum|minimum) value of sequence '
       r'"(?P<name>[^"]+)" \((?P<v>-?\d+)\)', fixed_answer(
           "2200H", 'nextval: reached {which} value of sequence "{name}" ({v})', caret=False),
       _ex("SELECT nextval('sq'), nextval('sq'), nextval('sq')", "CREATE SEQUENCE sq MAXVALUE 2")),
    _r("missing schema", r'^Schema with name "?(?P<name>[^"!]+?)"? does not exist',
       schema_missing, _ex("CREATE TABLE nosch.t (a int)")),
    _r("existing schema", r'^Schema with name "?(?P<name>[^"!]+?)"? already exists',
       fixed_answer("42P06", 'schema "{name}" already exists', caret=False),
       _ex("CREATE SCHEMA s", "CREATE SCHEMA s")),
    _r("missing sequence", r'^Sequence with name "?(?P<name>[^"!]+?)"? does not exist',
       sequence_missing, _ex("SELECT nextval('nosuchseq')")),
    _r("missing type", r'^Type with name "?(?P<name>[^"!]+?)"? does not exist', type_missing,
       _ex("SELECT 1::nosuchtype"), _ex("CREATE TABLE t2 (a nosuchtype)")),
    _r("dependents", r'^(?:Cannot drop entry "(?P<name>[^"]+)" because there are entries that '
       r"depend on it|Could not drop the table because this table is main key table of the "
       r'table "(?P<child>[^"]+)")', dependents,
       _ex("DROP TYPE m", "CREATE TYPE m AS ENUM ('a')", "CREATE TABLE x (c m)")),
    # ---- values a function refuses
    _r("scalar subquery", r"^More than one row returned by a subquery used as an expression",
       lambda m, ctx: err("21000", "more than one row returned by a subquery used as an "
                                   "expression"),
       _ex("SELECT (SELECT x FROM (VALUES (1), (2)) v(x))")),
    _r("time zone", r"^Unknown TimeZone '(?P<zone>.*)'",
       fixed_answer("22023", 'time zone "{zone}" not recognized', caret=False),
       _ex("SELECT now() AT TIME ZONE 'Nowhere/Zone'")),
    _r("regular expression", r"^(?P<reason>(?:missing|unexpected|trailing|invalid|bad) .*)$",
       bad_regex, _ex("SELECT regexp_matches('a', '(')"), _ex("SELECT 'a' ~ 'a)'"),
       classes=(_I,)),
    _r("escape", r"^Invalid escape string\. Escape string must be empty or one character",
       lambda m, ctx: err("22025", "invalid escape string",
                          hint="Escape string must be empty or one character."),
       _ex("SELECT 'a' LIKE 'a' ESCAPE 'xx'")),
    _r("chr", r"^Invalid UTF8 Codepoint (?P<n>-?\d+)", lambda m, ctx: err(
        "22023", "character number must be positive") if int(m.group("n")) <= 0 else err(
        "54000", f"requested character too large for encoding: {m.group('n')}"),
       _ex("SELECT chr(-1)")),
]
