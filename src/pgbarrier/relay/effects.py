"""What a relay step asks of the event loop: the requests its generators yield.

A relay step (:mod:`pgbarrier.session.relay`, the upstream's pump in
:mod:`pgbarrier.backends.pg_relay`) is a generator; the connection
(:mod:`pgbarrier.server.connection`) drives it and carries out each request, then resumes
it with the answer. Rules:

* :data:`NEED_BYTES`: resume once the upstream sent more bytes (after writing the
  upstream's ``pending_writes``); the step reads them itself.
* :class:`Spill`: write ``chunks`` to the client now (and clear them), resuming once the
  client's socket takes more (a slow client holds its statement, not the server's memory).
* :class:`RunLocal`: run ``fn(*args)`` on a worker thread, the upstream socket in
  blocking mode meanwhile (the full path); the step is resumed with its result, or its
  exception is thrown into it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class _NeedBytes:
    """What a relay step yields to ask the event loop for the upstream's next bytes
    (after the loop has written ``pending_writes``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NEED_BYTES"


NEED_BYTES = _NeedBytes()


class Spill:
    """What a relay step yields to have ``chunks`` written to the client now (and
    cleared), waiting while the client does not read."""

    __slots__ = ("chunks",)

    def __init__(self, chunks: list[Any]) -> None:
        self.chunks = chunks


class RunLocal:
    """What a relay step yields to have ``fn(*args)`` run on a worker thread, with the
    upstream socket in blocking mode (the full path); the step gets its result back."""

    __slots__ = ("fn", "args")

    def __init__(self, fn: Callable[..., Any], *args: Any) -> None:
        self.fn = fn
        self.args = args
