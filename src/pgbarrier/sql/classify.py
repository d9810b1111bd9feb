"""The fast path: split a simple-Query string and spot statements that may be pgbarrier's.

No sqlglot here; plain string scanning. Rules this module keeps:

* :func:`split_statements` cuts on ``;`` outside single-quoted strings (``''`` doubling;
  ``E'...'`` strings also honour backslash escapes), double-quoted identifiers (``""``
  doubling), ``--`` line comments, nested ``/* */`` comments and ``$tag$...$tag$``
  dollar quotes (a ``$`` right after an identifier character, as in ``a$b`` or ``$1``,
  starts nothing). A piece is the statement text without its ``;``, trimmed of
  surrounding whitespace (never of comments), with ``offset`` = index of its first
  character in the input. Pieces holding only whitespace and comments are dropped, so
  ``";"`` gives ``[]``. An unterminated quote or comment runs to the end of the input
  (the backend reports it); a sole ``;`` that is the last non-blank character ends the
  statement whatever it sits in (the text before it is the statement either way).
  The only regex is a compiled character-class search that jumps between the characters
  that matter.
* :func:`unterminated_token` finds the first unclosed quote, identifier, comment or
  dollar quote, so a 42601 can be worded as PostgreSQL's lexer words it.
* :func:`leading_words` reads keyword-like words after leading whitespace, comments and
  opening parentheses before a query (PostgreSQL's ``select_with_parens``: ``(SELECT 1)``
  and ``((VALUES (1)) UNION ...)`` are queries, whose first word is their kind; any other
  word in parentheses, ``(COMMIT)``, gives no words).
  A word starts with a letter or ``_`` and goes on over letters, digits, ``_`` and ``$``
  (so a name such as ``db1`` is one word, where a strict ``[A-Za-z_]+`` reading would
  stop inside it); reading stops at the first token that is not a word.
* Whether a statement is pgbarrier's is :func:`pgbarrier.sql.controls.is_control`, which
  matches the shapes each control statement declares (:mod:`pgbarrier.sql.grammar`) with
  this module's scanners (:func:`skip_space_and_comments`, :func:`word_at`,
  :func:`next_name`, :func:`qualified_name`, :func:`at_end`).
* :func:`mentions_rw_catalog` is a case-insensitive substring test; false positives (the
  word in a string or comment) are fine, the rewriter then changes nothing.
* These are the first step of :func:`pgbarrier.sql.route.route`, which turns them into the
  one routing decision per statement text; the relay, the executor and the session read
  that decision, not these checks.

Cost (CPython 3.11 on the 2-CPU dev box, ``timeit`` best of 5 x 200k calls, call overhead
included): ``is_control`` ~130 ns for an ``INSERT`` carrying a 1 KB string and ~200 ns for
``COMMIT`` (the first character settles them); ~210 ns for ``SELECT * FROM t WHERE id =
1``, ``SET`` or ``DELETE`` (the second character settles them: ``S`` and ``D`` also start
ours); ~1.4 us for ``DROP TABLE t`` or ``SHOW search_path`` (two words read); ~2-3 us for
statements that are or resemble ours, ~5 us for ``ALTER MATERIALIZED VIEW s.v AS ...``.
``split_statements``: ~0.65 us / ~0.7 us for those two (no ``;``: one ``str.find`` and a
trim), ~1 us with a trailing ``;``, ~4 us for the 1 KB INSERT followed by ``; SELECT 1;``
(full scan). ``mentions_rw_catalog``: ~0.1 us / ~0.38 us.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

__all__ = [
    "Piece",
    "at_end",
    "leading_words",
    "mentions_rw_catalog",
    "next_name",
    "qualified_name",
    "skip_space_and_comments",
    "split_statements",
    "unterminated_token",
    "word_at",
]


class Piece(NamedTuple):
    """One statement of a simple-Query string: its text and where it starts."""

    text: str
    offset: int


_WS = " \t\n\r\f\v"
#: a statement may start with whitespace or a comment
SKIPPABLE = _SKIPPABLE = frozenset(_WS + "-/")
# A word: a letter or "_", then letters, digits, "_" or "$" (matched at one spot only).
_WORD = re.compile(r"[^\W\d][\w$]*")
_new_piece = tuple.__new__
# Characters that may start something the splitter must step over, or end a statement.
_SPECIAL = re.compile(r"[;'\"$]|--|/\*")


def _is_ident_char(c: str) -> bool:
    return c.isalnum() or c == "_" or c == "$"


def _skip_block_comment(sql: str, i: int) -> int:
    """``sql[i:i+2] == '/*'``: index after the matching ``*/`` (nesting), -1 if none."""
    depth = 0
    while True:
        j = sql.find("/*", i)
        k = sql.find("*/", i)
        if k < 0:
            return -1
        if 0 <= j < k:
            depth += 1
            i = j + 2
        else:
            depth -= 1
            i = k + 2
            if depth == 0:
                return i


def _skip_line_comment(sql: str, i: int) -> int:
    k = sql.find("\n", i)
    return len(sql) if k < 0 else k + 1


def _skip_quoted(sql: str, i: int, quote: str) -> int:
    """``sql[i] == quote``: index after the closing quote (doubling escapes), -1 if none."""
    n = len(sql)
    i += 1
    while True:
        k = sql.find(quote, i)
        if k < 0:
            return -1
        if k + 1 < n and sql[k + 1] == quote:
            i = k + 2
            continue
        return k + 1


def _skip_escape_string(sql: str, i: int) -> int:
    """``sql[i] == "'"`` opening ``E'...'``: backslash and ``''`` escapes; -1 if unclosed."""
    n = len(sql)
    i += 1
    while i < n:
        c = sql[i]
        if c == "\\":
            i += 2
        elif c == "'":
            if i + 1 < n and sql[i + 1] == "'":
                i += 2
            else:
                return i + 1
        else:
            i += 1
    return -1


def _dollar_tag(sql: str, i: int) -> str | None:
    """The ``$tag$`` opening at ``i`` (``sql[i] == '$'``), or ``None``."""
    if i > 0 and _is_ident_char(sql[i - 1]):
        return None
    j = i + 1
    n = len(sql)
    if j < n and (sql[j].isalpha() or sql[j] == "_"):
        j += 1
        while j < n and (sql[j].isalnum() or sql[j] == "_"):
            j += 1
    if j < n and sql[j] == "$":
        return sql[i : j + 1]
    return None


def _skip_space_and_comments(sql: str, i: int, end: int | None = None) -> int:
    """Index of the first character at or after ``i`` outside whitespace and comments."""
    n = len(sql) if end is None else end
    while i < n:
        c = sql[i]
        if c in _WS:
            i += 1
        elif c == "-" and sql.startswith("--", i):
            i = min(_skip_line_comment(sql, i), n)
        elif c == "/" and sql.startswith("/*", i):
            k = _skip_block_comment(sql, i)
            i = n if k < 0 else min(k, n)
        else:
            return i
    return n


def _piece(sql: str, start: int, end: int) -> Piece | None:
    text = sql[start:end]
    body = text.lstrip(_WS)
    if not body:
        return None
    offset = start + len(text) - len(body)
    if body[0] in "-/" and _skip_space_and_comments(sql, offset, end) >= end:
        return None
    return _new_piece(Piece, (body.rstrip(_WS), offset))


_NOUNS = {"'": "quoted string", '"': "quoted identifier", "/": "/* comment", "$": "dollar-quoted string"}


def _scan(sql: str, pieces: list[Piece] | None) -> tuple[str, int] | None:
    """Walk ``sql``; append statements to ``pieces`` (if given); report an unclosed token."""
    start = 0
    i = 0
    n = len(sql)
    search = _SPECIAL.search
    while i < n:
        m = search(sql, i)
        if m is None:
            break
        k = m.start()
        c = sql[k]
        if c == ";":
            if pieces is not None:
                piece = _piece(sql, start, k)
                if piece:
                    pieces.append(piece)
            start = i = k + 1
            continue
        if c == "'":
            if k > 0 and sql[k - 1] in "eE" and (k < 2 or not _is_ident_char(sql[k - 2])):
                i = _skip_escape_string(sql, k)
                if i < 0:
                    k -= 1  # report the E prefix
            else:
                i = _skip_quoted(sql, k, "'")
        elif c == '"':
            i = _skip_quoted(sql, k, '"')
        elif c == "-":
            i = _skip_line_comment(sql, k)
        elif c == "/":
            i = _skip_block_comment(sql, k)
        else:  # "$"
            tag = _dollar_tag(sql, k)
            if tag is None:
                i = k + 1
            else:
                close = sql.find(tag, k + len(tag))
                i = -1 if close < 0 else close + len(tag)
        if i < 0:
            if pieces is None:
                return (_NOUNS[c], k)
            i = n
    if pieces is not None:
        piece = _piece(sql, start, n)
        if piece:
            pieces.append(piece)
    return None


def split_statements(sql: str) -> list[Piece]:
    """Split a simple-Query string into statements (see the module rules)."""
    k = sql.find(";")
    if k < 0 or (sql.find(";", k + 1) < 0 and not sql[k + 1 :].strip(_WS)):
        # No ";", or one as the last character: whatever it sits in, the text before it
        # is the single statement.
        piece = _piece(sql, 0, len(sql) if k < 0 else k)
        return [piece] if piece else []
    pieces: list[Piece] = []
    _scan(sql, pieces)
    return pieces


def unterminated_token(sql: str) -> tuple[str, int] | None:
    """The first unterminated quote or comment as (PostgreSQL's noun for it, index), or None.

    Lets a 42601 be worded as PostgreSQL's lexer words it (``unterminated quoted string``).
    """
    return _scan(sql, None)


def _word_at(sql: str, i: int) -> int:
    """End index of the word starting at ``i`` (``i`` itself if none starts there)."""
    m = _WORD.match(sql, i)
    return m.end() if m else i


#: texts up to this length have their leading words remembered (a statement's words are
#: read by the router, the session, the executor and the backend, again for every run)
_WORDS_CACHED_TEXT = 2048


def leading_words(sql: str, n: int = 3) -> tuple[str, ...]:
    """The first ``n`` words of ``sql``, upper-cased (see the module rules)."""
    if len(sql) <= _WORDS_CACHED_TEXT:
        return _cached_words(sql, n)
    return _words(sql, 0, n)


@lru_cache(maxsize=4096)
def _cached_words(sql: str, n: int) -> tuple[str, ...]:
    return _words(sql, 0, n)


#: what PostgreSQL's grammar takes in parentheses at a statement's start (select_with_parens)
_PARENTHESIZED = frozenset({"SELECT", "VALUES", "TABLE", "WITH"})


def _words(sql: str, i: int, n: int) -> tuple[str, ...]:
    words: list[str] = []
    i = _skip_space_and_comments(sql, i)
    if sql.startswith("(", i):  # a query in parentheses, ``(SELECT 1)``: a SELECT
        while sql.startswith("(", i):
            i = _skip_space_and_comments(sql, i + 1)
        if sql[i:_word_at(sql, i)].upper() not in _PARENTHESIZED:
            return ()  # ``(COMMIT)`` is no statement: no words, as before
    while len(words) < n:
        i = _skip_space_and_comments(sql, i)
        j = _word_at(sql, i)
        if j == i:
            break
        words.append(sql[i:j].upper())
        i = j
    return tuple(words)


def _next_name(sql: str, i: int) -> int:
    """End of a word or double-quoted identifier at ``i`` (``i`` if neither)."""
    if i < len(sql) and sql[i] == '"':
        j = _skip_quoted(sql, i, '"')
        return i if j < 0 else j
    return _word_at(sql, i)


def _at_end(sql: str, i: int) -> bool:
    n = len(sql)
    while True:
        i = _skip_space_and_comments(sql, i)
        if i >= n:
            return True
        if sql[i] != ";":
            return False
        i += 1


def _qualified_name(sql: str, i: int) -> int:
    """End of ``name [. name ...]`` at ``i`` (``i`` if no name starts there)."""
    j = _next_name(sql, i)
    if j == i:
        return i
    while True:
        k = _skip_space_and_comments(sql, j)
        if sql[k : k + 1] != ".":
            return j
        k = _skip_space_and_comments(sql, k + 1)
        end = _next_name(sql, k)
        if end == k:
            return j
        j = end


def _word_after(sql: str, i: int) -> tuple[str, int]:
    """The upper-cased word after whitespace/comments at ``i``, and its end."""
    i = _skip_space_and_comments(sql, i)
    j = _word_at(sql, i)
    return sql[i:j].upper(), j


#: the scanners :mod:`pgbarrier.sql.grammar` matches statement shapes with
skip_space_and_comments = _skip_space_and_comments
word_at = _word_at
next_name = _next_name
qualified_name = _qualified_name
at_end = _at_end


def mentions_rw_catalog(sql: str) -> bool:
    """Case-insensitive: does ``rw_catalog`` occur anywhere in ``sql``?"""
    if "rw_catalog" in sql:
        return True
    if "_" not in sql:
        return False
    return "rw_catalog" in sql.lower()
