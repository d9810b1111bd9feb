"""PostgreSQL's LISTEN / UNLISTEN / NOTIFY on the embedded DuckDB backend, kept by pgbarrier.

DuckDB has no asynchronous notifications; pgbarrier keeps PostgreSQL's between the
sessions of one database (and delivers pgbarrier's own events, :mod:`pgbarrier.events`,
the same way). Rules this module keeps, PostgreSQL 15's (``commands/async.c``):

* ``LISTEN channel``, ``UNLISTEN channel``, ``UNLISTEN *`` and ``NOTIFY channel [,
  'payload']`` (command tags ``LISTEN``, ``UNLISTEN``, ``NOTIFY``). A channel is an
  identifier: folded to lower case unless double-quoted, cut to 63 bytes. A payload of
  8000 bytes or more is 22023 ``payload string too long``. Anything else after the
  keyword is 42601 at the token out of place.
* Outside a transaction block each takes effect at once. Inside one (an explicit block,
  a simple Query of several statements, the Executes up to a Sync) LISTEN and UNLISTEN
  take effect, and NOTIFYs are sent, when the block commits; a rollback forgets them.
  NOTIFYs of one transaction with the same channel and payload are sent once, in the
  order first sent. (Savepoints are not followed: what a ROLLBACK TO undid still takes
  effect at commit.)
* A notification reaches every session of the same database listening on its channel,
  the sender included, with the sender's process id. A session holds what it received
  in a bounded inbox (:data:`INBOX_NOTIFICATIONS`; past it the oldest is dropped, so a
  client that never reads cannot grow the server) and the server writes them to the
  client when it is idle outside a transaction block, as PostgreSQL does: at once when
  the connection is idle, else before the ReadyForQuery that ends the transaction.
* :meth:`Hub.notify` never blocks on a client: it appends to inboxes and calls each
  one's ``wake`` (the server's loop wake-up, which only schedules a callback).
"""

from __future__ import annotations

import re
import threading
from collections import deque
from collections.abc import Callable

from pgbarrier.errors import InvalidParameterValue, PgError
from pgbarrier.errors import SyntaxError as PgSyntaxError
from pgbarrier.result import Result, command
from pgbarrier.sql.identifiers import truncate_identifier

#: notifications a session holds before the oldest is dropped
INBOX_NOTIFICATIONS = 10_000
#: PostgreSQL's NOTIFY_PAYLOAD_MAX_LENGTH (BLCKSZ - NAMEDATALEN - 128)
MAX_PAYLOAD_BYTES = 8000 - 1

#: one notification: (sender's process id, channel, payload)
Notification = tuple[int, str, str]

KEYWORDS = frozenset({"LISTEN", "UNLISTEN", "NOTIFY"})

_SPACE = re.compile(r"(?:\s+|--[^\n]*(?:\n|$)|/\*.*?\*/)*", re.S)
_WORD = re.compile(r"[A-Za-z_\x80-\uffff][A-Za-z0-9_$\x80-\uffff]*")
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')
_STRING = re.compile(r"'((?:[^']|'')*)'")


class Mailbox:
    """One session's channels, its transaction's pending actions and its inbox."""

    def __init__(self, hub: Hub, database: str, process_id: Callable[[], int]) -> None:
        self.hub = hub
        self.database = database
        self._pid = process_id
        self._lock = threading.Lock()
        #: channels in effect (committed)
        self.channels: frozenset[str] = frozenset()
        #: the open transaction's actions: ("listen"|"unlisten", channel|None) and NOTIFYs
        self._pending: list[tuple[str, str | None]] = []
        self._notifies: dict[tuple[str, str], None] = {}
        self._inbox: deque[Notification] = deque(maxlen=INBOX_NOTIFICATIONS)
        #: notifications dropped from a full inbox
        self.dropped = 0
        #: called (any thread) when a notification arrives; set by the server
        self.wake: Callable[[], None] | None = None

    # -------------------------------------------------------------- the session's side

    def listen(self, channel: str, in_block: bool) -> None:
        self._act("listen", channel, in_block)

    def unlisten(self, channel: str | None, in_block: bool) -> None:
        """``channel`` None: ``UNLISTEN *``."""
        self._act("unlisten", channel, in_block)

    def notify(self, channel: str, payload: str, in_block: bool) -> None:
        if in_block:
            self._notifies.setdefault((channel, payload), None)
        else:
            self.hub.notify(self.database, channel, payload, self._pid())

    def _act(self, action: str, channel: str | None, in_block: bool) -> None:
        if in_block:
            self._pending.append((action, channel))
        else:
            self._apply([(action, channel)])

    def _apply(self, actions: list[tuple[str, str | None]]) -> None:
        channels = set(self.channels)
        for action, channel in actions:
            if action == "listen":
                assert channel is not None
                channels.add(channel)
            elif channel is None:
                channels.clear()
            else:
                channels.discard(channel)
        if channels != self.channels:
            self.channels = frozenset(channels)
            self.hub.subscribe(self, bool(channels))

    def transaction_ended(self, committed: bool) -> None:
        """The backend transaction ended: its actions take effect (or are forgotten)."""
        actions, self._pending = self._pending, []
        notifies, self._notifies = self._notifies, {}
        if not committed:
            return
        if actions:
            self._apply(actions)
        pid = self._pid()
        for channel, payload in notifies:
            self.hub.notify(self.database, channel, payload, pid)

    def close(self) -> None:
        self._pending, self._notifies = [], {}
        if self.channels:
            self.channels = frozenset()
            self.hub.subscribe(self, False)

    # -------------------------------------------------------------- the hub's side

    def deliver(self, notification: Notification) -> None:
        with self._lock:
            if len(self._inbox) == INBOX_NOTIFICATIONS:
                self.dropped += 1
            self._inbox.append(notification)
        wake = self.wake
        if wake is not None:
            wake()

    def take(self) -> list[Notification]:
        """What arrived since the last take (any thread)."""
        with self._lock:
            if not self._inbox:
                return []
            taken = list(self._inbox)
            self._inbox.clear()
            return taken


