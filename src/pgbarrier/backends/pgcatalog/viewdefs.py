"""``pg_get_viewdef`` of one view named by its OID: relations qualified as PostgreSQL does.

Rules this module keeps:

* PostgreSQL qualifies a relation in a view's decompiled query with its schema when that
  schema is not on the session's search path (pg_dump runs with an empty one, so every
  name in its dump is qualified and restores whatever the restoring session's path).
  :func:`qualified_body` does the same on the stored text: each table reference without
  a schema that is not a CTE name gets the schema it resolves to, the view's own when a
  relation of that name is there, else ``public``; one already qualified is kept.
* Only the view's stored query is read (``pgb.k_rels``). A DuckDB view's (a plain or a
  streaming view: DuckDB keeps its ``CREATE VIEW``, in DuckDB's SQL after pgbarrier's
  translation, e.g. ``count_star()``) is always written out by sqlglot's PostgreSQL
  generator, so that PostgreSQL can read it back; a batch view's query is the client's
  PostgreSQL text and is re-written only when a name needed a schema. Text sqlglot cannot
  parse is returned as stored.
"""

from __future__ import annotations

from collections.abc import Sequence

import duckdb
import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, TokenError

from pgbarrier.backends.pgcatalog import CATALOG_DB
from pgbarrier.sql.catalog_rewrite import folded
from pgbarrier.sql.colnames import parse_single

__all__ = ["qualified_body", "view_definition"]


def qualified_body(body: str, schema_of: dict[str, str], visible: Sequence[str],
                   duckdb_sql: bool = False) -> str:
    """``body`` with each unqualified relation ``r`` written ``schema_of[r].r`` when that
    schema is not in ``visible`` (names missing from ``schema_of`` are kept); ``duckdb_sql``
    says it is DuckDB's SQL, to be written as PostgreSQL's."""
    try:
        tree = sqlglot.parse_one(body, read="duckdb") if duckdb_sql else parse_single(body)
    except (ParseError, TokenError):
        return body
    if tree is None:
        return body
    if duckdb_sql:  # DuckDB writes count(*) as count_star(), which sqlglot keeps
        tree = tree.transform(lambda n: exp.Count(this=exp.Star()) if isinstance(
            n, exp.Anonymous) and n.name.lower() == "count_star" and not n.expressions else n)
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
    return tree.sql(dialect="postgres") if changed or duckdb_sql else body


def view_definition(cur: duckdb.DuckDBPyConnection, oid: int, visible: Sequence[str]
                    ) -> str | None:
    """The query of the view or materialized view ``oid`` as ``pg_get_viewdef`` gives it
    with ``visible`` on the search path; None when ``oid`` is no view."""
    found = cur.execute(
        f"SELECT {CATALOG_DB}.pgb.view_body(k_viewdef), k_nspname, "
        f"regexp_matches(k_viewdef, '^\\s*CREATE\\s', 'i') FROM {CATALOG_DB}.pgb.k_rels "
        "WHERE k_oid = ?", [oid]).fetchone()
    if found is None or found[0] is None:
        return None
    body, own, duckdb_sql = found
    schema_of: dict[str, str] = {}
    for name, nsp in cur.execute(
            f"SELECT k_relname, k_nspname FROM {CATALOG_DB}.pgb.k_rels "
            "WHERE k_nspname IN (?, 'public')", [own]).fetchall():
        if nsp == own or name not in schema_of:
            schema_of[name] = nsp
    return qualified_body(body.strip(), schema_of, visible, duckdb_sql) + ";"
