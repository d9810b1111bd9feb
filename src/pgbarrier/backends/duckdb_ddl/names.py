"""Object names in DDL statements: read from the client's text, found in a snapshot.

Rules this module keeps:

* :func:`tokens` reads a statement with sqlglot's PostgreSQL tokenizer (quoted names
  keep their case, unquoted ones fold to lower case, as PostgreSQL's scanner does);
  :func:`read_name` reads ``name`` or ``schema.name`` from a token position.
* :func:`find` resolves a name as PostgreSQL does for a relation: a qualified one in its
  schema (``public`` is DuckDB's ``main``, ``pg_temp`` the session's temporary objects),
  an unqualified one in ``pg_temp`` first, then each schema of the search_path.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import Token, TokenType

from pgbarrier.backends.duckdb_ddl.objects import TEMP, Index, Rel, Snapshot
from pgbarrier.sql.identifiers import truncate_identifier

__all__ = ["Name", "find", "find_index", "read_name", "tokens", "word"]

_TOKENIZER = Postgres.Tokenizer()


def tokens(sql: str) -> list[Token]:
    return [t for t in _TOKENIZER.tokenize(sql) if t.token_type != TokenType.SEMICOLON]


def word(tok: Token) -> str:
    """A keyword's upper-case text ("" for a quoted identifier)."""
    return "" if tok.token_type == TokenType.IDENTIFIER else tok.text.upper()


@dataclass(frozen=True)
class Name:
    schema: str | None  # as written (PostgreSQL's name), None when unqualified
    name: str
    start: int          # 0-based offset of its first character in the statement

    def __str__(self) -> str:
        return self.name if self.schema is None else f"{self.schema}.{self.name}"


def _ident(tok: Token) -> str | None:
    if tok.token_type == TokenType.IDENTIFIER:
        return truncate_identifier(tok.text)
    if tok.token_type in (TokenType.VAR,) or tok.text.isidentifier():
        return truncate_identifier(tok.text.lower())
    return None


def read_name(toks: list[Token], i: int) -> tuple[Name, int] | None:
    """The (possibly qualified) name at ``toks[i]`` and the index after it."""
    parts: list[str] = []
    start = toks[i].start if i < len(toks) else 0
    while i < len(toks):
        part = _ident(toks[i])
        if part is None:
            return None
        parts.append(part)
        i += 1
        if i < len(toks) and toks[i].token_type == TokenType.DOT:
            i += 1
            continue
        break
    if not parts or len(parts) > 3:
        return None
    if len(parts) == 3:
        parts = parts[1:]  # database.schema.name: the database is the session's own
    return Name(parts[0] if len(parts) == 2 else None, parts[-1], start), i


def duck_schema(schema: str) -> str:
    if schema == "public":
        return "main"
    return TEMP if schema.startswith("pg_temp") else schema


def find(snap: Snapshot, name: Name, path: tuple[str, ...]) -> Rel | None:
    """The relation (table, view, materialized view, sequence) ``name`` means."""
    if name.schema is not None:
        return snap.find(duck_schema(name.schema), name.name)
    for schema in (TEMP, *path):
        found = snap.find(duck_schema(schema), name.name)
        if found is not None:
            return found
    return None


def find_index(snap: Snapshot, name: Name, path: tuple[str, ...]) -> Index | None:
    schemas = [duck_schema(name.schema)] if name.schema is not None else \
        [TEMP, *(duck_schema(s) for s in path)]
    for schema in schemas:
        for index in snap.indexes:
            if index.schema == schema and index.name.lower() == name.name.lower():
                return index
    return None


def schema_exists(snap: Snapshot, schema: str) -> bool:
    return schema.startswith("pg_temp") or schema == "pg_catalog" or \
        duck_schema(schema) in snap.schemas
