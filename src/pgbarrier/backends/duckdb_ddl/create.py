"""``CREATE TABLE`` / ``CREATE VIEW`` refusals PostgreSQL makes and DuckDB does not.

DuckDB renames a repeated output column (``SELECT 1 AS a, 2 AS a`` gives ``a`` and
``a_1``) and answers a repeated column definition in its own words. Rules this module
keeps:

* A table's column names (its definitions, ``CREATE TABLE ... AS``'s column list or
  query) and a view's (its column list or query) must be unique, as PostgreSQL names them
  (:func:`pgbarrier.sql.colnames.postgres_names`: ``?column?`` for an unnamed
  expression): else ``42701 column "a" specified more than once``.
* Nothing else is decided here: the statement runs on DuckDB as written.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from pgbarrier.errors import PgError
from pgbarrier.sql.colnames import duplicate_column, postgres_names

__all__ = ["check_create"]


def _ident(node: exp.Expr) -> str | None:
    if isinstance(node, exp.ColumnDef):
        node = node.this
    if isinstance(node, exp.Column):
        node = node.this
    if isinstance(node, exp.Identifier):
        return node.name if node.quoted else node.name.lower()
    return None


def check_create(sql: str) -> None:
    """Raise PostgreSQL's 42701 when a CREATE TABLE / VIEW names a column twice."""
    try:
        tree = sqlglot.parse_one(sql, read="postgres")
    except Exception:  # noqa: BLE001 - DuckDB's parser answers what sqlglot cannot read
        return
    if not isinstance(tree, exp.Create) or tree.kind not in ("TABLE", "VIEW"):
        return
    target = tree.this
    names: list[str] | None = None
    if isinstance(target, exp.Schema) and target.expressions:
        listed = [_ident(e) for e in target.expressions if not isinstance(e, exp.Constraint)
                  and (isinstance(e, exp.ColumnDef) or isinstance(e, (exp.Identifier,
                                                                       exp.Column)))]
        names = [n for n in listed if n is not None]
    query = tree.expression
    if names is None and isinstance(query, exp.Query):
        names = list(postgres_names(query.sql(dialect="postgres"),
                                    len(query.selects)) or ())
    found = duplicate_column(names or ())
    if found is not None:
        raise found
