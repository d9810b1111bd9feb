"""Every message type of the protocol (3.0), frontend and backend, named once.

The names are the integers a byte scan reads (``buf[pos]``, ``frame[0]``): a relay that
looks at the type byte of every message without decoding compares ints, and every module
that does (the server's framing and batches, the session relay and its compiled queue, the
upstream pump and its compiled scan) takes them from here, never as literals. The
frontend's and the backend's codes overlap (``D`` is Describe from a client and DataRow
from a server); each direction has its own names. :func:`type_byte` gives the one-byte
``bytes`` a message is written with.

Also here, since they are read from the same bytes: the transaction status byte of
ReadyForQuery, the target byte of Describe and Close, the SQLSTATE field of
ErrorResponse, and what each frontend type means to the server (the sets at the end: one
table of which messages are waited on, answered with ReadyForQuery, may start a
statement, are queued by the relay).

A compiled module (Cython, :mod:`pgbarrier.accel`) that compares these in its loops
copies them into module-level names declared ``cdef int`` in its ``.pxd``, so each
comparison is one C comparison (see :mod:`pgbarrier.relay.state`).
"""

from __future__ import annotations

# ---------------------------------------------------------------- frontend (client -> server)

BIND = ord("B")
CLOSE = ord("C")
COPY_FAIL = ord("f")
DESCRIBE = ord("D")
EXECUTE = ord("E")
FLUSH = ord("H")
FUNCTION_CALL = ord("F")
PARSE = ord("P")
#: PasswordMessage, and the SASL and GSS responses that share its type byte
PASSWORD_MESSAGE = ord("p")
QUERY = ord("Q")
SYNC = ord("S")
TERMINATE = ord("X")

# ---------------------------------------------------------------- both directions

COPY_DATA = ord("d")
COPY_DONE = ord("c")

# ---------------------------------------------------------------- backend (server -> client)

AUTHENTICATION = ord("R")
BACKEND_KEY_DATA = ord("K")
BIND_COMPLETE = ord("2")
CLOSE_COMPLETE = ord("3")
COMMAND_COMPLETE = ord("C")
COPY_BOTH_RESPONSE = ord("W")
COPY_IN_RESPONSE = ord("G")
COPY_OUT_RESPONSE = ord("H")
DATA_ROW = ord("D")
EMPTY_QUERY_RESPONSE = ord("I")
ERROR_RESPONSE = ord("E")
FUNCTION_CALL_RESPONSE = ord("V")
NEGOTIATE_PROTOCOL_VERSION = ord("v")
NO_DATA = ord("n")
NOTICE_RESPONSE = ord("N")
NOTIFICATION_RESPONSE = ord("A")
PARAMETER_DESCRIPTION = ord("t")
PARAMETER_STATUS = ord("S")
PARSE_COMPLETE = ord("1")
PORTAL_SUSPENDED = ord("s")
READY_FOR_QUERY = ord("Z")
ROW_DESCRIPTION = ord("T")

# ---------------------------------------------------------------- bytes inside messages

#: ReadyForQuery's transaction status: idle, in a block, in a failed block
TX_IDLE = ord("I")
TX_IN_BLOCK = ord("T")
TX_FAILED = ord("E")

#: what a Describe or Close names: a prepared statement or a portal
STATEMENT = ord("S")
PORTAL = ord("P")

#: the SQLSTATE field of an ErrorResponse or NoticeResponse
FIELD_SQLSTATE = ord("C")


def type_byte(value: int) -> bytes:
    """The one-byte ``bytes`` of a message type, as a message is written."""
    return bytes((value,))


# ---------------------------------------------------------------- what the types mean

#: replies that complete one extended-protocol message
COMPLETES_A_MESSAGE = frozenset({PARSE_COMPLETE, BIND_COMPLETE, CLOSE_COMPLETE, NO_DATA,
                                 ROW_DESCRIPTION, COMMAND_COMPLETE, EMPTY_QUERY_RESPONSE,
                                 PORTAL_SUSPENDED})

#: what PostgreSQL may send at any time, between statements too
ASYNCHRONOUS = frozenset({NOTICE_RESPONSE, NOTIFICATION_RESPONSE, PARAMETER_STATUS})

#: what a client may send after start-up (PostgreSQL 15's ``SocketBackend``; any other
#: type is 08P01 ``invalid frontend message type``)
FRONTEND = frozenset({QUERY, FUNCTION_CALL, TERMINATE, BIND, CLOSE, DESCRIBE, EXECUTE,
                      FLUSH, PARSE, SYNC, COPY_DATA, COPY_DONE, COPY_FAIL})

#: the extended protocol's messages that Sync ends (the relay queues these until then)
EXTENDED = frozenset({PARSE, BIND, DESCRIBE, EXECUTE, CLOSE})

#: messages the client waits on: output is written after them
WAITED_ON = frozenset({QUERY, SYNC, FLUSH, FUNCTION_CALL})

#: messages answered with ReadyForQuery: after them the idle timeouts apply
ANSWERED_WITH_READY = frozenset({QUERY, SYNC, FUNCTION_CALL})

#: messages that may start a statement (shutdown refuses them)
STARTS_STATEMENT = frozenset({QUERY, EXECUTE, FUNCTION_CALL})

#: messages at which the relay sends upstream work (a statement, or what Sync and Flush
#: send of the queued ones)
SENDS_UPSTREAM = STARTS_STATEMENT | {SYNC, FLUSH}
