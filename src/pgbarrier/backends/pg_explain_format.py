"""PostgreSQL 15's ``EXPLAIN`` output, in its four formats, for a plan tree.

A plan is a tree of :class:`PlanNode` (what a node is, its estimates, its measured values,
its labelled details, its children); :func:`render` writes it as PostgreSQL's
``src/backend/commands/explain.c`` does, so the text is what tools that read PostgreSQL's
plans expect. Rules this module keeps (each mirrors explain.c):

* Text: the root line is ``Node  (cost=S..T rows=N width=W)``; a child line is indented
  two spaces per level and starts ``->  ``; a node's details (``Filter: ...``) are indented
  one level deeper than its own line (``ExplainIndentText``); a subplan (``CTE x``,
  ``InitPlan 1``) is introduced by its name on a line of its own. With ANALYZE, ``
  (actual time=a..b rows=n loops=l)`` follows (``(actual rows=n loops=l)`` with TIMING
  off). A summary (``Settings:``, ``Planning Time: x ms``, ``Execution Time: x ms``) ends it.
* JSON is ``[{"Plan": {...}, ...}]`` with PostgreSQL's key order and layout (two-space
  indentation, ``"Plans": [...]``), YAML ``- Plan: ...`` (strings quoted as JSON), XML
  ``<explain xmlns="http://www.postgresql.org/2009/explain">`` with PostgreSQL's tag names
  (spaces become ``-``). Non-text formats always carry ``Parallel Aware`` and ``Async
  Capable`` (false), a join's ``Inner Unique``; with ANALYZE an empty ``Triggers`` list.
* Costs print with two decimals, rows with none, times in milliseconds with three;
  ``COSTS off`` drops the estimates, ``TIMING off`` the times, ``SUMMARY`` adds or drops
  the planning/execution times. ``BUFFERS`` and ``WAL`` print PostgreSQL's counters: the
  counts given (zero when none), which in text format, as in PostgreSQL, prints nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Actual", "Child", "Options", "PlanNode", "Summary", "render", "utility"]

_BUFFER_KEYS = ("Shared Hit Blocks", "Shared Read Blocks", "Shared Dirtied Blocks",
                "Shared Written Blocks", "Local Hit Blocks", "Local Read Blocks",
                "Local Dirtied Blocks", "Local Written Blocks", "Temp Read Blocks",
                "Temp Written Blocks")
_WAL_KEYS = ("WAL Records", "WAL FPI", "WAL Bytes")
_XML_VALID = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
_NO_PREFIX_JOIN = frozenset({"Nested Loop"})
#: PostgreSQL 15's keywords other than the unreserved ones (``pg_get_keywords()`` where
#: ``catcode <> 'U'``): quote_identifier quotes them
_KEYWORDS = frozenset("""
all analyse analyze and any array as asc asymmetric authorization between bigint binary bit
boolean both case cast char character check coalesce collate collation column concurrently
constraint create cross current_catalog current_date current_role current_schema current_time
current_timestamp current_user dec decimal default deferrable desc distinct do else end except
exists extract false fetch float for foreign freeze from full grant greatest group grouping
having ilike in initially inner inout int integer intersect interval into is isnull join
lateral leading least left like limit localtime localtimestamp national natural nchar none
normalize not notnull null nullif numeric offset on only or order out outer overlaps overlay
placing position precision primary real references returning right row select session_user
setof similar smallint some substring symmetric table tablesample then time timestamp to
trailing treat trim true union unique user using values varchar variadic verbose when where
window with xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse
xmlpi xmlroot xmlserialize xmltable""".split())


@dataclass
class Options:
    """PostgreSQL's EXPLAIN options (``ExplainState``), already checked."""

    analyze: bool = False
    verbose: bool = False
    costs: bool = True
    buffers: bool = False
    wal: bool = False
    settings: bool = False
    timing: bool = False
    summary: bool = False
    format: str = "text"


@dataclass
class Actual:
    """Measured values of a node: times in ms (None when not timed), rows, loops."""

    rows: float
    loops: float = 1
    startup_ms: float = 0.0
    total_ms: float = 0.0


@dataclass
class PlanNode:
    """One plan node as explain.c prints it.

    ``text_name`` is the text format's name (``pname``: ``HashAggregate``, ``Hash`` for a
    hash join, whose join type is interpolated), ``node_type`` the other formats' (``sname``:
    ``Aggregate``, ``Hash Join``). ``details`` are (label, value) in print order: a str is a
    text property, an int/float a number (a float prints with the given digits when the
    value is a ``(float, digits)`` tuple), a list a property list."""

    text_name: str
    node_type: str
    strategy: str | None = None
    partial_mode: str | None = None
    operation: str | None = None
    join_type: str | None = None
    #: scan target: (tag, object name) such as ("Relation Name", "t"), or None
    target: tuple[str | None, str | None] | None = None
    schema: str | None = None
    alias: str | None = None
    index_name: str | None = None
    startup_cost: float = 0.0
    total_cost: float = 0.0
    rows: float = 1.0
    width: int = 0
    actual: Actual | None = None
    output: list[str] | None = None
    inner_unique: bool | None = None
    details: list[tuple[str, Any]] = field(default_factory=list)
    children: list[Child] = field(default_factory=list)


