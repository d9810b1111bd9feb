"""The registry of control statements: which texts are pgbarrier's, and reading them.

Rules this module keeps:

* :data:`STATEMENTS` lists every control statement class, once. Each carries its own
  facts (:mod:`pgbarrier.sql.grammar`): a new statement is its class in one module plus
  one line here; the router, the parser, the executor and the control plane read the
  class, never a list of their own.
* :func:`is_control` is ``True`` exactly for texts (one statement) matching a registered
  shape. The first two characters settle most statements: only first words of some
  shape (``ALTER``, ``CREATE``, ``DROP``, ``FLUSH``, ``REFRESH``, ``SHOW`` today) read
  on, after leading whitespace and comments. Everything else (``ALTER DATABASE d SET x =
  1``, ``CREATE OR REPLACE MATERIALIZED VIEW``, ``SHOW search_path``, ``DROP TABLE t``...)
  is ``False`` and passes through.
* :data:`FIRST_WORDS` are the words a control statement may start with (the router's
  substring pre-check, :mod:`pgbarrier.sql.route`).
* :func:`parse_control` reads one text :func:`is_control` accepted
  (:func:`pgbarrier.sql.statements.parse_control`'s rules), trying the registered
  statements' token readers before the sqlglot dialect.

Cost (CPython 3.11, 2-CPU dev box, same process, best of 5): ``is_control`` ~0.2-0.4 us for
``COMMIT`` or an ``INSERT`` (the first characters settle them, as before), ~3-4 us for ``DROP
TABLE t`` or ``SHOW search_path``, ~6-7 us for ``ALTER DATABASE d PAUSE`` or ``ALTER
MATERIALIZED VIEW s.v AS ...`` (the hand-written checks this replaced: 1-1.5x less); the
shapes are merged into one trie per first word, so a text's words are read once, and the
router caches its answer per text.
"""

from __future__ import annotations

from pgbarrier.sql.classify import SKIPPABLE, skip_space_and_comments, word_at
from pgbarrier.sql.grammar import ControlStatement, Shape, Trie, matches_any, trie
from pgbarrier.sql import statements as st
from pgbarrier.sql import view_options as vo
from pgbarrier.sql import view_suspend as vs

__all__ = ["FIRST_WORDS", "STATEMENTS", "ControlStatement", "is_control", "parse_control"]

STATEMENTS: tuple[type[ControlStatement], ...] = (
    *st.STATEMENTS,
    vs.SuspendView,
    vs.ResumeView,
    vo.ViewOptions,
)

_BY_FIRST: dict[str, list[Shape]] = {}
for _statement in STATEMENTS:
    for _shape in _statement.SHAPES:
        _BY_FIRST.setdefault(_shape[0], []).append(_shape[1:])

FIRST_WORDS: tuple[str, ...] = tuple(sorted(_BY_FIRST))
#: the shapes after each first word, merged (each word of a text is read once)
_TRIES: dict[str, Trie] = {word: trie(rests) for word, rests in _BY_FIRST.items()}

#: first letter (either case) -> the second letters (either case) a first word may have
_SECOND: dict[str, str] = {}
for _word in FIRST_WORDS:
    for _first in (_word[0], _word[0].lower()):
        _SECOND[_first] = _SECOND.get(_first, "") + _word[1] + _word[1].lower()


def is_control(sql: str) -> bool:
    """Whether ``sql`` (one statement) may be a pgbarrier control statement."""
    c = sql[:1]
    i = 0
    if c not in _SECOND:
        if c not in SKIPPABLE or not c:
            return False
        i = skip_space_and_comments(sql, 0)
        c = sql[i : i + 1]
        if c not in _SECOND:
            return False
    if sql[i + 1 : i + 2] not in _SECOND[c]:  # "" (a one-letter statement) reads on: harmless
        return False
    j = word_at(sql, i)
    rests = _TRIES.get(sql[i:j].upper())
    return rests is not None and matches_any(sql, j, rests)


def parse_control(sql: str) -> ControlStatement:
    """One control statement read from ``sql`` (see the module rules)."""
    return st.parse_control(sql, STATEMENTS)
