"""Rewrite PostgreSQL catalog queries for DuckDB, on sqlglot's AST.

Rules this module keeps:

* :func:`may_touch_catalog` is the cheap gate: a case-insensitive substring test for the
  words a catalog query needs (``pg_``, ``information_schema``, ``regclass``,
  ``current_setting``..., and ``format(``: PostgreSQL's format() in any statement, which
  DuckDB's own, fmt-style, answered with the format string as it was). Only SQL that passes
  it is parsed; SQL that parses but names no catalog object comes back as ``None`` and runs
  unchanged, byte for byte. The gate's answer is kept per text
  (:func:`pgbarrier.sql.text_memo.by_text`: a function of the text alone; one statement
  meets it several times). (``public`` qualifiers are the caller's, before this:
  :mod:`pgbarrier.sql.public_schema`.)
* A statement that names a catalog relation never runs on DuckDB's own catalog
  (:mod:`pgbarrier.backends.pgcatalog.unrewritten`): keyword column labels (``AS
  select``) are quoted so it parses; if it still does not, :class:`CatalogUnparsed` is
  raised (the backend asks DuckDB's parser whether it is a syntax error); a statement other
  than a query that names one is 0A000 (``CREATE VIEW ... FROM pg_class``, ``EXPLAIN``);
  a query naming a catalog relation pgbarrier does not emulate is 0A000 naming it.
* Parsing uses pgbarrier's dialect (PostgreSQL's syntax); output is DuckDB SQL. Rewrites:

  - table references ``pg_catalog.<r>`` (or a bare ``pg_<r>`` that no CTE shadows) and
    ``information_schema.<r>`` for an emulated relation become references into
    :data:`pgbarrier.backends.pgcatalog.CATALOG_DB`; ``pg_settings`` becomes the session's
    settings as a derived table; ``public.<t>`` becomes DuckDB's ``main.<t>``;
  - calls of emulated functions (``pg_get_userbyid``, ``format_type``, ``pg_get_expr``,
    ``pg_table_is_visible``...), with or without ``pg_catalog.``, call the emulation;
    ``pg_catalog.`` is dropped from other calls (DuckDB resolves them itself);
  - ``current_database()``, ``current_user``, ``session_user``, ``current_schema()``,
    ``current_schemas(b)``, ``current_setting('x')`` and ``pg_client_encoding()`` become
    the session's values;
    ``set_config('x', 'v', local)`` with literal arguments applies the setting (through
    the context) and becomes its new value;
  - casts to ``regclass``/``regtype``/``regnamespace``: of a string literal, the OID of the
    named object; of another expression, its name as text, except where the cast is an
    operand of a comparison (there both sides compare as OIDs); ``regproc`` of a literal
    is the bare function name; ``::reg*[]`` keeps the OIDs; ``::oid`` is ``BIGINT``;
    ``::name`` and ``::"char"`` are text;
  - a string literal ``'{a,b}'`` used as an array (``= ANY('{...}')``, ``'{...}'::text[]``)
    becomes a DuckDB list; ``OPERATOR(pg_catalog.op)`` becomes the plain operator;
    ``COLLATE pg_catalog.default``/``"C"`` is dropped;
  - ``information_schema._pg_expandarray(a)`` (pgjdbc) becomes ``unnest`` of a list of
    ``{x, n}`` structs;
  - ``format('%I.%I', ...)`` is PostgreSQL's format() (:mod:`.pgformat`), not DuckDB's;
  - ``x.tableoid`` of a catalog relation with a fixed OID is that OID;
  - a scalar function in FROM (``string_to_array(...) AS s``, ``parse_ident(...)``) is a
    one-row derived table whose column is named by the alias, as in PostgreSQL.

* Every unaliased output column of the top-level query gets the name PostgreSQL would
  give it (its column, function or type name, ``case``, ``array``, ``exists``, else
  ``?column?``; :mod:`pgbarrier.sql.colnames`), and the PostgreSQL types of output columns
  DuckDB cannot carry are in :attr:`Rewritten.column_types`
  (:mod:`pgbarrier.sql.catalog_types`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from pgbarrier.errors import PgError
from pgbarrier.backends.pgcatalog import CATALOG_DB, FUNCTIONS, RELATIONS, SCHEMA_FOR
from pgbarrier.backends.pgcatalog.unrewritten import (
    CatalogUnparsed,
    catalog_relation_in_tokens,
    quote_keyword_aliases,
    unemulated_relation,
)
from pgbarrier.errors import FeatureNotSupported
from pgbarrier.pgproto import encodings
from pgbarrier.sql.catalog_rewrite import CatalogTable, _derived_select, folded
from pgbarrier.sql.catalog_types import column_types
from pgbarrier.sql.classify import leading_words
from pgbarrier.sql.text_memo import by_text
from pgbarrier.sql.colnames import first_select, output_names, parse_single, type_name

__all__ = ["CatalogContext", "CatalogUnparsed", "Rewritten", "may_touch_catalog",
           "rewrite_pg_catalog"]

_TRIGGERS = ("pg_", "information_schema", "regclass", "regtype", "regproc", "regnamespace",
             "current_setting", "set_config", "current_schema", "current_database",
             "current_user", "session_user", "quote_ident", "format_type", "obj_description",
             "col_description", "_privilege", "format(")


@by_text  # every statement meets it, some paths several times: kept per text
def may_touch_catalog(sql: str) -> bool:
    lowered = sql.lower()
    for t in _TRIGGERS:  # a loop, not any(<genexpr>): every statement pays this
        if t in lowered:
            return True
    return False


@dataclass
class CatalogContext:
    """What a rewrite needs from the session."""

    database: str
    user: str
    current_setting: Callable[[str], str | None]
    set_config: Callable[[str, str, bool], str]
    settings_table: Callable[[], CatalogTable]
    #: the schemas the session searches, PostgreSQL's names (``current_schemas(false)``)
    search_path: Callable[[], Sequence[str]] = lambda: ("public",)
    #: ``pg_stat_activity``'s rows now (:func:`activity_table`)
    activity_table: Callable[[], CatalogTable] = lambda: activity_table([])
    #: the session's pid (``pg_backend_pid()``, the caller of ``pgb_signal``)
    process_id: Callable[[], int] = lambda: 0
    #: whether ``pgb_signal(caller, action, pid)`` exists (pg_cancel/terminate_backend)
    signals: bool = False
    #: ``pg_get_viewdef(oid)`` of one view, its relations qualified as the search path
    #: needs (:mod:`pgbarrier.backends.pgcatalog.viewdefs`); None for no view
    view_definition: Callable[[int], str | None] = lambda oid: None


@dataclass
class Rewritten:
    sql: str
    #: output column name -> PostgreSQL type OID, for catalog columns DuckDB cannot type
    column_types: dict[str, int] = field(default_factory=dict)


#: scalar functions PostgreSQL accepts in FROM (a one-row table) that clients put there
_SCALARS_IN_FROM = frozenset({"string_to_array", "regexp_split_to_array", "parse_ident",
                              "current_schemas", "split"})
_REG_TYPES = {"regclass", "regtype", "regnamespace", "regproc", "regprocedure", "regoper",
              "regoperator", "regconfig", "regdictionary", "regrole", "regcollation"}
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In, exp.Any, exp.All,
                exp.Is, exp.NullSafeEQ, exp.NullSafeNEQ)


#: pg_cancel_backend / pg_terminate_backend -> pgb_signal's action (a timeout argument of
#: pg_terminate_backend is accepted and not waited on)
_SIGNALS = {"pg_cancel_backend": "cancel", "pg_terminate_backend": "terminate"}

#: pg_stat_activity's columns (PostgreSQL 15's; client_addr is text: DuckDB has no inet)
ACTIVITY_COLUMNS = (
    ("datid", "BIGINT"), ("datname", "TEXT"), ("pid", "INTEGER"), ("leader_pid", "INTEGER"),
    ("usesysid", "BIGINT"), ("usename", "TEXT"), ("application_name", "TEXT"),
    ("client_addr", "TEXT"), ("client_hostname", "TEXT"), ("client_port", "INTEGER"),
    ("backend_start", "TIMESTAMPTZ"), ("xact_start", "TIMESTAMPTZ"),
    ("query_start", "TIMESTAMPTZ"), ("state_change", "TIMESTAMPTZ"),
    ("wait_event_type", "TEXT"), ("wait_event", "TEXT"), ("state", "TEXT"),
    ("backend_xid", "BIGINT"), ("backend_xmin", "BIGINT"), ("query_id", "BIGINT"),
    ("query", "TEXT"), ("backend_type", "TEXT"))


def _database_oid(name: str) -> int:
    """The OID ``pgb.hash_oid('d', '', name)`` gives ``pg_database`` in catalog.sql."""
    digest = hashlib.md5(f"d:.{name}".encode()).hexdigest()
    return 16384 + int(digest[:8], 16) % 2_000_000_000


def activity_table(records: Sequence[dict[str, Any]]) -> CatalogTable:
    """``pg_stat_activity`` over records by column name (missing columns are NULL;
    ``datid`` is the database's ``pg_database.oid``, ``usesysid`` 10)."""
    rows = []
    for rec in records:
        full = dict(rec)
        if full.get("datname") is not None:
            full.setdefault("datid", _database_oid(full["datname"]))
        full.setdefault("usesysid", 10)
        rows.append(tuple(full.get(name) for name, _ in ACTIVITY_COLUMNS))
    return CatalogTable(ACTIVITY_COLUMNS, rows)


def _namespace_oid(name: str) -> int:
    """The OID ``pgb.hash_oid('n', '', name)`` gives in catalog.sql (MD5-derived)."""
    digest = hashlib.md5(f"n:.{name}".encode()).hexdigest()
    return 16384 + int(digest[:8], 16) % 2_000_000_000


#: namespaces on the search path: public, pg_catalog, the session's temp schema
_VISIBLE_NAMESPACES = (2200, 11, _namespace_oid("pg_temp_1"))


def _catalog_func(name: str, args: Sequence[exp.Expr]) -> exp.Expr:
    call = exp.Anonymous(this=name, expressions=list(args))
    call.meta["pgbarrier"] = True  # already rewritten: the transform must not wrap it again
    return exp.Dot.build([exp.to_identifier(CATALOG_DB), exp.to_identifier("pgcat"), call])


def _string(value: str | None) -> exp.Expr:
    return exp.Null() if value is None else exp.Literal.string(value)


def _pg_array_literal(text: str) -> exp.Expr | None:
    """``'{a,b,"c d"}'`` -> a list of string literals (None if not an array literal)."""
    s = text.strip()
    if not (s.startswith("{") and s.endswith("}")):
        return None
    body, items, cur, quoted, esc = s[1:-1], [], [], False, False
    if not body.strip():
        return exp.Array(expressions=[])
    for ch in body:
        if esc:
            cur.append(ch)
            esc = False
        elif ch == "\\":
            esc = True
        elif ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            items.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur).strip())
    return exp.Array(expressions=[exp.Null() if v.upper() == "NULL" else exp.Literal.string(v)
                                  for v in items])




