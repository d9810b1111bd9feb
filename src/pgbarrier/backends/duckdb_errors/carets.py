"""Error positions: DuckDB's caret read, PostgreSQL's found in the statement text.

Rules this module keeps:

* :func:`duckdb_position` reads DuckDB's ``LINE n: ...`` excerpt and its ``^`` caret as a
  1-based character offset in the statement; DuckDB shortens a long line to an excerpt
  with ``...`` at either end, which is found in the line again (no position when it is
  not there).
* The statement is tokenized by sqlglot (PostgreSQL's lexical rules), never by hand;
  :func:`tokens` is cached per text. A text it cannot tokenize has no PostgreSQL
  position (None), never a guessed one.
* :func:`literal_position` is where PostgreSQL points for a string literal's input error:
  the literal itself, when the literal is read as the failing type while the statement is
  parsed (``'abc'::int``, ``CAST('abc' AS int)``, ``1 = 'abc'``, ``VALUES ('abc')``);
  none when the value is converted at run time (``'abc'::text::int``, a column's value),
  as PostgreSQL gives none. Of several literals with the value, the one nearest DuckDB's
  caret.
* A statement longer than :data:`MAX_ANALYSED` characters is not tokenized (sqlglot reads
  about 200 KB a second, and a bulk INSERT's error must not cost seconds more): a literal's
  position is then DuckDB's caret when the caret is on that literal, else none.
* :func:`carried_over` moves a position in the text pgbarrier's dialect translation ran
  to the client's text: the token at it, when the client's text has exactly one such token.
* :func:`end_of_input` is the position of PostgreSQL's ``syntax error at end of input``:
  one past the statement's last character.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from sqlglot.dialects.postgres import Postgres
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

_LINE = re.compile(r"^LINE (\d+): ", re.M)

#: statements longer than this are not tokenized for an error's position
MAX_ANALYSED = 50_000


class Tok(NamedTuple):
    kind: TokenType
    text: str
    start: int  # 0-based offset of the token's first character
    end: int    # 0-based offset one past its last character


def duckdb_position(text: str, sql: str | None) -> int | None:
    """The 1-based offset in ``sql`` of DuckDB's caret in its error ``text``."""
    m = _LINE.search(text)
    if not m or sql is None:
        return None
    rest = text[m.end():].split("\n", 2)
    if len(rest) < 2:
        return None
    excerpt, caret_line = rest[0], rest[1]
    col = caret_line.find("^") - len(m.group(0))
    if col < 0:
        return None
    line_no = int(m.group(1))
    lines = sql.split("\n")
    if line_no > len(lines):
        return None
    line = lines[line_no - 1]
    start = 0
    if excerpt.startswith("..."):
        body = excerpt[3:]
        col -= 3
        if body.endswith("..."):
            body = body[:-3]
        start = line.find(body)
        if start < 0:
            return None
    elif excerpt.endswith("...") and not line.startswith(excerpt[:-3]):
        return None
    return sum(len(ln) + 1 for ln in lines[: line_no - 1]) + start + col + 1


@lru_cache(maxsize=64)
def _tokens(sql: str) -> tuple[Tok, ...] | None:
    if len(sql) > MAX_ANALYSED:
        return None
    try:
        raw = Postgres().tokenize(sql)
    except (TokenError, Exception):  # noqa: BLE001 - a text sqlglot cannot read has no caret
        return None
    return tuple(Tok(t.token_type, t.text, t.start, t.end + 1) for t in raw)


def tokens(sql: str | None) -> tuple[Tok, ...]:
    """``sql``'s tokens (empty when sqlglot cannot tokenize it)."""
    return (_tokens(sql) or ()) if sql else ()


def token_at(sql: str | None, position: int | None) -> int | None:
    """The index in :func:`tokens` of the token starting at 1-based ``position``."""
    if position is None:
        return None
    for i, tok in enumerate(tokens(sql)):
        if tok.start == position - 1:
            return i
        if tok.start > position - 1:
            return None
    return None


_TEXT_TYPES = {"text", "varchar", "char", "character", "bpchar", "name", "string"}


