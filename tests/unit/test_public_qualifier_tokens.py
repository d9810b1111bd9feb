"""``public`` qualifiers become DuckDB's ``main``, token by token (pgbarrier.sql.public_schema),
and the catalog queries the rewrite cannot take are found (pgcatalog.unrewritten)."""

from __future__ import annotations

import pytest

from pgbarrier.backends.pgcatalog.unrewritten import (
    catalog_relation_in_tokens,
    quote_keyword_aliases,
)
from pgbarrier.sql.public_schema import map_public, may_name_public, schema_command


def sub(sql: str, database: str = "dev") -> str | None:
    mapped = map_public(sql, database)
    return None if mapped is None else mapped.sql


@pytest.mark.parametrize("sql, expected", [
    ('SELECT count(*) FROM "public"."orders"', 'SELECT count(*) FROM main."orders"'),
    ("INSERT INTO public.customers (a) VALUES ('x')",
     "INSERT INTO main.customers (a) VALUES ('x')"),
    ("update PUBLIC.t set a = 1", "update main.t set a = 1"),
    ("DELETE FROM Public.t WHERE public.t.a = 1", "DELETE FROM main.t WHERE main.t.a = 1"),
    ("MERGE INTO public.t USING public.s ON t.id = s.id WHEN MATCHED THEN DELETE",
     "MERGE INTO main.t USING main.s ON t.id = s.id WHEN MATCHED THEN DELETE"),
    ('CREATE TABLE "public".x (a int)', "CREATE TABLE main.x (a int)"),
    ("CREATE VIEW public.v AS SELECT * FROM public.t", "CREATE VIEW main.v AS SELECT * FROM main.t"),
    ("CREATE INDEX i ON public.t (a)", "CREATE INDEX i ON main.t (a)"),
    ("CREATE SEQUENCE public.s", "CREATE SEQUENCE main.s"),
    ("ALTER TABLE public.t ADD COLUMN b int", "ALTER TABLE main.t ADD COLUMN b int"),
    ("DROP TABLE public.a, \"public\".b", "DROP TABLE main.a, main.b"),
    ("COMMENT ON TABLE public.t IS 'public.t'", "COMMENT ON TABLE main.t IS 'public.t'"),
    ("TRUNCATE public.t", "TRUNCATE main.t"),
    ("COPY public.t FROM '/x/public.csv'", "COPY main.t FROM '/x/public.csv'"),
    ("SELECT * FROM dev.public.t", "SELECT * FROM main.t"),
    ('SELECT * FROM DEV."public".t', "SELECT * FROM main.t"),
    ("SELECT dev.public.t.c FROM t", "SELECT main.t.c FROM t"),
    ("SELECT x::public.mood, public.f(1)", "SELECT x::main.mood, main.f(1)"),
    ("EXPLAIN SELECT * FROM public.t", "EXPLAIN SELECT * FROM main.t"),
    ("PREPARE p AS SELECT * FROM public.t WHERE a = $1",
     "PREPARE p AS SELECT * FROM main.t WHERE a = $1"),
    # comments, strings, layout: byte for byte
    ("SELECT 'public.t', $$public.t$$, E'public.t' -- public.t\n  FROM\tpublic.t /* public.u */",
     "SELECT 'public.t', $$public.t$$, E'public.t' -- public.t\n  FROM\tmain.t /* public.u */"),
])
def test_public_qualifiers_become_main_and_nothing_else_changes(sql, expected):
    assert sub(sql) == expected


@pytest.mark.parametrize("sql", [
    "SELECT 1",
    'SELECT * FROM "Public".t',        # a quoted name keeps its case: another schema
    'SELECT * FROM "PUBLIC".t',
    "SELECT 'public.t'",
    "SELECT 1 -- public.t",
    "SELECT * FROM t_public.x",
    "SELECT * FROM s.public",          # a relation called public
    "SELECT public.c FROM public",     # ...and its column: not a schema
    "SELECT public FROM t",
    "DO $$ BEGIN PERFORM public.f(); END $$",
    "SELECT 'unterminated public.t",
])
def test_no_public_qualifier_no_change(sql):
    assert sub(sql) is None


def test_a_relation_called_public_leaves_two_part_names_but_not_longer_ones():
    # public.t may be the column t of the relation public; public.t.c has a schema
    assert sub("SELECT public.t.c FROM public.t, public") == \
        "SELECT main.t.c FROM public.t, public"