class _Rewriter:
    def __init__(self, ctx: CatalogContext, pg_class_aliases: set[str],
                 catalog_aliases: dict[str, int] | None = None) -> None:
        self.ctx = ctx
        self.changed = False
        self.pg_class_aliases = pg_class_aliases
        #: alias -> OID of the pg_catalog relation it names (for ``alias.tableoid``)
        self.catalog_aliases = catalog_aliases or {}
        #: id of an unqualified ``tableoid`` column -> OID of the one catalog relation of
        #: its SELECT (:func:`_bare_tableoids`)
        self.bare_tableoids: dict[int, int] = {}

    # ---------------------------------------------------------------- tables

    def scalar_in_from(self, node: exp.Table) -> exp.Expr | None:
        """``FROM string_to_array(...) AS s`` (PostgreSQL: one row, column ``s``) as a
        derived table; DuckDB has no table function of that name (Grafana's pickers)."""
        fn = node.this
        if isinstance(fn, exp.Anonymous):
            name = fn.name.lower()
        elif isinstance(fn, exp.Func):
            name = fn.sql_name().lower()
        else:
            return None
        if name not in _SCALARS_IN_FROM:
            return None
        alias = node.args.get("alias")
        alias_name = alias.name if alias is not None and alias.name else name
        columns = alias.args.get("columns") if alias is not None else None
        column = columns[0].name if columns else alias_name
        value = self.function(fn) or fn
        self.changed = True
        return exp.Subquery(
            this=exp.select(exp.alias_(value, exp.to_identifier(column, quoted=True))),
            alias=exp.TableAlias(this=exp.to_identifier(alias_name)))

    def table(self, node: exp.Table, ctes: set[str]) -> exp.Expr:
        as_derived = self.scalar_in_from(node)
        if as_derived is not None:
            return as_derived
        schema = folded(node.args.get("db"))
        name = folded(node.this) if isinstance(node.this, exp.Identifier) else None
        if isinstance(node.this, exp.Anonymous) or isinstance(node.this, exp.Func):
            fn = node.this
            fname = fn.name.lower() if isinstance(fn, exp.Anonymous) else None
            if fname == "pg_show_all_settings" and not fn.expressions and \
                    schema in (None, "pg_catalog"):
                # the function behind pg_settings (pgAdmin's start-up reads it): the same rows
                self.changed = True
                alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(fname))
                return exp.Subquery(this=_derived_select(self.ctx.settings_table(), "duckdb"),
                                    alias=alias)
            if schema == "pg_catalog" or fname in FUNCTIONS:
                self.changed = True
                if fname in FUNCTIONS:
                    node.set("this", exp.Anonymous(this=fname, expressions=fn.expressions))
                    node.set("db", exp.to_identifier("pgcat"))
                    node.set("catalog", exp.to_identifier(CATALOG_DB))
                else:
                    node.set("db", None)
            return node
        if name is None:
            return node
        if schema is None and name in ctes:
            return node
        pg_schema = schema if schema in RELATIONS else (
            "pg_catalog" if schema is None and name in RELATIONS["pg_catalog"] else None)
        if pg_schema is not None and name in RELATIONS[pg_schema]:
            self.changed = True
            if name in ("pg_settings", "pg_stat_activity"):
                alias = node.args.get("alias") or exp.TableAlias(this=exp.to_identifier(name))
                table = self.ctx.settings_table() if name == "pg_settings" \
                    else self.ctx.activity_table()
                return exp.Subquery(this=_derived_select(table, "duckdb"), alias=alias)
            node.set("catalog", exp.to_identifier(CATALOG_DB))
            node.set("db", exp.to_identifier(SCHEMA_FOR[pg_schema]))
            if node.args.get("alias") is None:
                node.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
            return node
        if schema == "public":
            self.changed = True
            node.set("db", exp.to_identifier("main"))
            if folded(node.args.get("catalog")) is not None:
                node.set("catalog", None)
        return node

    # ---------------------------------------------------------------- expressions

    def function(self, node: exp.Expr) -> exp.Expr | None:
        """A replacement for a function call node, or None to keep it."""
        ctx = self.ctx
        if isinstance(node, exp.CurrentDatabase):
            return exp.Literal.string(ctx.database)
        if isinstance(node, (exp.CurrentUser, exp.SessionUser)):
            return exp.Literal.string(ctx.user)
        if isinstance(node, exp.CurrentSchema):
            path = ctx.search_path()
            return _string(path[0] if path else None)
        if isinstance(node, exp.CurrentSchemas):
            implicit = node.this
            with_implicit = not (isinstance(implicit, exp.Boolean) and not implicit.this)
            names = list(ctx.search_path())
            if with_implicit and "pg_catalog" not in names:
                names.insert(0, "pg_catalog")
            return exp.Array(expressions=[exp.Literal.string(n) for n in names])
        if isinstance(node, exp.ArraySize):  # array_length() is integer, DuckDB's BIGINT
            return exp.Cast(this=node.copy(), to=exp.DataType.build("INTEGER"))
        if isinstance(node, exp.Format) or (  # PostgreSQL's format(): pgformat.py
                isinstance(node, exp.Anonymous) and node.name.lower() == "format"):
            from pgbarrier.backends.pgcatalog.pgformat import pg_format

            args = [node.this, *node.expressions] if isinstance(node, exp.Format) \
                else list(node.expressions)
            return pg_format(args, lambda e: _catalog_func("quote_ident", [e]))
        if isinstance(node, exp.Anonymous):
            name = node.name.lower()
            args = node.expressions
            if name == "current_setting" and args and isinstance(args[0], exp.Literal):
                if len(args) > 1 and isinstance(args[1], exp.Boolean) and args[1].this:
                    try:  # current_setting(name, missing_ok => true): NULL when unknown
                        return _string(ctx.current_setting(args[0].name))
                    except PgError as exc:
                        if exc.sqlstate != "42704":
                            raise
                        return exp.Null()
                return _string(ctx.current_setting(args[0].name))
            if name == "current_setting" and len(args) in (1, 2):
                # a setting named by an expression (psql's \dconfig: current_setting(s.name)):
                # looked up in the session's settings; an unknown name is NULL
                settings = exp.Subquery(this=_derived_select(ctx.settings_table(), "duckdb"),
                                        alias=exp.TableAlias(this=exp.to_identifier("pgb_set")))
                lookup = exp.select(exp.column("setting", table="pgb_set")).from_(settings).where(
                    exp.EQ(this=exp.Lower(this=exp.column("name", table="pgb_set")),
                           expression=exp.Lower(this=args[0].copy())))
                return exp.Subquery(this=lookup)
            if name == "set_config" and len(args) == 3 and all(
                    isinstance(a, (exp.Literal, exp.Boolean)) for a in args):
                local = bool(args[2].this) if isinstance(args[2], exp.Boolean) else False
                return _string(ctx.set_config(args[0].name, args[1].name, local))
            if name == "set_config" and len(args) == 3 and isinstance(args[0], exp.Column) \
                    and all(isinstance(a, (exp.Literal, exp.Boolean)) for a in args[1:]):
                # pg_dump: ``SELECT set_config(name, 'v', false) FROM pg_settings WHERE
                # name = 'x'``: the one row's setting is named by the WHERE
                setting = _setting_named_by_where(node, args[0])
                if setting is None:
                    raise FeatureNotSupported(
                        "set_config() naming its setting by a column is supported only for "
                        "the one pg_settings row a WHERE name = '...' selects")
                local = bool(args[2].this) if isinstance(args[2], exp.Boolean) else False
                try:
                    return _string(ctx.set_config(setting, args[1].name, local))
                except PgError as exc:
                    if exc.sqlstate != "42704":
                        raise
                    return exp.Null()  # no such row in pg_settings: no row to apply it to
            if name == "pg_get_viewdef" and args and _oid_literal(args[0]) is not None:
                # pg_dump's ``pg_get_viewdef('16429'::oid)``: qualified names (viewdefs.py)
                return _string(ctx.view_definition(_oid_literal(args[0])))
            if name in ("pg_get_constraintdef", "pg_get_expr") and len(args) in (1, 2, 3):
                # the overload that qualifies names off the search path (catalog.sql)
                fixed = list(args) + [exp.false()] * ((2 if name == "pg_get_expr" else 1)
                                                      + 1 - len(args))
                return _catalog_func(name, [*fixed, exp.Array(expressions=[
                    exp.Literal.string(n) for n in ctx.search_path()])])
            if name == "pg_client_encoding" and not args:  # the canonical name: UNICODE is UTF8
                shown = ctx.current_setting("client_encoding") or "UTF8"
                return _string(encodings.encoding_name(shown) or shown)
            if name == "pg_backend_pid" and not args:
                return exp.Cast(this=exp.Literal.number(ctx.process_id()),
                                to=exp.DataType.build("INTEGER"))
            if name in _SIGNALS and len(args) in (1, 2):
                if not ctx.signals:
                    raise FeatureNotSupported(f"{name}() is not supported on this DuckDB "
                                              "backend (its Python functions need numpy)")
                return exp.Anonymous(this="pgb_signal", expressions=[
                    exp.Literal.number(ctx.process_id()), exp.Literal.string(_SIGNALS[name]),
                    exp.Cast(this=args[0], to=exp.DataType.build("INTEGER"))])
            if name == "_pg_expandarray":
                return exp.Unnest(expressions=[_catalog_func(name, args)])
            if name == "pg_table_is_visible" and len(args) == 1 and \
                    isinstance(args[0], exp.Column) and args[0].name == "oid" and \
                    args[0].table in self.pg_class_aliases:
                # psql's filter on every pg_class row: its namespace is on the search path
                # (public, pg_catalog, the session's temp schema), no lookup per row
                visible = {*_VISIBLE_NAMESPACES[1:], *(
                    {"public": 2200, "pg_catalog": 11}.get(n) or _namespace_oid(n)
                    for n in ctx.search_path())}
                return exp.In(this=exp.column("relnamespace", table=args[0].table),
                              expressions=[exp.Literal.number(o) for o in sorted(visible)])
            if name in FUNCTIONS:
                return _catalog_func(name, args)
            if name in ("json_build_object", "jsonb_build_object"):
                return exp.Anonymous(this="json_object", expressions=args)
        return None

    def cast(self, node: exp.Cast) -> exp.Expr | None:
        target = type_name(node.args["to"])
        inner = node.this
        if target is None:
            return None
        base = target[:-2] if target.endswith("[]") else target
        if target.endswith("[]") and isinstance(inner, exp.Literal) and inner.is_string:
            arr = _pg_array_literal(inner.name)
            if arr is not None:
                if base in _REG_TYPES or base in ("oid", "name", "char"):
                    return arr
                node.set("this", arr)
                return node
        if base in _REG_TYPES and target.endswith("[]"):
            return inner
        if target in ("regclass", "regtype", "regnamespace"):
            kind = target[3:]
            if (isinstance(inner, exp.Literal) and inner.is_string) or \
                    isinstance(inner, (exp.Placeholder, exp.Parameter)):
                return _catalog_func(f"reg{kind}_in", [inner])  # 42P01 & co. when missing
            if _is_text(inner):  # a name built as text (format('%I.%I', s, t)::regclass)
                found = _catalog_func(f"reg{kind}_in", [inner])
                if isinstance(node.parent, (*_COMPARISONS, exp.Cast)):
                    return found
                return _catalog_func(f"reg{kind}_name", [found, *self._visible(kind)])
            if isinstance(node.parent, _COMPARISONS) or isinstance(inner, exp.Cast):
                return inner
            return _catalog_func(f"reg{kind}_name", [inner, *self._visible(kind)])
        if target in _REG_TYPES:  # regproc & co.: names are kept as text
            if isinstance(inner, exp.Literal) and inner.is_string:
                return exp.Literal.string(inner.name.split(".")[-1])
            return inner
        if target == "oid":
            return exp.Cast(this=inner, to=exp.DataType.build("BIGINT"))
        if target in ("int2vector", "oidvector"):
            return inner
        if target in ("name", "char", "text"):
            return exp.Cast(this=inner, to=exp.DataType.build("VARCHAR"))
        if "pg_catalog" in node.args["to"].sql().lower():  # pg_catalog.int2[] -> SMALLINT[]
            try:
                node.set("to", exp.DataType.build(target, dialect="postgres"))
            except (ParseError, TokenError, ValueError):
                return None
            return node
        return None

    def _visible(self, kind: str) -> list[exp.Expr]:
        """The schemas whose relations a ``::regclass`` name leaves unqualified (the search
        path, and pg_catalog), as the extra argument of ``regclass_name``."""
        if kind != "class":
            return []
        names = {"pg_catalog", *self.ctx.search_path()}
        return [exp.Array(expressions=[exp.Literal.string(n) for n in sorted(names)])]

    def visit(self, node: exp.Expr, ctes: set[str]) -> exp.Expr:
        if node.meta.get("pgbarrier"):
            return node
        if isinstance(node, exp.Table):
            return self.table(node, ctes)
        if isinstance(node, exp.Dot) and not isinstance(node.expression, exp.Identifier):
            qualifier = node.this
            if isinstance(qualifier, exp.Identifier) and \
                    folded(qualifier) in ("pg_catalog", "information_schema"):
                self.changed = True
                inner = node.expression  # already rewritten (children go first)
                if isinstance(inner, exp.Anonymous) and inner.name.lower() == "current_schemas" \
                        and len(inner.expressions) == 1:  # sqlglot's type only when bare
                    return self.function(exp.CurrentSchemas(this=inner.expressions[0]))
                return inner
            return node
        if isinstance(node, exp.Cast):  # before Func: a Cast is a Func to sqlglot
            replaced = self.cast(node)
            if replaced is not None:
                self.changed = True
                return replaced
            return node
        if isinstance(node, exp.Func) and not isinstance(node.parent, exp.Table):
            replaced = self.function(node)
            if replaced is not None:
                self.changed = True
                return replaced
            return node
        if isinstance(node, exp.Column) and id(node) in self.bare_tableoids:
            self.changed = True  # ``SELECT tableoid ... FROM pg_type``: the one relation's
            return exp.Literal.number(self.bare_tableoids[id(node)])
        if isinstance(node, exp.Column) and node.name.lower() == "tableoid" and \
                node.table.lower() in self.catalog_aliases:
            # the system column: the OID of the catalog relation the row is from
            self.changed = True
            return exp.Literal.number(self.catalog_aliases[node.table.lower()])
        if isinstance(node, exp.Column) and folded(node.args.get("db")) in (
                "pg_catalog", "information_schema", "public"):
            self.changed = True  # pg_catalog.pg_class.relname -> pg_class.relname (the alias)
            node.set("db", None)
            node.set("catalog", None)
            return node
        if isinstance(node, exp.Column) and node.table == "" and \
                node.name.lower() == "user" and not node.this.quoted:
            self.changed = True
            return exp.Literal.string(self.ctx.user)
        if isinstance(node, (exp.Any, exp.All)):
            inner = node.this.this if isinstance(node.this, exp.Paren) else node.this
            if isinstance(inner, exp.Literal) and inner.is_string:
                arr = _pg_array_literal(inner.name)
                if arr is not None:
                    self.changed = True
                    node.set("this", exp.Paren(this=arr))
            return node
        if isinstance(node, exp.Operator):
            op = node.text("operator").split(".")[-1].strip()
            right = node.expression
            if isinstance(right, exp.Collate):
                right = right.this
            built = _operator(op, node.this, right)
            if built is not None:
                self.changed = True
                return built
            return node
        if isinstance(node, exp.Collate):
            self.changed = True
            return node.this
        return node


