"""``pg_get_viewdef`` of one view named by its OID: relations qualified as PostgreSQL does.

Rules this module keeps:

* PostgreSQL qualifies a relation in a view's decompiled query with its schema when that
  schema is not on the session's search path (pg_dump runs with an empty one, so every
  name in its dump is qualified and restores whatever the restoring session's path).
  :func:`qualified_body` does the same on the stored text: each table reference without
  a schema that is not a CTE name gets the schema it resolves to, the view's own when a
  relation of that name is there, else ``public``; one already qualified is kept.
* Only the view's stored query is read (``pgb.k_rels``); the text is re-written by
  sqlglot's PostgreSQL generator only when a name needed a schema, otherwise it is
  returned as stored. Text sqlglot cannot parse is returned as stored.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from pgbarrier.backends.pgcatalog import CATALOG_DB
from pgbarrier.sql.catalog_rewrite import folded
from pgbarrier.sql.colnames import parse_single

__all__ = ["qualified_body", "view_definition"]


def qualified_body(body: str, schema_of: dict[str, str], visible: Sequence[str]) -> str:
    """``body`` with each unqualified relation ``r`` written ``schema_of[r].r`` when that
    schema is not in ``visible`` (names missing from ``schema_of`` are kept)."""
    try:
        tree = parse_single(body)
    except (ParseError, TokenError):
        return body
    if tree is None:
        return body
    ctes = {folded(c.args["alias"].this) for c in tree.find_all(exp.CTE)}
    changed = False
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier) or table.args.get("db") is not None:
            continue
        name = folded(table.this)
        schema = schema_of.get(name or "")
        if name in ctes or schema is None or schema in visible:
            continue
        table.set("db", exp.to_identifier(schema))
        changed = True
    return tree.sql(dialect="postgres") if changed else body


def view_definition(cur: duckdb.DuckDBPyConnection, oid: int, visible: Sequence[str]
                    ) -> str | None:
    """The query of the view or materialized view ``oid`` as ``pg_get_viewdef`` gives it
    with ``visible`` on the search path; None when ``oid`` is no view."""
    found = cur.execute(
        f"SELECT {CATALOG_DB}.pgb.view_body(k_viewdef), k_nspname FROM {CATALOG_DB}.pgb.k_rels "
        "WHERE k_oid = ?", [oid]).fetchone()
    if found is None or found[0] is None:
        return None
    body, own = found
    schema_of: dict[str, str] = {}
    for name, nsp in cur.execute(
            f"SELECT k_relname, k_nspname FROM {CATALOG_DB}.pgb.k_rels "
            "WHERE k_nspname IN (?, 'public')", [own]).fetchall():
        if nsp == own or name not in schema_of:
            schema_of[name] = nsp
    return qualified_body(body.strip(), schema_of, visible) + ";"
