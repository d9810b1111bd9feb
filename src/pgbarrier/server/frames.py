"""Framing of the frontend byte stream, free of I/O.

A regular message is a type byte, a big-endian int32 length that counts itself but not
the type byte, and the body. :class:`FrameBuffer` is fed bytes as they arrive and hands
out whole frames (type byte, length and body, as received). A length below 4 or above
the buffer's limit is 08P01 ``invalid message length N`` (PostgreSQL logs these words
and closes without a word; pgbarrier sends them), and a type byte PostgreSQL 15 does not
take after start-up is 08P01 ``invalid frontend message type N`` as soon as that byte is
there, before its length (as PostgreSQL reads them); the connection then ends, since the
stream can no longer be framed.

Feeding costs time linear in the bytes fed: the pieces of a message longer than what
is held are kept in a list and joined once, when the message is whole (a 64 MB COPY
row arrives in hundreds of reads). Start-up packets, which have no type byte, are read
with :meth:`FrameBuffer.take`.
"""

from __future__ import annotations

import struct

from pgbarrier.errors import ProtocolViolation
from pgbarrier.pgproto.codes import FRONTEND

_unpack = struct.Struct("!i").unpack_from
#: the message types PostgreSQL 15 takes after start-up (``SocketBackend``), by byte value
_KNOWN = bytearray(256)
for _code in FRONTEND:
    _KNOWN[_code] = 1
#: a partial message needing more than this is gathered in pieces, not re-joined per read
_GATHER = 1 << 16


class FrameBuffer:
    """Bytes received and not yet handed out as frames."""

    __slots__ = ("head", "_pos", "limit", "_parts", "_parts_len", "_need")

    def __init__(self, limit: int) -> None:
        #: bytes received, from ``_pos`` on not handed out yet; empty exactly when nothing
        #: is held (a cheap test for the relay's fast path)
        self.head = b""
        self._pos = 0
        #: the largest length word accepted (``--max-message-bytes``)
        self.limit = limit
        #: pieces fed after ``head`` while a long message is incomplete, and their length
        self._parts: list[bytes] = []
        self._parts_len = 0
        #: bytes the held message still needs before the pieces are joined (0: none held)
        self._need = 0

    def feed(self, data: bytes) -> None:
        if self._need:
            self._parts.append(data)
            self._parts_len += len(data)
            if self._parts_len < self._need:
                return
            data = b"".join(self._parts)
            self._parts.clear()
            self._parts_len = self._need = 0
        if self._pos < len(self.head):
            self.head = self.head[self._pos:] + data
        else:
            self.head = data
        self._pos = 0
        self._gather_if_long()

    def _gather_if_long(self) -> None:
        """A head message of acceptable length still missing many bytes: gather its pieces."""
        missing = self.missing()
        if missing > _GATHER and self._frame_length() <= self.limit \
                and _KNOWN[self.head[self._pos]]:
            self._need = missing

    @property
    def pending(self) -> int:
        """Bytes held (a partial frame included)."""
        return len(self.head) - self._pos + self._parts_len

    def _frame_length(self) -> int:
        buf, pos = self.head, self._pos
        return _unpack(buf, pos + 1)[0] if len(buf) - pos >= 5 else 0

    def missing(self) -> int:
        """How many more bytes the frame at the head needs (0: it is whole, or no header yet)."""
        buf, pos = self.head, self._pos
        if len(buf) - pos < 5:
            return 0
        length = _unpack(buf, pos + 1)[0]
        return max(0, pos + 1 + length - len(buf) - self._parts_len)

    def holds_more_than(self, limit: int) -> bool:
        """Whether more than ``limit`` bytes are held beyond what one message being received
        (of an acceptable length) may need: a reader should stop reading until frames are
        taken. A long message still arriving never stops its own reading."""
        if self.pending <= limit:
            return False
        if self._need:
            return False
        missing = self.missing()
        return not (missing and self._frame_length() <= self.limit)

    def take(self, n: int) -> bytes:
        """The next ``n`` raw bytes (start-up packets); the caller checked ``pending``."""
        if self._need:  # start-up reads are short: join what is held
            self.head = self.head[self._pos:] + b"".join(self._parts)
            self._pos = 0
            self._parts.clear()
            self._parts_len = self._need = 0
        pos = self._pos
        data = self.head[pos:pos + n]
        self._pos = pos + len(data)
        if self._pos >= len(self.head):
            self.head = b""
            self._pos = 0
        return data

    def frames(self) -> list[bytes]:
        """Every whole frame held, in order; raises 08P01 at a type PostgreSQL does not
        know (as soon as its byte is there: PostgreSQL reads the type before the length)
        or a length that cannot be."""
        if self._need:
            return []
        buf, pos = self.head, self._pos
        n = len(buf)
        out: list[bytes] = []
        limit = self.limit
        while n - pos >= 1:
            if not _KNOWN[buf[pos]]:
                self._pos = pos
                if out:  # the good frames first; the bad type is found on the next call
                    break
                raise ProtocolViolation(f"invalid frontend message type {buf[pos]}")
            if n - pos < 5:
                break
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
            self.head = b""
            self._pos = 0
        else:
            self._gather_if_long()
        return out
