"""Catalog queries the rewrite cannot take: found, so that they never run on DuckDB's own
``pg_catalog`` / ``information_schema`` (which answer with DuckDB's names and OIDs).

Rules this module keeps:

* A statement names a catalog relation when a table reference is ``pg_catalog.<r>`` or
  ``information_schema.<r>``, or a bare name (no CTE of that name) of a relation
  pgbarrier emulates (:data:`pgbarrier.backends.pgcatalog.RELATIONS`) or DuckDB's own
  catalog has (:data:`DUCKDB_OWN`). On the AST that is an ``exp.Table``; on text sqlglot
  cannot parse it is read from the tokens (:func:`catalog_relation_in_tokens`): a
  qualified name of a known relation, or any qualified or bare one right after ``FROM``,
  ``JOIN``, ``INTO``, ``UPDATE`` or ``TABLE``; never a function call (``pg_catalog.f(``)
  or a type (``::pg_catalog.int4``).
* :func:`quote_keyword_aliases` makes PostgreSQL's keyword column labels parse: ``expr
  AS select`` (PostgreSQL takes any keyword after ``AS``; sqlglot does not) becomes
  ``expr AS "select"`` when the next token ends the label (``,``, ``FROM``, end...).
* :class:`CatalogUnparsed` says sqlglot could not parse a statement that names a catalog
  relation; the backend decides whether that is PostgreSQL's 42601 (its own parser
  refuses it too) or 0A000.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from pgbarrier.backends.pgcatalog import CATALOG_DB, RELATIONS
from pgbarrier.sql.catalog_rewrite import folded
from pgbarrier.sql.dialect import PgBarrier

__all__ = ["CatalogUnparsed", "DUCKDB_OWN", "catalog_relation_in_tokens",
           "quote_keyword_aliases", "unemulated_relation"]

#: relations of DuckDB's own catalog schemas (DuckDB 1.x/2.x) that pgbarrier does not
#: emulate: a bare name resolves to them when no user relation has it
DUCKDB_OWN = {
    "pg_catalog": frozenset({"pg_prepared_statements", "pg_sequences"}),
    "information_schema": frozenset({"character_sets", "check_constraints",
                                     "constraint_column_usage", "constraint_table_usage",
                                     "referential_constraints"}),
}
_SCHEMAS = ("pg_catalog", "information_schema")

_DIALECT = PgBarrier()
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*\Z")
#: tokens that end a column label after ``AS``
_LABEL_END = frozenset({TokenType.COMMA, TokenType.FROM, TokenType.SEMICOLON, TokenType.WHERE,
                        TokenType.GROUP_BY, TokenType.ORDER_BY, TokenType.LIMIT,
                        TokenType.UNION, TokenType.EXCEPT, TokenType.INTERSECT,
                        TokenType.HAVING, TokenType.WINDOW, TokenType.INTO})
_NAMES = (TokenType.VAR, TokenType.IDENTIFIER)
#: tokens after which a name is a relation
_RELATION_BEFORE = frozenset({TokenType.FROM, TokenType.JOIN, TokenType.INTO,
                              TokenType.UPDATE, TokenType.TABLE})


class CatalogUnparsed(Exception):
    """sqlglot cannot parse a statement that names catalog relation ``relation``."""

    def __init__(self, relation: str) -> None:
        super().__init__(relation)
        self.relation = relation


def _known(schema: str, name: str) -> bool:
    return name in RELATIONS.get(schema, ()) or name in DUCKDB_OWN.get(schema, ())


def _tokens(sql: str) -> list[Token] | None:
    try:
        return _DIALECT.tokenize(sql)
    except TokenError:
        return None


def _name(tok: Token) -> str:
    return tok.text if tok.token_type == TokenType.IDENTIFIER else tok.text.lower()


def catalog_relation_in_tokens(sql: str) -> str | None:
    """The first catalog relation ``sql`` names (``pg_catalog.pg_class``), read from its
    tokens; None if none."""
    tokens = _tokens(sql)
    if tokens is None:
        return None
    n = len(tokens)

    def kind(i: int) -> TokenType | None:
        return tokens[i].token_type if 0 <= i < n else None

    for i, tok in enumerate(tokens):
        if tok.token_type not in _NAMES:
            continue
        name = _name(tok)
        after = kind(i + 1)
        if name in _SCHEMAS and after == TokenType.DOT and kind(i + 2) in _NAMES and \
                kind(i + 3) not in (TokenType.L_PAREN, TokenType.DOT) and \
                kind(i - 1) not in (TokenType.DCOLON, TokenType.DOT):
            rel = _name(tokens[i + 2])
            if _known(name, rel) or kind(i - 1) in _RELATION_BEFORE:
                return f"{name}.{rel}"
        elif kind(i - 1) in _RELATION_BEFORE and after not in (TokenType.DOT, TokenType.L_PAREN) \
                and _known("pg_catalog", name):
            return f"pg_catalog.{name}"
    for i, tok in enumerate(tokens):  # EXPLAIN, PREPARE...: the rest is raw text
        if tok.token_type == TokenType.COMMAND and kind(i + 1) == TokenType.STRING:
            return catalog_relation_in_tokens(tokens[i + 1].text)
    return None


def quote_keyword_aliases(sql: str) -> str | None:
    """``sql`` with keyword column labels after ``AS`` double-quoted (lower case, as
    PostgreSQL folds them); None when there is none."""
    tokens = _tokens(sql)
    if tokens is None:
        return None
    out: list[str] = []
    at = 0
    for i, tok in enumerate(tokens):
        if i == 0 or tokens[i - 1].token_type != TokenType.ALIAS or tok.token_type in _NAMES:
            continue
        raw = sql[tok.start:tok.end + 1]
        following = tokens[i + 1].token_type if i + 1 < len(tokens) else None
        if not _WORD.match(raw) or (following is not None and following not in _LABEL_END):
            continue
        out.append(sql[at:tok.start])
        out.append(f'"{raw.lower()}"')
        at = tok.end + 1
    if not out:
        return None
    out.append(sql[at:])
    return "".join(out)


def unemulated_relation(tree: exp.Expr, ctes: set[str], any_catalog: bool) -> str | None:
    """The first catalog relation ``tree`` references (``any_catalog``), or only the first
    one that is not pgbarrier's emulation (left as the rewrite found it); None if none."""
    for table in tree.find_all(exp.Table):
        if not isinstance(table.this, exp.Identifier):
            continue  # a table function: pg_catalog.f() drops its qualifier in the rewrite
        if folded(table.args.get("catalog")) == CATALOG_DB:
            continue
        schema = folded(table.args.get("db"))
        name = folded(table.this) or ""
        if schema in _SCHEMAS:
            if any_catalog or name not in RELATIONS[schema]:
                return f"{schema}.{name}"
        elif schema is None and name not in ctes and (
                name in DUCKDB_OWN["pg_catalog"] or (any_catalog and _known("pg_catalog", name))):
            return f"pg_catalog.{name}"
    return None
