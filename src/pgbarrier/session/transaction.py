"""A session's transaction status as a state machine (what ReadyForQuery reports).

States: ``IDLE`` (``I``), ``IN_BLOCK`` (``T``, after BEGIN), ``FAILED`` (``E``, an
error inside a block). Transitions are a table keyed by the statement's
transaction kind (:func:`tx_kind`); anything not in it leaves the state as it
is. In ``FAILED`` only the statements that end the block (COMMIT, ROLLBACK,
ROLLBACK TO SAVEPOINT) are allowed (the session raises 25P02 for the rest), and
COMMIT ends it as a rollback, answering ``ROLLBACK`` as PostgreSQL does.

Kinds, read from the first words only (no parse):

* ``BEGIN``: ``BEGIN``, ``START TRANSACTION``;
* ``COMMIT``: ``COMMIT``, ``END``, ``PREPARE TRANSACTION`` (it ends the block);
* ``ROLLBACK``: ``ROLLBACK``, ``ABORT``;
* ``CHAIN``: ``COMMIT``/``ROLLBACK ... AND CHAIN`` (a new block starts at once);
* ``ROLLBACK_TO``: ``ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT] s`` (the block goes on,
  and a FAILED block is usable again);
* ``None``: everything else, ``COMMIT PREPARED``/``ROLLBACK PREPARED`` included.
"""

from __future__ import annotations

import enum

from pgbarrier.sql.classify import leading_words


class TxState(enum.Enum):
    IDLE = b"I"
    IN_BLOCK = b"T"
    FAILED = b"E"


class TxKind(enum.Enum):
    BEGIN = "BEGIN"
    COMMIT = "COMMIT"
    ROLLBACK = "ROLLBACK"
    CHAIN = "CHAIN"
    ROLLBACK_TO = "ROLLBACK_TO"


BEGIN_WORDS = frozenset({"BEGIN", "START"})
END_WORDS = frozenset({"COMMIT", "END", "ROLLBACK", "ABORT"})
_NOISE = frozenset({"WORK", "TRANSACTION"})

_ON_SUCCESS: dict[tuple[TxState, TxKind], TxState] = {
    (TxState.IDLE, TxKind.BEGIN): TxState.IN_BLOCK,
    (TxState.IN_BLOCK, TxKind.COMMIT): TxState.IDLE,
    (TxState.IN_BLOCK, TxKind.ROLLBACK): TxState.IDLE,
    (TxState.FAILED, TxKind.COMMIT): TxState.IDLE,
    (TxState.FAILED, TxKind.ROLLBACK): TxState.IDLE,
    (TxState.FAILED, TxKind.CHAIN): TxState.IN_BLOCK,
    (TxState.FAILED, TxKind.ROLLBACK_TO): TxState.IN_BLOCK,
}


def tx_kind(sql: str, first_word: str | None = None) -> TxKind | None:
    """The transaction-control kind of one statement (see the module rules)."""
    if first_word is None:
        first_word = (leading_words(sql, 1) or (None,))[0]
    if first_word not in BEGIN_WORDS and first_word not in END_WORDS and first_word != "PREPARE":
        return None
    words = leading_words(sql, 5)
    if first_word == "START":
        return TxKind.BEGIN if words[1:2] == ("TRANSACTION",) else None
    if first_word == "BEGIN":
        return TxKind.BEGIN
    if first_word == "PREPARE":
        return TxKind.COMMIT if words[1:2] == ("TRANSACTION",) else None
    rest = [w for w in words[1:] if w not in _NOISE] if len(words) > 1 else []
    if rest[:1] == ["PREPARED"]:
        return None
    if rest[:2] == ["AND", "CHAIN"]:
        return TxKind.CHAIN
    if first_word in ("ROLLBACK", "ABORT"):
        return TxKind.ROLLBACK_TO if rest[:1] == ["TO"] else TxKind.ROLLBACK
    return TxKind.COMMIT


def after_success(state: TxState, kind: TxKind | None) -> TxState:
    """State after a statement of transaction kind ``kind`` succeeded."""
    if kind is None:
        return state
    return _ON_SUCCESS.get((state, kind), state)


def after_error(state: TxState) -> TxState:
    """State after a statement failed: a block becomes FAILED, IDLE stays IDLE."""
    return TxState.FAILED if state is not TxState.IDLE else state


def allowed_when_failed(kind: TxKind | None) -> bool:
    """Whether a statement may run in a FAILED block (only the ones ending or rewinding it)."""
    return kind in (TxKind.COMMIT, TxKind.ROLLBACK, TxKind.CHAIN, TxKind.ROLLBACK_TO)
