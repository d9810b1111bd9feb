"""Client-given names (users, databases) as log lines show them.

A name longer than PostgreSQL's identifier length (63 bytes) is cut there (at a character
boundary) and ends in ``...``, so a long name cannot flood the log. Escaping is the log
formatter's (:mod:`pgbarrier.logs`): nothing in a message can begin a line of its own.
"""

from __future__ import annotations

from pgbarrier.sql.identifiers import truncate_identifier


def for_log(name: str | None) -> str:
    """``name`` cut for a log line (see the module rules)."""
    if name is None:
        return ""
    short = truncate_identifier(name)
    return short + ("..." if short != name else "")
