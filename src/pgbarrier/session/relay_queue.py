"""The byte relay's messages that are queued without waiting, the hot half of the relay.

A Parse whose text was routed as relayed, and a Bind, Describe, Execute or Close of a
statement or portal that lives upstream, are queued for the upstream (``relay.wbuf``,
and ``relay.expect`` for their replies) until the client's Sync or Flush: one message at
a time (:func:`queue`, ``SessionRelay.relay_now``), or a whole client read at once
(:func:`batch`, ``SessionRelay.fast_batch``). The rules are those of
:mod:`pgbarrier.session.relay` (its module docstring); this module holds only the part
every relayed batch runs, so that it can be compiled:

* This source is compiled by Cython when pgbarrier is installed (``setup.py``; its C
  types are in ``_relay_queue_c.pxd`` beside it) and is the same module run as Python
  where it was not. :func:`pgbarrier.accel.load` picks which; nothing here may depend on
  being compiled (the tests run both).
* Each function either queues its message and returns True, or changes nothing and
  returns False: the relay's steps then take the message (a name the session's full path
  holds, a text not routed yet, a malformed message, which the decoder answers 08P01).
* After an error everything up to Sync is skipped (nothing queued), as upstream does.
"""

from __future__ import annotations

from typing import Any

from pgbarrier.pgproto import codes
from pgbarrier.sql.route import CACHED_TEXT, MAY_BE_OURS_ASCII

try:
    import cython

    #: True in the compiled extension: the branches under it use C (names of the .pxd)
    _COMPILED = cython.compiled
except ImportError:  # run as Python without Cython installed
    _COMPILED = False

#: the message types compared here, from :mod:`pgbarrier.pgproto.codes`, as module names
#: the compiled build declares ``cdef int`` (each comparison is one C comparison)
_PARSE, _BIND, _DESCRIBE, _EXECUTE, _CLOSE, _SYNC, _QUERY = (
    codes.PARSE, codes.BIND, codes.DESCRIBE, codes.EXECUTE, codes.CLOSE, codes.SYNC,
    codes.QUERY)
#: what a Describe or Close names
_STATEMENT, _PORTAL = codes.STATEMENT, codes.PORTAL


def _queued_types() -> bytes:
    table = bytearray(256)
    for code in codes.EXTENDED:
        table[code] = 1
    return bytes(table)


#: 1 at the type bytes of messages :func:`queue` may take (a look-up table)
_QUEUED = _queued_types()


def _length_at(data: bytes, pos: int) -> int:
    """The length word of the message at ``pos``, unsigned (as pgproto.scan.length_at)."""
    top = data[pos + 1]
    return (top << 24) | (data[pos + 2] << 16) | (data[pos + 3] << 8) | data[pos + 4]


def _nul(data: bytes, start: int, end: int) -> int:
    """The offset of the first NUL byte of ``data[start:end]``, or -1."""
    if _COMPILED:
        i = start
        while i < end:
            if data[i] == 0:
                return i
            i += 1
        return -1
    return data.find(b"\0", start, end)


def _sub(data: bytes, start: int, end: int) -> bytes:
    """``data[start:end]`` (compiled: without a slice object)."""
    if _COMPILED:
        return PyBytes_FromStringAndSize(PyBytes_AS_STRING(data) + start,  # noqa: F821
                                         end - start)
    return data[start:end]


#: :data:`pgbarrier.sql.route.MAY_BE_OURS_ASCII`: the words an ASCII text is relayed without
_WORDS = MAY_BE_OURS_ASCII
#: Parse and Query verdicts a session remembers (``relay.verdicts``, forgotten all at once
#: past this), and the longest text remembered (the route cache's bound: memory stays
#: bounded)
VERDICTS = 256
VERDICT_TEXT = CACHED_TEXT


def _plain(data: bytes, start: int, end: int) -> bool:
    """Whether the statement text ``data[start:end]`` is relayed as :func:`pgbarrier.sql.
    route.route` decides, read from its bytes: True when they are ASCII and hold none of
    route's words (``route.MAY_BE_OURS_ASCII``); False: route decides (the text is
    decoded first), which it also does for every text this says True of, the same way."""
    text = _sub(data, start, end)
    if not text.isascii():
        return False
    upper = text.upper()
    for word in _WORDS:
        if upper.find(word) >= 0:  # not ``in``: bytes' tries the word as an int first
            return False
    return True


def queue(relay: Any, code: int, frame: bytes) -> bool:
    """Queue one client message (``frame``: type byte, length, body) if it is relayed."""
    if relay.copy_drain is not None or not _QUEUED[code]:
        return False
    s = relay.session
    skipping = s.skip_until_sync
    if not _one(code, frame, 0, len(frame), relay.stmts, relay.portals, relay.verdicts,
                s.statements, s.portals, s, skipping, relay.expect):
        return False
    relay.up.state.batch_opened()
    if not skipping:
        relay.wbuf.append(frame)
    return True


