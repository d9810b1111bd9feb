"""PostgreSQL's ``public`` schema as a qualifier, in any statement, for a backend that calls
it something else (DuckDB's ``main``).

Rules this module keeps:

* :func:`may_name_public` is the cheap gate: a case-insensitive substring test for
  ``public``. Only SQL that passes it is tokenized (sqlglot's tokenizer, pgbarrier's
  dialect), and :func:`map_public` is cached by statement text (up to 16 KB of text).
* A qualifier is ``public`` unquoted in any letter case, or quoted exactly ``"public"``
  (PostgreSQL folds the first, keeps the second), followed by ``.``:

  - the first part of a dotted name (``public.t``, ``public.t.c``, ``public.f(x)``,
    ``x::public.mytype``) becomes ``main``;
  - the second part of a name of three or more parts whose first part is the session's
    database (``db.public.t``, ``db.public.t.c``) drops the database: ``main.t``. Another
    database's name is left as written and reported (:attr:`Mapped.cross_database`): the
    backend refuses it as PostgreSQL does.

  Nothing else changes: string literals, comments, other identifiers and all the
  whitespace are the client's text byte for byte, so DuckDB's error positions map back
  exactly (:meth:`Mapped.client_position`).
* Exception (the one ambiguity of a token-level rewrite): when the statement also names
  ``public`` on its own (``FROM public``, ``AS public``: a relation or alias called
  ``public``), a two-part ``public.x`` might be that relation's column, so two-part names
  are left alone; longer names are still schema-qualified.
* Statements the tokenizer keeps as raw text after their first word (``EXPLAIN``,
  ``PREPARE``...) are tokenized again from there. A ``DO`` body is a dollar-quoted string,
  left alone. SQL the tokenizer refuses is left unchanged.
* :func:`schema_command` recognises ``CREATE SCHEMA [IF NOT EXISTS] public ...`` and
  ``DROP SCHEMA [IF EXISTS] ... public ...``, which name the schema itself and are the
  backend's to answer.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from pgbarrier.sql.dialect import PgBarrier

__all__ = ["Mapped", "may_name_public", "map_public", "schema_command"]

_DIALECT = PgBarrier()


def may_name_public(sql: str) -> bool:
    return "public" in sql.lower()


@dataclass(frozen=True)
class Mapped:
    """The statement to run, and where its text differs from the client's."""

    sql: str
    #: per substitution, in order: (start, end) in :attr:`sql`, (start, end) in the client's
    #: text (0-based, end exclusive)
    spans: tuple[tuple[int, int, int, int], ...]
    #: the first name in another database's ``public`` (``other.public.t``) and its 1-based
    #: position in the client's text: PostgreSQL refuses cross-database references
    cross_database: tuple[str, int] | None = None

    def client_position(self, position: int | None) -> int | None:
        """A 1-based position in :attr:`sql` as a position in the client's text (a position
        inside a substituted ``main`` is the start of the client's ``public``)."""
        if position is None:
            return None
        q = position - 1
        i = bisect_right([s[0] for s in self.spans], q) - 1
        if i < 0:
            return position
        new_start, new_end, old_start, old_end = self.spans[i]
        return (old_start if q < new_end else q - new_end + old_end) + 1


def _is_public(sql: str, tok: Token) -> bool:
    raw = sql[tok.start:tok.end + 1]
    if tok.token_type == TokenType.IDENTIFIER:
        return raw == '"public"' and (tok.start == 0 or sql[tok.start - 1] != "&")
    return tok.token_type == TokenType.VAR and raw.lower() == "public"


def _is_name(tok: Token) -> bool:
    return tok.token_type in (TokenType.VAR, TokenType.IDENTIFIER) or tok.text.isidentifier()


def _folded(sql: str, tok: Token) -> str:
    return tok.text if tok.token_type == TokenType.IDENTIFIER else tok.text.lower()


