"""Framing of the frontend byte stream, free of I/O.

A regular message is a type byte, a big-endian int32 length that counts itself but not
the type byte, and the body. :class:`FrameBuffer` is fed bytes as they arrive and hands
out whole frames (type byte, length and body, as received). A length below 4 or above
the buffer's limit is 08P01 ``invalid message length N`` (PostgreSQL's words); the
connection then ends, since the stream can no longer be framed.
"""

from __future__ import annotations

import struct

from pgbarrier.errors import ProtocolViolation

_unpack = struct.Struct("!i").unpack_from


class FrameBuffer:
    """Bytes received and not yet handed out as frames."""

    __slots__ = ("_buf", "_pos", "limit")

    def __init__(self, limit: int) -> None:
        self._buf = b""
        self._pos = 0
        #: the largest length word accepted (``--max-message-bytes``)
        self.limit = limit

    def feed(self, data: bytes) -> None:
        if self._pos < len(self._buf):
            self._buf = self._buf[self._pos:] + data
        else:
            self._buf = data
        self._pos = 0

    @property
    def pending(self) -> int:
        """Bytes held (a partial frame included)."""
        return len(self._buf) - self._pos

    def missing(self) -> int:
        """How many more bytes the frame at the head needs (0: it is whole, or no header yet)."""
        buf, pos = self._buf, self._pos
        if len(buf) - pos < 5:
            return 0
        length = _unpack(buf, pos + 1)[0]
        return max(0, pos + 1 + length - len(buf))

    def frames(self) -> list[bytes]:
        """Every whole frame held, in order; raises 08P01 at a length that cannot be."""
        buf, pos = self._buf, self._pos
        n = len(buf)
        out: list[bytes] = []
        limit = self.limit
        while n - pos >= 5:
            length = _unpack(buf, pos + 1)[0]
            if length < 4 or length > limit:
                self._pos = pos
                if out:  # the good frames first; the bad length is found on the next call
                    break
                raise ProtocolViolation(f"invalid message length {length}")
            end = pos + 1 + length
            if end > n:
                break
            out.append(buf if pos == 0 and end == n else buf[pos:end])
            pos = end
        self._pos = pos
        if pos == n:
            self._buf = b""
            self._pos = 0
        return out
