"""pgbarrier.backends.duckdb_constraint_errors: DuckDB's constraint messages in,
PostgreSQL's errors out (names derived from the table's constraints)."""

from __future__ import annotations

import pytest

from pgbarrier.backends.duckdb_constraint_errors import constraint_error, target_table

ROWS = [
    ("t", "PRIMARY KEY", ["a"], None, None, [], None),
    ("t", "UNIQUE", ["e"], None, None, [], None),
    ("t", "CHECK", ["a", "c"], "(a > c)", None, [], None),
    ("t", "CHECK", ["c"], "(c > 0)", None, [], None),
    ("t", "CHECK", ["c"], "(c < 10)", None, [], None),
    ("t", "FOREIGN KEY", ["b"], None, "p", ["id"], None),
    ("d", "PRIMARY KEY", ["x", "y"], None, None, [], None),
    # constraints the client named
    ("n", "UNIQUE", ["u"], None, None, [], "uq_n"),
    ("n", "CHECK", ["v"], "(v > 0)", None, [], "ck_v"),
    ("n", "FOREIGN KEY", ["w"], None, "p", ["id"], "fk_w"),
]


@pytest.mark.parametrize("sql, table", [
    ("INSERT INTO t VALUES (1)", "t"),
    ("insert into public.T (a) values (1)", "t"),
    ('UPDATE "My T" SET a = 1', "My T"),
    ("DELETE FROM ONLY s.p WHERE id = 1", "p"),
    ("SELECT 1", None),
])
def test_target_table(sql, table):
    assert target_table(sql) == table


@pytest.mark.parametrize("message, sql, state, text, detail", [
    ('Duplicate key "a: 1" violates primary key constraint.', "INSERT INTO t VALUES (1)",
     "23505", 'duplicate key value violates unique constraint "t_pkey"',
     "Key (a)=(1) already exists."),
    ('Duplicate key "e: x, y" violates unique constraint.', "UPDATE t SET e = 'x, y'",
     "23505", 'duplicate key value violates unique constraint "t_e_key"',
     "Key (e)=(x, y) already exists."),
    ('PRIMARY KEY or UNIQUE constraint violation: duplicate key "1, q"',
     "INSERT INTO d VALUES (1, 'q'), (1, 'q')", "23505",
     'duplicate key value violates unique constraint "d_pkey"',
     "Key (x, y)=(1, q) already exists."),
    ('CHECK constraint failed on table "t" with expression CHECK((a > c))',
     "INSERT INTO t VALUES (0)", "23514",
     'new row for relation "t" violates check constraint "t_check"', None),
    ('CHECK constraint failed on table "t" with expression CHECK((c < 10))',
     "INSERT INTO t VALUES (0)", "23514",
     'new row for relation "t" violates check constraint "t_c_check1"', None),
    ("NOT NULL constraint failed: t.d", "INSERT INTO t VALUES (0)", "23502",
     'null value in column "d" of relation "t" violates not-null constraint', None),
    ('Violates foreign key constraint because key "id: 5" does not exist in the referenced '
     "table", "INSERT INTO t (b) VALUES (5)", "23503",
     'insert or update on table "t" violates foreign key constraint "t_b_fkey"',
     'Key (b)=(5) is not present in table "p".'),
    ('Duplicate key "u: 1" violates unique constraint.', "INSERT INTO n VALUES (1)",
     "23505", 'duplicate key value violates unique constraint "uq_n"',
     "Key (u)=(1) already exists."),
    ('CHECK constraint failed on table "n" with expression CHECK((v > 0))',
     "INSERT INTO n VALUES (0)", "23514",
     'new row for relation "n" violates check constraint "ck_v"', None),
    ('Violates foreign key constraint because key "id: 5" does not exist in the referenced '
     "table", "INSERT INTO n (w) VALUES (5)", "23503",
     'insert or update on table "n" violates foreign key constraint "fk_w"',
     'Key (w)=(5) is not present in table "p".'),
    ('Violates foreign key constraint because key "b: 1" is still referenced by a foreign key '
     "in a different table. If this is ...", "DELETE FROM p", "23503",
     'update or delete on table "p" violates foreign key constraint "t_b_fkey" on table "t"',
     'Key (id)=(1) is still referenced from table "t".'),
])
def test_constraint_messages(message, sql, state, text, detail):
    err = constraint_error(message, sql, lambda: ROWS)
    assert (err.sqlstate, str(err), err.detail) == (state, text, detail)


def test_without_the_tables_definition_the_shape_is_postgresqls():
    err = constraint_error('Duplicate key "a: 1" violates primary key constraint.',
                           "INSERT INTO u VALUES (1)", lambda: [])
    assert (err.sqlstate, str(err), err.detail) == (
        "23505", 'duplicate key value violates unique constraint "u_pkey"',
        "Key (a)=(1) already exists.")
    assert constraint_error("something else", "INSERT INTO t VALUES (1)", None) is None
