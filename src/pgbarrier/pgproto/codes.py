"""Backend message types as the integers a byte scan reads (``buf[pos]``).

buenavista's ``ServerResponse`` holds them as one-byte ``bytes``; a relay that looks at the
type byte of every reply without decoding compares ints, so the same codes are named here.
"""

from __future__ import annotations

PARSE_COMPLETE = ord("1")
BIND_COMPLETE = ord("2")
CLOSE_COMPLETE = ord("3")
COMMAND_COMPLETE = ord("C")
COPY_DATA = ord("d")
COPY_DONE = ord("c")
COPY_IN_RESPONSE = ord("G")
COPY_OUT_RESPONSE = ord("H")
COPY_BOTH_RESPONSE = ord("W")
DATA_ROW = ord("D")
EMPTY_QUERY_RESPONSE = ord("I")
ERROR_RESPONSE = ord("E")
NO_DATA = ord("n")
NOTICE_RESPONSE = ord("N")
NOTIFICATION_RESPONSE = ord("A")
PARAMETER_DESCRIPTION = ord("t")
PARAMETER_STATUS = ord("S")
PORTAL_SUSPENDED = ord("s")
READY_FOR_QUERY = ord("Z")
ROW_DESCRIPTION = ord("T")

#: replies that complete one extended-protocol message
COMPLETES_A_MESSAGE = frozenset({PARSE_COMPLETE, BIND_COMPLETE, CLOSE_COMPLETE, NO_DATA,
                                 ROW_DESCRIPTION, COMMAND_COMPLETE, EMPTY_QUERY_RESPONSE,
                                 PORTAL_SUSPENDED})

#: what PostgreSQL may send at any time, between statements too
ASYNCHRONOUS = frozenset({NOTICE_RESPONSE, NOTIFICATION_RESPONSE, PARAMETER_STATUS})
