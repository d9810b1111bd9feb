"""DuckDB's plan (its ``EXPLAIN (FORMAT JSON)`` / ``EXPLAIN ANALYZE (FORMAT JSON)``) as a
PostgreSQL plan tree (:class:`pgbarrier.backends.pg_explain_format.PlanNode`).

The plan is DuckDB's: its operators, in its order, with its estimates; only the names and
the shape are PostgreSQL's, where PostgreSQL has a real equivalent. Rules this module keeps:

* Operators: ``SEQ_SCAN`` is ``Seq Scan on t`` (``Index Scan using <index> on t`` when
  DuckDB scans an index, its filters then ``Index Cond``; ``Sample Scan`` with a sample;
  ``Function Scan on f`` for a table function), its pushed-down filters ``Filter:``;
  ``FILTER`` becomes a ``Filter:`` of the node below it when PostgreSQL's node could carry
  one (a scan, join, aggregate or ``Result``), else a ``Result`` with the filter;
  ``PROJECTION`` has no node in PostgreSQL (the node below computes its output: it is
  folded into it); ``HASH_JOIN`` is ``Hash Join`` with its build side under a ``Hash``
  node, equality conditions ``Hash Cond:``, others ``Join Filter:``; ``NESTED_LOOP_JOIN``,
  ``BLOCKWISE_NL_JOIN`` and ``CROSS_PRODUCT`` are ``Nested Loop``; ``HASH_GROUP_BY`` and
  ``PERFECT_HASH_GROUP_BY`` are ``HashAggregate`` with ``Group Key:``,
  ``UNGROUPED_AGGREGATE``/``SIMPLE_AGGREGATE`` ``Aggregate``; ``ORDER_BY`` is ``Sort`` with
  ``Sort Key:``, ``TOP_N`` a ``Limit`` over a ``Sort``, ``LIMIT``/``STREAMING_LIMIT``
  ``Limit``; ``DUMMY_SCAN`` is ``Result``, ``EMPTY_RESULT`` ``Result`` with ``One-Time
  Filter: false``, ``COLUMN_DATA_SCAN`` (a VALUES list) ``Values Scan on "*VALUES*"`` (one
  row: ``Result``); ``UNION`` is ``Append``; ``WINDOW`` ``WindowAgg``; ``UNNEST``
  ``ProjectSet``; a materialized ``CTE`` is its consumer plan with the CTE as subplan
  ``CTE x``, read by ``CTE Scan on x``; ``REC_CTE`` is ``Recursive Union`` with ``WorkTable
  Scan on x``; ``INSERT``/``BATCH_INSERT``, ``UPDATE``, ``DELETE``, ``MERGE_INTO`` are
  ``Insert on t``/``Update on t``/``Delete on t``/``Merge on t`` (PostgreSQL's
  ``ModifyTable``); ``CREATE_TABLE_AS`` shows its query's plan, as PostgreSQL does. Any other
  operator keeps DuckDB's name in PostgreSQL's title case (``PIECEWISE_MERGE_JOIN`` is
  ``Piecewise Merge Join``) with DuckDB's details as its lines.
* Expressions (filters, conditions, keys, ``Output:``) are DuckDB's text; column references
  DuckDB prints by position (``#0``) are named after the column they stand for, and names
  are qualified with their relation where PostgreSQL qualifies them (more than one
  relation in the plan; scan filters only with VERBOSE).
* Rows are DuckDB's estimated cardinality (of the topmost operator folded into the node;
  derived where DuckDB gives none: a product for a cross product, a sum for a union), at
  least 1 as PostgreSQL clamps them, except a ``ModifyTable`` without RETURNING (0).
* Width is the sum of PostgreSQL's average widths of the node's output columns
  (:mod:`pgbarrier.backends.duckdb_explain_columns`: 4 for int4, 8 for int8 / float8 /
  timestamp, 32 for text and other variable-length types, 8 for an expression of unknown
  type); the top node's columns are typed by the statement's result types (DuckDB's own).
* Costs are pgbarrier's, not a cost model (DuckDB has none): monotone in the rows, derived
  only from the estimates above. Each node's own cost is its rows × 0.01 (PostgreSQL's
  ``cpu_tuple_cost``), a ``Seq Scan``'s the rows it reads (the table's estimated size) ×
  0.01, a ``ModifyTable``'s its input rows × 0.01. A node's total cost is its own plus its
  children's totals; its startup cost is 0.00 for a scan, its children's total costs for a
  node that reads all its input before returning a row (``Sort``, ``Aggregate``,
  ``HashAggregate``, ``Hash``, ``WindowAgg``), else its children's startup costs (a
  subplan's total always counts).
* With ANALYZE: actual rows are the rows DuckDB's operator returned, loops 1; ``Rows
  Removed by Filter`` is what the scan read (DuckDB's ``rows_scanned``) or the node below
  returned, less what the filter let through. Actual times add up DuckDB's per-operator
  times like the costs: total = the operator's own time (and the operators folded into it)
  plus its children's totals, startup = the children's totals for a node that reads all its
  input first, else their startup times.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pgbarrier.backends.duckdb_explain_columns import (REF, OutCol, aggregated, projected,
                                                       refs, typed)
from pgbarrier.backends.pg_explain_format import Actual, Child, PlanNode

__all__ = ["Relation", "Statement", "convert", "duckdb_root", "tables_of"]

#: PostgreSQL's cpu_tuple_cost: the cost of a row, the one factor of pgbarrier's costs
ROW_COST = 0.01
_BLOCKING = frozenset({"Sort", "Aggregate", "Hash", "WindowAgg"})
_QUAL_CARRIERS = frozenset({"Seq Scan", "Index Scan", "Sample Scan", "Function Scan",
                            "Values Scan", "CTE Scan", "WorkTable Scan", "Hash Join",
                            "Nested Loop", "Aggregate", "Result"})
#: the operators whose PostgreSQL node needs this many inputs (otherwise: DuckDB's own)
_ARITY = {"HASH_JOIN": 2, "NESTED_LOOP_JOIN": 2, "BLOCKWISE_NL_JOIN": 2, "CROSS_PRODUCT": 2,
          "CTE": 2, "REC_CTE": 2, "ORDER_BY": 1, "TOP_N": 1, "LIMIT": 1, "STREAMING_LIMIT": 1,
          "LIMIT_PERCENT": 1, "WINDOW": 1, "STREAMING_WINDOW": 1, "FILTER": 1,
          "PROJECTION": 1}
_JOIN_TYPES = {"INNER": "Inner", "LEFT": "Left", "RIGHT": "Right", "OUTER": "Full",
               "FULL": "Full", "SEMI": "Semi", "ANTI": "Anti"}
#: joins whose output is their left input's columns only (and a right-side one, its right's)
_LEFT_ONLY = frozenset({"SEMI", "ANTI", "MARK"})
_RIGHT_ONLY = frozenset({"RIGHT_SEMI", "RIGHT_ANTI"})
_EQUALITY = (" IS NOT DISTINCT FROM ", " = ")
_COMPARISONS = (" IS NOT DISTINCT FROM ", " IS DISTINCT FROM ", " <> ", " != ", " <= ",
                " >= ", " = ", " < ", " > ")
_IDENT = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|[A-Za-z_][A-Za-z0-9_$]*|\S")


@dataclass(frozen=True)
class Relation:
    """A table DuckDB's plan scans: PostgreSQL's schema and name, its columns' DuckDB
    types, its estimated size (rows)."""

    schema: str
    name: str
    columns: dict[str, str]
    rows: float = 0.0


@dataclass
class Statement:
    """What the explained statement says that DuckDB's plan does not: each table's alias
    (tables named once), the target of INSERT/UPDATE/DELETE/MERGE (name, alias), the
    result's DuckDB types, the index a DuckDB index scan used (table key -> name)."""

    aliases: dict[str, str] = field(default_factory=dict)
    target: tuple[str, str | None] | None = None
    target_schema: str = "public"
    result_types: list[str] | None = None
    indexes: dict[str, str] = field(default_factory=dict)
    #: the DML target's (column, DuckDB type): an INSERT's VALUES rows are as wide
    target_columns: list[tuple[str, str]] = field(default_factory=list)
    #: the RETURNING list (``*`` for all the target's columns), None without one
    returning: list[str] | None = None


