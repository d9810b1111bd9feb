"""``ALTER MATERIALIZED VIEW v SUSPEND [REASON 'text']`` and ``ALTER MATERIALIZED VIEW v
RESUME``: per-view suspend and resume of a batch-refresh view's scheduled runs.

Rules this module keeps (the grammar; what they do is :mod:`pgbarrier.view_control`):

* Read from the tokens: ``ALTER MATERIALIZED VIEW`` then a (qualified) name, named as
  pgbarrier names views (``public.v`` is ``v``), then ``SUSPEND`` (optionally ``REASON``
  and one string literal) or ``RESUME``, then nothing. Anything else once ``SUSPEND`` /
  ``RESUME`` has been seen is PostgreSQL's 42601 at the first token out of place (end of
  input when cut short). ``IF EXISTS`` is not part of the grammar: such a text is not
  pgbarrier's and reaches the backend, which answers it.
* Not allowed inside a transaction block (25001, as the other control statements); the
  command tag is ``ALTER MATERIALIZED VIEW``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlglot.tokens import TokenType

from pgbarrier.sql.grammar import QNAME, ControlStatement
from pgbarrier.sql.statements import _NAME_TOKENS, _ident_text, _is_word

__all__ = ["ResumeView", "SuspendView"]

_HEAD = ("ALTER", "MATERIALIZED", "VIEW")


def view_name_end(t: Any, min_tokens: int) -> int | None:
    """``ALTER MATERIALIZED VIEW a[.b...]`` at the start of tokens ``t`` (at least
    ``min_tokens`` of them): the index of the name's last token, else None."""
    if len(t) < min_tokens or not all(_is_word(t[i], w) for i, w in enumerate(_HEAD)):
        return None
    i = 3
    if t[i].token_type not in _NAME_TOKENS:
        return None
    while i + 2 < len(t) and t[i + 1].token_type == TokenType.DOT \
            and t[i + 2].token_type in _NAME_TOKENS:
        i += 2
    return i


def _read(blame: Any, action: str) -> tuple[str, int] | None:
    """``ALTER MATERIALIZED VIEW name <action>``: (pgbarrier's name, index after the action),
    None when the text is not that statement."""
    t = blame.tokens
    i = view_name_end(t, 5)
    if i is None:
        return None
    if i + 1 >= len(t) or not _is_word(t[i + 1], action):
        return None
    parts = [_ident_text(tok) for tok in t[3:i + 1:2]]
    if any(not p for p in parts):
        raise blame.at(3)
    name = parts[-1] if parts[:-1] in ([], ["public"]) else ".".join(parts)
    return name, i + 2


@dataclass(frozen=True)
class SuspendView(ControlStatement):
    """``ALTER MATERIALIZED VIEW v SUSPEND [REASON 'text']``."""

    SHAPES = ((*_HEAD, QNAME, "SUSPEND"),)
    TAG = "ALTER MATERIALIZED VIEW"

    name: str
    reason: str | None = None

    @classmethod
    def parse_tokens(cls, blame: Any) -> SuspendView | None:
        read = _read(blame, "SUSPEND")
        if read is None:
            return None
        name, i = read
        t = blame.tokens
        reason = None
        if i < len(t):
            if not _is_word(t[i], "REASON"):
                raise blame.at(i)
            if i + 1 >= len(t) or t[i + 1].token_type != TokenType.STRING:
                raise blame.at(i + 1)
            reason = t[i + 1].text
            i += 2
        if i < len(t):
            raise blame.at(i)
        return cls(name, reason)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.suspend_view(self, info, session)


@dataclass(frozen=True)
class ResumeView(ControlStatement):
    """``ALTER MATERIALIZED VIEW v RESUME``."""

    SHAPES = ((*_HEAD, QNAME, "RESUME"),)
    TAG = "ALTER MATERIALIZED VIEW"

    name: str

    @classmethod
    def parse_tokens(cls, blame: Any) -> ResumeView | None:
        read = _read(blame, "RESUME")
        if read is None:
            return None
        name, i = read
        if i < len(blame.tokens):
            raise blame.at(i)
        return cls(name)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.resume_view(self, info, session)
