"""What every control statement declares about itself, and the word shapes that spot one.

Rules this module keeps:

* A control statement is one class (a frozen dataclass deriving :class:`ControlStatement`)
  that carries its own facts as class attributes, so a statement is added in one place:

  - ``SHAPES``: the word shapes of texts that may be this statement (:func:`matches`).
    A text matching any registered statement's shape is routed to the control plane, and
    the parser then has the last word (what looks like ours but does not parse is 42601,
    never passed through);
  - ``TAG``: the command named in errors (``ALTER DATABASE cannot run inside a
    transaction block``);
  - ``IN_TRANSACTION``: whether it may run inside a transaction block (else 25001);
  - ``DESCRIBE``: its row shape as ``(name, type oid)`` pairs, None when it returns no rows;
  - :meth:`ControlStatement.parse_tokens`: a statement that reads itself from the tokens
    returns an instance (or raises 42601), None when the text is not it; statements left
    to the sqlglot dialect keep the default (None) and are read by
    :mod:`pgbarrier.sql.statements`;
  - :meth:`ControlStatement.run` and :meth:`ControlStatement.passes_through`: what the
    control plane does with it (the plane is passed in; this package imports no other).

* The registry is :data:`pgbarrier.sql.controls.STATEMENTS`: one line per statement.
* A shape is a tuple of items matched in order from the text's first word: an
  upper-case word (matched case-insensitively against an unquoted word), :data:`NAME` (a
  word or double-quoted identifier), :data:`QNAME` (names joined by ``.``), :data:`WORD`
  (any one word), :data:`END` (nothing left but whitespace, comments or ``;``) and
  punctuation such as ``"("``, matched as written.
  Whitespace and comments may come between items. Text after the last item is not read
  (``FLUSH x`` matches ``("FLUSH",)``: the parser reports the rest).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pgbarrier.sql.classify import (
    at_end,
    next_name,
    qualified_name,
    skip_space_and_comments,
    word_at,
)

__all__ = ["END", "NAME", "QNAME", "WORD", "ControlStatement", "Shape", "Trie", "matches",
           "matches_any", "trie"]

NAME = object()
QNAME = object()
WORD = object()
END = object()

Shape = tuple[Any, ...]


class ControlStatement:
    """Base of every control statement; see the module rules for the facts it carries."""

    SHAPES: ClassVar[tuple[Shape, ...]] = ()
    TAG: ClassVar[str] = ""
    IN_TRANSACTION: ClassVar[bool] = False
    DESCRIBE: ClassVar[tuple[tuple[str, int], ...] | None] = None

    @classmethod
    def parse_tokens(cls, blame: Any) -> ControlStatement | None:
        """This statement read from ``blame.tokens`` (see :mod:`pgbarrier.sql.statements`),
        or None when the text is not this statement."""
        return None

    def passes_through(self, plane: Any, info: Any, session: Any) -> bool:
        """Upstream: whether the text is PostgreSQL's own, for the caller to relay."""
        return False

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        """Run on the control plane ``plane`` for session ``info``; a ``Result``."""
        raise NotImplementedError(type(self).__name__)


def matches(sql: str, i: int, shape: Shape) -> bool:
    """Whether ``sql`` from index ``i`` has the words of ``shape`` (see the module rules)."""
    for item in shape:
        i = skip_space_and_comments(sql, i)
        if item is END:
            return at_end(sql, i)
        if item is NAME:
            j = next_name(sql, i)
        elif item is QNAME:
            j = qualified_name(sql, i)
        elif item is not WORD and not item[0].isalpha():  # punctuation, as written
            j = i + len(item) if sql.startswith(item, i) else i
        else:
            j = word_at(sql, i)
            if j != i and item is not WORD and sql[i:j].upper() != item:
                return False
        if j == i:
            return False
        i = j
    return True


#: shapes merged on their common leading items: item -> the trie after it; a key of
#: ``None`` marks a shape that ends there
Trie = dict[Any, Any]


def trie(shapes: list[Shape]) -> Trie:
    """The shapes as one trie, so a text's words are read once whatever the shape count."""
    root: Trie = {}
    for shape in shapes:
        node = root
        for item in shape:
            node = node.setdefault(item, {})
        node[None] = True
    return root


def matches_any(sql: str, i: int, node: Trie) -> bool:
    """Whether ``sql`` from ``i`` has the words of any shape in ``node`` (:func:`trie`)."""
    if None in node:
        return True
    i = skip_space_and_comments(sql, i)
    j = word_at(sql, i)
    if j != i:
        child = node.get(sql[i:j].upper())
        if child is not None and matches_any(sql, j, child):
            return True
    for item, child in node.items():
        if item is None or (isinstance(item, str) and item[0].isalpha()):
            continue  # words were looked up above
        if item is WORD:
            if j != i and matches_any(sql, j, child):
                return True
        elif item is END:
            if at_end(sql, i):
                return True
        else:
            k = (next_name(sql, i) if item is NAME else qualified_name(sql, i)
                 if item is QNAME else i + len(item) if sql.startswith(item, i) else i)
            if k != i and matches_any(sql, k, child):
                return True
    return False