def _oid_literal(node: exp.Expr) -> int | None:
    """The OID ``'16429'``, ``16429`` or ``'16429'::oid`` names; None for another expression."""
    if isinstance(node, exp.Cast):
        node = node.this
    if isinstance(node, exp.Literal) and node.name.isdigit():
        return int(node.name)
    return None


def _setting_named_by_where(call: exp.Expr, column: exp.Column) -> str | None:
    """``'x'`` of ``WHERE name = 'x'`` in the SELECT of ``call`` (over ``pg_settings``),
    where ``column`` is that ``name``."""
    select = call.find_ancestor(exp.Select)
    where = select.args.get("where") if select is not None else None
    if where is None or column.name.lower() != "name":
        return None
    sources = [select.args.get("from_")] + list(select.args.get("joins") or ())
    if len(sources) != 1 or sources[0] is None or not isinstance(sources[0].this, exp.Table) \
            or sources[0].this.name.lower() != "pg_settings":
        return None
    cond = where.this
    if isinstance(cond, exp.EQ):
        for a, b in ((cond.this, cond.expression), (cond.expression, cond.this)):
            if isinstance(a, exp.Column) and a.name.lower() == "name" and \
                    isinstance(b, exp.Literal) and b.is_string:
                return b.name
    return None


#: functions that return a relation's name as text (SQLAlchemy's identity reflection casts
#: pg_get_serial_sequence(...)::regclass::oid)
_NAME_TEXT_FUNCS = frozenset({"concat", "pg_get_serial_sequence"})