def _cast_to_text(toks: tuple[Tok, ...], i: int) -> bool:
    """Literal ``toks[i]`` is cast to a text type (``'x'::text``, ``CAST('x' AS text)``):
    its value is converted again at run time."""
    if i + 2 < len(toks) and toks[i + 1].kind == TokenType.DCOLON:
        return toks[i + 2].text.lower() in _TEXT_TYPES
    if i >= 2 and toks[i - 1].kind == TokenType.L_PAREN and toks[i - 2].text.upper() == "CAST" \
            and i + 2 < len(toks) and toks[i + 1].kind == TokenType.ALIAS:
        return toks[i + 2].text.lower() in _TEXT_TYPES
    return False


def literal_position(sql: str | None, value: str, near: int | None) -> int | None:
    """PostgreSQL's position of a failing input ``value`` (a string literal's text)."""
    if sql is not None and len(sql) > MAX_ANALYSED:  # not tokenized: DuckDB's caret, if on it
        quoted = "'" + value.replace("'", "''") + "'"
        at = (near or 0) - 1
        return near if near and sql.startswith(quoted, at) else None
    toks = tokens(sql)
    found = [i for i, t in enumerate(toks) if t.kind in (TokenType.STRING, TokenType.NATIONAL_STRING)
             and t.text == value]
    if not found:
        return None
    anchor = (near or 1) - 1
    best = min(found, key=lambda i: abs(toks[i].start - anchor))
    if _cast_to_text(toks, best):
        return None
    return toks[best].start + 1


def literal_cast_type(sql: str | None, position: int | None) -> str | None:
    """The type name written after the literal at ``position`` (``'x'::timestamptz``,
    ``CAST('x' AS timestamptz)``), lower-cased, or None."""
    i = token_at(sql, position)
    if i is None:
        return None
    toks = tokens(sql)
    words: list[str] = []
    if i + 2 < len(toks) and toks[i + 1].kind == TokenType.DCOLON:
        j = i + 2
    elif i >= 2 and toks[i - 2].text.upper() == "CAST" and i + 2 < len(toks) \
            and toks[i + 1].kind == TokenType.ALIAS:
        j = i + 2
    else:
        return None
    while j < len(toks) and toks[j].kind not in (TokenType.R_PAREN, TokenType.COMMA,
                                                  TokenType.DCOLON, TokenType.SEMICOLON,
                                                  TokenType.L_PAREN) and len(words) < 4:
        words.append(toks[j].text.lower())
        j += 1
    return " ".join(words) or None


def end_of_input(sql: str) -> int:
    """PostgreSQL's position of ``syntax error at end of input`` in ``sql``."""
    return len(sql) + 1


def identifier_position(sql: str | None, name: str, near: int | None = None,
                        qualifier: str | None = None) -> int | None:
    """The 1-based position of identifier ``name`` (folded as PostgreSQL folds an
    unquoted one), or of ``qualifier.name`` when ``qualifier`` is given; the occurrence
    nearest ``near``."""
    toks = tokens(sql)
    hits = []
    for i, t in enumerate(toks):
        if _ident(t) != name:
            continue
        if qualifier is not None:
            if i >= 2 and toks[i - 1].kind == TokenType.DOT and _ident(toks[i - 2]) == qualifier:
                hits.append(toks[i - 2].start)
            continue
        hits.append(t.start)
    if not hits:
        return None
    anchor = (near or 1) - 1
    return min(hits, key=lambda s: abs(s - anchor)) + 1


def _ident(t: Tok) -> str | None:
    if t.kind == TokenType.IDENTIFIER:
        return t.text
    if t.kind in (TokenType.STRING, TokenType.NUMBER, TokenType.NATIONAL_STRING):
        return None
    if t.text and (t.text[0].isalpha() or t.text[0] == "_"):
        return t.text.lower()
    return None


def carried_over(run_sql: str | None, position: int | None, client_sql: str) -> int | None:
    """The position in ``client_sql`` of the token at ``position`` of ``run_sql`` (the text
    pgbarrier's dialect translation made of it): the one token of the client's text with
    the same text, else None (a guess would be worse than no caret)."""
    i = token_at(run_sql, position)
    if i is None:
        return None
    tok = tokens(run_sql)[i]
    quoted = tok.kind in (TokenType.STRING, TokenType.IDENTIFIER, TokenType.NATIONAL_STRING)
    same = [t for t in tokens(client_sql) if t.kind == tok.kind and
            (t.text == tok.text if quoted else t.text.lower() == tok.text.lower())]
    return same[0].start + 1 if len(same) == 1 else None