@dataclass
class Child:
    """A child plan: its relationship (``Outer``, ``Inner``, ``Member``, ``InitPlan``,
    ``SubPlan``, ``Subquery``) and, for a subplan, its name (``CTE x``)."""

    relationship: str
    node: PlanNode
    name: str | None = None


@dataclass
class Summary:
    """What follows the plan: changed planner settings, times in ms (None: not shown)."""

    settings: list[tuple[str, str]] = field(default_factory=list)
    planning_ms: float | None = None
    execution_ms: float | None = None


class _State:
    """explain.c's ExplainState: the output buffer, indentation and grouping stack."""

    def __init__(self, options: Options) -> None:
        self.o = options
        self.fmt = options.format
        self.out: list[str] = []
        self.indent = 0
        self.stack: list[int] = []

    # -- the low-level writers (ExplainIndentText, ExplainJSONLineEnding...) -------------

    def _ends_line(self) -> bool:
        return not self.out or self.out[-1].endswith("\n")

    def indent_text(self) -> None:
        if self._ends_line():
            self.out.append("  " * self.indent)

    def json_line_ending(self) -> None:
        if self.stack[-1]:
            self.out.append(",")
        else:
            self.stack[-1] = 1
        self.out.append("\n")

    def yaml_line_starting(self) -> None:
        if self.stack[-1] == 0:
            self.stack[-1] = 1
        else:
            self.out.append("\n" + "  " * self.indent)

    def xml_tag(self, name: str, closing: bool = False, immediate: bool = False,
                whitespace: bool = True) -> None:
        if whitespace:
            self.out.append("  " * self.indent)
        tag = "".join(c if c in _XML_VALID else "-" for c in name)
        self.out.append("<" + ("/" if closing else "") + tag + (" /" if immediate else "") + ">")
        if whitespace:
            self.out.append("\n")

    # -- properties and groups (ExplainProperty, ExplainOpenGroup...) ----------------------

    def prop(self, label: str, value: str, numeric: bool = False, unit: str | None = None
             ) -> None:
        fmt = self.fmt
        if fmt == "text":
            self.indent_text()
            self.out.append(f"{label}: {value} {unit}\n" if unit else f"{label}: {value}\n")
        elif fmt == "xml":
            self.out.append("  " * self.indent)
            self.xml_tag(label, whitespace=False)
            self.out.append(_escape_xml(value))
            self.xml_tag(label, closing=True, whitespace=False)
            self.out.append("\n")
        elif fmt == "json":
            self.json_line_ending()
            self.out.append("  " * self.indent + _escape_json(label) + ": ")
            self.out.append(value if numeric else _escape_json(value))
        else:
            self.yaml_line_starting()
            self.out.append(f"{label}: " + (value if numeric else _escape_json(value)))

    def prop_text(self, label: str, value: str) -> None:
        self.prop(label, value)

    def prop_int(self, label: str, value: int, unit: str | None = None) -> None:
        self.prop(label, str(int(value)), True, unit)

    def prop_float(self, label: str, value: float, digits: int, unit: str | None = None
                   ) -> None:
        self.prop(label, f"{value:.{digits}f}", True, unit)

    def prop_bool(self, label: str, value: bool) -> None:
        self.prop(label, "true" if value else "false", True)

    def prop_list(self, label: str, items: list[str]) -> None:
        fmt = self.fmt
        if fmt == "text":
            self.indent_text()
            self.out.append(f"{label}: " + ", ".join(items) + "\n")
        elif fmt == "xml":
            self.xml_tag(label)
            for item in items:
                self.out.append("  " * (self.indent + 1) + "<Item>" + _escape_xml(item)
                                + "</Item>\n")
            self.xml_tag(label, closing=True)
        elif fmt == "json":
            self.json_line_ending()
            self.out.append("  " * self.indent + _escape_json(label) + ": [")
            self.out.append(", ".join(_escape_json(i) for i in items) + "]")
        else:
            self.yaml_line_starting()
            self.out.append(f"{label}: ")
            for item in items:
                self.out.append("\n" + "  " * (self.indent + 1) + "- " + _escape_json(item))

    def open_group(self, objtype: str, labelname: str | None, labeled: bool) -> None:
        fmt = self.fmt
        if fmt == "xml":
            self.xml_tag(objtype)
            self.indent += 1
        elif fmt == "json":
            self.json_line_ending()
            self.out.append("  " * self.indent)
            if labelname:
                self.out.append(_escape_json(labelname) + ": ")
            self.out.append("{" if labeled else "[")
            self.stack.append(0)
            self.indent += 1
        elif fmt == "yaml":
            self.yaml_line_starting()
            if labelname:
                self.out.append(f"{labelname}: ")
                self.stack.append(1)
            else:
                self.out.append("- ")
                self.stack.append(0)
            self.indent += 1

    def close_group(self, objtype: str, labeled: bool) -> None:
        fmt = self.fmt
        if fmt == "xml":
            self.indent -= 1
            self.xml_tag(objtype, closing=True)
        elif fmt == "json":
            self.indent -= 1
            self.out.append("\n" + "  " * self.indent + ("}" if labeled else "]"))
            self.stack.pop()
        elif fmt == "yaml":
            self.indent -= 1
            self.stack.pop()

    def dummy_group(self, objtype: str) -> None:
        fmt = self.fmt
        if fmt == "xml":
            self.xml_tag(objtype, immediate=True)
        elif fmt == "json":
            self.json_line_ending()
            self.out.append("  " * self.indent + _escape_json(objtype))
        elif fmt == "yaml":
            self.yaml_line_starting()
            self.out.append("- " + _escape_json(objtype))

    def begin(self) -> None:
        if self.fmt == "xml":
            self.out.append('<explain xmlns="http://www.postgresql.org/2009/explain">\n')
            self.indent += 1
        elif self.fmt == "json":
            self.out.append("[")
            self.stack.append(0)
            self.indent += 1
        elif self.fmt == "yaml":
            self.stack.append(0)

    def end(self) -> None:
        if self.fmt == "xml":
            self.indent -= 1
            self.out.append("</explain>")
        elif self.fmt == "json":
            self.indent -= 1
            self.out.append("\n]")
            self.stack.pop()
        elif self.fmt == "yaml":
            self.stack.pop()

    # -- counters PostgreSQL prints with BUFFERS / WAL -------------------------------------

    def buffers(self) -> None:
        if self.fmt != "text":  # text format prints no line for counts that are all zero
            for key in _BUFFER_KEYS:
                self.prop_int(key, 0)

    def wal(self) -> None:
        if self.fmt != "text":
            for key in _WAL_KEYS:
                self.prop_int(key, 0)


