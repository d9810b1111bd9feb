"""Log lines an operator can search: ``--log-format text | json``.

Rules this module keeps:

* One place formats every log record (:func:`configure`, called once by ``pgbarrier
  serve``); the rest of pgbarrier logs through :mod:`logging` and adds what a record is
  about as ``extra`` fields, named in :data:`FIELDS`: ``event`` (what happened, one word:
  ``pause``, ``resume``, ``job_created``, ``job_dropped``, ``refresh_failed``,
  ``statement``...), ``pid`` (the session's process id, as in its BackendKeyData),
  ``user``, ``database``, ``application``, ``sqlstate``, ``duration_ms``, ``client``
  (the peer address of a connection). A client statement that fails is logged at ERROR
  with its SQLSTATE and the statement (:func:`statement_for_log`: never a password), as
  PostgreSQL's default ``log_min_error_statement`` does.
  :func:`session_fields` gives the session's four.
* ``json``: one JSON object per line: ``time`` (ISO 8601, UTC, milliseconds), ``level``,
  ``logger``, ``message`` and the fields the record has; an exception's traceback is the
  ``exception`` string. JSON escapes every character that could end the line.
* ``text``: ``time LEVEL logger: message [field=value ...]``. Control characters in the
  message and in field values (a user name with a newline, say) are written as ``\\n``,
  ``\\r``, ``\\t``, ``\\xNN`` or ``\\uNNNN``, and a backslash as two, so nothing a client
  sends can begin a line of its own and every escape reads one way; a traceback's lines
  follow, each indented by a tab (no real log line starts with one).
* The thread that logs never formats or writes: :func:`configure` keeps each record (the
  message's ``%`` arguments applied first) and one thread formats and writes what has
  come every 50 ms, in order. A write gives up the GIL and waits to take it back, which
  on a busy server is a share of every other thread's Python work: a PAUSE logged from
  its worker waited for that twice per round trip, and the event loop would wait for a
  slow stderr. Nothing wakes the writer per record (a wake-up is a GIL hand-off too).
  :func:`stop` (at exit, and by ``pgbarrier serve`` after shutdown) writes what is kept;
  records logged after it are written directly. ``kill -9`` loses at most the last 50 ms
  of lines. At most 10,000 records wait: past that (a stderr nobody reads) records are
  dropped and the writer says how many, so a stuck log costs neither the event loop nor
  unbounded memory.
"""

from __future__ import annotations

import atexit
import collections
import datetime as dt
import json
import logging
import re
import sys
import threading
from typing import Any, Protocol

FIELDS = ("event", "pid", "user", "database", "application", "sqlstate", "duration_ms",
          "client")
FORMATS = ("text", "json")

#: what is escaped: a backslash (so every escape reads one way), C0 and C1 controls, DEL,
#: and the Unicode line and paragraph separators
_CONTROL = re.compile("[\\\\\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape(text: str) -> str:
    """``text`` with its control characters spelled out (see the module rules)."""
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_spelled, text)


def _spelled(match: re.Match[str]) -> str:
    char = match[0]
    named = _NAMED.get(char)
    if named is not None:
        return named
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


class _Session(Protocol):
    process_id: int
    user: str
    database: str
    application_name: str


#: a password literal of CREATE/ALTER ROLE|USER ... [ENCRYPTED] PASSWORD '...' (or $$...$$)
_PASSWORD = re.compile(r"""(?is)(\bPASSWORD\s+)('(?:[^']|'')*'|E'(?:[^'\\]|\\.|'')*'|\$(\w*)\$.*?\$\3\$)""")
#: how much of a statement an ERROR line shows
STATEMENT_LOG_CHARS = 4000


def statement_for_log(sql: str) -> str:
    """``sql`` as an ERROR line shows it: a password literal as ``'***'`` (PostgreSQL
    leaves it to the operator not to log one; pgbarrier never does), cut at
    :data:`STATEMENT_LOG_CHARS` characters."""
    if "assword" in sql or "ASSWORD" in sql:
        sql = _PASSWORD.sub(r"\1'***'", sql)
    if len(sql) > STATEMENT_LOG_CHARS:
        sql = sql[:STATEMENT_LOG_CHARS] + "..."
    return sql


