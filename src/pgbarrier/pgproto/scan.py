"""Byte scans of the protocol stream that every relayed batch runs: the relay's hot loops.

Rules this module keeps:

* Pure functions over ``bytes``: no I/O, no state. They say where whole messages end and
  which of them matter; what that means is the caller's
  (:mod:`pgbarrier.backends.pg_relay`).
* A message is a type byte and a big-endian int32 length that counts itself, then the
  body. These functions only read lengths of messages whose five header bytes are held.
* This source is compiled by Cython when pgbarrier is installed (``setup.py``; its C
  types are in ``_scan_c.pxd`` beside it) and is the same module run as Python where it
  was not: one implementation either way. :func:`pgbarrier.accel.load` picks which.
  Nothing here may depend on being compiled: the tests run both.
"""

from __future__ import annotations

from pgbarrier.pgproto.codes import (
    COMMAND_COMPLETE,
    FIELD_SQLSTATE,
    COMPLETES_A_MESSAGE,
    COPY_BOTH_RESPONSE,
    COPY_IN_RESPONSE,
    ERROR_RESPONSE,
    PARAMETER_STATUS,
    READY_FOR_QUERY,
)

# what replies() stopped at (pgbarrier.backends.pg_relay reads these names)
MORE = -1  # the held bytes ended first
READY = 0  # ReadyForQuery
DRAINED = 1  # the message completing the ``drain``-th extended message
COPY_IN = 2  # CopyInResponse or CopyBothResponse: the client sends data next
PARAMETER = 3  # ParameterStatus: the caller records it and scans on
ERROR = 4  # ErrorResponse: the caller records it and scans on (or stops, draining)

# what a backend message type means to the scan (a table: one look-up per message)
_OTHER, _COMPLETES, _COMMAND, _READY, _ERROR, _PARAMETER, _COPY_IN = range(7)


def _kinds() -> bytes:
    table = bytearray(256)
    for code in COMPLETES_A_MESSAGE:
        table[code] = _COMPLETES
    table[COMMAND_COMPLETE] = _COMMAND  # completes a message and counts a statement
    table[READY_FOR_QUERY] = _READY
    table[ERROR_RESPONSE] = _ERROR
    table[PARAMETER_STATUS] = _PARAMETER
    table[COPY_IN_RESPONSE] = _COPY_IN
    table[COPY_BOTH_RESPONSE] = _COPY_IN
    return bytes(table)


_KIND = _kinds()


def length_at(buf: bytes, pos: int) -> int:
    """The length word of the message at ``pos`` (its five header bytes are held), read
    as unsigned (a negative int32 is a length above any limit)."""
    top = buf[pos + 1]
    return (top << 24) | (buf[pos + 2] << 16) | (buf[pos + 3] << 8) | buf[pos + 4]


def replies(buf: bytes, pos: int, drain: int, done: int) -> tuple[int, int, int, int, int]:
    """Scan the whole backend messages of ``buf`` from ``pos``.

    Returns ``(stop, start, end, done, commands)``: ``stop`` is one of the module's stop
    codes; ``buf[start:end]`` is the message it stopped at (for MORE, ``start == end`` is
    where the held whole messages end); ``done`` is the count of completed
    extended-protocol messages carried on from the argument (``COMPLETES_A_MESSAGE``), and
    ``commands`` the CommandCompletes seen in this call. DataRows
    and everything else pass without a look. With ``drain`` above 0 the scan stops
    (DRAINED) once ``done`` reaches it."""
    n = len(buf)
    commands = 0
    kinds = _KIND
    while n - pos >= 5:
        start = pos
        end = pos + 1 + length_at(buf, pos)
        if end > n or end < pos + 5:
            break
        pos = end
        kind = kinds[buf[start]]
        if kind == _OTHER:
            continue
        if kind == _COMPLETES or kind == _COMMAND:
            done += 1
            if kind == _COMMAND:
                commands += 1
            if drain and done >= drain:
                return DRAINED, start, end, done, commands
            continue
        if kind == _READY:
            return READY, start, end, done, commands
        if kind == _ERROR:
            return ERROR, start, end, done, commands
        if kind == _PARAMETER:
            return PARAMETER, start, end, done, commands
        return COPY_IN, start, end, done, commands
    return MORE, pos, pos, done, commands


def sqlstate(buf: bytes, start: int, end: int) -> str:
    """The ``C`` field of the ErrorResponse body ``buf[start:end]`` (no dict built)."""
    i = start
    while i < end and buf[i]:
        j = buf.find(b"\0", i + 1, end)
        if j < 0:
            break
        if buf[i] == FIELD_SQLSTATE:
            return buf[i + 1:j].decode("ascii", "replace")
        i = j + 1
    return "XX000"