def _escape_json(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _escape_xml(value: str) -> str:
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\r", "&#x0d;"))


def _quote_ident(name: str) -> str:
    """PostgreSQL's quote_identifier: a lower-case word that is no keyword PostgreSQL
    reserves in any way stays as it is, anything else is double-quoted."""
    if name and (name[0].islower() or name[0] == "_") and name not in _KEYWORDS and \
            all(c.islower() or c.isdigit() or c == "_" for c in name):
        return name
    return '"' + name.replace('"', '""') + '"'


def _node(es: _State, node: PlanNode, relationship: str | None, plan_name: str | None) -> None:
    """explain.c's ExplainNode."""
    o = es.o
    text = es.fmt == "text"
    save_indent = es.indent
    es.open_group("Plan", None if relationship else "Plan", True)
    if text:
        if plan_name:
            es.indent_text()
            es.out.append(plan_name + "\n")
            es.indent += 1
        if es.indent:
            es.indent_text()
            es.out.append("->  ")
            es.indent += 2
        es.out.append(node.text_name)
        es.indent += 1
    else:
        es.prop_text("Node Type", node.node_type)
        if node.strategy:
            es.prop_text("Strategy", node.strategy)
        if node.partial_mode:
            es.prop_text("Partial Mode", node.partial_mode)
        if node.operation:
            es.prop_text("Operation", node.operation)
        if relationship:
            es.prop_text("Parent Relationship", relationship)
        if plan_name:
            es.prop_text("Subplan Name", plan_name)
        es.prop_bool("Parallel Aware", False)
        es.prop_bool("Async Capable", False)
    if node.index_name is not None:
        if text:
            es.out.append(" using " + _quote_ident(node.index_name))
        else:
            es.prop_text("Scan Direction", "Forward")
            es.prop_text("Index Name", node.index_name)
    if node.target is not None:
        _target(es, node)
    if node.join_type is not None:
        if text:
            if node.join_type != "Inner":
                es.out.append(f" {node.join_type} Join")
            elif node.text_name not in _NO_PREFIX_JOIN:
                es.out.append(" Join")
        else:
            es.prop_text("Join Type", node.join_type)
    if o.costs:
        if text:
            es.out.append(f"  (cost={node.startup_cost:.2f}..{node.total_cost:.2f} "
                          f"rows={node.rows:.0f} width={node.width})")
        else:
            es.prop_float("Startup Cost", node.startup_cost, 2)
            es.prop_float("Total Cost", node.total_cost, 2)
            es.prop_float("Plan Rows", node.rows, 0)
            es.prop_int("Plan Width", node.width)
    actual = node.actual
    if o.analyze and actual is not None and actual.loops > 0:
        if text:
            if o.timing:
                es.out.append(f" (actual time={actual.startup_ms:.3f}..{actual.total_ms:.3f} "
                              f"rows={actual.rows:.0f} loops={actual.loops:.0f})")
            else:
                es.out.append(f" (actual rows={actual.rows:.0f} loops={actual.loops:.0f})")
        else:
            if o.timing:
                es.prop_float("Actual Startup Time", actual.startup_ms, 3)
                es.prop_float("Actual Total Time", actual.total_ms, 3)
            es.prop_float("Actual Rows", actual.rows, 0)
            es.prop_float("Actual Loops", actual.loops, 0)
    elif o.analyze:
        if text:
            es.out.append(" (never executed)")
        else:
            if o.timing:
                es.prop_float("Actual Startup Time", 0.0, 3)
                es.prop_float("Actual Total Time", 0.0, 3)
            es.prop_float("Actual Rows", 0.0, 0)
            es.prop_float("Actual Loops", 0.0, 0)
    if text:
        es.out.append("\n")
    if o.verbose and node.output:
        es.prop_list("Output", node.output)
    if node.inner_unique is not None and (not text or (o.verbose and node.inner_unique)):
        es.prop_bool("Inner Unique", node.inner_unique)
    for label, value in node.details:
        if isinstance(value, list):
            es.prop_list(label, value)
        elif isinstance(value, bool):
            es.prop_bool(label, value)
        elif isinstance(value, tuple):
            es.prop_float(label, value[0], value[1])
        elif isinstance(value, (int, float)):
            es.prop_float(label, value, 0)
        else:
            es.prop_text(label, value)
    if o.buffers:
        es.buffers()
    if o.wal:
        es.wal()
    if node.children:
        es.open_group("Plans", "Plans", False)
        for child in node.children:
            _node(es, child.node, child.relationship, child.name)
        es.close_group("Plans", False)
    if text:
        es.indent = save_indent
    es.close_group("Plan", True)


def _target(es: _State, node: PlanNode) -> None:
    """explain.c's ExplainTargetRel: `` on [schema.]name [alias]`` or its properties."""
    assert node.target is not None
    tag, name = node.target
    alias = node.alias if node.alias is not None else name
    if es.fmt == "text":
        es.out.append(" on")
        if node.schema is not None and name is not None:
            es.out.append(f" {_quote_ident(node.schema)}.{_quote_ident(name)}")
        elif name is not None:
            es.out.append(" " + _quote_ident(name))
        if alias is not None and (name is None or alias != name):
            es.out.append(" " + _quote_ident(alias))
        return
    if tag is not None and name is not None:
        es.prop_text(tag, name)
    if node.schema is not None:
        es.prop_text("Schema", node.schema)
    if alias is not None:
        es.prop_text("Alias", alias)


def render(root: PlanNode, options: Options, summary: Summary) -> str:
    """The whole EXPLAIN output (ExplainQuery): the text of every row together."""
    es = _State(options)
    es.begin()
    es.open_group("Query", None, True)
    _node(es, root, None, None)
    if options.settings:  # ExplainPrintSettings
        if es.fmt != "text":
            es.open_group("Settings", "Settings", True)
            for name, value in summary.settings:
                es.prop_text(name, value)
            es.close_group("Settings", True)
        elif summary.settings:
            es.prop_text("Settings", ", ".join(f"{n} = '{v}'" for n, v in summary.settings))
    if options.buffers and es.fmt != "text":  # text prints no planning line for zero counts
        es.open_group("Planning", "Planning", True)
        es.buffers()
        es.close_group("Planning", True)
    if options.summary and summary.planning_ms is not None:
        es.prop_float("Planning Time", summary.planning_ms, 3, "ms")
    if options.analyze:
        es.open_group("Triggers", "Triggers", False)
        es.close_group("Triggers", False)
    if options.summary and options.analyze and summary.execution_ms is not None:
        es.prop_float("Execution Time", summary.execution_ms, 3, "ms")
    es.close_group("Query", True)
    es.end()
    return "".join(es.out)


def utility(options: Options) -> str:
    """What PostgreSQL answers for a utility statement it cannot plan (ExplainOneUtility)."""
    es = _State(options)
    es.begin()
    if es.fmt == "text":
        es.out.append("Utility statements have no plan structure\n")
    else:
        es.dummy_group("Utility Statement")
    es.end()
    return "".join(es.out)
