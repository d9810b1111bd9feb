"""Log lines an operator can search: ``--log-format text | json``.

Rules this module keeps:

* One place formats every log record (:func:`configure`, called once by ``pgbarrier
  serve``); the rest of pgbarrier logs through :mod:`logging` and adds what a record is
  about as ``extra`` fields, named in :data:`FIELDS`: ``event`` (what happened, one word:
  ``pause``, ``resume``, ``job_created``, ``job_dropped``, ``refresh_failed``,
  ``statement``...), ``pid`` (the session's process id, as in its BackendKeyData),
  ``user``, ``database``, ``application``, ``sqlstate``, ``duration_ms``.
  :func:`session_fields` gives the session's four.
* ``json``: one JSON object per line: ``time`` (ISO 8601, UTC, milliseconds), ``level``,
  ``logger``, ``message`` and the fields the record has; an exception's traceback is the
  ``exception`` string. JSON escapes every character that could end the line.
* ``text``: ``time LEVEL logger: message [field=value ...]``. Control characters in the
  message and in field values (a user name with a newline, say) are written as ``\\n``,
  ``\\r``, ``\\t``, ``\\xNN`` or ``\\uNNNN``, and a backslash as two, so nothing a client
  sends can begin a line of its own and every escape reads one way; a traceback's lines
  follow, each indented by a tab (no real log line starts with one).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import sys
from typing import Any, Protocol

FIELDS = ("event", "pid", "user", "database", "application", "sqlstate", "duration_ms")
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


def configure(level: str, fmt: str = "text") -> None:
    """Send every record to stderr in ``fmt`` (``text`` or ``json``) from ``level`` up."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
