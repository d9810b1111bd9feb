"""``ALTER MATERIALIZED VIEW v SET (option = value [, ...])`` and ``... RESET (option [,
...])``: changing a batch-refresh view's schedule (issue 29, item 3).

Rules this module keeps (the grammar; what they do is :mod:`pgbarrier.view_control`):

* Read from the tokens: ``ALTER MATERIALIZED VIEW`` then a (qualified) name, named as
  pgbarrier names views, then ``SET (`` or ``RESET (``, a comma-separated list and ``)``.
  In ``SET`` each item is ``key = value`` (``key`` a dotted name such as
  ``refresh.interval.sec``, lower-cased unless quoted; ``value`` the text of the tokens up
  to the next ``,`` or ``)``, a string literal without its quotes); in ``RESET`` each item is
  a key. Keys are kept in order, as written.
* The statement is PostgreSQL's too (storage parameters of its own materialized views):
  when the name is not one of pgbarrier's views the text is relayed unchanged upstream
  (:meth:`ViewOptions.passes_through`), whatever its list holds. So a list this module cannot
  read is not an error here: ``bad_at`` keeps the position of its first token out of
  place, and the control plane answers 42601 there only for pgbarrier's own views.
* Not allowed inside a transaction block (25001); the command tag is ``ALTER MATERIALIZED
  VIEW``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot.tokens import TokenType

from pgbarrier.sql.grammar import QNAME, ControlStatement
from pgbarrier.sql.statements import _NAME_TOKENS, _ident_text, _is_word
from pgbarrier.sql.view_suspend import view_name_end

__all__ = ["ViewOptions"]

_HEAD = ("ALTER", "MATERIALIZED", "VIEW")


@dataclass(frozen=True)
class ViewOptions(ControlStatement):
    """``ALTER MATERIALIZED VIEW v SET (k = v, ...)`` (``reset`` False) or ``RESET (k, ...)``:
    ``options`` are (key, value) pairs (value None in a RESET)."""

    SHAPES = ((*_HEAD, QNAME, "SET", "("), (*_HEAD, QNAME, "RESET", "("))
    TAG = "ALTER MATERIALIZED VIEW"

    name: str
    reset: bool
    options: tuple[tuple[str, str | None], ...] = ()
    #: 1-based position of the first token this module could not read (None: all read),
    #: and that token's text (None: the end of input)
    bad_at: int | None = None
    bad_near: str | None = None
    #: 1-based position of each option's key, in order
    positions: tuple[int, ...] = ()

    @classmethod
    def parse_tokens(cls, blame: Any) -> ViewOptions | None:
        t = blame.tokens
        i = view_name_end(t, 6)
        if i is None:
            return None
        if i + 2 >= len(t) or not (_is_word(t[i + 1], "SET") or _is_word(t[i + 1], "RESET")) \
                or t[i + 2].token_type != TokenType.L_PAREN:
            return None
        parts = [_ident_text(tok) for tok in t[3:i + 1:2]]
        name = parts[-1] if parts[:-1] in ([], ["public"]) else ".".join(parts)
        reset = _is_word(t[i + 1], "RESET")
        options, positions, bad = _items(blame, i + 3, reset)
        if bad is None:
            return cls(name, reset, tuple(options), positions=tuple(positions))
        err = blame.at(bad)  # PostgreSQL's 42601 at that token, kept for pgbarrier's views
        near = blame.sql[t[bad].start:t[bad].end + 1] if bad < len(t) else None
        return cls(name, reset, tuple(options), err.position, near, tuple(positions))

    def passes_through(self, plane: Any, info: Any, session: Any) -> bool:
        return not plane.is_ours(info, self.name, session)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.set_view_options(self, info, session)


def _items(blame: Any, i: int, reset: bool
           ) -> tuple[list[tuple[str, str | None]], list[int], int | None]:
    """The list after ``(`` at ``tokens[i]``: (items, their positions, index of the first
    token out of place or None)."""
    t, sql = blame.tokens, blame.sql
    items: list[tuple[str, str | None]] = []
    positions: list[int] = []
    while True:
        if i >= len(t) or t[i].token_type not in _NAME_TOKENS:
            return items, positions, i
        start = i
        key = [_ident_text(t[i])]
        i += 1
        while i + 1 < len(t) and t[i].token_type == TokenType.DOT \
                and t[i + 1].token_type in _NAME_TOKENS:
            key.append(_ident_text(t[i + 1]))
            i += 2
        value: str | None = None
        if not reset:
            if i >= len(t) or t[i].token_type != TokenType.EQ:
                return items, positions, i
            i += 1
            first = i
            depth = 0
            while i < len(t) and (depth or t[i].token_type not in (TokenType.COMMA,
                                                                   TokenType.R_PAREN)):
                depth += {TokenType.L_PAREN: 1, TokenType.R_PAREN: -1}.get(t[i].token_type, 0)
                i += 1
            if i == first:
                return items, positions, i
            value = (t[first].text if i == first + 1 and t[first].token_type == TokenType.STRING
                     else sql[t[first].start:t[i - 1].end + 1])
        items.append((".".join(key), value))
        positions.append(t[start].start + 1)
        if i >= len(t):
            return items, positions, i
        if t[i].token_type == TokenType.R_PAREN:
            return items, positions, None if i + 1 == len(t) else i + 1
        if t[i].token_type != TokenType.COMMA:
            return items, positions, i
        i += 1
