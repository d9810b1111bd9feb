"""PostgreSQL's non-reserved keywords that DuckDB reserves, quoted where they are names.

Of PostgreSQL 15's unreserved and column-name keywords, DuckDB's parser refuses three as
table or column names: ``at``, ``by`` and ``show`` (checked against every such keyword;
the rest work unquoted). Rules this module keeps:

* :func:`quote_keyword_names` returns the text with each of those words that stands as a
  name double-quoted (``CREATE TABLE at (by int)`` -> ``CREATE TABLE "at" ("by" int)``),
  and the text itself (the same object) when there is none. A word is a keyword, left
  alone, in ``AT TIME ZONE`` / ``AT LOCAL``, after ``INCREMENT``, ``OWNED``, ``GENERATED``
  or ``GRANTED`` (``by``; ``ORDER BY`` and its kind are one token), and at the start of a
  statement (``show``). Words in strings, comments and quoted names are never touched
  (sqlglot's tokenizer finds them).
* Cheap: a regular expression decides whether a text can hold such a name at all (``ORDER
  BY`` and the like cannot); only those are tokenized. Answers for texts up to 2,048
  characters are cached.
"""

from __future__ import annotations

import re
from functools import lru_cache

from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from pgbarrier.sql.dialect import PgBarrier

_BY_KEYWORD = frozenset({"ORDER", "GROUP", "PARTITION", "CLUSTER", "DISTRIBUTE", "SORT",
                         "INCREMENT", "OWNED", "GENERATED", "GRANTED"})
_AT_KEYWORD = frozenset({"TIME", "LOCAL"})
_WORD = re.compile(r"(?<![\w$\"])(at|by|show)(?![\w$\"])", re.I)
_PREV = re.compile(r"([A-Za-z_]+)\s*\Z")
_NEXT = re.compile(r"\s*([A-Za-z_]+)")
_STATEMENT_START = re.compile(r"(?:\A|;)\s*\Z")
_CACHED_TEXT = 2048


def _may_hold_names(sql: str) -> bool:
    for m in _WORD.finditer(sql):
        word = m.group(1).lower()
        if word == "by":
            prev = _PREV.search(sql[max(0, m.start() - 24):m.start()])
            if prev is None or prev.group(1).upper() not in _BY_KEYWORD:
                return True
        elif word == "at":
            nxt = _NEXT.match(sql, m.end())
            if nxt is None or nxt.group(1).upper() not in _AT_KEYWORD:
                return True
        elif not _STATEMENT_START.search(sql[max(0, m.start() - 24):m.start()]):
            return True
    return False


def _quoted(sql: str) -> str:
    if not _may_hold_names(sql):
        return sql
    try:
        tokens = PgBarrier().tokenize(sql)
    except TokenError:
        return sql
    spans: list[tuple[int, int]] = []
    for i, tok in enumerate(tokens):
        word = tok.text.lower()
        if word not in ("at", "by", "show") or tok.token_type in (
                TokenType.STRING, TokenType.IDENTIFIER):
            continue
        if sql[tok.start:tok.end + 1].lower() != word:
            continue  # not the word as written (a merged token)
        prev = tokens[i - 1] if i else None
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if word == "by" and prev is not None and prev.text.upper() in _BY_KEYWORD:
            continue
        if word == "at" and nxt is not None and nxt.text.upper() in _AT_KEYWORD:
            continue
        if word == "show" and (prev is None or prev.token_type is TokenType.SEMICOLON):
            continue
        spans.append((tok.start, tok.end + 1))
    if not spans:
        return sql
    out, last = [], 0
    for start, end in spans:
        out += [sql[last:start], '"', sql[start:end].lower(), '"']
        last = end
    out.append(sql[last:])
    return "".join(out)


@lru_cache(maxsize=1024)
def _cached(sql: str) -> str | None:
    quoted = _quoted(sql)
    return None if quoted is sql else quoted  # None: unchanged (the caller's own object)


def quote_keyword_names(sql: str) -> str:
    """``sql`` with PostgreSQL-unreserved names DuckDB reserves quoted (module rules)."""
    if len(sql) > _CACHED_TEXT:
        return _quoted(sql)
    quoted = _cached(sql)
    return sql if quoted is None else quoted