def _is_text(node: exp.Expr) -> bool:
    """Whether ``node`` makes a string: a concatenation (``||``, ``concat``, a rewritten
    ``format()``), a relation name from ``pg_get_serial_sequence`` or a cast to text."""
    if isinstance(node, (exp.DPipe, exp.Concat)):
        return True
    func = node.expression if isinstance(node, exp.Dot) else node
    if isinstance(func, exp.Anonymous) and func.name.lower() in _NAME_TEXT_FUNCS:
        return True
    return isinstance(node, exp.Cast) and type_name(node.args["to"]) in ("text", "varchar")


def _operator(op: str, left: exp.Expr, right: exp.Expr) -> exp.Expr | None:
    simple = {"=": exp.EQ, "<>": exp.NEQ, "!=": exp.NEQ, "<": exp.LT, "<=": exp.LTE,
              ">": exp.GT, ">=": exp.GTE}
    if op in simple:
        return simple[op](this=left, expression=right)
    if op == "~":
        return exp.RegexpLike(this=left, expression=right)
    if op == "!~":
        return exp.Not(this=exp.RegexpLike(this=left, expression=right))
    if op == "~*":
        return exp.RegexpILike(this=left, expression=right)
    if op == "!~*":
        return exp.Not(this=exp.RegexpILike(this=left, expression=right))
    if op == "~~":
        return exp.Like(this=left, expression=right)
    if op == "!~~":
        return exp.Not(this=exp.Like(this=left, expression=right))
    return None