def batch(relay: Any, data: bytes, limit: int) -> int:
    """``SessionRelay.fast_batch``: a client read that is whole messages, a relayed simple
    Query alone or relayed extended messages ending in one Sync, taken at once.

    Returns how many bytes of ``data`` it queued: -1 when it declined, having changed
    nothing (a partial message, a length below 4 or above ``limit``, other shapes, or the
    relay in the middle of something); ``len(data)`` when the whole read is queued and
    sent: the caller writes ``data`` upstream as it is and passes the replies on until
    ReadyForQuery; less when the message at that offset must take the steps, those
    before it queued as :func:`queue` queues them. The relay's state after it is what
    feeding the messages one by one would leave up to that point."""
    up = relay.up
    state = up.state
    session = relay.session
    wbuf = relay.wbuf
    expect = relay.expect
    if (relay.copy_drain is not None or wbuf or expect or state.dirty
            or session.skip_until_sync or up.lost is not None or up.pos < len(up.buf)):
        return -1
    n = len(data)
    queued = _QUEUED
    # framing, before anything changes: whole messages of the accepted shapes only
    last = 0
    while True:
        if n - last < 5:
            return -1
        length = _length_at(data, last)
        if length < 4 or length > limit:
            return -1
        end = last + 1 + length
        if end == n:
            break
        if end > n or not queued[data[last]]:
            return -1
        last = end
    code = data[last]
    if code == _QUERY:
        if last or data[n - 1] != 0:
            return -1
        if not _plain(data, 5, n - 1) and not relay.query_relayed(data[5:n - 1]):
            return -1
        # the session is not skipping (checked above): nothing of it to change
        state.batch_closed()
    elif code != _SYNC or not last:
        return -1
    else:
        stmts = relay.stmts
        portals = relay.portals
        verdicts = relay.verdicts
        statements = session.statements
        held = session.portals
        pos = 0
        while pos < last:
            end = pos + 1 + _length_at(data, pos)
            if not _one(data[pos], data, pos, end, stmts, portals, verdicts, statements,
                        held, session, False, expect):
                if pos:  # the messages before it are queued: for the steps' Sync
                    state.batch_opened()
                    wbuf.append(_sub(data, 0, pos))
                return pos
            pos = end
        # the caller writes ``data`` itself: those messages and the Sync, as they came
        state.batch_sent()
    state.exchange()
    state.waiting()
    return n


def _one(code: int, data: bytes, pos: int, end: int, stmts: dict[bytes, str],
         portals: dict[bytes, str], verdicts: dict[bytes, tuple[bool, str]],
         statements: dict[str, Any], held: dict[str, Any], session: Any, skipping: bool,
         expect: list[Any]) -> bool:
    """Account for one message, ``data[pos:end]``: ``stmts``/``portals`` are the names
    that live upstream (name -> SQL), ``verdicts`` the relay's routed Parse texts,
    ``statements``/``held`` the session's full-path statements and portals (by str name),
    read here and changed only through ``session``'s methods (``relay_replaced_*``),
    ``skipping`` whether the session skips to Sync. True: it is relayed (its reply
    expected unless skipping); the caller queues its bytes and marks the upstream's batch
    open."""
    body = pos + 5
    if code == _BIND:
        i = _nul(data, body, end)
        j = _nul(data, i + 1, end) if i >= 0 else -1
        if j < 0:
            return False  # malformed: the decoder says 08P01
        statement = _sub(data, i + 1, j)
        sql = stmts.get(statement)
        if sql is None:
            if statement.decode("utf-8", "replace") in statements:
                return False
            sql = ""  # the upstream's own (SQL PREPARE), or its 26000
        name = _sub(data, body, i)
        if held:
            portal = name.decode("utf-8", "replace")
            if portal in held:
                session.relay_replaced_portal(portal)
        if not skipping:
            portals[name] = sql
            expect.append((_BIND, name, sql))
        return True
    if code == _EXECUTE:
        i = _nul(data, body, end)
        if i < 0:
            return False  # malformed: the decoder says 08P01
        name = _sub(data, body, i)
        sql = portals.get(name)
        if sql is None:
            if held and name.decode("utf-8", "replace") in held:
                return False
            sql = ""  # the upstream's own (a cursor's portal), or its 34000
        if not skipping:
            expect.append((_EXECUTE, name, sql))
        return True
    if code == _PARSE:
        i = _nul(data, body, end)
        j = _nul(data, i + 1, end) if i >= 0 else -1
        if j < 0:
            return False
        text = _sub(data, i + 1, j)
        verdict = verdicts.get(text)
        if verdict is None:
            if not _plain(data, i + 1, j):
                return False  # not decided yet: the steps have the rules
            verdict = (True, text.decode("ascii"))
            if j - i - 1 <= VERDICT_TEXT:  # remembered, as the steps remember theirs
                if len(verdicts) >= VERDICTS:
                    verdicts.clear()
                verdicts[text] = verdict
        elif not verdict[0]:
            return False  # not relayed: the steps have the rules
        name = _sub(data, body, i)
        if name:
            if statements and name.decode("utf-8", "replace") in statements:
                return False  # 42P05 from the session
        elif statements and "" in statements:
            session.relay_replaced_statement("")
        if not skipping:
            stmts[name] = verdict[1]
            expect.append((_PARSE, name, verdict[1]))
        return True
    # Describe or Close: a statement (S) or a portal (P), its name up to the last byte
    if end - pos < 7 or data[end - 1] != 0:
        return False  # malformed: the decoder says 08P01
    kind = data[body]
    if kind == _STATEMENT:
        names = stmts
        local = statements
    elif kind == _PORTAL:
        names = portals
        local = held
    else:
        return False  # the decoder says 08P01
    if _nul(data, body + 1, end - 1) >= 0:
        return False
    name = _sub(data, body + 1, end - 1)
    if name not in names and local and name.decode("utf-8", "replace") in local:
        return False
    if not skipping:
        expect.append((code, name, None))
        if code == _CLOSE:
            names.pop(name, None)
    return True
