"""pgbarrier.backends.duckdb_explain*: PostgreSQL's EXPLAIN options, DuckDB's plan JSON as
PostgreSQL's plan tree, and PostgreSQL's four output formats.

The plans fed in are DuckDB 2.0.1's own ``EXPLAIN (FORMAT JSON)`` / ``EXPLAIN ANALYZE
(FORMAT JSON)`` output (captured verbatim, or made by an in-process DuckDB)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from typing import Any

import duckdb
import pytest

from pgbarrier.backends.duckdb_explain import (EXPLAIN_SETTINGS, changed_settings, columns,
                                               parse, statement_facts, utility_result)
from pgbarrier.backends.duckdb_explain_columns import pg_width
from pgbarrier.backends.duckdb_explain_plan import (Relation, Statement, convert, duckdb_root,
                                                    tables_of)
from pgbarrier.backends.pg_explain_format import Options, PlanNode, Summary, render
from pgbarrier.errors import PgError
from pgbarrier.pgproto import types as pgt
from tests.pg_explain_grammar import (COSTS, SUPERSET_COST, json_shape, parse_text, shape,
                                      walk_json)

# --------------------------------------------------------------------------- the fixtures

#: DuckDB 2.0.1, EXPLAIN (FORMAT JSON) of
#: SELECT t.b, sum(d) FROM t JOIN u ON t.a = u.a WHERE c < 100 GROUP BY t.b ORDER BY 2 DESC LIMIT 3
JOIN_PLAN = json.loads("""[{"name": "TOP_N", "children": [{"name": "PROJECTION", "children": [{"name": "HASH_GROUP_BY", "children": [{"name": "PROJECTION", "children": [{"name": "PROJECTION", "children": [{"name": "HASH_JOIN", "children": [{"name": "FILTER", "children": [{"name": "SEQ_SCAN", "children": [], "extra_info": {"Table": "memory.main.t", "Type": "Sequential Scan", "Projections": ["a", "b"], "Filters": "(c < 100.0)", "Estimated Cardinality": "200"}}], "extra_info": {"Expression": "(a <= 99)", "Estimated Cardinality": "200"}}, {"name": "SEQ_SCAN", "children": [], "extra_info": {"Table": "memory.main.u", "Type": "Sequential Scan", "Projections": ["a", "d"], "Estimated Cardinality": "100"}}], "extra_info": {"Join Type": "INNER", "Conditions": "a = a", "Estimated Cardinality": "20"}}], "extra_info": {"Projections": ["__internal_compress_string_uinteger(#0)", "#1"], "Estimated Cardinality": "20"}}], "extra_info": {"Projections": ["b", "d"], "Estimated Cardinality": "20"}}], "extra_info": {"Groups": "#0", "Aggregates": "sum(#1)", "Estimated Cardinality": "20"}}], "extra_info": {"Projections": ["__internal_decompress_string(#0)", "#1"], "Estimated Cardinality": "20"}}], "extra_info": {"Top": "3", "Order By": "sum(d) DESC", "Estimated Cardinality": "3"}}]""")  # noqa: E501

#: DuckDB 2.0.1, EXPLAIN ANALYZE (FORMAT JSON) of the same (sizes dropped, timings rounded)
JOIN_PROFILE = json.loads("""{"operator": [{"extra_info": {}, "intermediate_rows": 0, "name": "RESULT_COLLECTOR", "timing": 0.0, "type": "RESULT_COLLECTOR", "children": [{"extra_info": {}, "intermediate_rows": 0, "name": "EXPLAIN_ANALYZE", "timing": 0.0, "type": "EXPLAIN_ANALYZE", "children": [{"extra_info": {"Top": "3", "Order By": "sum(d) DESC", "Estimated Cardinality": "3"}, "intermediate_rows": 3, "name": "TOP_N", "timing": 4.3e-05, "type": "TOP_N", "children": [{"extra_info": {"Projections": ["__internal_decompress_string(#0)", "#1"], "Estimated Cardinality": "20"}, "intermediate_rows": 100, "name": "PROJECTION", "timing": 6e-06, "type": "PROJECTION", "children": [{"extra_info": {"Groups": "#0", "Aggregates": "sum(#1)", "Estimated Cardinality": "20"}, "intermediate_rows": 100, "name": "HASH_GROUP_BY", "timing": 0.001757, "type": "HASH_GROUP_BY", "children": [{"extra_info": {"Projections": ["b", "d"], "Estimated Cardinality": "20"}, "intermediate_rows": 100, "name": "PROJECTION", "timing": 0.0, "type": "PROJECTION", "children": [{"extra_info": {"Projections": ["__internal_compress_string_uinteger(#0)", "#1"], "Estimated Cardinality": "20"}, "intermediate_rows": 100, "name": "PROJECTION", "timing": 1.1e-05, "type": "PROJECTION", "children": [{"extra_info": {"Join Type": "INNER", "Conditions": "a = a", "Estimated Cardinality": "20"}, "intermediate_rows": 100, "name": "HASH_JOIN", "timing": 0.000243, "type": "HASH_JOIN", "children": [{"extra_info": {"Expression": "(a <= 99)", "Estimated Cardinality": "200"}, "intermediate_rows": 100, "name": "FILTER", "timing": 1.4e-05, "type": "FILTER", "children": [{"extra_info": {"Table": "memory.main.t", "Type": "Sequential Scan", "Projections": ["a", "b"], "Filters": "(c < 100.0)", "Dynamic Filters": "optional: a IN PRF(a)", "Estimated Cardinality": "200"}, "intermediate_rows": 100, "name": "SEQ_SCAN", "rows_scanned": 1000, "timing": 4.2e-05, "type": "TABLE_SCAN"}]}, {"extra_info": {"Table": "memory.main.u", "Type": "Sequential Scan", "Projections": ["a", "d"], "Estimated Cardinality": "100"}, "intermediate_rows": 100, "name": "SEQ_SCAN", "rows_scanned": 100, "timing": 1.8e-05, "type": "TABLE_SCAN"}]}]}]}]}]}]}]}]}], "planner": {"total_time": 0.0002}, "optimizer": {"total_time": 0.0003}, "physical_planner": {"total_time": 0.0001}, "query": {"total_time": 0.004}}""")  # noqa: E501

RELATIONS = {
    "memory.main.t": Relation("public", "t", {"a": "INTEGER", "b": "VARCHAR", "c": "DOUBLE"},
                              1000),
    "memory.main.u": Relation("public", "u", {"a": "INTEGER", "d": "BIGINT"}, 100),
}

JOIN_TEXT = """\
Limit  (cost=12.40..12.63 rows=3 width=64)
  ->  Sort  (cost=12.40..12.60 rows=20 width=64)
        Sort Key: sum(d) DESC
        ->  HashAggregate  (cost=12.20..12.40 rows=20 width=64)
              Group Key: t.b
              ->  Hash Join  (cost=2.00..12.20 rows=20 width=40)
                    Hash Cond: (t.a = u.a)
                    ->  Seq Scan on t  (cost=0.00..10.00 rows=200 width=36)
                          Filter: ((c < 100.0) AND (a <= 99))
                    ->  Hash  (cost=2.00..2.00 rows=100 width=12)
                          ->  Seq Scan on u  (cost=0.00..1.00 rows=100 width=12)"""


def op(name: str, *children: dict[str, Any], **info: Any) -> dict[str, Any]:
    """A DuckDB plan operator (``Estimated_Cardinality=5`` is ``"Estimated Cardinality":
    "5"``)."""
    extra = {k.replace("_", " "): (str(v) if k == "Estimated_Cardinality" else v)
             for k, v in info.items()}
    return {"name": name, "children": list(children), "extra_info": extra}


def scan(table: str, projections: list[str], rows: int, **info: Any) -> dict[str, Any]:
    return op("SEQ_SCAN", Table=f"memory.main.{table}", Type="Sequential Scan",
              Projections=projections, Estimated_Cardinality=rows, **info)


def plan(root: dict[str, Any], options: Options | None = None, *,
         statement: Statement | None = None, summary: Summary | None = None,
         relations: dict[str, Relation] | None = None) -> str:
    o = options or Options()
    node = convert(root, RELATIONS if relations is None else relations,
                   statement or Statement(), analyze=o.analyze, verbose=o.verbose)
    return render(node, o, summary or Summary())


def lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n")


def tree(root: dict[str, Any], analyze: bool = False, **facts: Any) -> PlanNode:
    return convert(root, RELATIONS, Statement(**facts), analyze=analyze, verbose=False)


def nodes(node: PlanNode) -> list[PlanNode]:
    out = [node]
    for child in node.children:
        out += nodes(child.node)
    return out


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize("sql, expected", [
    ("EXPLAIN SELECT 1", {}),
    ("explain analyze select 1", {"analyze": True, "timing": True, "summary": True}),
    ("EXPLAIN ANALYSE VERBOSE SELECT 1", {"analyze": True, "verbose": True, "timing": True,
                                          "summary": True}),
    ("EXPLAIN VERBOSE SELECT 1", {"verbose": True}),
    ("EXPLAIN (ANALYZE, COSTS, VERBOSE, BUFFERS, FORMAT JSON) SELECT 1",
     {"analyze": True, "verbose": True, "buffers": True, "format": "json", "timing": True,
      "summary": True}),
    ("explain (costs false, verbose) select 1", {"costs": False, "verbose": True}),
    ("EXPLAIN (ANALYZE 1, TIMING off, SUMMARY 'off') SELECT 1", {"analyze": True}),
    ("EXPLAIN (SETTINGS on, WAL, ANALYZE) SELECT 1",
     {"settings": True, "wal": True, "analyze": True, "timing": True, "summary": True}),
    ("EXPLAIN (TIMING false) SELECT 1", {}),
    ("EXPLAIN (SUMMARY) SELECT 1", {"summary": True}),
    ("EXPLAIN (FORMAT JSON, FORMAT yaml) SELECT 1", {"format": "yaml"}),
    ('EXPLAIN ("format" "xml", "costs" off) SELECT 1', {"format": "xml", "costs": False}),
    ("EXPLAIN /* c */ ( -- c\n FORMAT text ) VALUES (1)", {}),
])
def test_options_are_postgresqls(sql, expected):
    ex = parse(sql)
    assert ex.options == Options(**expected)
    assert sql[ex.offset:] == ex.statement


@pytest.mark.parametrize("sql, sqlstate, message, position", [
    ("EXPLAIN (foo) SELECT 1", "42601", 'unrecognized EXPLAIN option "foo"', 10),
    ("EXPLAIN (format csv) SELECT 1", "22023",
     'unrecognized value for EXPLAIN option "format": "csv"', 10),
    ("EXPLAIN (format 'JSON') SELECT 1", "22023",
     'unrecognized value for EXPLAIN option "format": "JSON"', 10),
    ("EXPLAIN (format) SELECT 1", "42601", "format requires a parameter", None),
    ("EXPLAIN (wal) SELECT 1", "22023", "EXPLAIN option WAL requires ANALYZE", None),
    ("EXPLAIN (timing) SELECT 1", "22023", "EXPLAIN option TIMING requires ANALYZE", None),
    ("EXPLAIN (analyze off, timing) SELECT 1", "22023",
     "EXPLAIN option TIMING requires ANALYZE", None),
    ("EXPLAIN (costs maybe) SELECT 1", "42601", "costs requires a Boolean value", None),
    ("EXPLAIN (analyze 2) SELECT 1", "42601", "analyze requires a Boolean value", None),
    ("EXPLAIN () SELECT 1", "42601", 'syntax error at or near ")"', 10),
    ("EXPLAIN (analyze SELECT 1", "42601", 'syntax error at or near "SELECT"', 18),
    ("EXPLAIN (analyze true false) SELECT 1", "42601", 'syntax error at or near "false"', 23),
    ("EXPLAIN (select) SELECT 1", "42601", 'syntax error at or near "select"', 10),
    ("EXPLAIN", "42601", "syntax error at end of input", 8),
    ("EXPLAIN VERBOSE ANALYZE SELECT 1", "42601", 'syntax error at or near "ANALYZE"', 17),
    ("EXPLAIN DROP TABLE t", "42601", 'syntax error at or near "DROP"', 9),
    ("EXPLAIN SHOW x", "42601", 'syntax error at or near "SHOW"', 9),
    ("EXPLAIN create table xx (a int)", "42601", 'syntax error at or near "int"', 28),
    ("EXPLAIN create index on t (a)", "42601", 'syntax error at or near "index"', 16),
])
def test_option_errors_are_postgresqls(sql, sqlstate, message, position):
    with pytest.raises(PgError) as info:
        parse(sql)
    assert (info.value.sqlstate, info.value.message, info.value.position) == \
        (sqlstate, message, position)


@pytest.mark.parametrize("sql, oid", [
    ("EXPLAIN SELECT 1", pgt.TEXT),
    ("EXPLAIN ANALYZE SELECT 1", pgt.TEXT),
    ("EXPLAIN (FORMAT JSON) SELECT 1", pgt.JSON),
    ("explain (analyze, format yaml) select 1", pgt.TEXT),
    ("EXPLAIN (FORMAT XML) SELECT 1", 142),
    ("EXPLAIN (FORMAT XML, FORMAT JSON) SELECT 1", pgt.JSON),
])
def test_described_column_is_query_plan_of_the_formats_type(sql, oid):
    assert [(c.name, c.type_oid) for c in columns(sql)] == [("QUERY PLAN", oid)]


def test_statement_facts_name_aliases_and_the_dml_target():
    facts = statement_facts("SELECT * FROM t x JOIN u ON x.a = u.a, w y, w z")
    assert facts.aliases == {"t": "x"}  # w is named twice: which scan is which is unknown
    facts = statement_facts("UPDATE public.t AS q SET a = 1")
    assert facts.target == ("t", "q") and facts.target_schema == "public"
    facts = statement_facts("INSERT INTO s.t (a) VALUES (1)")
    assert facts.target == ("t", None) and facts.target_schema == "s"
    assert statement_facts("WITH c AS (SELECT 1) SELECT * FROM c").aliases == {}
    assert statement_facts("DELETE FROM u RETURNING *, a + 1").returning == ["*", "a + 1"]
    assert statement_facts("UPDATE u SET a = 1 RETURNING u.*").returning == ["*"]
    assert statement_facts("DELETE FROM u").returning is None


def test_changed_settings_are_the_planner_ones_off_their_defaults():
    values = {"work_mem": "8MB", "enable_seqscan": "off", "search_path": '"$user", public'}
    got = changed_settings(lambda n: values.get(n) or _default(n))
    assert got == [("enable_seqscan", "off"), ("work_mem", "8MB")]
    assert list(EXPLAIN_SETTINGS) == sorted(EXPLAIN_SETTINGS)


def _default(name: str) -> str:
    from pgbarrier.backends.duckdb_settings import ClientSettings
    return ClientSettings().get(name)


# --------------------------------------------------------------------------- text format


def test_join_plan_is_postgresqls_tree_with_pgbarriers_costs():
    text = plan(duckdb_root(JOIN_PLAN), statement=Statement(result_types=["VARCHAR",
                                                                          "HUGEINT"]))
    assert text == JOIN_TEXT + "\n"
    m = SUPERSET_COST.search(lines(text)[0])
    assert m and (float(m.group(1)), float(m.group(2))) == (12.40, 12.63)
    assert shape(parse_text(lines(text))) == [[[[[], [[]]]]]]


def test_analyze_adds_actual_values_and_the_summary():
    o = Options(analyze=True, timing=True, summary=True)
    root = duckdb_root(JOIN_PROFILE)
    assert root is not None and root["name"] == "TOP_N"
    node = convert(root, RELATIONS, Statement(), analyze=True, verbose=False)
    text = render(node, o, Summary(planning_ms=0.6, execution_ms=3.4))
    got = lines(text)
    assert got[0].startswith("Limit  (cost=12.40..12.63 rows=3 width=64) (actual time=")
    assert got[0].endswith(" rows=3 loops=1)")
    assert "Rows Removed by Filter: 900" in text  # 1000 read, 100 through both filters
    assert got[-2:] == ["Planning Time: 0.600 ms", "Execution Time: 3.400 ms"]
    parse_text(got)
    # actual times add up like costs: total = own + children's totals
    scan_t = next(n for n in nodes(node) if n.target == ("Relation Name", "t"))
    join = next(n for n in nodes(node) if n.node_type == "Hash Join")
    assert scan_t.actual is not None and join.actual is not None
    assert scan_t.actual.total_ms == pytest.approx(0.042 + 0.014)  # the folded FILTER's too
    assert join.actual.total_ms == pytest.approx(0.056 + 0.018 + 0.243 + 0.011)  # + a projection
    assert all(n.actual is not None and n.actual.loops == 1 for n in nodes(node))
    timing_off = render(node, Options(analyze=True, timing=False, summary=False), Summary())
    assert lines(timing_off)[0] == "Limit  (cost=12.40..12.63 rows=3 width=64) " \
                                   "(actual rows=3 loops=1)"
    assert "Planning Time" not in timing_off


def test_costs_off_drops_the_estimates():
    text = plan(duckdb_root(JOIN_PLAN), Options(costs=False))
    assert "cost=" not in text and lines(text)[:3] == ["Limit", "  ->  Sort",
                                                       "        Sort Key: sum(d) DESC"]


def test_verbose_adds_output_and_qualified_names():
    text = plan(duckdb_root(JOIN_PLAN), Options(verbose=True))
    assert "  Output: t.b, sum(u.d)" in text
    assert "->  Seq Scan on public.t  (cost=" in text
    assert "Output: t.b, u.d" in text  # the join returns what is used above it
    assert "Filter: ((t.c < 100.0) AND (t.a <= 99))" in text
    parse_text(lines(text))


def test_summary_settings_buffers_and_wal_in_text():
    o = Options(analyze=True, timing=True, summary=True, settings=True, buffers=True,
                wal=True)
    text = plan(op("DUMMY_SCAN"), o,
                summary=Summary([("enable_seqscan", "off"), ("work_mem", "8MB")], 0.1, 0.2))
    got = lines(text)
    assert got[0].startswith("Result  (cost=0.00..0.01 rows=1 width=0) (actual time=")
    # zero buffer and WAL counts print nothing in text format, as in PostgreSQL
    assert got[1:] == ["Settings: enable_seqscan = 'off', work_mem = '8MB'",
                       "Planning Time: 0.100 ms", "Execution Time: 0.200 ms"]
    assert lines(plan(op("DUMMY_SCAN"), Options(summary=True), summary=Summary(
        planning_ms=1.5)))[1:] == ["Planning Time: 1.500 ms"]


# --------------------------------------------------------------------------- other formats


def test_json_is_postgresqls_structure():
    text = plan(duckdb_root(JOIN_PLAN), Options(format="json"))
    loaded = json.loads(text)
    assert list(loaded[0]) == ["Plan"]
    top = loaded[0]["Plan"]
    assert list(top)[:8] == ["Node Type", "Parallel Aware", "Async Capable", "Startup Cost",
                             "Total Cost", "Plan Rows", "Plan Width", "Plans"]
    assert (top["Node Type"], top["Startup Cost"], top["Total Cost"], top["Plan Rows"]) == \
        ("Limit", 12.40, 12.63, 3)
    kinds = [(n["Node Type"], n.get("Strategy"), n.get("Join Type"), n.get("Parent Relationship"))
             for n in walk_json(loaded)]
    assert kinds == [("Limit", None, None, None), ("Sort", None, None, "Outer"),
                     ("Aggregate", "Hashed", None, "Outer"),
                     ("Hash Join", None, "Inner", "Outer"), ("Seq Scan", None, None, "Outer"),
                     ("Hash", None, None, "Inner"), ("Seq Scan", None, None, "Outer")]
    scan_t = [n for n in walk_json(loaded) if n.get("Relation Name") == "t"][0]
    assert scan_t["Alias"] == "t" and scan_t["Filter"] == "((c < 100.0) AND (a <= 99))"
    join = [n for n in walk_json(loaded) if n["Node Type"] == "Hash Join"][0]
    assert join["Inner Unique"] is False and join["Hash Cond"] == "(t.a = u.a)"
    # PostgreSQL's layout: two spaces a level, costs with two decimals
    assert text.startswith('[\n  {\n    "Plan": {\n      "Node Type": "Limit",\n')
    assert '"Startup Cost": 12.40,' in text and text.endswith("\n    }\n  }\n]")
    assert json_shape(top) == shape(parse_text(lines(plan(duckdb_root(JOIN_PLAN)))))


def test_json_with_every_option_has_postgresqls_keys():
    o = Options(analyze=True, verbose=True, buffers=True, wal=True, settings=True, timing=True,
                summary=True, format="json")
    node = convert(duckdb_root(JOIN_PROFILE), RELATIONS, Statement(), analyze=True, verbose=True)
    loaded = json.loads(render(node, o, Summary([("work_mem", "8MB")], 0.5, 2.5)))
    assert list(loaded[0]) == ["Plan", "Settings", "Planning", "Planning Time", "Triggers",
                               "Execution Time"]
    assert loaded[0]["Settings"] == {"work_mem": "8MB"} and loaded[0]["Triggers"] == []
    assert loaded[0]["Planning"]["Shared Hit Blocks"] == 0
    for n in walk_json(loaded):
        for key in ("Node Type", "Startup Cost", "Total Cost", "Plan Rows", "Plan Width",
                    "Actual Startup Time", "Actual Total Time", "Actual Rows", "Actual Loops",
                    "Shared Hit Blocks", "Temp Written Blocks", "WAL Records", "WAL Bytes"):
            assert key in n, (key, n["Node Type"])
        assert n["Actual Total Time"] >= n["Actual Startup Time"] >= 0
    assert [n.get("Output") for n in walk_json(loaded)][0] == ["t.b", "sum(u.d)"]


def test_yaml_and_xml_are_postgresqls_structure():
    o = Options(analyze=True, timing=False, summary=True, format="yaml")
    node = convert(duckdb_root(JOIN_PROFILE), RELATIONS, Statement(), analyze=True,
                   verbose=False)
    text = render(node, o, Summary(planning_ms=0.5, execution_ms=1.0))
    got = lines(text)
    assert got[:3] == ["- Plan: ", '    Node Type: "Limit"', "    Parallel Aware: false"]
    assert '      - Node Type: "Sort"' in got and "        Parent Relationship: \"Outer\"" in got
    assert got[-3:] == ["  Planning Time: 0.500", "  Triggers: ", "  Execution Time: 1.000"]
    xml_text = render(node, Options(format="xml", costs=False, analyze=True, summary=True),
                      Summary(planning_ms=0.5, execution_ms=1.0))
    doc = ET.fromstring(xml_text)
    ns = "{http://www.postgresql.org/2009/explain}"
    assert doc.tag == f"{ns}explain"
    query = doc.find(f"{ns}Query")
    assert query is not None
    assert [c.tag.replace(ns, "") for c in query] == ["Plan", "Planning-Time", "Triggers",
                                                      "Execution-Time"]
    scan_t = [p for p in doc.iter(f"{ns}Plan") if p.findtext(f"{ns}Relation-Name") == "t"][0]
    assert scan_t.findtext(f"{ns}Filter") == "((c < 100.0) AND (a <= 99))"
    assert "(c &lt; 100.0)" in xml_text and f"{ns}Startup-Cost" not in {e.tag for e in doc.iter()}


def test_utility_statement_has_no_plan_structure():
    assert list(utility_result(Options()).row_source) == [
        ("Utility statements have no plan structure",)]
    assert list(utility_result(Options(format="json")).row_source) == [
        ('[\n  "Utility Statement"\n]',)]
    result = utility_result(Options(format="xml"))
    assert result.tag == "EXPLAIN" and result.columns[0].type_oid == 142


# --------------------------------------------------------------------------- node shapes


@pytest.mark.parametrize("root, facts, expected", [
    (op("PROJECTION", op("DUMMY_SCAN"), Projections="1", Estimated_Cardinality=1), {},
     ["Result  (cost=0.00..0.01 rows=1 width=4)"]),
    (op("EMPTY_RESULT"), {},
     ["Result  (cost=0.00..0.01 rows=1 width=0)", "  One-Time Filter: false"]),
    (op("COLUMN_DATA_SCAN", Estimated_Cardinality=3), {},
     ['Values Scan on "*VALUES*"  (cost=0.00..0.03 rows=3 width=0)']),
    (op("UNION", scan("t", ["a"], 1000), scan("u", ["a"], 100)), {},
     ["Append  (cost=0.00..22.00 rows=1100 width=4)",
      "  ->  Seq Scan on t  (cost=0.00..10.00 rows=1000 width=4)",
      "  ->  Seq Scan on u  (cost=0.00..1.00 rows=100 width=4)"]),
    (op("CROSS_PRODUCT", scan("t", ["a"], 1000), scan("u", ["d"], 100)), {},
     ["Nested Loop  (cost=0.00..1011.00 rows=100000 width=12)",
      "  ->  Seq Scan on t  (cost=0.00..10.00 rows=1000 width=4)",
      "  ->  Seq Scan on u  (cost=0.00..1.00 rows=100 width=8)"]),
    (op("PIECEWISE_MERGE_JOIN", scan("t", ["a"], 1000), scan("u", ["a"], 100),
        Join_Type="LEFT", Conditions="a < a", Estimated_Cardinality=500), {},
     ["Piecewise Merge Left Join  (cost=0.00..16.00 rows=500 width=8)",
      "  Join Filter: (t.a < u.a)",
      "  ->  Seq Scan on t  (cost=0.00..10.00 rows=1000 width=4)",
      "  ->  Seq Scan on u  (cost=0.00..1.00 rows=100 width=4)"]),
    (op("HASH_JOIN", scan("t", ["a", "c"], 1000), scan("u", ["a", "d"], 100),
        Join_Type="ANTI", Conditions=["a IS NOT DISTINCT FROM a", "c > CAST(d AS DOUBLE)"],
        Estimated_Cardinality=200), {"aliases": {"t": "x"}},
     ["Hash Anti Join  (cost=2.00..14.00 rows=200 width=12)",
      "  Hash Cond: (x.a IS NOT DISTINCT FROM u.a)",
      "  Join Filter: (x.c > CAST(u.d AS DOUBLE))",
      "  ->  Seq Scan on t x  (cost=0.00..10.00 rows=1000 width=12)",
      "  ->  Hash  (cost=2.00..2.00 rows=100 width=12)",
      "        ->  Seq Scan on u  (cost=0.00..1.00 rows=100 width=12)"]),
    (op("UNGROUPED_AGGREGATE", op("PROJECTION", scan("t", ["a", "b"], 200, Filters="(a > 1)"),
                                  Projections=["a", "b"], Estimated_Cardinality=200),
        Aggregates=["min(#0)", "max(#1)", "count_star()", "avg(#0)"], Estimated_Cardinality=1),
     {}, ["Aggregate  (cost=10.00..10.01 rows=1 width=76)",
          "  ->  Seq Scan on t  (cost=0.00..10.00 rows=200 width=36)",
          "        Filter: (a > 1)"]),
    (op("ORDER_BY", scan("t", ["a", "b"], 1000), Order_By=["a DESC", "b ASC"],
        Estimated_Cardinality=1000), {},
     ["Sort  (cost=10.00..20.00 rows=1000 width=36)", "  Sort Key: a DESC, b",
      "  ->  Seq Scan on t  (cost=0.00..10.00 rows=1000 width=36)"]),
    (op("STREAMING_LIMIT", scan("t", ["a"], 1000), Limit="10", Estimated_Cardinality=0), {},
     ["Limit  (cost=0.00..10.10 rows=10 width=4)",
      "  ->  Seq Scan on t  (cost=0.00..10.00 rows=1000 width=4)"]),
    (op("WINDOW", scan("t", ["a"], 1000),
        Projections="row_number() OVER (ORDER BY a ASC NULLS LAST)",
        Estimated_Cardinality=1000), {},
     ["WindowAgg  (cost=10.00..20.00 rows=1000 width=12)",
      "  ->  Seq Scan on t  (cost=0.00..10.00 rows=1000 width=4)"]),
    (op("CTE", scan("t", ["a"], 1000),
        op("PROJECTION", op("CTE_SCAN", **{"CTE_Index": "0"}, Estimated_Cardinality=1000),
           Projections="a", Estimated_Cardinality=1000),
        **{"CTE_Name": "x", "Table_Index": "0"}, Estimated_Cardinality=1000), {},
     ["CTE Scan on x  (cost=10.00..20.00 rows=1000 width=4)", "  CTE x",
      "    ->  Seq Scan on t  (cost=0.00..10.00 rows=1000 width=4)"]),
    (op("REC_CTE", op("PROJECTION", op("DUMMY_SCAN"), Projections="1", Estimated_Cardinality=1),
        op("PROJECTION", op("FILTER", op("REC_CTE_SCAN", **{"CTE_Index": "1"},
                                         Estimated_Cardinality=1),
                            Expression="(n < 10)", Estimated_Cardinality=1),
           Projections="(n + 1)", Estimated_Cardinality=1),
        **{"CTE_Name": "r", "Table_Index": "1"}, Estimated_Cardinality=11), {},
     ["Recursive Union  (cost=0.00..0.13 rows=11 width=4)",
      "  ->  Result  (cost=0.00..0.01 rows=1 width=4)",
      "  ->  WorkTable Scan on r  (cost=0.00..0.01 rows=1 width=8)",
      "        Filter: (n < 10)"]),
    (op("FILTER", op("ORDER_BY", scan("t", ["a"], 1000), Order_By="a ASC",
                     Estimated_Cardinality=1000), Expression="(a > 3)",
        Estimated_Cardinality=200), {},
     ["Result  (cost=10.00..22.00 rows=200 width=4)", "  Filter: (a > 3)",
      "  ->  Sort  (cost=10.00..20.00 rows=1000 width=4)", "        Sort Key: a",
      "        ->  Seq Scan on t  (cost=0.00..10.00 rows=1000 width=4)"]),
    (op("GENERATE_SERIES", Function="GENERATE_SERIES", Estimated_Cardinality=10), {},
     ["Function Scan on generate_series  (cost=0.00..0.10 rows=10 width=8)"]),
    (op("SEQ_SCAN", Table="memory.main.u", Type="Index Scan", Projections=["a", "d"],
        Filters="a = 5", Estimated_Cardinality=1), {"indexes": {"memory.main.u": "u_pkey"}},
     ["Index Scan using u_pkey on u  (cost=0.00..0.01 rows=1 width=12)",
      "  Index Cond: a = 5"]),
    (op("SEQ_SCAN", Table="memory.main.t", Type="Sequential Scan", Projections=["a"],
        **{"Sample_Method": "System: 10.0%"}, Estimated_Cardinality=100), {},
     ["Sample Scan on t  (cost=0.00..10.00 rows=100 width=4)",
      "  Sampling: System: 10.0%"]),
    (op("SOME_NEW_OPERATOR", scan("t", ["a"], 1000), Mode="fast", Estimated_Cardinality=7),
     {}, ["Some New Operator  (cost=0.00..10.07 rows=7 width=4)", "  Mode: fast",
          "  ->  Seq Scan on t  (cost=0.00..10.00 rows=1000 width=4)"]),
])
def test_duckdb_operators_as_postgresqls_nodes(root, facts, expected):
    text = plan(root, statement=Statement(**facts))
    assert lines(text) == expected
    parse_text(lines(text))


@pytest.mark.parametrize("kind, expected", [
    ("INSERT", ["Insert on u  (cost=0.00..0.04 rows=0 width=0)",
                '  ->  Values Scan on "*VALUES*"  (cost=0.00..0.02 rows=2 width=12)']),
    ("DELETE", ["Delete on u  (cost=0.00..1.02 rows=0 width=0)",
                "  ->  Seq Scan on u  (cost=0.00..1.00 rows=2 width=0)",
                "        Filter: (a = 3)"]),
])
def test_dml_is_a_modify_table_node(kind, expected):
    child = op("COLUMN_DATA_SCAN", Estimated_Cardinality=2) if kind == "INSERT" else \
        scan("u", [], 2, Filters="(a = 3)")
    facts = Statement(target=("u", None), target_columns=[("a", "INTEGER"), ("d", "BIGINT")])
    text = plan(op(kind, child), statement=facts)
    assert lines(text) == expected
    loaded = json.loads(plan(op(kind, child), Options(format="json"), statement=facts))
    top = loaded[0]["Plan"]
    assert (top["Node Type"], top["Operation"], top["Relation Name"], top["Plan Rows"]) == \
        ("ModifyTable", kind.title(), "u", 0)


def test_returning_makes_the_modify_table_return_rows():
    facts = Statement(target=("u", None), target_columns=[("a", "INTEGER"), ("d", "BIGINT")],
                      returning=["*"])
    child = op("COLUMN_DATA_SCAN", Estimated_Cardinality=2)
    assert lines(plan(op("INSERT", child), Options(verbose=True), statement=facts)) == [
        "Insert on public.u  (cost=0.00..0.04 rows=2 width=12)", "  Output: u.a, u.d",
        '  ->  Values Scan on "*VALUES*"  (cost=0.00..0.02 rows=2 width=12)']
    facts.returning = ["a", "d + 1"]
    got = lines(plan(op("DELETE", scan("u", [], 2, Filters="(a = 3)")), Options(verbose=True),
                     statement=facts))
    assert got[:2] == ["Delete on public.u  (cost=0.00..1.02 rows=2 width=12)",
                       "  Output: u.a, d + 1"]


def test_create_table_as_shows_its_query():
    root = op("CREATE_TABLE_AS", op("PROJECTION", op("DUMMY_SCAN"), Projections="1",
                                    Estimated_Cardinality=1))
    assert lines(plan(root)) == ["Result  (cost=0.00..0.01 rows=1 width=4)"]


# --------------------------------------------------------------------------- rules


def test_costs_are_monotone_and_blocking_nodes_start_after_their_input():
    for root in (duckdb_root(JOIN_PLAN), duckdb_root(JOIN_PROFILE)):
        top = tree(root)
        for n in nodes(top):
            assert 0 <= n.startup_cost <= n.total_cost
            assert n.rows >= 1 or n.node_type == "ModifyTable"
            kids = [c.node for c in n.children]
            assert n.total_cost >= sum(k.total_cost for k in kids)
            if n.node_type in ("Sort", "Aggregate", "Hash"):
                assert n.startup_cost == pytest.approx(sum(k.total_cost for k in kids)) or \
                    n.node_type == "Hash"
            if n.target is not None and not kids:
                assert n.startup_cost == 0
    # more rows, more cost
    cheap = convert(scan("t", ["a"], 10), {}, Statement(), analyze=False, verbose=False)
    dear = convert(scan("t", ["a"], 10_000), {}, Statement(), analyze=False, verbose=False)
    assert cheap.total_cost < dear.total_cost


@pytest.mark.parametrize("duck_type, width", [
    ("BOOLEAN", 1), ("SMALLINT", 2), ("INTEGER", 4), ("BIGINT", 8), ("FLOAT", 4),
    ("DOUBLE", 8), ("DATE", 4), ("TIME", 8), ("TIMESTAMP", 8),
    ("TIMESTAMP WITH TIME ZONE", 8), ("TIME WITH TIME ZONE", 12), ("INTERVAL", 16),
    ("UUID", 16), ("VARCHAR", 32), ("BLOB", 32), ("JSON", 32), ("INTEGER[]", 32),
    ("DECIMAL(10,2)", 16), ("DECIMAL(38,10)", 30), ("HUGEINT", 32), ("STRUCT(a INTEGER)", 32),
])
def test_widths_are_postgresqls_average_widths(duck_type, width):
    from pgbarrier.backends.duckdb_types import pg_type_oid
    assert pg_width(pg_type_oid(duck_type), duck_type) == width


def test_result_types_give_the_top_nodes_width():
    root = duckdb_root(JOIN_PLAN)
    assert tree(root, result_types=["VARCHAR", "BIGINT"]).width == 40
    assert tables_of(root) == ["memory.main.t", "memory.main.u"]


# --------------------------------------------------------------------------- DuckDB itself

#: statements of every shape DuckDB plans; each plan must read as PostgreSQL's
SHAPES = [
    "SELECT 1", "SELECT * FROM t WHERE a > 5 AND c < 3", "SELECT count(*) FROM t",
    "SELECT a, b, count(*), sum(c), avg(a) FROM t GROUP BY a, b HAVING count(*) > 1",
    "SELECT * FROM t LEFT JOIN u ON t.a = u.a", "SELECT * FROM t, u",
    "SELECT * FROM t WHERE a IN (SELECT a FROM u)",
    "SELECT * FROM t WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.a = t.a)",
    "SELECT a FROM t UNION SELECT a FROM u", "SELECT a FROM t UNION ALL SELECT a FROM u",
    "SELECT a FROM t EXCEPT SELECT a FROM u", "SELECT a, row_number() OVER (ORDER BY a) FROM t",
    "WITH x AS MATERIALIZED (SELECT * FROM t) SELECT * FROM x",
    "WITH x AS (SELECT * FROM t) SELECT * FROM x a, x b WHERE a.a = b.a",
    "SELECT * FROM u WHERE a = 3", "SELECT * FROM t ORDER BY b LIMIT 10 OFFSET 5",
    "SELECT * FROM t LIMIT 10", "SELECT DISTINCT b FROM t",
    "SELECT * FROM generate_series(1, 10)", "VALUES (1), (2)",
    "SELECT * FROM t JOIN u ON t.a < u.a", "SELECT (SELECT max(a) FROM u) FROM t",
    "SELECT * FROM t WHERE a = (SELECT max(a) FROM u WHERE u.d = t.a)",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) "
    "SELECT * FROM r",
    "SELECT a, sum(c) FROM t GROUP BY ROLLUP (a)", "SELECT unnest([1, 2, 3])",
    "SELECT string_agg(b, ',') FROM t", "SELECT 1 WHERE false",
    "SELECT * FROM t WHERE a > ANY (SELECT a FROM u)",
    "SELECT a, (SELECT count(*) FROM u WHERE u.a = t.a) FROM t",
    "INSERT INTO u VALUES (1000, 2)", "INSERT INTO u SELECT a + 5000, a FROM t",
    "UPDATE u SET d = 1 WHERE a = 3", "DELETE FROM u WHERE a = 3", "DELETE FROM u",
    "CREATE TABLE tas AS SELECT * FROM t",
]


@pytest.fixture(scope="module")
def duck() -> duckdb.DuckDBPyConnection:
    conn = duckdb.connect()
    conn.execute("CREATE TABLE t (a INTEGER, b VARCHAR, c DOUBLE)")
    conn.execute("CREATE TABLE u (a INTEGER PRIMARY KEY, d BIGINT)")
    conn.execute("INSERT INTO t SELECT i, i::VARCHAR, i FROM range(1000) r(i)")
    conn.execute("INSERT INTO u SELECT i, i FROM range(100) r(i)")
    return conn


_BOX = re.compile(r"[\u2500-\u257f]")


@pytest.mark.parametrize("sql", SHAPES)
@pytest.mark.parametrize("analyze", [False, True])
def test_every_duckdb_plan_reads_as_postgresqls(duck, sql, analyze):
    prefix = "EXPLAIN ANALYZE (FORMAT JSON) " if analyze else "EXPLAIN (FORMAT JSON) "
    duck.execute("BEGIN")
    try:
        rows = duck.execute(prefix + sql).fetchall()
    finally:
        duck.execute("ROLLBACK")
    root = duckdb_root(json.loads(rows[0][1]))
    if root is None:  # DuckDB profiles no operator of these: pgbarrier shows the plan
        assert analyze and (sql.startswith(("INSERT INTO u VALUES", "VALUES")) or
                            sql == "SELECT count(*) FROM t")
        root = duckdb_root(json.loads(duck.execute("EXPLAIN (FORMAT JSON) " + sql)
                                      .fetchall()[0][1]))
        assert root is not None and root["name"] in ("BATCH_INSERT", "COLUMN_DATA_SCAN")
    facts = statement_facts(sql)
    node = convert(root, RELATIONS, facts, analyze=analyze, verbose=True)
    for o in (Options(analyze=analyze, timing=analyze, summary=analyze),
              Options(analyze=analyze, verbose=True, timing=analyze)):
        text = render(node, o, Summary(planning_ms=0.1, execution_ms=0.2))
        got = lines(text)
        assert not any(_BOX.search(line) for line in got), text
        assert COSTS.search(got[0]), got[0]
        assert shape(parse_text(got)) == json_shape(
            json.loads(render(node, Options(analyze=analyze, format="json", timing=analyze),
                              Summary()))[0]["Plan"])


def test_an_index_scan_names_its_index(duck):
    """DuckDB's plan says ``Type: Index Scan`` but not which index: the index on the
    filtered column, else its primary key or unique constraint by PostgreSQL's name."""
    from pgbarrier.backends.duckdb_explain import _indexes
    duck.execute("CREATE TABLE IF NOT EXISTS w (a INTEGER, d BIGINT)")
    duck.execute("CREATE INDEX IF NOT EXISTS w_d_idx ON w (d)")

    def index_scan(table: str, cond: str) -> dict[str, Any]:
        return op("SEQ_SCAN", Table=f"memory.main.{table}", Type="Index Scan",
                  Projections=["a"], Filters=cond)

    pk = [("u", "PRIMARY KEY", ["a"], None, None, None, None)]
    assert _indexes(duck, index_scan("w", "d = 5"), lambda: pk) == {"memory.main.w": "w_d_idx"}
    assert _indexes(duck, index_scan("u", "a = 5"), lambda: pk) == {"memory.main.u": "u_pkey"}
    named = [("u", "PRIMARY KEY", ["a"], None, None, None, "my_pk")]
    assert _indexes(duck, index_scan("u", "a = 5"), lambda: named) == {"memory.main.u": "my_pk"}
    unique = [("u", "UNIQUE", ["d"], None, None, None, None)]
    assert _indexes(duck, index_scan("u", "d = 5"), lambda: unique) == \
        {"memory.main.u": "u_d_key"}


@pytest.mark.parametrize("root", [
    op("HASH_JOIN", scan("t", ["a"], 10), Join_Type="INNER", Conditions="a = a"),
    op("ORDER_BY", Order_By="a ASC"),
    op("CTE", scan("t", ["a"], 10), **{"CTE_Name": "x", "Table_Index": "0"}),
    op("PROJECTION", scan("t", ["a"], 10), scan("u", ["a"], 10), Projections="#0"),
    op("CTE_SCAN", **{"CTE_Index": "9"}),
    op("SEQ_SCAN", Table="nowhere", Projections=["z"], Filters=["optional: x"]),
    op("HASH_GROUP_BY", scan("t", ["a"], 10), Groups="#7", Aggregates="sum(#3)"),
])
def test_unexpected_shapes_still_render(root):
    """An operator with inputs DuckDB does not usually give it is shown as DuckDB's own."""
    text = plan(root)
    parse_text(lines(text))
