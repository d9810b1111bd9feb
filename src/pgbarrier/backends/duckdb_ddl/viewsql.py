"""Views that follow a rename, as PostgreSQL's do.

A PostgreSQL view is bound to its relations and columns when it is created: renaming a
table or a column it reads changes nothing about what it shows. A DuckDB view is text,
bound each time it is read, so a rename breaks it. :func:`renamed` rewrites a view's text
so that it means, after the rename, what it meant before. Rules it keeps:

* The view's query is bound first (sqlglot's ``qualify``: every column tied to its
  relation, ``*`` expanded, each output column named), so the rename touches exactly the
  references to the renamed table or column, and the view's own column names stay what
  they were (PostgreSQL keeps them too: ``SELECT *`` over a renamed column still shows the
  old name).
* A view whose text cannot be bound is not rewritten: None, and the caller refuses the
  rename (0A000) rather than break the view.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import traverse_scope

__all__ = ["renamed"]


def renamed(sql: str, view_schema: str,
            columns: tuple[tuple[str, str, tuple[str, ...]], ...],
            table: tuple[str, str], new_table: tuple[str, str] | None = None,
            column: str | None = None, new_column: str | None = None) -> str | None:
    """DuckDB's ``CREATE OR REPLACE VIEW`` for the view whose DuckDB text is ``sql``
    (in schema ``view_schema``), after ``table`` (schema, name) became ``new_table``, or
    its ``column`` became ``new_column``; ``columns``: the relations it may read, as
    (schema, name, columns) before the rename. None when it cannot be rewritten."""
    try:
        tree = sqlglot.parse_one(sql, read="duckdb")
    except Exception:  # noqa: BLE001 - sqlglot raises several kinds
        return None
    if not isinstance(tree, exp.Create) or not isinstance(tree.expression, exp.Query):
        return None
    query = tree.expression
    known = {(s.lower(), n.lower()): (s, n) for s, n, _ in columns}
    ctes = {c.alias_or_name.lower() for c in query.find_all(exp.CTE)}
    for t in query.find_all(exp.Table):
        if t.args.get("db") or not isinstance(t.this, exp.Identifier) or not t.name or \
                t.name.lower() in ctes:
            continue
        for s in (view_schema, "main"):
            if (s.lower(), t.name.lower()) in known:
                t.set("db", exp.to_identifier(known[(s.lower(), t.name.lower())][0]))
                break
    mapping: dict[str, dict[str, dict[str, str]]] = {}
    for s, n, cols in columns:
        mapping.setdefault(s, {})[n] = {c: "UNKNOWN" for c in cols}
    target = (("main" if table[0].lower() == "public" else table[0]).lower(), table[1].lower())
    try:
        query = qualify(query, schema=mapping, dialect="duckdb", quote_identifiers=True,
                        validate_qualify_columns=False)
        sources: set[int] = set()
        for scope in traverse_scope(query):
            for alias, source in scope.sources.items():
                if isinstance(source, exp.Table) and \
                        (source.db.lower(), source.name.lower()) == target:
                    sources.add(id(source))
                    if column is not None:
                        for col in scope.columns:
                            if col.table == alias and col.name.lower() == column.lower():
                                col.set("this", exp.to_identifier(new_column, quoted=True))
        if new_table is not None:
            for t in list(query.find_all(exp.Table)):
                if id(t) in sources:
                    t.set("this", exp.to_identifier(new_table[1], quoted=True))
                    t.set("db", exp.to_identifier(new_table[0], quoted=True))
    except Exception:  # noqa: BLE001 - sqlglot's optimizer on a text it does not expect
        return None
    tree.set("expression", query)
    tree.set("replace", True)
    return tree.sql(dialect="duckdb")
