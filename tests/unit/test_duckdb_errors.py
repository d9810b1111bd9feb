"""pgbarrier.backends.duckdb_errors: DuckDB's exceptions in, PostgreSQL's errors out.

* every example of the translation table is answered by its own rule (an example that
  another rule, or no rule, answers does not test its rule), through the embedded backend;
* an error pgbarrier raises inside DuckDB (``pgbarrier:SQLSTATE:message``) comes out as
  that SQLSTATE and message wherever DuckDB wraps it: a CHECK's ``(Error: ...)``, a cast;
* nothing DuckDB raises for a client's statement is XX000.
"""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import pytest

from pgbarrier.backends import duckdb_errors
from pgbarrier.backends.duckdb import DuckDBBackend
from pgbarrier.backends.duckdb_errors import RULES, to_pg_error
from pgbarrier.backends.duckdb_errors.jsontext import json_error
from pgbarrier.backends.duckdb_errors.table import Rule
from pgbarrier.errors import PgError

CASES = [pytest.param(rule.name, ex, id=f"{rule.name}-{i}")
         for rule in RULES for i, ex in enumerate(rule.examples)]


@pytest.fixture
def backend() -> Iterator[DuckDBBackend]:
    b = DuckDBBackend(":memory:")
    yield b
    b.close()


@pytest.mark.parametrize("name, ex", CASES)
def test_each_example_is_answered_by_its_rule(backend, monkeypatch, name, ex):
    answered: list[str] = []

    def recording(rule: Rule) -> Rule:
        def answer(m, ctx):
            out = rule.answer(m, ctx)
            if out is not None:
                answered.append(rule.name)
            return out
        return Rule(rule.name, rule.pattern, answer, rule.examples, rule.classes)

    monkeypatch.setattr(duckdb_errors, "RULES", [recording(r) for r in RULES])
    backend.ensure_database("ex")
    s = backend.connect("ex", "root")
    other = backend.connect("ex", "root")
    try:
        for stmt in ex.setup:
            if stmt.startswith("!"):
                with pytest.raises(PgError):
                    s.execute(stmt[1:])
            else:
                s.execute(stmt)
        for stmt in ex.other:
            other.execute(stmt)
        answered.clear()
        with pytest.raises(PgError) as caught:
            result = s.execute(ex.sql)
            list(result.rows()) if result.rows is not None else None
    finally:
        s.close()
        other.close()
    assert caught.value.sqlstate != "XX000"
    assert answered[-1:] == [name], (caught.value, answered)


def _check_failure(message: str) -> duckdb.Error:
    con = duckdb.connect()
    con.execute("CREATE TABLE t (v VARCHAR CHECK (CASE WHEN length(v) > 3 THEN "
                f"error('{message}') ELSE true END))")
    with pytest.raises(duckdb.Error) as caught:
        con.execute("INSERT INTO t VALUES ('abcdef')")
    return caught.value


def test_own_error_inside_a_check_is_its_sqlstate_without_constraint_fields():
    exc = _check_failure("pgbarrier:22001:value too long for type character varying(3)")
    assert "CHECK constraint failed" in str(exc)
    err = to_pg_error(exc, "INSERT INTO t VALUES ('abcdef')", lambda: [])
    assert (err.sqlstate, err.message) == ("22001",
                                           "value too long for type character varying(3)")
    assert err.fields == {}
    assert err.detail is None and err.hint is None


def test_own_error_with_parentheses_and_quotes_keeps_its_message():
    exc = _check_failure("pgbarrier:22023:it''s (really) bad")
    err = to_pg_error(exc, None)
    assert (err.sqlstate, err.message) == ("22023", "it's (really) bad")


@pytest.mark.parametrize("sql", [
    "SELECT CAST(error('pgbarrier:22003:integer out of range') AS INT)",
    "SELECT 1 + error('pgbarrier:22003:integer out of range')::int",
    "SELECT [error('pgbarrier:22003:integer out of range')]",
])
def test_own_error_in_other_wrappers(sql):
    with pytest.raises(duckdb.Error) as caught:
        duckdb.connect().execute(sql)
    err = to_pg_error(caught.value, sql)
    assert (err.sqlstate, err.message) == ("22003", "integer out of range")