def _post_order(node: exp.Expr, fun: Callable[[exp.Expr], exp.Expr]) -> exp.Expr:
    """Apply ``fun`` to every node, children first (a replaced node's children are done)."""
    for key, value in list(node.args.items()):
        if isinstance(value, exp.Expr):
            new = _post_order(value, fun)
            if new is not value:
                node.set(key, new)
        elif isinstance(value, list):
            items = [_post_order(v, fun) if isinstance(v, exp.Expr) else v for v in value]
            if any(a is not b for a, b in zip(items, value)):
                node.set(key, items)
    return fun(node)


def _pg_class_aliases(tree: exp.Expr) -> set[str]:
    out = set()
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, exp.Identifier) and table.name.lower() == "pg_class" and \
                folded(table.args.get("db")) in (None, "pg_catalog"):
            out.add((table.alias or table.name).lower())
    return out


def _catalog_aliases(tree: exp.Expr) -> dict[str, int]:
    """alias -> OID of the pg_catalog relation with a fixed OID it names."""
    from pgbarrier.backends.pgcatalog import FIXED_OIDS

    out = {}
    for table in tree.find_all(exp.Table):
        if isinstance(table.this, exp.Identifier) and table.name.lower() in FIXED_OIDS and \
                folded(table.args.get("db")) in (None, "pg_catalog"):
            out[(table.alias or table.name).lower()] = FIXED_OIDS[table.name.lower()]
    return out