def test_another_databases_public_is_reported_not_substituted():
    mapped = map_public("SELECT * FROM other.public.t JOIN public.u ON true", "dev")
    assert mapped is not None
    assert mapped.cross_database == ("other.public.t", 15)
    assert mapped.sql == "SELECT * FROM other.public.t JOIN main.u ON true"


def test_positions_map_back_to_the_clients_text():
    client = 'SELECT x FROM "public".t, "public".nope WHERE 1'
    mapped = map_public(client, "dev")
    assert mapped is not None
    run = mapped.sql
    assert run == "SELECT x FROM main.t, main.nope WHERE 1"
    for word in ("SELECT", "x", ".t", "nope", "WHERE"):
        assert mapped.client_position(run.index(word) + 1) == client.index(word) + 1, word
    # inside a substituted name: the start of the client's "public"
    assert mapped.client_position(run.index("main.nope") + 3) == client.index('"public".nope') + 1
    assert mapped.client_position(None) is None


def test_the_gate_is_a_substring_test():
    assert may_name_public("select * from PUBLIC.t")
    assert not may_name_public("select * from t")
    assert map_public("select * from t", "dev") is None


@pytest.mark.parametrize("sql, expected", [
    ("CREATE SCHEMA public", ("CREATE", False)),
    ('create schema if not exists "public"', ("CREATE", True)),
    ("CREATE SCHEMA Public AUTHORIZATION bob", ("CREATE", False)),
    ("DROP SCHEMA public", ("DROP", False)),
    ("DROP SCHEMA IF EXISTS a, public CASCADE", ("DROP", True)),
    ("CREATE SCHEMA publicity", None),
    ('CREATE SCHEMA "Public"', None),
    ("DROP SCHEMA a", None),
    ("CREATE TABLE public.t (a int)", None),
])
def test_schema_commands_naming_public(sql, expected):
    assert schema_command(sql) == expected


@pytest.mark.parametrize("sql, expected", [
    ("SELECT matviewname AS select FROM pg_catalog.pg_matviews",
     'SELECT matviewname AS "select" FROM pg_catalog.pg_matviews'),
    ("SELECT 1 AS Update, 2 AS delete", 'SELECT 1 AS "update", 2 AS "delete"'),
    ("SELECT CAST(x AS date) FROM t", None),   # a type after AS is not a label
    ("SELECT x AS y FROM t", None),
])
def test_keyword_labels_are_quoted(sql, expected):
    assert quote_keyword_aliases(sql) == expected


@pytest.mark.parametrize("sql, expected", [
    ("SELECT a select FROM pg_catalog.pg_class", "pg_catalog.pg_class"),
    ("SELECT * FROM pg_class WHERE (", "pg_catalog.pg_class"),
    ("SELECT * FROM information_schema.whatever WHERE (", "information_schema.whatever"),
    ("EXPLAIN SELECT * FROM pg_namespace", "pg_catalog.pg_namespace"),
    ("SELECT pg_catalog.pg_get_userbyid(1) WHERE (", None),   # a function
    ("SELECT x::pg_catalog.int4 WHERE (", None),              # a type
    ("SELECT 'pg_class' WHERE (", None),
    ("SELECT * FROM t WHERE (", None),
])
def test_catalog_relations_are_found_in_the_tokens(sql, expected):
    assert catalog_relation_in_tokens(sql) == expected


def test_long_statements_are_read_to_their_last_candidate_only_where_that_is_safe():
    rows = ",".join(f"({i}, 'public.x {i}')" for i in range(2000))
    bulk = f"INSERT INTO public.t VALUES {rows}"
    assert sub(bulk) == f"INSERT INTO main.t VALUES {rows}"
    tail = f'{bulk} RETURNING (SELECT 1 FROM "public".u)'
    assert sub(tail) == f"INSERT INTO main.t VALUES {rows} RETURNING (SELECT 1 FROM main.u)"
    # the text after the last candidate starts inside a long string: read in full
    long_string = "x" * 2000
    assert sub(f"INSERT INTO public.t VALUES ('{long_string} public.t')") == \
        f"INSERT INTO main.t VALUES ('{long_string} public.t')"
    assert sub(f"INSERT INTO t VALUES ('public.t {long_string}')") is None