def session_fields(info: _Session, **more: Any) -> dict[str, Any]:
    """The ``extra`` fields of a record about the session ``info`` (and ``more``)."""
    return {"pid": info.process_id, "user": info.user, "database": info.database,
            "application": info.application_name, **more}


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {name: getattr(record, name) for name in FIELDS
            if getattr(record, name, None) not in (None, "")}


def _time(record: logging.LogRecord) -> str:
    return dt.datetime.fromtimestamp(record.created, dt.timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = (f"{self.formatTime(record)} {record.levelname} {record.name}: "
                f"{escape(record.getMessage())}")
        fields = _fields(record)
        if fields:
            line += " [" + " ".join(f"{k}={escape(str(v))}" for k, v in fields.items()) + "]"
        if record.exc_info:
            trace = self.formatException(record.exc_info)
            line += "".join("\n\t" + escape(part) for part in trace.splitlines())
        return line


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {"time": _time(record), "level": record.levelname,
                               "logger": record.name, "message": record.getMessage()}
        doc.update(_fields(record))
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False, default=str)


class _Deferred(logging.Handler):
    """Keeps each record (its message made final: ``%`` applied, so arguments changed
    later do not show) for the writer thread, which formats and writes what has come
    every ``_WRITE_EVERY_S``, in order. Logging is an append: no lock, no wake-up."""

    def __init__(self) -> None:
        super().__init__()
        self.records: collections.deque[logging.LogRecord] = collections.deque()
        #: records not kept since the writer last said so (over ``_KEPT_AT_MOST``)
        self.dropped = 0
        #: once the writer thread has ended (:func:`stop`): records go straight to it
        self.direct: logging.Handler | None = None

    def emit(self, record: logging.LogRecord) -> None:
        direct = self.direct
        if direct is not None:
            direct.handle(record)
            return
        if len(self.records) >= _KEPT_AT_MOST:
            self.dropped += 1
            return
        if record.args:
            record.msg = record.getMessage()
            record.args = None
        self.records.append(record)

    # the deque is the only state: no handler lock is needed around an append
    def handle(self, record: logging.LogRecord) -> bool:
        rv = self.filter(record)
        if rv:
            self.emit(record)
        return bool(rv)


#: how often the writer thread writes what was logged meanwhile
_WRITE_EVERY_S = 0.05
#: records kept for the writer at most: past it (stderr not read), records are dropped
#: and counted, and the writer says how many once it writes again
_KEPT_AT_MOST = 10_000


class _Writer(threading.Thread):
    def __init__(self, deferred: _Deferred, writer: logging.Handler) -> None:
        super().__init__(name="pgbarrier-log-writer", daemon=True)
        self.deferred = deferred
        self.writer = writer
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.wait(_WRITE_EVERY_S):
            self.drain()
        self.drain()

    def drain(self) -> None:
        deferred = self.deferred
        records = deferred.records
        while records:
            self.writer.handle(records.popleft())
        if deferred.dropped:
            dropped, deferred.dropped = deferred.dropped, 0  # a count lost to a race is fine
            self.writer.handle(logging.LogRecord(
                "pgbarrier.logs", logging.WARNING, __file__, 0,
                "%d log records dropped: stderr did not keep up", (dropped,), None))


#: the writer thread :func:`configure` started (its handlers with it), until :func:`stop`
_writing: _Writer | None = None
_writing_lock = threading.Lock()


def configure(level: str, fmt: str = "text") -> None:
    """Send every record to stderr in ``fmt`` (``text`` or ``json``) from ``level`` up,
    written by a thread of its own (see the module rules)."""
    global _writing
    stop()
    writer = logging.StreamHandler(sys.stderr)
    writer.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    deferred = _Deferred()
    thread = _Writer(deferred, writer)
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(deferred)
    root.setLevel(level.upper())
    with _writing_lock:
        _writing = thread
    thread.start()
    atexit.register(stop)


def stop() -> None:
    """Write what is kept, end the writer thread, and write later records directly."""
    global _writing
    with _writing_lock:
        thread, _writing = _writing, None
    if thread is None:
        return
    thread.stopping.set()
    thread.join()  # what was kept is written, in order
    thread.deferred.direct = thread.writer  # from now on written by the thread that logs
    thread.drain()  # what came between the writer's last drain and that
