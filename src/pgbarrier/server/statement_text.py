"""What a batch of client messages ran, as PostgreSQL's statement log names it.

``statement: <text>`` for simple Queries and Parses (several joined by ``; ``), else
``execute <name>: <text>`` for a Bind of a statement parsed in an earlier batch (the text
from the relay's or the session's prepared statements; ``<unnamed>`` for the unnamed one).
Texts are cut at :data:`MAX_CHARS` characters so one huge statement cannot flood the log.
They are read in the session's client encoding where pgbarrier converts it (as PostgreSQL
logs and shows statements in the server's encoding).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pgbarrier.errors import PgError
from pgbarrier.pgproto.codes import BIND, PARSE, QUERY
from pgbarrier.pgproto.scan import length_at

if TYPE_CHECKING:
    from pgbarrier.session.session import Session

MAX_CHARS = 4096


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + "..."


def frames_of(batch: list[bytes]) -> list[bytes]:
    """The frames of ``batch``: each element is one frame or a client read holding several
    whole ones (the relay's fast path keeps the read as it came)."""
    out: list[bytes] = []
    for data in batch:
        pos, n = 0, len(data)
        while n - pos >= 5:
            end = pos + 1 + length_at(data, pos)
            if end > n or end <= pos + 4:
                break
            out.append(data if pos == 0 and end == n else data[pos:end])
            pos = end
    return out


def _text(raw: bytes, session: Session) -> str:
    """A string of the client's, in its client encoding when pgbarrier converts it."""
    codec = session.encoding.codec
    if codec is not None:
        try:
            return codec.decode(raw)
        except PgError:  # the session answered it with its error: shown as best it can be
            pass
    return raw.decode("utf-8", "replace")


def statement_text(batch: list[bytes], session: Session) -> str:
    texts: list[str] = []
    bound: bytes | None = None
    for frame in frames_of(batch):
        code = frame[0]
        if code == QUERY:
            texts.append(_text(frame[5:-1], session))
        elif code == PARSE or (code == BIND and bound is None):
            i = frame.find(b"\0", 5)
            j = frame.find(b"\0", i + 1) if i >= 0 else -1
            if j > i and code == PARSE:
                texts.append(_text(frame[i + 1:j], session))
            elif j > i:
                bound = frame[i + 1:j]
    if texts or bound is None:
        return "statement: " + _cut("; ".join(texts))
    relay = session.relay
    sql = relay.state.stmts.get(bound) if relay is not None else None
    name = _text(bound, session)
    if not sql:
        statement = session.statements.get(name)
        sql = statement.sql if statement is not None else ""
    return f"execute {name or '<unnamed>'}: {_cut(sql)}"


#: PostgreSQL's track_activity_query_size (bytes, its terminating NUL included)
ACTIVITY_QUERY_BYTES = 1024


def query_text(batch: list[bytes], session: Session) -> str:
    """``pg_stat_activity.query`` for a batch: its statement text without the log's
    prefix, cut to ``ACTIVITY_QUERY_BYTES - 1`` bytes at a character boundary."""
    text = statement_text(batch, session)
    text = text.split(": ", 1)[1] if ": " in text else text
    raw = text.encode("utf-8")
    if len(raw) < ACTIVITY_QUERY_BYTES:
        return text
    return raw[:ACTIVITY_QUERY_BYTES - 1].decode("utf-8", "ignore")
