"""pgbarrier's name for a relation, one rule for both backends.

Rules this module keeps:

* A relation in PostgreSQL's ``public`` schema is named bare (``v``); one in any other
  schema ``schema.v``. Batch-refresh jobs, streaming views, ``SHOW MATERIALIZED VIEWS``
  and ``rw_catalog.rw_batch_refresh_jobs`` use this name; the backends resolve a client's
  name (with its search_path) to it and back.
* :func:`name_parts` reads such a name back: the schema is what comes before the first
  ``.`` (``public`` when there is none). A relation whose own name holds a dot is named
  ambiguously; pgbarrier's backends never create one from a qualified name.
* :func:`in_database` drops a leading database name, as PostgreSQL does with
  ``db.schema.rel`` when ``db`` is the current database; any other database is 0A000
  ``cross-database references are not implemented``. Control statements resolve their view
  names through it, so ``REFRESH MATERIALIZED VIEW dev.s1.v`` in ``dev`` means ``s1.v``.
* :func:`quote_name` quotes each part as an identifier, for SQL text.
* :func:`qualify_relations` binds a query's unqualified relation names as PostgreSQL does
  at ``CREATE VIEW``: each is qualified with the schema the creator's search_path finds
  it in, when that is not ``public``. CTE names and table functions are left alone; a
  text sqlglot cannot parse, or that needs nothing, is returned as it is.
"""

from __future__ import annotations

from collections.abc import Callable

from pgbarrier.errors import FeatureNotSupported

__all__ = ["canonical", "in_database", "name_parts", "qualify_relations", "quote_name"]


def canonical(schema: str, relname: str) -> str:
    """pgbarrier's name of ``schema.relname`` (PostgreSQL's schema names)."""
    return relname if schema == "public" else f"{schema}.{relname}"


def name_parts(name: str) -> tuple[str, str]:
    """(schema, relname) of pgbarrier's name ``name``."""
    schema, dot, rel = name.partition(".")
    return (schema, rel) if dot else ("public", name)


def in_database(name: str, database: str) -> str:
    """``name`` (normalised, dotted) without a leading ``database.`` of a three-part name;
    0A000 when the three-part name is of another database (PostgreSQL's words)."""
    parts = name.split(".")
    if len(parts) != 3:
        return name
    if parts[0] != database:
        raise FeatureNotSupported(f'cross-database references are not implemented: "{name}"')
    rest = parts[1:]
    return rest[1] if rest[0] == "public" else ".".join(rest)


def _quote(ident: str) -> str:
    return '"' + ident.replace('"', '""') + '"'


def quote_name(name: str) -> str:
    """``"schema"."relname"`` (or ``"relname"``) for pgbarrier's name ``name``."""
    schema, dot, rel = name.partition(".")
    return f"{_quote(schema)}.{_quote(rel)}" if dot else _quote(name)


def qualify_relations(query: str, resolve: Callable[[str], tuple[str, str] | None]) -> str:
    """``query`` (PostgreSQL's SQL) with its unqualified relations qualified where
    ``resolve(name)`` (the client's search_path) finds them outside ``public``."""
    import sqlglot
    from sqlglot import exp

    from pgbarrier.sql.statements import normalize_identifier

    try:
        tree = sqlglot.parse_one(query, read="postgres")
    except Exception:  # noqa: BLE001 - sqlglot raises several kinds: the text stays
        return query
    ctes = {normalize_identifier(c.args["alias"].this) for c in tree.find_all(exp.CTE)
            if c.args.get("alias") is not None}
    changed = False
    for table in list(tree.find_all(exp.Table)):
        if table.args.get("db") is not None or not isinstance(table.this, exp.Identifier):
            continue
        name = normalize_identifier(table.this)
        if name in ctes:
            continue
        found = resolve(name)
        if found is not None and found[0] != "public":
            table.set("db", exp.to_identifier(found[0], quoted=True))
            changed = True
    return tree.sql(dialect="postgres") if changed else query
