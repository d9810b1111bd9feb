"""What DDL records of what DuckDB forgets of a table: column types, identity columns and
constraint names (pgbarrier.backends.pgcatalog.declared)."""

from __future__ import annotations

import pytest

from sqlglot import exp

from pgbarrier.backends.pgcatalog.declared import (ColumnType, ConstraintName, Forget,
                                                   ForgetSchema, IdentityColumn, Rename,
                                                   declared_changes, declared_type)
from pgbarrier.sql.colnames import parse_single
from pgbarrier.sql.classify import leading_words


def changes(sql: str):
    return declared_changes(sql, leading_words(sql, 3))


def test_create_table_records_varchar_char_jsonb_and_their_arrays():
    got = changes('CREATE TABLE public.t (id int, a varchar(10), "B" character varying, '
                  "c char(3), d bpchar, e jsonb, f varchar(5)[], g text, h json)")
    assert got == [Forget("main", "t"),
                   ColumnType("main", "t", "a", 1043, 14),
                   ColumnType("main", "t", "B", 1043, -1),
                   ColumnType("main", "t", "c", 1042, 7),
                   ColumnType("main", "t", "d", 1042, 5),
                   ColumnType("main", "t", "e", 3802, -1),
                   ColumnType("main", "t", "f", 1015, 9)]


def test_create_table_records_time_precisions_duckdb_buckets():
    got = changes("CREATE TABLE t (a timestamp(3), b timestamptz(0), c time(2), d timestamp, "
                  "e numeric(12,2))")
    assert got == [Forget("main", "t"),
                   ColumnType("main", "t", "a", 1114, 3),
                   ColumnType("main", "t", "b", 1184, 0),
                   ColumnType("main", "t", "c", 1083, 2)]


@pytest.mark.parametrize("cast,expected", [
    ("numeric(12,2)", (1700, ((12 << 16) | 2) + 4)), ("numeric(7)", (1700, (7 << 16) + 4)),
    ("numeric", None), ("varchar(10)", (1043, 14)), ("varchar", (1043, -1)),
    ("char(3)", (1042, 7)), ("char", (1042, 5)), ("timestamp(3)", (1114, 3)),
    ("timestamptz(6)", (1184, 6)), ("time(0)", (1083, 0)), ("timestamp", None),
    ("integer", None), ("text", None)])
def test_declared_type_is_postgres_typmod(cast, expected):
    """PostgreSQL 15: SELECT atttypmod after CREATE TABLE t (c <type>) gives these."""
    tree = parse_single(f"SELECT x::{cast}")
    assert declared_type(tree.find(exp.Cast).to) == expected


@pytest.mark.parametrize("sql", ["CREATE TABLE t (a int, b text)",
                                 "CREATE TEMP TABLE t (a varchar(3))",
                                 "SELECT 1", "CREATE VIEW v AS SELECT 1"])
def test_statements_that_record_nothing(sql):
    assert changes(sql) == []


def test_a_table_as_query_forgets_what_a_dropped_one_of_its_name_left():
    assert changes("CREATE TABLE t AS SELECT 'x'::varchar(3) AS a") == [Forget("main", "t")]


def test_drop_schema_forgets_its_tables():
    assert changes("DROP SCHEMA s CASCADE") == [ForgetSchema("s")]


def test_alter_table_keeps_the_rows_in_step():
    assert changes("ALTER TABLE s.t ADD COLUMN a varchar(7)") == [
        ColumnType("s", "t", "a", 1043, 11)]
    # a type change forgets the declared type only (an identity stays one)
    assert changes("ALTER TABLE t ALTER COLUMN a TYPE text") == [
        Forget("main", "t", "a", type_only=True)]
    assert changes("ALTER TABLE t ALTER COLUMN a TYPE char(2)") == [
        Forget("main", "t", "a", type_only=True), ColumnType("main", "t", "a", 1042, 6)]
    assert changes("ALTER TABLE t RENAME COLUMN a TO b") == [Rename("main", "t", "t", "a", "b")]
    assert changes("ALTER TABLE t RENAME TO u") == [Rename("main", "t", "u")]
    assert changes("ALTER TABLE t DROP COLUMN a") == [Forget("main", "t", "a")]