@dataclass
class _Built:
    node: PlanNode
    cols: list[OutCol]
    #: the rows the node's own cost counts (a scan's rows read, a ModifyTable's input)
    cost_rows: float | None = None
    #: DuckDB's own time for the operators in this node, ms (ANALYZE)
    own_ms: float = 0.0
    #: a join's key columns, in :attr:`cols`, that DuckDB drops from its output when
    #: nothing above needs them (its plan does not say: see :meth:`_Builder.input_cols`)
    droppable: list[int] = field(default_factory=list)


def _strings(value: Any) -> list[str]:
    """An extra_info value as a list of strings (DuckDB gives one item as a bare string)."""
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [str(v) for v in value if str(v) != ""]
    return [str(value)]


def _estimate(op: dict[str, Any]) -> float | None:
    raw = (op.get("extra_info") or {}).get("Estimated Cardinality")
    try:
        return float(raw) if raw is not None else None
    except (TypeError, ValueError):
        return None


def _title(name: str) -> str:
    """DuckDB's ``PIECEWISE_MERGE_JOIN`` in PostgreSQL's title case."""
    return " ".join(w if w in ("IE", "NL", "CTE") else w.capitalize()
                    for w in name.strip().split("_") if w)


def duckdb_root(plan: Any) -> dict[str, Any] | None:
    """The plan's root operator: the first of a plain EXPLAIN's list, or below an
    analyzed plan's RESULT_COLLECTOR / EXPLAIN_ANALYZE; None when DuckDB gave none."""
    if isinstance(plan, list):
        return plan[0] if plan else None
    if not isinstance(plan, dict):
        return None
    ops = plan.get("operator") or plan.get("children")
    op = ops[0] if ops else None
    while op is not None and str(op.get("name", "")).strip() in ("RESULT_COLLECTOR",
                                                                 "EXPLAIN_ANALYZE", "QUERY"):
        children = op.get("children") or []
        op = children[0] if children else None
    return op