def _bare_tableoids(tree: exp.Expr) -> dict[int, int]:
    """id of each unqualified ``tableoid`` column -> the OID of the catalog relation its
    SELECT reads, when that SELECT reads exactly one relation and it has a fixed OID."""
    from pgbarrier.backends.pgcatalog import FIXED_OIDS

    out = {}
    for col in tree.find_all(exp.Column):
        if col.table or col.name.lower() != "tableoid":
            continue
        select = col.find_ancestor(exp.Select)
        if select is None:
            continue
        sources = [select.args.get("from_") or select.args.get("from")]
        sources += [j.this for j in select.args.get("joins") or ()]
        tables = [t.this if isinstance(t, exp.From) else t for t in sources if t is not None]
        if len(tables) == 1 and isinstance(tables[0], exp.Table) and \
                isinstance(tables[0].this, exp.Identifier) and \
                tables[0].name.lower() in FIXED_OIDS and \
                folded(tables[0].args.get("db")) in (None, "pg_catalog"):
            out[id(col)] = FIXED_OIDS[tables[0].name.lower()]
    return out


def rewrite_pg_catalog(sql: str, ctx: CatalogContext) -> Rewritten | None:
    """DuckDB SQL for a catalog query, or None when ``sql`` touches no catalog object."""
    tree = parse_single(sql)
    if tree is None:
        quoted = quote_keyword_aliases(sql)
        tree = parse_single(quoted) if quoted is not None else None
        if tree is None:
            named = catalog_relation_in_tokens(sql)
            if named is not None:
                raise CatalogUnparsed(named)
            return None
    ctes = {folded(c.args["alias"].this) or "" for c in tree.find_all(exp.CTE)}
    if not isinstance(tree, (exp.Select, exp.SetOperation, exp.Subquery)):
        named = unemulated_relation(tree, ctes, any_catalog=True) if not isinstance(
            tree, exp.Command) else catalog_relation_in_tokens(sql)
        if named is not None:
            raise FeatureNotSupported(
                f"{_statement_kind(tree, sql)} naming \"{named}\" is not supported on the DuckDB "
                "backend",
                detail="pgbarrier's PostgreSQL catalog on DuckDB answers queries (SELECT) "
                       "only.")
        return None
    for ident in tree.find_all(exp.Identifier):  # PostgreSQL folds unquoted names to lower
        if not ident.quoted:
            ident.set("this", ident.name.lower())
    first = first_select(tree)
    # names and types come from the query as the client wrote it
    names = output_names(first) if first is not None else []
    types = column_types(first) if first is not None else {}
    # a CTE's unaliased columns too: the outer query names them as PostgreSQL does
    # (pgcli's casing query orders by the "count" of a COUNT(1))
    cte_names = [(sel, output_names(sel)) for cte in tree.find_all(exp.CTE)
                 if isinstance(sel := cte.this, exp.Select) and not cte.args["alias"].columns]
    rewriter = _Rewriter(ctx, _pg_class_aliases(tree), _catalog_aliases(tree))
    rewriter.bare_tableoids = _bare_tableoids(tree)
    tree = _post_order(tree, lambda n: rewriter.visit(n, ctes))
    named = unemulated_relation(tree, ctes, any_catalog=False)
    if named is not None:  # never DuckDB's own pg_catalog / information_schema
        raise FeatureNotSupported(
            f"relation \"{named}\" is not supported on the DuckDB backend",
            detail="pgbarrier emulates part of PostgreSQL's catalog on DuckDB; this "
                   "relation is not part of it.")
    if not rewriter.changed:
        return None
    for sel, named_outputs in [(first, names), *cte_names]:
        if sel is None:
            continue
        for i, name in named_outputs:
            sel.expressions[i] = exp.alias_(sel.expressions[i],
                                            exp.to_identifier(name, quoted=True))
    return Rewritten(tree.sql(dialect="duckdb"), types)