def test_drop_table_forgets_every_table_named():
    assert changes("DROP TABLE IF EXISTS a, s.b CASCADE") == [Forget("main", "a"),
                                                              Forget("s", "b")]


def test_create_table_records_the_constraint_names_the_client_gave():
    got = changes("CREATE TABLE t (id int CONSTRAINT pk_t PRIMARY KEY, "
                  "a int CONSTRAINT fk_a REFERENCES p (id), b int CONSTRAINT uq_b UNIQUE, "
                  "c int CONSTRAINT ck_c CHECK (c > 0), d int UNIQUE, "
                  "CONSTRAINT uq_cd UNIQUE (c, d), CONSTRAINT fk_d FOREIGN KEY (d) REFERENCES p, "
                  "FOREIGN KEY (c) REFERENCES p, CONSTRAINT ck_two CHECK (d > c AND \"C\" > 1))")
    assert got[1:] == [ConstraintName("main", "t", "p", ("id",), "pk_t"),
                       ConstraintName("main", "t", "f", ("a",), "fk_a"),
                       ConstraintName("main", "t", "u", ("b",), "uq_b"),
                       ConstraintName("main", "t", "c", ("c",), "ck_c"),
                       ConstraintName("main", "t", "u", ("c", "d"), "uq_cd"),
                       ConstraintName("main", "t", "f", ("d",), "fk_d"),
                       ConstraintName("main", "t", "c", ("C", "c", "d"), "ck_two")]


def test_identity_columns_are_recorded_with_their_kind():
    assert changes("CREATE TABLE t (a int GENERATED ALWAYS AS IDENTITY, "
                   "b bigint GENERATED BY DEFAULT AS IDENTITY, c serial)")[1:] == [
        IdentityColumn("main", "t", "a", "a"), IdentityColumn("main", "t", "b", "d")]
    assert changes("ALTER TABLE t ADD COLUMN n int GENERATED ALWAYS AS IDENTITY") == [
        IdentityColumn("main", "t", "n", "a")]


def test_a_table_made_from_a_query_inherits_its_result_columns_declared_types(dev_backend):
    """CREATE TABLE ... AS and SELECT INTO: the new columns are the query's result columns'
    types as PostgreSQL shows them, lengths aside (no length check guards such a table);
    a temporary one records nothing (as a temporary CREATE TABLE)."""
    s = dev_backend.connect("dev", "root")
    s.execute("CREATE TABLE src (a int, b varchar(5), c char(3), d timestamp(0), e jsonb, "
              "f numeric, g varchar(4)[])")
    s.execute("""INSERT INTO src VALUES (1, 'ab', 'x', '2020-01-01 10:00:00.7', '{"k": 1}', """
              "1.5, '{a}')")
    shown = ("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute "
             "WHERE attrelid = $1::regclass AND attnum > 0 ORDER BY attnum")
    expected = [("a", "integer"), ("b", "character varying"), ("c", "text"),
                ("d", "timestamp(0) without time zone"), ("e", "jsonb"), ("f", "numeric"),
                ("g", "character varying[]")]
    assert s.execute("CREATE TABLE dst AS SELECT * FROM src").tag == "SELECT 1"
    assert list(s.execute(shown, ["dst"]).rows()) == expected
    assert s.execute("SELECT a, b, c, d, e, f, g INTO public.dst2 FROM src").tag == "SELECT 1"
    assert list(s.execute(shown, ["dst2"]).rows()) == expected
    read = "SELECT a, b, c, d, e, f, g FROM "
    # its result columns are those of a table declared with the types it shows
    s.execute("CREATE TABLE twin (a int, b varchar, c text, d timestamp(0), e jsonb, "
              "f numeric, g varchar[])")
    assert [(c.type_oid, c.type_modifier) for c in s.execute(read + "dst2").columns] == \
        [(c.type_oid, c.type_modifier) for c in s.execute(read + "twin").columns]
    assert list(s.execute(read + "dst2").rows()) == list(s.execute(read + "src").rows())
    s.execute("CREATE TEMP TABLE tmp AS SELECT b, e FROM src")
    assert list(s.execute(shown, ["tmp"]).rows()) == [("b", "text"), ("e", "json")]
    s.close()
