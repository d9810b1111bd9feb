"""A session's transaction status as a state machine (what ReadyForQuery reports).

States: ``IDLE`` (``I``), ``IN_BLOCK`` (``T``, after BEGIN), ``FAILED`` (``E``, an
error inside a block). Transitions are a table; anything not in it leaves the
state as it is. In ``FAILED`` only the statements that end the block are
allowed (the session raises 25P02 for the rest), and COMMIT ends it as a
rollback, answering ``ROLLBACK`` as PostgreSQL does.
"""

from __future__ import annotations

import enum


class TxState(enum.Enum):
    IDLE = b"I"
    IN_BLOCK = b"T"
    FAILED = b"E"


BEGIN_WORDS = frozenset({"BEGIN", "START"})
END_WORDS = frozenset({"COMMIT", "END", "ROLLBACK", "ABORT"})

_ON_SUCCESS: dict[tuple[TxState, str], TxState] = {
    (TxState.IDLE, "BEGIN"): TxState.IN_BLOCK,
    (TxState.IN_BLOCK, "END"): TxState.IDLE,
    (TxState.FAILED, "END"): TxState.IDLE,
}


def _kind(first_word: str | None) -> str | None:
    if first_word in BEGIN_WORDS:
        return "BEGIN"
    if first_word in END_WORDS:
        return "END"
    return None


def after_success(state: TxState, first_word: str | None) -> TxState:
    """State after a statement starting with ``first_word`` succeeded."""
    return _ON_SUCCESS.get((state, _kind(first_word) or ""), state)


def after_error(state: TxState) -> TxState:
    """State after a statement failed: a block becomes FAILED, IDLE stays IDLE."""
    return TxState.FAILED if state is not TxState.IDLE else state


def allowed_when_failed(first_word: str | None) -> bool:
    """Whether a statement may run in a FAILED block (only the ones ending it)."""
    return first_word in END_WORDS or first_word == "ROLLBACK"
