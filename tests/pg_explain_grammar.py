"""PostgreSQL's EXPLAIN output grammar, as tools that parse it read it.

Used by the unit tests of pgbarrier's EXPLAIN (``tests/unit/test_duckdb_explain.py``) and
by the functional tests, which also hold PostgreSQL 15's own output to it (so the grammar
is PostgreSQL's, not pgbarrier's idea of it):

* :data:`SUPERSET_COST` is Superset's ``PostgresEngineSpec.estimate_statement_cost``
  regex, applied to row 0 of ``EXPLAIN <statement>``.
* :func:`parse_text` reads a text plan the way explain.depesz.com-style parsers do: a node
  line is ``Name  (cost=S..T rows=N width=W)`` (the root) or ``->  Name  (...)``; the name
  of a node starts at column ``c``; its detail lines (``Label: value``), its subplan labels
  (``CTE x``, ``InitPlan 1 (returns $0)``, ``SubPlan 1``) and its children's ``->`` start
  at ``c + 2``; a subplan's node's ``->`` at the label's column + 2. The summary lines
  (``Planning Time: x ms``...) start at column 0, a summary group's (``Planning:``, then
  ``  Buffers: ...``) at 2. Anything else is an error.
* :func:`walk_json` visits every node of a ``FORMAT JSON`` plan (``Plan``, then ``Plans``),
  as pgcli and pgAdmin do.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

SUPERSET_COST = re.compile(r"cost=([\d\.]+)\.\.([\d\.]+)")
#: the full estimate group, as text parsers read it
COSTS = re.compile(r"  \(cost=(\d+\.\d\d)\.\.(\d+\.\d\d) rows=(\d+) width=(\d+)\)")
_ACTUAL = r"(?: \(actual(?: time=\d+\.\d{3}\.\.\d+\.\d{3})? rows=\d+ loops=\d+\)| \(never executed\))?"
NODE = re.compile(r"(?P<indent> *)(?P<arrow>->  )?(?P<name>[A-Z][A-Za-z]*(?: [A-Za-z]+)*?)"
                  r"(?P<target> (?:using \S+ )?on .+?)?"
                  r"(?P<costs>  \(cost=\d+\.\d\d\.\.\d+\.\d\d rows=\d+ width=\d+\))?"
                  + _ACTUAL + r"\Z")
DETAIL = re.compile(r"(?P<indent> +)(?P<label>[A-Z][A-Za-z/ -]*): (?P<value>.*)\Z")
SUBPLAN = re.compile(r"(?P<indent> +)(?P<label>CTE \S+|InitPlan \d+(?: \(returns .*\))?|"
                     r"SubPlan \d+)\Z")
SUMMARY = re.compile(r"(?:Planning Time|Execution Time): \d+\.\d{3} ms\Z|Settings: .+\Z|"
                     r"Planning:\Z|JIT:\Z|Trigger .+\Z")


def parse_text(lines: list[str]) -> dict[str, Any]:
    """The plan tree of a text EXPLAIN (AssertionError naming the line when a line breaks
    PostgreSQL's grammar): nodes are ``{"name", "line", "details", "children"}``."""
    assert lines, "no plan"
    root_m = NODE.match(lines[0])
    assert root_m and not root_m.group("indent") and not root_m.group("arrow"), lines[0]
    root = {"name": root_m.group("name"), "line": lines[0], "details": [], "children": []}
    #: (column where the node's name starts, node) from the root down to the current one
    stack: list[tuple[int, dict[str, Any]]] = [(0, root)]
    labels: list[tuple[int, int]] = []  # (label column, depth of its node on the stack)
    summary = group = False
    for line in lines[1:]:
        col = len(line) - len(line.lstrip(" "))
        if col == 0:
            assert SUMMARY.match(line), f"not a summary line: {line!r}"
            summary, group = True, line.endswith(":")
            continue
        if group:  # the lines of a summary group (``Planning:``, ``JIT:``)
            assert col == 2 and DETAIL.match(line), f"not a summary group line: {line!r}"
            continue
        assert not summary, f"plan line after the summary: {line!r}"
        node_m = NODE.match(line)
        if node_m and node_m.group("arrow"):
            parent = _owner(stack, labels, col, line, subplan=True)
            node = {"name": node_m.group("name"), "line": line, "details": [], "children": []}
            parent["children"].append(node)
            stack.append((col + 4, node))
            continue
        sub_m = SUBPLAN.match(line)
        if sub_m:
            _owner(stack, labels, col, line)
            labels.append((col, len(stack)))
            continue
        detail_m = DETAIL.match(line)
        assert detail_m, f"not PostgreSQL's EXPLAIN line: {line!r}"
        _owner(stack, labels, col, line)["details"].append(line.strip())
    return root


def _owner(stack: list[tuple[int, dict[str, Any]]], labels: list[tuple[int, int]], col: int,
           line: str, subplan: bool = False) -> dict[str, Any]:
    """The node a line at ``col`` belongs to: the nearest one whose name starts at
    ``col - 2`` (or, for a ``->`` line, whose subplan label starts at ``col - 2``)."""
    while stack:
        name_col, node = stack[-1]
        while labels and labels[-1][1] > len(stack):
            labels.pop()
        if subplan and labels and labels[-1][1] == len(stack) and labels[-1][0] + 2 == col:
            return node
        if name_col + 2 == col:
            return node
        stack.pop()
    raise AssertionError(f"misplaced line (indentation): {line!r}")


def walk_json(plan: Any) -> Iterator[dict[str, Any]]:
    """Every node of a FORMAT JSON plan (the loaded value), depth first."""
    assert isinstance(plan, list) and len(plan) == 1 and isinstance(plan[0], dict), plan
    stack = [plan[0]["Plan"]]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.get("Plans", [])))


def shape(tree: dict[str, Any]) -> list[Any]:
    """A text tree's shape: each node's children's shapes (names and numbers left out)."""
    return [shape(child) for child in tree["children"]]


def json_shape(node: dict[str, Any]) -> list[Any]:
    return [json_shape(child) for child in node.get("Plans", [])]