class Hub:
    """The listening sessions of every database (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listening: dict[str, set[Mailbox]] = {}

    def mailbox(self, database: str, process_id: Callable[[], int]) -> Mailbox:
        return Mailbox(self, database, process_id)

    def subscribe(self, box: Mailbox, listening: bool) -> None:
        with self._lock:
            boxes = self._listening.setdefault(box.database, set())
            if listening:
                boxes.add(box)
            else:
                boxes.discard(box)
                if not boxes:
                    del self._listening[box.database]

    def notify(self, database: str, channel: str, payload: str, pid: int) -> None:
        """Deliver to every session of ``database`` listening on ``channel``."""
        with self._lock:
            boxes = list(self._listening.get(database, ()))
        for box in boxes:
            if channel in box.channels:
                box.deliver((pid, channel, payload))


# ------------------------------------------------------------------ the statements


def _syntax(sql: str, i: int) -> PgError:
    m = _WORD.match(sql, i) or _QUOTED.match(sql, i) or _STRING.match(sql, i)
    near = m.group(0) if m else sql[i:i + 1]
    where = f'at or near "{near}"' if i < len(sql) and near else "at end of input"
    return PgSyntaxError(f"syntax error {where}", position=i + 1)


def _skip(sql: str, i: int) -> int:
    return _SPACE.match(sql, i).end()  # type: ignore[union-attr]


def _channel(sql: str, i: int) -> tuple[str, int]:
    m = _QUOTED.match(sql, i)
    if m is not None:
        name = m.group(1).replace('""', '"')
        if not name:
            raise PgSyntaxError("zero-length delimited identifier at or near \"\"\"\"",
                                position=i + 1)
        return truncate_identifier(name), m.end()
    m = _WORD.match(sql, i)
    if m is None:
        raise _syntax(sql, i)
    return truncate_identifier(m.group(0).lower()), m.end()


def _end(sql: str, i: int) -> None:
    i = _skip(sql, i)
    if i < len(sql) and sql[i] == ";":
        i = _skip(sql, i + 1)
    if i < len(sql):
        raise _syntax(sql, i)


def run(sql: str, keyword: str, box: Mailbox, in_block: bool) -> Result:
    """Run ``LISTEN`` / ``UNLISTEN`` / ``NOTIFY`` (``keyword``, the text's first word)."""
    start = _skip(sql, 0)
    i = _skip(sql, start + len(keyword))
    if keyword == "UNLISTEN" and sql.startswith("*", i):
        _end(sql, i + 1)
        box.unlisten(None, in_block)
        return command("UNLISTEN")
    channel, i = _channel(sql, i)
    if keyword == "LISTEN":
        _end(sql, i)
        box.listen(channel, in_block)
        return command("LISTEN")
    if keyword == "UNLISTEN":
        _end(sql, i)
        box.unlisten(channel, in_block)
        return command("UNLISTEN")
    payload = ""
    j = _skip(sql, i)
    if sql.startswith(",", j):
        k = _skip(sql, j + 1)
        m = _STRING.match(sql, k)
        if m is None:
            raise _syntax(sql, k)
        payload, i = m.group(1).replace("''", "'"), m.end()
    _end(sql, i)
    if len(payload.encode("utf-8")) > MAX_PAYLOAD_BYTES:
        raise InvalidParameterValue("payload string too long")
    box.notify(channel, payload, in_block)
    return command("NOTIFY")
