"""``EXPLAIN`` on DuckDB, answered in PostgreSQL's shape with DuckDB's plan inside.

PostgreSQL answers ``EXPLAIN`` with one column ``QUERY PLAN`` (``text``, ``json`` with
``FORMAT JSON``, ``xml`` with ``FORMAT XML``) and command tag ``EXPLAIN``; tools parse what
is in it (Superset's cost estimate reads ``cost=S..T rows=N width=W`` in row 0; pgcli,
pgAdmin and DBeaver load ``FORMAT JSON`` and walk ``Plan``/``Plans``; explain.depesz.com
reads the text tree). Rules this module keeps:

* The options are PostgreSQL 15's, checked as it checks them (:func:`parse`): ``EXPLAIN
  [ANALYZE|ANALYSE] [VERBOSE] stmt`` or ``EXPLAIN (option [value], ...) stmt`` with
  ``ANALYZE``, ``VERBOSE``, ``COSTS``, ``BUFFERS``, ``WAL``, ``SETTINGS``, ``TIMING``,
  ``SUMMARY`` (booleans: none, ``true``/``false``/``on``/``off``, 1/0) and ``FORMAT
  {TEXT|JSON|YAML|XML}``. Another option is 42601 ``unrecognized EXPLAIN option``, a bad
  value 42601 ``x requires a Boolean value`` / 22023 ``unrecognized value for EXPLAIN
  option "format"``, ``WAL`` or ``TIMING`` without ``ANALYZE`` 22023, a statement that
  cannot be explained (``EXPLAIN DROP ...``) 42601 at its first word.
* The plan is DuckDB's: pgbarrier runs ``EXPLAIN (FORMAT JSON)`` of the statement (as the
  DuckDB backend would run the statement: translated, ``public`` mapped, catalog queries
  rewritten), or ``EXPLAIN ANALYZE (FORMAT JSON)``, and converts it
  (:mod:`pgbarrier.backends.duckdb_explain_plan`: node names, rows, widths and pgbarrier's
  costs, with their rules) and prints it as PostgreSQL does
  (:mod:`pgbarrier.backends.pg_explain_format`).
* As in PostgreSQL, ``EXPLAIN`` of INSERT/UPDATE/DELETE changes nothing (DuckDB plans
  without running) and ``EXPLAIN ANALYZE`` runs the statement: its changes stay (commit
  with the transaction), its errors are the statement's own. ``EXPLAIN ANALYZE CREATE
  TABLE ... AS`` creates the table. ``EXPLAIN REFRESH MATERIALIZED VIEW`` is PostgreSQL's
  ``Utility statements have no plan structure``. ``EXPLAIN DECLARE`` explains the cursor's
  query; ``EXPLAIN EXECUTE`` the prepared statement with its arguments (the backend).
* ``Planning Time`` is DuckDB's planning (binder, optimizer, physical planner) from its
  profile with ANALYZE, else how long DuckDB's EXPLAIN took; ``Execution Time`` DuckDB's
  query time less its planning. DuckDB profiles no operator of a plain ``INSERT ...
  VALUES``: its ANALYZE shows DuckDB's plan with the rows the VALUES list has and the
  statement's measured time on each node.
* ``SETTINGS`` lists the session's values of PostgreSQL's planner settings (those
  PostgreSQL 15 marks ``GUC_EXPLAIN``) that differ from their defaults; they change nothing
  in DuckDB's plan. ``BUFFERS`` and ``WAL`` counters are zero: DuckDB reads no PostgreSQL
  buffers and writes no WAL.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
from sqlglot import exp

from pgbarrier.backends.duckdb_errors import to_pg_error
from pgbarrier.backends.duckdb_explain_plan import (Relation, Statement, convert, duckdb_root,
                                                    tables_of)
from pgbarrier.backends.duckdb_settings import ClientSettings
from pgbarrier.backends.pg_explain_format import Options, PlanNode, Summary, render, utility
from pgbarrier.errors import FeatureNotSupported, InvalidParameterValue, PgError, SyntaxError
from pgbarrier.pgproto import types as pgt
from pgbarrier.result import Column, Result
from pgbarrier.sql.colnames import parse_single

__all__ = ["EXPLAIN_SETTINGS", "Explain", "changed_settings", "columns", "explain",
           "first_word", "parse", "utility_result"]

XML = 142
#: PostgreSQL 15's settings marked GUC_EXPLAIN (``pg_settings_get_flags``), in name order
EXPLAIN_SETTINGS = tuple(sorted("""
constraint_exclusion cpu_index_tuple_cost cpu_operator_cost cpu_tuple_cost cursor_tuple_fraction
effective_cache_size effective_io_concurrency enable_async_append enable_bitmapscan
enable_gathermerge enable_hashagg enable_hashjoin enable_incremental_sort enable_indexonlyscan
enable_indexscan enable_material enable_memoize enable_mergejoin enable_nestloop
enable_parallel_append enable_parallel_hash enable_partition_pruning
enable_partitionwise_aggregate enable_partitionwise_join enable_seqscan enable_sort
enable_tidscan force_parallel_mode from_collapse_limit geqo geqo_effort geqo_generations
geqo_pool_size geqo_seed geqo_selection_bias geqo_threshold hash_mem_multiplier jit
jit_above_cost jit_inline_above_cost jit_optimize_above_cost join_collapse_limit
maintenance_io_concurrency max_parallel_workers max_parallel_workers_per_gather
min_parallel_index_scan_size min_parallel_table_scan_size parallel_leader_participation
parallel_setup_cost parallel_tuple_cost plan_cache_mode random_page_cost
recursive_worktable_factor search_path seq_page_cost temp_buffers work_mem""".split()))

#: PostgreSQL 15's reserved keywords (``pg_get_keywords()`` where ``catcode = 'R'``): no
#: option name (but ANALYZE) and no option value (but TRUE, FALSE, ON) in its grammar
_RESERVED = frozenset("""
all analyse analyze and any array as asc asymmetric both case cast check collate column
constraint create current_catalog current_date current_role current_time current_timestamp
current_user default deferrable desc distinct do else end except false fetch for foreign from
grant group having in initially intersect into lateral leading limit localtime localtimestamp
not null offset on only or order placing primary references returning select session_user
some symmetric table then to trailing true union unique user using variadic when where window
with""".split())
_BOOLEAN_OPTIONS = ("analyze", "verbose", "costs", "buffers", "wal", "settings", "timing",
                    "summary")
_FORMATS = {"text": pgt.TEXT, "json": pgt.JSON, "yaml": pgt.TEXT, "xml": XML}
#: the first words of a statement PostgreSQL can explain (ExplainableStmt)
_EXPLAINABLE = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "INSERT", "UPDATE", "DELETE",
                          "MERGE", "DECLARE", "CREATE", "EXECUTE", "REFRESH", "("})
_TOKEN = re.compile(r"""\s+|--[^\n]*|/\*.*?\*/|(?P<q>"(?:[^"]|"")*")|(?P<s>'(?:[^']|'')*')
                    |(?P<n>[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<w>[A-Za-z_\x80-\uffff][\w$\x80-\uffff]*)
                    |(?P<p>.)""", re.S | re.X)
_CREATE_EXPLAINABLE = re.compile(
    r"\s*CREATE\s+(?:(?:GLOBAL|LOCAL)\s+)?(?:TEMP\s+|TEMPORARY\s+|UNLOGGED\s+)?"
    r"(TABLE|MATERIALIZED\s+VIEW)\b.*?\bAS\b", re.I | re.S)
_SEQUENCE_FN = re.compile(r"\b(?:nextval|setval|currval)\s*\(", re.I)
_LAZY = frozenset({"SELECT", "WITH", "VALUES", "TABLE", "FROM", "("})


@dataclass(frozen=True)
class Explain:
    """A parsed EXPLAIN: its options and the statement it explains (the client's text,
    starting at ``offset`` in the EXPLAIN's text)."""

    options: Options
    statement: str
    offset: int

    @property
    def first_word(self) -> str:
        """The explained statement's first word, upper case (or ``(``)."""
        return first_word(self.statement)


def first_word(sql: str) -> str:
    m = re.match(r"\s*([A-Za-z_]+|\()", sql)
    return m.group(1).upper() if m else ""


@dataclass
class _Tok:
    kind: str
    text: str
    start: int

    @property
    def value(self) -> str:
        if self.kind == "w":
            return self.text.lower()
        if self.kind in ("q", "s"):
            quote = self.text[0]
            return self.text[1:-1].replace(quote * 2, quote)
        return self.text


def _tokens(sql: str, at: int) -> Iterator[_Tok]:
    while at < len(sql):
        m = _TOKEN.match(sql, at)
        assert m is not None
        at = m.end()
        kind = m.lastgroup
        if kind is not None:
            yield _Tok(kind, m.group(0), m.start())


def _syntax_error(sql: str, tok: _Tok | None) -> PgError:
    if tok is None:
        return SyntaxError("syntax error at end of input", position=len(sql) + 1)
    return SyntaxError(f'syntax error at or near "{tok.text}"', position=tok.start + 1)


def _boolean(name: str, value: _Tok | None) -> bool:
    """PostgreSQL's defGetBoolean."""
    if value is None:
        return True
    if value.kind == "n":
        if value.text in ("0", "1"):
            return value.text == "1"
    else:
        word = value.value.lower()
        if word in ("true", "on"):
            return True
        if word in ("false", "off"):
            return False
    raise SyntaxError(f"{name} requires a Boolean value")


def _not_create_as(toks: Iterator[_Tok]) -> _Tok | None:
    """Where PostgreSQL's grammar stops reading a CREATE that is no ``CREATE TABLE ... AS``
    / ``CREATE MATERIALIZED VIEW ... AS`` (the only CREATEs EXPLAIN takes)."""
    tok = next(toks, None)
    while tok is not None and tok.value in ("global", "local", "temp", "temporary",
                                            "unlogged"):
        tok = next(toks, None)
    if tok is None or tok.value not in ("table", "materialized"):
        return tok
    if tok.value == "materialized":
        tok = next(toks, None)
        if tok is None or tok.value != "view":
            return tok
    tok = next(toks, None)
    if tok is not None and tok.value == "if":  # IF NOT EXISTS
        next(toks, None)
        next(toks, None)
        tok = next(toks, None)
    tok = next(toks, None)  # after the name (and its qualifiers)
    while tok is not None and tok.text == ".":
        next(toks, None)
        tok = next(toks, None)
    if tok is not None and tok.text == "(":  # a column name list: names and commas only
        while True:
            tok = next(toks, None)
            if tok is None or tok.kind not in ("w", "q"):
                return tok
            tok = next(toks, None)
            if tok is None or tok.text == ")":
                return next(toks, None) if tok is not None else None
            if tok.text != ",":
                return tok
    return tok


def parse(sql: str) -> Explain:
    """The options and statement of the EXPLAIN ``sql`` (PostgreSQL's errors when wrong)."""
    toks = _tokens(sql, 0)
    first = next(toks, None)
    if first is None or first.value != "explain":
        raise _syntax_error(sql, first)
    o = Options()
    timing: bool | None = None
    summary: bool | None = None
    tok = next(toks, None)
    if tok is not None and tok.text == "(":
        tok = next(toks, None)
        while True:
            if tok is None or tok.kind not in ("w", "q") or (
                    tok.kind == "w" and tok.value in _RESERVED
                    and tok.value not in ("analyze", "analyse")):
                raise _syntax_error(sql, tok)
            name, where = tok.value, tok.start
            if name == "analyse" and tok.kind == "w":
                name = "analyze"
            tok = next(toks, None)
            value = None
            if tok is not None and tok.text not in (",", ")"):
                if tok.kind not in ("w", "q", "s", "n") or (
                        tok.kind == "w" and tok.value in _RESERVED
                        and tok.value not in ("true", "false", "on")):
                    raise _syntax_error(sql, tok)
                value, tok = tok, next(toks, None)
            if name == "format":
                if value is None:
                    raise SyntaxError("format requires a parameter")
                fmt = value.value
                if fmt not in _FORMATS:
                    raise InvalidParameterValue(
                        f'unrecognized value for EXPLAIN option "format": "{fmt}"',
                        position=where + 1)
                o.format = fmt
            elif name in _BOOLEAN_OPTIONS:
                flag = _boolean(name, value)
                if name == "timing":
                    timing = flag
                elif name == "summary":
                    summary = flag
                else:
                    setattr(o, name, flag)
            else:
                raise SyntaxError(f'unrecognized EXPLAIN option "{name}"', position=where + 1)
            if tok is not None and tok.text == ",":
                tok = next(toks, None)
                continue
            if tok is not None and tok.text == ")":
                tok = next(toks, None)
                break
            raise _syntax_error(sql, tok)
    else:
        if tok is not None and tok.kind == "w" and tok.value in ("analyze", "analyse"):
            o.analyze = True
            tok = next(toks, None)
        if tok is not None and tok.kind == "w" and tok.value == "verbose":
            o.verbose = True
            tok = next(toks, None)
    if tok is None or (tok.text.upper() if tok.kind == "w" else tok.text) not in _EXPLAINABLE:
        raise _syntax_error(sql, tok)
    statement = sql[tok.start:]
    if tok.text.upper() == "CREATE" and not _CREATE_EXPLAINABLE.match(statement):
        raise _syntax_error(sql, _not_create_as(toks))
    if o.wal and not o.analyze:
        raise InvalidParameterValue("EXPLAIN option WAL requires ANALYZE")
    o.timing = o.analyze if timing is None else timing
    if o.timing and not o.analyze:
        raise InvalidParameterValue("EXPLAIN option TIMING requires ANALYZE")
    o.summary = o.analyze if summary is None else summary
    return Explain(o, statement, tok.start)


def columns(sql: str) -> list[Column]:
    """The EXPLAIN's result column, its type the FORMAT option's (PostgreSQL's
    ExplainResultDesc decides it before running anything); an EXPLAIN that is wrong says so
    when it runs."""
    try:
        fmt = parse(sql).options.format
    except PgError:
        fmt = "text"
    return [Column("QUERY PLAN", _FORMATS[fmt])]


def _result(options: Options, text: str) -> Result:
    rows = [(line,) for line in text.rstrip("\n").split("\n")] if options.format == "text" \
        else [(text,)]
    return Result(tag="EXPLAIN", columns=[Column("QUERY PLAN", _FORMATS[options.format])],
                  row_source=rows, exact_tag=True)


def utility_result(options: Options) -> Result:
    """PostgreSQL's answer for a statement it has no plan for (``REFRESH``)."""
    return _result(options, utility(options))


def changed_settings(get: Callable[[str], str]) -> list[tuple[str, str]]:
    """(name, value) of the session's planner settings whose value is not their default
    (``get`` reads the session's value as SHOW shows it)."""
    defaults = ClientSettings()
    out = []
    for name in EXPLAIN_SETTINGS:
        try:
            value = get(name)
            if value != defaults.get(name):
                out.append((name, value))
        except PgError:
            continue
    return out


def statement_facts(statement: str) -> Statement:
    """Aliases and the DML target, read from the client's statement (sqlglot)."""
    facts = Statement()
    tree = parse_single(statement)
    if tree is None:
        return facts
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    seen: dict[str, list[str | None]] = {}
    for table in tree.find_all(exp.Table):
        name = table.name
        if not name or name.lower() in ctes:
            continue
        seen.setdefault(name.lower(), []).append(table.alias or None)
    facts.aliases = {n: a[0] for n, a in seen.items() if len(a) == 1 and a[0]}
    if isinstance(tree, (exp.Insert, exp.Update, exp.Delete, exp.Merge)):
        target = tree.this
        if isinstance(target, exp.Schema):
            target = target.this
        if isinstance(target, exp.Table):
            facts.target = (target.name, target.alias or None)
            if target.db and target.db.lower() not in ("public", "main"):
                facts.target_schema = target.db
        returning = tree.args.get("returning")
        if isinstance(returning, exp.Returning):
            facts.returning = ["*" if isinstance(e, exp.Star) or
                               (isinstance(e, exp.Column) and isinstance(e.this, exp.Star))
                               else e.sql(dialect="postgres") for e in returning.expressions]
    return facts


def _relations(cur: duckdb.DuckDBPyConnection, tables: list[str]) -> dict[str, Relation]:
    """The tables DuckDB's plan scans: PostgreSQL's schema name, column types, rows."""
    if not tables:
        return {}
    keys = [t.split(".", 2) for t in tables if t.count(".") >= 2]
    if not keys:
        return {}
    rows = cur.execute(
        "SELECT c.database_name, c.schema_name, c.table_name, c.column_name, c.data_type, "
        "t.estimated_size FROM duckdb_columns() c LEFT JOIN duckdb_tables() t "
        "USING (database_name, schema_name, table_name) "
        "WHERE c.database_name || '.' || c.schema_name || '.' || c.table_name "
        "IN (SELECT unnest($1::VARCHAR[])) ORDER BY c.column_index",
        [[".".join(k) for k in keys]]).fetchall()
    out: dict[str, Relation] = {}
    for db, schema, table, column, dtype, size in rows:
        key = f"{db}.{schema}.{table}"
        rel = out.get(key)
        if rel is None:
            rel = out[key] = Relation("public" if schema == "main" else schema, table, {},
                                      float(size or 0))
        rel.columns[column] = dtype
    return out


def _indexes(cur: duckdb.DuckDBPyConnection, plan: dict[str, Any],
             constraints: Callable[[], Sequence[Sequence[Any]]]) -> dict[str, str]:
    """The index each DuckDB index scan used: an index on the filtered column, else that
    column's primary key or unique constraint under the name PostgreSQL gives it."""
    scans = []
    stack = [plan]
    while stack:
        op = stack.pop()
        info = op.get("extra_info") or {}
        if info.get("Type") == "Index Scan" and info.get("Table"):
            filters = info.get("Filters")
            text = " ".join(filters) if isinstance(filters, list) else str(filters or "")
            m = re.search(r"[A-Za-z_][\w$]*", text)
            scans.append((str(info["Table"]), m.group(0) if m else ""))
        stack.extend(op.get("children") or [])
    out: dict[str, str] = {}
    for table, column in scans:
        name = table.rsplit(".", 1)[-1]
        try:
            found = cur.execute(
                "SELECT index_name FROM duckdb_indexes() WHERE table_name = $1 AND "
                "regexp_matches(expressions, '^\\[\"?' || $2 || '\"?[,\\]]') "
                "ORDER BY index_name LIMIT 1", [name, column]).fetchone()
        except duckdb.Error:
            found = None
        if found:
            out[table] = found[0]
            continue
        for row in constraints():
            t, kind, cols, given = row[0], row[1], list(row[2] or []), row[6]
            if t == name and cols[:1] == [column] and kind in ("PRIMARY KEY", "UNIQUE"):
                out[table] = given or (f"{name}_pkey" if kind == "PRIMARY KEY"
                                       else f"{name}_{'_'.join(cols)}_key")
                break
    return out


def _table_columns(cur: duckdb.DuckDBPyConnection, table: str, schema: str
                   ) -> list[tuple[str, str]]:
    """A table's (column, DuckDB type) in order (the session's temporary table first)."""
    try:
        rows = cur.execute(
            "SELECT database_name, schema_name, column_name, data_type FROM duckdb_columns() "
            "WHERE table_name = $1 AND (schema_name = $2 OR database_name = 'temp') "
            "ORDER BY database_name <> 'temp', database_name, schema_name, column_index",
            [table, "main" if schema == "public" else schema]).fetchall()
    except duckdb.Error:
        return []
    first = rows[0][:2] if rows else None
    return [(r[2], r[3]) for r in rows if r[:2] == first]


def _result_types(cur: duckdb.DuckDBPyConnection, first_word: str, duck: str,
                  params: list[Any] | None) -> list[str] | None:
    """The statement's result types, as DuckDB binds it (nothing runs); None for what
    cannot be described that way."""
    if first_word not in _LAZY or _SEQUENCE_FN.search(duck):
        return None
    try:
        rel = cur.sql(duck, params=params) if params else cur.sql(duck)
    except duckdb.Error:
        return None
    return [str(t) for t in rel.types] if rel is not None else None


def _without_prefix(exc: duckdb.Error, prefix: str) -> duckdb.Error:
    """DuckDB's error ``exc`` as it would read had the statement run without ``prefix``:
    its ``LINE 1:`` excerpt and caret moved back (the text is what the error mapping reads)."""
    text = str(exc)
    head = "LINE 1: " + prefix
    at = text.find(head)
    if at < 0:
        return exc
    lines = text[at:].split("\n")
    lines[0] = "LINE 1: " + lines[0][len(head):]
    if len(lines) > 1 and "^" in lines[1]:
        caret = lines[1]
        cut = min(len(prefix), len(caret) - len(caret.lstrip(" ")))
        lines[1] = caret[cut:]
    try:
        return type(exc)(text[:at] + "\n".join(lines))
    except Exception:  # noqa: BLE001 - an exception class that takes no message: as it is
        return exc


def _run(cur: duckdb.DuckDBPyConnection, prefix: str, duck: str, params: list[Any] | None,
         constraints: Callable[[], Sequence[Sequence[Any]]]) -> tuple[Any, float]:
    """DuckDB's JSON plan of ``duck`` and how long DuckDB took (ms). A DuckDB error is the
    statement's own, its position in ``duck``."""
    started = time.perf_counter()
    try:
        rows = cur.execute(prefix + duck, params).fetchall() if params else \
            cur.execute(prefix + duck).fetchall()
    except duckdb.Error as exc:
        # the statement's own error: as if DuckDB had run it without the EXPLAIN prefix
        err = to_pg_error(_without_prefix(exc, prefix), duck, constraints)  # type: ignore[arg-type]
        raise err from None
    elapsed = (time.perf_counter() - started) * 1000.0
    text = rows[0][1] if rows and len(rows[0]) > 1 else "[]"
    return json.loads(text), elapsed


def explain(cur: duckdb.DuckDBPyConnection, options: Options, statement: str, duck: str,
            params: list[Any] | None = None, *,
            settings: list[tuple[str, str]] | None = None,
            constraints: Callable[[], Sequence[Sequence[Any]]] = lambda: ()) -> Result:
    """Run DuckDB's EXPLAIN of ``duck`` (``statement``, the client's text, as DuckDB runs
    it) and answer PostgreSQL's result. Errors are PgErrors, positions in ``duck``."""
    o = options
    word = first_word(statement)
    if word == "REFRESH":
        return utility_result(o)
    if word == "CREATE" and re.match(r"\s*CREATE\s+MATERIALIZED\b", duck, re.I):
        if o.analyze:
            raise FeatureNotSupported(
                "EXPLAIN ANALYZE CREATE MATERIALIZED VIEW is not supported on the DuckDB "
                "backend", hint="Create the view, then EXPLAIN ANALYZE its query.")
        duck = re.split(r"\bAS\b", duck, maxsplit=1, flags=re.I)[1]
    facts = statement_facts(statement)
    summary = Summary(settings=settings or [])
    unprofiled = False
    if o.analyze:
        started = time.perf_counter()
        profile, _ = _run(cur, "EXPLAIN ANALYZE (FORMAT JSON) ", duck, params, constraints)
        measured = (time.perf_counter() - started) * 1000.0
        root = duckdb_root(profile)
        if root is None:  # DuckDB profiles no operator of a plain INSERT ... VALUES
            plan, took = _run(cur, "EXPLAIN (FORMAT JSON) ", duck, params, constraints)
            root = duckdb_root(plan)
            summary.planning_ms, summary.execution_ms = took, measured
            unprofiled = True
        else:
            summary.planning_ms, summary.execution_ms = _profile_times(profile)
    else:
        plan, took = _run(cur, "EXPLAIN (FORMAT JSON) ", duck, params, constraints)
        root = duckdb_root(plan)
        summary.planning_ms = took
    if root is None:
        return utility_result(o)
    try:
        relations = _relations(cur, tables_of(root))
        facts.indexes = _indexes(cur, root, constraints)
    except duckdb.Error:
        relations = {}
    query = duck
    if word == "CREATE":  # CREATE TABLE ... AS: its query's
        query = re.split(r"\bAS\b", duck, maxsplit=1, flags=re.I)[-1]
    facts.result_types = _result_types(cur, first_word(query), query, params)
    if facts.target is not None:
        facts.target_columns = _table_columns(cur, facts.target[0], facts.target_schema)
    node = convert(root, relations, facts, analyze=o.analyze, verbose=o.verbose)
    if unprofiled:
        _unprofiled(node, measured)
    return _result(o, render(node, o, summary))


def _profile_times(profile: dict[str, Any]) -> tuple[float, float]:
    """Planning and execution time (ms) of DuckDB's ANALYZE profile."""
    def seconds(*path: str) -> float:
        cur: Any = profile
        for key in path:
            cur = cur.get(key) if isinstance(cur, dict) else None
        try:
            return float(cur or 0.0)
        except (TypeError, ValueError):
            return 0.0
    planning = seconds("planner", "total_time") + seconds("optimizer", "total_time") + \
        seconds("physical_planner", "total_time")
    total = seconds("query", "total_time") or seconds("latency")
    return planning * 1000.0, max(total - planning, 0.0) * 1000.0


def _unprofiled(node: PlanNode, measured: float) -> None:
    """ANALYZE of a statement DuckDB did not profile: rows a VALUES list has, and the
    statement's measured time on each node."""
    if node.actual is not None:
        node.actual.rows = 0.0 if node.node_type == "ModifyTable" else node.rows
        node.actual.startup_ms, node.actual.total_ms = 0.0, measured
    for child in node.children:
        _unprofiled(child.node, measured)