def _statement_kind(tree: exp.Expr, sql: str) -> str:
    words = [w for w in leading_words(sql, 6)
             if w not in ("OR", "REPLACE", "TEMP", "TEMPORARY", "UNLOGGED")]
    if words[:1] in (["CREATE"], ["DROP"], ["ALTER"]) and len(words) > 1:
        return f"{words[0]} {words[1]}"
    return words[0] if words else "statement"


def settings_table(rows: list[tuple[Any, ...]]) -> CatalogTable:
    """``pg_settings`` (PostgreSQL 15's columns) over ``(name, setting, description)`` rows."""
    columns = (("name", "TEXT"), ("setting", "TEXT"), ("unit", "TEXT"), ("category", "TEXT"),
               ("short_desc", "TEXT"), ("extra_desc", "TEXT"), ("context", "TEXT"),
               ("vartype", "TEXT"), ("source", "TEXT"), ("min_val", "TEXT"),
               ("max_val", "TEXT"), ("enumvals", "TEXT[]"), ("boot_val", "TEXT"),
               ("reset_val", "TEXT"), ("sourcefile", "TEXT"), ("sourceline", "INTEGER"),
               ("pending_restart", "BOOLEAN"))
    full = [(name, value, None, "pgbarrier", desc, None, "user", "string", "session", None,
             None, None, value, value, None, None, False) for name, value, desc in rows]
    return CatalogTable(columns, full)
