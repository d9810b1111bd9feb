"""Client-given names (users, databases) as log lines show them.

Rules this module keeps:

* A name cannot forge or break a log line: control characters (C0, DEL, C1) and the
  Unicode line and paragraph separators are written as Python escapes (``\\n``, ``\\r``,
  ``\\x1b``, ``\\u2028``), and a backslash as ``\\\\``, so every escape is unambiguous.
* A name longer than PostgreSQL's identifier length (63 bytes) is cut there (at a
  character boundary) and ends in ``...``, so a long name cannot flood the log.
"""

from __future__ import annotations

import unicodedata

from pgbarrier.sql.identifiers import truncate_identifier
_ESCAPED = frozenset({"Cc", "Zl", "Zp"})


def for_log(name: str | None) -> str:
    """``name`` escaped and cut for a log line (see the module rules)."""
    if name is None:
        return ""
    short = truncate_identifier(name)
    cut, name = short != name, short
    out = []
    for ch in name:
        if ch == "\\":
            out.append("\\\\")
        elif unicodedata.category(ch) in _ESCAPED:
            out.append(ch.encode("unicode_escape").decode("ascii"))
        else:
            out.append(ch)
    return "".join(out) + ("..." if cut else "")