def _edits(sql: str, offset: int, database: str, foreign: list[tuple[int, int]]
           ) -> list[tuple[int, int]] | None:
    """(start, end) spans of ``sql[offset:]`` (absolute, end exclusive) to become ``main``;
    the spans of names in another database's ``public`` are added to ``foreign``. None
    when the tokenizer refuses the text."""
    try:
        tokens = _DIALECT.tokenize(sql[offset:])
    except TokenError:
        return None
    edits: list[tuple[int, int]] = []
    n = len(tokens)
    dot = TokenType.DOT

    def kind(i: int) -> TokenType | None:
        return tokens[i].token_type if 0 <= i < n else None

    text = sql[offset:]
    standalone = any(_is_public(text, t) and kind(i - 1) != dot and kind(i + 1) != dot
                     for i, t in enumerate(tokens))
    for i, tok in enumerate(tokens):
        if tok.token_type == TokenType.COMMAND and kind(i + 1) == TokenType.STRING:
            # the rest is one raw-text token (its start is not kept): tokenized again
            at = sql.find(tokens[i + 1].text, offset + tok.end + 1)
            if at >= 0:
                edits += _edits(sql, at, database, foreign) or []
            break
        if not _is_public(text, tok) or kind(i + 1) != dot or i + 2 >= n:
            continue
        if kind(i - 1) != dot:  # first part: public.t, public.t.c
            if standalone and kind(i + 3) != dot:
                continue
            edits.append((offset + tok.start, offset + tok.end + 1))
        elif i >= 2 and kind(i - 3) != dot and _is_name(tokens[i - 2]):  # db.public.t
            if _folded(text, tokens[i - 2]) == database:
                edits.append((offset + tokens[i - 2].start, offset + tok.end + 1))
            else:  # another database's: the span of the whole name, for the error
                last = i + 2
                while kind(last + 1) == dot and last + 2 < n:
                    last += 2
                foreign.append((offset + tokens[i - 2].start, offset + tokens[last].end + 1))
    return edits


#: longer statements (bulk INSERTs) are tokenized each time rather than kept in the cache
_CACHED_LENGTH = 16_384


def map_public(sql: str, database: str) -> Mapped | None:
    """``sql`` with ``public`` qualifiers as ``main`` (see the module rules); None when it
    has none."""
    if not may_name_public(sql):
        return None
    return _cached(sql, database) if len(sql) <= _CACHED_LENGTH else _map(sql, database)


@lru_cache(maxsize=1024)
def _cached(sql: str, database: str) -> Mapped | None:
    return _map(sql, database)


#: the word public, quoted or not (a candidate: the tokens say what it is)
_WORD = re.compile(r'(?i)(?<![\w$])public(?![\w$])')
#: text tokenized after the last candidate (its dotted name's other parts)
_MARGIN = 512


def _map(sql: str, database: str) -> Mapped | None:
    last = None
    for last in _WORD.finditer(sql):
        pass
    if last is None:
        return None
    foreign: list[tuple[int, int]] = []
    cut = last.end() + _MARGIN
    # what a token is depends only on the text before it: a long statement is tokenized up
    # to its last candidate (a bulk INSERT INTO public.t VALUES ... costs its first line)
    edits = _edits(sql[:cut], 0, database, foreign) if cut < len(sql) else None
    if edits is None:  # short, or the prefix ends inside a string: all of it
        foreign = []
        edits = _edits(sql, 0, database, foreign)
    if not edits and not foreign:  # (None: SQL the tokenizer refuses runs unchanged)
        return None
    out: list[str] = []
    spans: list[tuple[int, int, int, int]] = []
    at = length = 0
    for start, end in edits:
        out.append(sql[at:start])
        length += start - at
        out.append("main")
        spans.append((length, length + 4, start, end))
        length += 4
        at = end
    out.append(sql[at:])
    cross = (sql[foreign[0][0]:foreign[0][1]], foreign[0][0] + 1) if foreign else None
    return Mapped("".join(out), tuple(spans), cross)


def schema_command(sql: str) -> tuple[str, bool] | None:
    """``("CREATE", if_not_exists)`` for ``CREATE SCHEMA [IF NOT EXISTS] public``,
    ``("DROP", if_exists)`` for a ``DROP SCHEMA`` naming ``public``; else None."""
    if not may_name_public(sql):
        return None
    try:
        tokens = _DIALECT.tokenize(sql)
    except TokenError:
        return None
    words = [t.text.upper() for t in tokens[:6]]
    if words[:2] == ["CREATE", "SCHEMA"]:
        guarded = words[2:5] == ["IF", "NOT", "EXISTS"]
        name = tokens[5] if guarded else tokens[2] if len(tokens) > 2 else None
        if name is not None and _is_public(sql, name) and \
                (len(tokens) <= (6 if guarded else 3) or tokens[6 if guarded else 3].token_type
                 != TokenType.DOT):
            return "CREATE", guarded
        return None
    if words[:2] == ["DROP", "SCHEMA"]:
        guarded = words[2:4] == ["IF", "EXISTS"]
        names = tokens[4 if guarded else 2:]
        if any(_is_public(sql, t) for t in names
               if t.token_type in (TokenType.VAR, TokenType.IDENTIFIER)):
            return "DROP", guarded
    return None