def tables_of(op: dict[str, Any] | None) -> list[str]:
    """Every ``Table`` DuckDB's plan scans (``db.schema.table``)."""
    out: list[str] = []
    stack = [op] if op else []
    while stack:
        cur = stack.pop()
        table = (cur.get("extra_info") or {}).get("Table")
        if table and table not in out:
            out.append(str(table))
        stack.extend(reversed(cur.get("children") or []))
    return out


def convert(root: dict[str, Any], relations: dict[str, Relation], statement: Statement,
            *, analyze: bool, verbose: bool) -> PlanNode:
    """PostgreSQL's plan tree for DuckDB's ``root`` operator."""
    builder = _Builder(relations, statement, analyze, verbose)
    builder.scan_count(root)
    built = builder.build(root)
    builder.apply_result_types(built)
    _costs(built.node, builder.cost_rows, analyze)
    return built.node


class _Builder:
    def __init__(self, relations: dict[str, Relation], statement: Statement, analyze: bool,
                 verbose: bool) -> None:
        self.relations = relations
        self.statement = statement
        self.analyze = analyze
        self.verbose = verbose
        self.multi = False
        #: CTE table index -> (name, its columns)
        self.ctes: dict[str, tuple[str, list[OutCol]]] = {}
        #: id(PlanNode) -> the rows its own cost counts, and its own time (ms)
        self.cost_rows: dict[int, tuple[float | None, float]] = {}

    # -- helpers ----------------------------------------------------------------------

    def scan_count(self, root: dict[str, Any]) -> None:
        """PostgreSQL qualifies column names when its plan reads more than one relation."""
        count = 0
        stack = [root]
        while stack:
            op = stack.pop()
            name = str(op.get("name", "")).strip()
            info = op.get("extra_info") or {}
            if info.get("Table") or info.get("Function") or name.endswith("CTE_SCAN"):
                count += 1
            stack.extend(op.get("children") or [])
        self.multi = count > 1

    def show(self, col: OutCol, prefix: bool | None = None) -> str:
        prefix = self.multi if prefix is None else prefix
        return f"{col.qual}.{col.name}" if prefix and col.qual else col.name

    def refs(self, text: str, cols: list[OutCol]) -> str:
        return refs(text, cols, self.show)

    def qualify(self, text: str, cols: list[OutCol], prefix: bool | None = None) -> str:
        """DuckDB's expression with ``#i`` named and bare column names qualified."""
        text = self.refs(text, cols)
        prefix = self.multi if prefix is None else prefix
        if not prefix:
            return text
        names = {c.name: c for c in reversed(cols) if c.qual}
        out: list[str] = []
        at = 0
        for m in _IDENT.finditer(text):
            word = m.group(0)
            col = names.get(word)
            if col is None or text[m.start() - 1:m.start()] == "." or \
                    text[m.end():m.end() + 1] in ("(", "."):
                continue
            out.append(text[at:m.start()])
            out.append(f"{col.qual}.{word}")
            at = m.end()
        out.append(text[at:])
        return "".join(out)

    def actual(self, op: dict[str, Any]) -> Actual | None:
        if not self.analyze:
            return None
        return Actual(rows=float(op.get("intermediate_rows") or 0))

    def timing(self, op: dict[str, Any]) -> float:
        try:
            return float(op.get("timing") or 0.0) * 1000.0
        except (TypeError, ValueError):
            return 0.0

    def resolve(self, item: str, cols: list[OutCol], used: set[int]) -> OutCol:
        return projected(item, cols, used, self.show)

    def aggregate(self, item: str, cols: list[OutCol]) -> OutCol:
        return aggregated(item, cols, self.show)

    def input_cols(self, below: _Built, texts: list[str]) -> list[OutCol]:
        """The input columns of a node whose expressions are ``texts``: a join's output
        without the key columns DuckDB dropped, when the references (``#i``) show it
        returns fewer columns than both sides have."""
        cols = below.cols
        if not below.droppable:
            return cols
        refs = [int(r) for t in texts for r in REF.findall(t)]
        needed = max(refs) + 1 if refs else 0
        if not refs or needed >= len(cols):
            return cols
        drop = set(below.droppable[:len(cols) - needed])
        kept = [c for i, c in enumerate(cols) if i not in drop]
        below.cols, below.droppable = kept, []
        below.node.width = sum(c.width for c in kept)
        if self.verbose and below.node.output is not None:
            below.node.output = [self.show(c) for c in kept]
        return kept

    def node(self, text_name: str, node_type: str | None = None, **kw: Any) -> PlanNode:
        return PlanNode(text_name, node_type or text_name, **kw)

    def built(self, node: PlanNode, cols: list[OutCol], op: dict[str, Any],
              cost_rows: float | None = None, own_ms: float | None = None) -> _Built:
        node.width = sum(c.width for c in cols)
        est = _estimate(op)
        if est is not None:
            node.rows = est
        node.actual = self.actual(op)
        b = _Built(node, cols, cost_rows, self.timing(op) if own_ms is None else own_ms)
        self.cost_rows[id(node)] = (cost_rows, b.own_ms)
        return b

    def remember(self, b: _Built) -> None:
        self.cost_rows[id(b.node)] = (b.cost_rows, b.own_ms)

    # -- the operators ----------------------------------------------------------------

    def build(self, op: dict[str, Any]) -> _Built:
        name = str(op.get("name", "")).strip().upper()
        info = op.get("extra_info") or {}
        handler = getattr(self, "op_" + name.lower(), None)
        arity = _ARITY.get(name)
        if handler is not None and (arity is None or len(op.get("children") or []) == arity):
            return handler(op, info)
        if info.get("Table"):
            return self.op_seq_scan(op, info)
        if info.get("Function"):
            return self.function_scan(op, info)
        if info.get("Join Type") is not None and len(op.get("children") or []) == 2:
            return self.join(op, info, _title(name), [])
        return self.generic(op, info, _title(name))

    def children(self, op: dict[str, Any]) -> list[_Built]:
        return [self.build(c) for c in op.get("children") or []]

    def generic(self, op: dict[str, Any], info: dict[str, Any], title: str) -> _Built:
        kids = self.children(op)
        cols = kids[0].cols if kids else []
        details: list[tuple[str, Any]] = []
        for key, value in info.items():
            if key == "Estimated Cardinality":
                continue
            items = [self.refs(v, cols) for v in _strings(value)]
            if items:
                details.append((str(key), items if len(items) > 1 else items[0]))
        rel = ["Outer", "Inner"] if len(kids) == 2 else ["Member"] * len(kids) \
            if len(kids) > 2 else ["Outer"]
        node = self.node(title, details=details,
                         children=[Child(r, k.node) for r, k in zip(rel, kids)])
        b = self.built(node, cols, op)
        if _estimate(op) is None:
            node.rows = max((k.node.rows for k in kids), default=1.0)
        return b

    def op_seq_scan(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        table = str(info.get("Table") or "")
        rel = self.relations.get(table)
        bare = table.rsplit(".", 1)[-1]
        name = rel.name if rel else bare
        alias = self.statement.aliases.get(name.lower(), name)
        schema = rel.schema if rel else "public"
        types = rel.columns if rel else {}
        cols = []
        for c in _strings(info.get("Projections")):
            duck = types.get(c)
            cols.append(typed(c, duck, alias) if duck else OutCol(c, alias))
        filters = [f for f in _strings(info.get("Filters")) if not f.startswith("optional:")]
        index = str(info.get("Type") or "") == "Index Scan"
        sample = info.get("Sample Method")
        kind = "Index Scan" if index else "Sample Scan" if sample else "Seq Scan"
        node = self.node(kind, target=("Relation Name", name), alias=alias,
                         schema=schema if self.verbose else None)
        if index:
            node.index_name = self.statement.indexes.get(table) or f"{name}_pkey"
        if sample:
            node.details.append(("Sampling", str(sample)))
        if filters:
            every = [OutCol(c, alias) for c in types] or cols
            shown = self.qualify(_and(filters), every, self.verbose)
            node.details.append(("Index Cond" if index else "Filter", shown))
        read = max(rel.rows if rel else 0.0, _estimate(op) or 0.0)
        b = self.built(node, cols, op, cost_rows=read if not index else None)
        if self.analyze and filters and not index:
            scanned = op.get("rows_scanned")
            if scanned is not None:
                removed = max(float(scanned) - node.actual.rows, 0.0)  # type: ignore[union-attr]
                node.details.append(("Rows Removed by Filter", removed))
        if self.verbose:
            node.output = [self.show(c) for c in cols]
        return b

    def function_scan(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        fn = str(info.get("Function") or "").lower()
        node = self.node("Function Scan", target=("Function Name", fn), alias=fn)
        node.children = [Child("Outer", k.node) for k in self.children(op)]
        return self.built(node, [OutCol(fn, fn)], op)

    op_table_scan = op_seq_scan

    def op_dummy_scan(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        return self.built(self.node("Result"), [], op)

    def op_empty_result(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        node = self.node("Result", details=[("One-Time Filter", "false")])
        return self.built(node, [], op)

    def op_column_data_scan(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        rows = _estimate(op)
        if rows is not None and rows <= 1:
            return self.built(self.node("Result"), [], op)
        node = self.node("Values Scan", target=(None, None), alias="*VALUES*")
        return self.built(node, [], op)

    def op_projection(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        kids = self.children(op)
        if len(kids) != 1:
            return self.generic(op, info, "Result")
        below = kids[0]
        items = _strings(info.get("Projections"))
        source = self.input_cols(below, items)
        used: set[int] = set()
        cols = [self.resolve(item, source, used) for item in items]
        return self.fold(below, op, cols)

    def fold(self, below: _Built, op: dict[str, Any], cols: list[OutCol] | None) -> _Built:
        """``op`` computed by the node below it (PostgreSQL has no node for it)."""
        node = below.node
        if cols is not None:
            below.cols = cols
            node.width = sum(c.width for c in cols)
            if self.verbose and node.node_type != "Hash":
                node.output = [self.show(c) for c in cols]
        est = _estimate(op)
        modify = node.node_type == "ModifyTable"
        if modify and cols:  # RETURNING: the rows written come back
            node.rows = est if est is not None else \
                (node.children[0].node.rows if node.children else 1.0)
        elif est is not None and not modify:
            node.rows = est
        if self.analyze and node.actual is not None and (cols or not modify):
            node.actual.rows = float(op.get("intermediate_rows") or 0)
        below.own_ms += self.timing(op)
        self.remember(below)
        return below

    def op_filter(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        kids = self.children(op)
        if len(kids) != 1:
            return self.generic(op, info, "Result")
        below = kids[0]
        texts = _strings(info.get("Expression"))
        scan = below.node.target is not None and below.node.node_type != "ModifyTable"
        expr = self.qualify(_and(texts), self.input_cols(below, texts),
                            self.verbose if scan else None)
        before = below.node.actual.rows if below.node.actual is not None else 0.0
        if below.node.node_type not in _QUAL_CARRIERS:
            node = self.node("Result", children=[Child("Outer", below.node)])
            node.details.append(("Filter", expr))
            b = self.built(node, below.cols, op)
        else:
            b = self.fold(below, op, None)
            details = b.node.details
            for i, (label, value) in enumerate(details):
                if label == "Filter":
                    details[i] = ("Filter", _and([value, expr]))
                    break
            else:
                details.append(("Filter", expr))
            b.node.details = [d for d in details if d[0] != "Rows Removed by Filter"]
        if self.analyze and b.node.actual is not None:
            scanned = before
            if b is below and op.get("children"):
                child = op["children"][0]
                scanned = float(child.get("rows_scanned") or before)
            b.node.details.append(("Rows Removed by Filter",
                                   max(scanned - b.node.actual.rows, 0.0)))
        return b

    def op_hash_join(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        return self.join(op, info, "Hash Join", [])

    def join(self, op: dict[str, Any], info: dict[str, Any], title: str,
             kids: list[_Built]) -> _Built:
        kids = kids or self.children(op)
        outer, inner = kids[0], kids[1]
        kind = str(info.get("Join Type") or "INNER").upper()
        join_type = _JOIN_TYPES.get(kind, _title(kind))
        hashed = title == "Hash Join"
        conditions = _strings(info.get("Conditions")) or _strings(info.get("Condition"))
        keys, rest = [], []
        for cond in conditions:
            shown = self.condition(cond, outer.cols, inner.cols)
            (keys if hashed and any(e in cond for e in _EQUALITY) else rest).append(shown)
        if kind in _LEFT_ONLY:
            cols = list(outer.cols)
        elif kind in _RIGHT_ONLY:
            cols = list(inner.cols)
        else:
            cols = outer.cols + inner.cols
        key_names = {w for cond in conditions for w in re.findall(r"[A-Za-z_][\w$]*", cond)}
        droppable = [i for i, c in enumerate(cols) if c.name in key_names]
        if hashed:
            hash_node = self.node("Hash", startup_cost=0.0, rows=inner.node.rows,
                                  width=inner.node.width,
                                  children=[Child("Outer", inner.node)])
            if self.analyze and inner.node.actual is not None:
                hash_node.actual = Actual(rows=inner.node.actual.rows)
            if self.verbose:
                hash_node.output = [self.show(c) for c in inner.cols]
            self.cost_rows[id(hash_node)] = (None, 0.0)
            second = hash_node
            base = "Hash"
        else:
            second = inner.node
            base = title[:-len(" Join")] if title.endswith(" Join") else title
        node = self.node(base, title if title.endswith(" Join") or title == "Nested Loop"
                         else title, join_type=join_type, inner_unique=False,
                         children=[Child("Outer", outer.node), Child("Inner", second)])
        if keys:
            node.details.append(("Hash Cond", _and(keys)))
        if rest:
            node.details.append(("Join Filter", _and(rest)))
        b = self.built(node, cols, op)
        b.droppable = droppable
        if _estimate(op) is None:
            node.rows = outer.node.rows * inner.node.rows if not conditions else \
                max(outer.node.rows, inner.node.rows)
        if self.verbose:
            node.output = [self.show(c) for c in cols]
        return b

    def condition(self, cond: str, left: list[OutCol], right: list[OutCol]) -> str:
        """A join condition ``a = a`` with each side named from its own input."""
        for op in _COMPARISONS:
            depth = 0
            i = 0
            while i < len(cond):
                ch = cond[i]
                depth += ch == "("
                depth -= ch == ")"
                if depth == 0 and cond.startswith(op, i):
                    lhs = self.qualify(cond[:i], left)
                    rhs = self.qualify(cond[i + len(op):], right)
                    return f"({lhs}{op}{rhs})"
                i += 1
        return self.qualify(cond, left + right)

    def op_nested_loop_join(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        return self.join(op, info, "Nested Loop", [])

    op_blockwise_nl_join = op_nested_loop_join

    def op_cross_product(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        return self.join(op, {"Join Type": "INNER"}, "Nested Loop", [])

    def group(self, op: dict[str, Any], info: dict[str, Any], hashed: bool) -> _Built:
        kids = self.children(op)
        below = kids[0] if kids else None
        texts = _strings(info.get("Groups")) + _strings(info.get("Aggregates"))
        input_cols = self.input_cols(below, texts) if below else []
        groups = [self.resolve(g, input_cols, set()) for g in _strings(info.get("Groups"))]
        aggs = [self.aggregate(a, input_cols) for a in _strings(info.get("Aggregates"))]
        node = self.node("HashAggregate" if hashed and groups else "Aggregate", "Aggregate",
                         strategy="Hashed" if hashed and groups else "Plain",
                         partial_mode="Simple",
                         children=[Child("Outer", below.node)] if below else [])
        if groups:
            node.details.append(("Group Key", [self.show(g) for g in groups]))
        cols = groups + aggs
        b = self.built(node, cols, op)
        if self.verbose:
            node.output = [self.show(c) for c in cols]
        return b

    def op_hash_group_by(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        return self.group(op, info, True)

    op_perfect_hash_group_by = op_hash_group_by
    op_partitioned_aggregate = op_hash_group_by

    def op_ungrouped_aggregate(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        return self.group(op, info, False)

    op_simple_aggregate = op_ungrouped_aggregate

    def sort_keys(self, info: dict[str, Any], cols: list[OutCol]) -> list[str]:
        keys = []
        for key in _strings(info.get("Order By")):
            key = self.qualify(key, cols)
            if key.endswith(" ASC"):
                key = key[:-4]
            keys.append(key.replace(" ASC NULLS LAST", "").replace(" ASC ", " "))
        return keys

    def op_order_by(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        kids = self.children(op)
        below = kids[0]
        node = self.node("Sort", children=[Child("Outer", below.node)])
        keys = self.sort_keys(info, self.input_cols(below, _strings(info.get("Order By"))))
        node.details.append(("Sort Key", keys))
        b = self.built(node, below.cols, op)
        if self.verbose:
            node.output = [self.show(c) for c in below.cols]
        return b

    def op_top_n(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        kids = self.children(op)
        below = kids[0]
        sort = self.node("Sort", rows=below.node.rows, width=below.node.width,
                         children=[Child("Outer", below.node)])
        keys = self.sort_keys(info, self.input_cols(below, _strings(info.get("Order By"))))
        sort.details.append(("Sort Key", keys))
        if self.analyze:
            sort.actual = Actual(rows=float(op.get("intermediate_rows") or 0))
        if self.verbose:
            sort.output = [self.show(c) for c in below.cols]
        self.cost_rows[id(sort)] = (None, self.timing(op))
        node = self.node("Limit", children=[Child("Outer", sort)])
        b = self.built(node, below.cols, op, own_ms=0.0)
        if self.verbose:
            node.output = sort.output
        return b

    def op_limit(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        kids = self.children(op)
        below = kids[0]
        node = self.node("Limit", children=[Child("Outer", below.node)])
        b = self.built(node, below.cols, op)
        limit = info.get("Limit")
        if _estimate(op) in (None, 0.0) and limit is not None:
            try:
                node.rows = min(float(limit), below.node.rows)
            except ValueError:
                node.rows = below.node.rows
        if self.verbose:
            node.output = [self.show(c) for c in below.cols]
        return b

    op_streaming_limit = op_limit
    op_limit_percent = op_limit

    def op_union(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        kids = self.children(op)
        node = self.node("Append", children=[Child("Member", k.node) for k in kids])
        b = self.built(node, kids[0].cols if kids else [], op)
        if _estimate(op) is None:
            node.rows = sum(k.node.rows for k in kids)
        return b

    def op_window(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        kids = self.children(op)
        below = kids[0]
        texts = _strings(info.get("Projections"))
        source = self.input_cols(below, texts)
        cols = source + [self.aggregate(w, source) for w in texts]
        node = self.node("WindowAgg", children=[Child("Outer", below.node)])
        b = self.built(node, cols, op)
        if self.verbose:
            node.output = [self.show(c) for c in cols]
        return b

    op_streaming_window = op_window

    def op_unnest(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        kids = self.children(op)
        cols = (kids[0].cols if kids else []) + [OutCol("unnest")]
        node = self.node("ProjectSet", children=[Child("Outer", k.node) for k in kids])
        return self.built(node, cols, op)

    def op_cte(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        children = op.get("children") or []
        name = str(info.get("CTE Name") or "cte")
        if len(children) != 2:
            return self.generic(op, info, "CTE")
        materialized = self.build(children[0])
        self.ctes[str(info.get("Table Index"))] = (name, materialized.cols)
        consumer = self.build(children[1])
        consumer.node.children.insert(0, Child("InitPlan", materialized.node, f"CTE {name}"))
        return consumer

    def op_cte_scan(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        name, cols = self.ctes.get(str(info.get("CTE Index")), ("cte", []))
        node = self.node("CTE Scan", target=("CTE Name", name), alias=name)
        return self.built(node, [OutCol(c.name, name, c.oid, c.width) for c in cols], op)

    def op_rec_cte(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        children = op.get("children") or []
        if len(children) != 2:
            return self.generic(op, info, "Recursive Union")
        name = str(info.get("CTE Name") or "cte")
        anchor = self.build(children[0])
        self.ctes[str(info.get("Table Index"))] = (name, anchor.cols)
        step = self.build(children[1])
        node = self.node("Recursive Union", children=[Child("Outer", anchor.node),
                                                      Child("Inner", step.node)])
        return self.built(node, anchor.cols, op)

    def op_rec_cte_scan(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        name, cols = self.ctes.get(str(info.get("CTE Index")), ("cte", []))
        node = self.node("WorkTable Scan", target=("CTE Name", name), alias=name)
        return self.built(node, [OutCol(c.name, name, c.oid, c.width) for c in cols], op)

    def modify(self, op: dict[str, Any], operation: str) -> _Built:
        kids = self.children(op)
        target = self.statement.target
        name, alias = target if target is not None else ("?", None)
        node = self.node(f"{operation}", "ModifyTable", operation=operation,
                         target=("Relation Name", name), alias=alias or name,
                         schema=self.statement.target_schema if self.verbose else None,
                         children=[Child("Outer", k.node) for k in kids])
        input_rows = kids[0].node.rows if kids else 1.0
        facts = self.statement
        if operation == "Insert" and kids and not kids[0].cols and kids[0].node.width == 0:
            kids[0].node.width = sum(typed("", t).width for _, t in facts.target_columns)
        cols: list[OutCol] = []
        if facts.returning is not None:  # the rows written come back
            target = alias or name
            known = dict(facts.target_columns)
            for item in facts.returning:
                if item == "*":
                    cols += [typed(c, t, target) for c, t in facts.target_columns]
                else:
                    cols.append(typed(item, known[item], target) if item in known
                                else OutCol(item))
        b = self.built(node, cols, op, cost_rows=input_rows)
        node.rows = input_rows if cols else 0.0
        if self.analyze and node.actual is not None:
            below = kids[0].node.actual if kids else None
            node.actual.rows = below.rows if cols and below is not None else 0.0
        if self.verbose and cols:
            node.output = [f"{c.qual}.{c.name}" if c.qual else c.name for c in cols]
        return b

    def op_insert(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        return self.modify(op, "Insert")

    op_batch_insert = op_insert

    def op_update(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        return self.modify(op, "Update")

    def op_delete(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        return self.modify(op, "Delete")

    def op_merge_into(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        return self.modify(op, "Merge")

    def op_create_table_as(self, op: dict[str, Any], info: dict[str, Any]) -> _Built:
        kids = self.children(op)
        if len(kids) != 1:
            return self.generic(op, info, "Create Table As")
        kids[0].own_ms += self.timing(op)
        self.remember(kids[0])
        return kids[0]

    op_batch_create_table_as = op_create_table_as

    # -- the top node -----------------------------------------------------------------

    def apply_result_types(self, top: _Built) -> None:
        """The statement's result types (DuckDB's own) give the top node's width, and that
        of the nodes below it that pass the same rows up (Limit, Sort)."""
        types = self.statement.result_types
        if not types:
            return
        old = top.node.width
        new = sum(typed("", t).width for t in types)
        node: PlanNode | None = top.node
        while node is not None and node.width == old:
            node.width = new
            if node.node_type not in ("Limit", "Sort") or not node.children:
                break
            node = node.children[0].node
        if top.node.node_type == "ModifyTable" and top.node.rows == 0:
            top.node.rows = top.node.children[0].node.rows if top.node.children else 1.0


def _and(parts: list[str]) -> str:
    """PostgreSQL's display of a list of quals: one as it is, several ANDed in parens."""
    parts = [p for p in parts if p]
    if len(parts) == 1:
        return parts[0]
    return "(" + " AND ".join(parts) + ")"


def _costs(node: PlanNode, own: dict[int, tuple[float | None, float]], analyze: bool) -> None:
    """pgbarrier's costs and actual times, children first (see the module's rules)."""
    startup = total = 0.0
    a_start = a_total = 0.0
    blocking = node.node_type in _BLOCKING or node.text_name in ("Sort", "HashAggregate")
    for child in node.children:
        _costs(child.node, own, analyze)
        c = child.node
        total += c.total_cost
        if child.relationship in ("InitPlan", "SubPlan") or blocking:
            startup += c.total_cost
        else:
            startup += c.startup_cost
        if c.actual is not None:
            a_total += c.actual.total_ms
            a_start += c.actual.total_ms if blocking or child.relationship == "InitPlan" \
                else c.actual.startup_ms
    if node.node_type != "ModifyTable":
        node.rows = max(node.rows, 1.0)
    cost_rows, own_ms = own.get(id(node), (None, 0.0))
    rows = cost_rows if cost_rows is not None else node.rows
    node.total_cost = total + rows * ROW_COST
    node.startup_cost = node.total_cost if node.node_type == "Hash" else startup
    if node.actual is not None:
        node.actual.total_ms = a_total + own_ms
        node.actual.startup_ms = node.actual.total_ms if node.node_type == "Hash" else a_start