@pytest.mark.parametrize("text, detail, context", [
    ('{"a":x}', 'Token "x" is invalid.', 'JSON data, line 1: {"a":x...'),
    ('{"a":1', "The input string ended unexpectedly.", 'JSON data, line 1: {"a":1'),
    ('{"a" 1}', 'Expected ":", but found "1".', 'JSON data, line 1: {"a" 1...'),
    ("[1,2,]", 'Expected JSON value, but found "]".', "JSON data, line 1: [1,2,]"),
    ('{"a":1}}', 'Expected end of input, but found "}".', 'JSON data, line 1: {"a":1}}'),
    ("01", 'Token "01" is invalid.', "JSON data, line 1: 01"),
    ('{"x": "\\q"}', 'Escape sequence "\\q" is invalid.', 'JSON data, line 1: {"x": "\\q...'),
    ("[1,\n 2 3]", 'Expected "," or "]", but found "3".', "JSON data, line 2:  2 3..."),
])
def test_json_errors_are_postgresqls(text, detail, context):
    assert json_error(text) == (detail, context)


def test_valid_json_has_no_error():
    assert json_error('{"a": [1, 2.5e3, true, null, "x\\u00e9"]}') is None


def _rte(name: str, *columns: str, relation: str | None = None, aliased: bool = False):
    from pgbarrier.backends.duckdb_errors.scopes import Rte
    return Rte(name, list(columns), relation, aliased)


@pytest.mark.parametrize("levels, name, qualifier, hint", [
    # PostgreSQL 15's errorMissingColumn, as its server answers (test_error_translation)
    ([[_rte("t", "ab", "ac", "ad")]], "ae", None, None),  # three equally close: none
    ([[_rte("t", "ab", "ac")]], "ae", None,
     'Perhaps you meant to reference the column "t.ab" or the column "t.ac".'),
    ([[_rte("t", "abc")]], "abd", "t", 'Perhaps you meant to reference the column "t.abc".'),
    ([[_rte("t", "a", "b")]], "c", None, None),  # more than half the characters differ
    ([[_rte("t", "yy")]], "yx", None, 'Perhaps you meant to reference the column "t.yy".'),
    ([[_rte("s", "q")], [_rte("t", "abc")]], "abc", None,
     'There is a column named "abc" in table "t", but it cannot be referenced from this '
     "part of the query."),
    ([[_rte("g", "g")]], "x", None, None),
])
def test_missing_column_hint_is_postgresqls_rule(levels, name, qualifier, hint):
    from pgbarrier.backends.duckdb_errors.scopes import missing_column_hint
    assert missing_column_hint(levels, name, qualifier) == hint


def test_missing_table_hint_names_the_alias():
    from pgbarrier.backends.duckdb_errors.scopes import missing_table_hint
    levels = [[_rte("x", "a", relation="t", aliased=True)]]
    assert missing_table_hint(levels, "t") == \
        'Perhaps you meant to reference the table alias "x".'
    assert missing_table_hint(levels, "u") is None


def test_duckdb_caret_in_a_shortened_line_is_found_in_the_line():
    from pgbarrier.backends.duckdb_errors.carets import duckdb_position
    sql = "SELECT " + ", ".join(f"a AS c{i}" for i in range(30)) + ", bb FROM t"
    with pytest.raises(duckdb.Error) as caught:
        con = duckdb.connect()
        con.execute("CREATE TABLE t (a int)")
        con.execute(sql)
    assert "LINE 1: ..." in str(caught.value)
    assert duckdb_position(str(caught.value), sql) == sql.index("bb") + 1


def test_a_bulk_statement_is_not_tokenized_but_keeps_a_caret_on_its_literal():
    from pgbarrier.backends.duckdb_errors.carets import MAX_ANALYSED, literal_position
    sql = "INSERT INTO t VALUES " + ", ".join(["(1)"] * (MAX_ANALYSED // 4)) + ", ('abc')"
    at = sql.index("'abc'") + 1
    assert literal_position(sql, "abc", at) == at
    assert literal_position(sql, "abc", at - 2) is None


def test_failing_row_values_are_cut_at_64_bytes():
    from pgbarrier.backends.duckdb_failing_row import failing_row
    con = duckdb.connect()
    con.execute("CREATE TABLE t (a int, b text CHECK (length(b) < 3))")

    def query(sql, params):
        return con.execute(sql, params).fetchall()

    row = failing_row("INSERT INTO t VALUES (1, '" + "é" * 40 + "')", "t",
                      "NOT ((length(b) < 3))", query)
    assert row == "Failing row contains (1, " + "é" * 32 + "...)."


@pytest.mark.parametrize("sql", [
    "SELECT 'pgbarrier:22001:x'::json",
    "SELECT 'pgbarrier:22001:x'::int",
    "SELECT '{\"a\": \"pgbarrier:42501:y\"'::json",
])
def test_a_value_that_looks_like_an_own_error_is_not_one(sql):
    with pytest.raises(duckdb.Error) as caught:
        duckdb.connect().execute(sql)
    err = to_pg_error(caught.value, sql)
    assert err.sqlstate == "22P02"
