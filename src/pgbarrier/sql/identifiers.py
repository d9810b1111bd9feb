"""PostgreSQL's identifier length rule, in one place.

Rules this module keeps:

* An identifier is at most ``NAMEDATALEN - 1`` = 63 bytes of UTF-8. A longer one is
  cut at a character boundary to fit (PostgreSQL's ``truncate_identifier`` with
  ``pg_mbcliplen``), never in the middle of a multi-byte character.
* Where PostgreSQL's scanner warns (an identifier written in a statement), the
  caller sends :func:`truncation_notice`: NOTICE 42622 ``identifier "<long>" will be
  truncated to "<short>"``. Where PostgreSQL truncates silently (the database and
  user names of a start-up packet), the caller uses :func:`truncate_identifier` alone.
"""

from __future__ import annotations

from pgbarrier.errors import Notice

NAMEDATALEN = 64
MAX_IDENTIFIER_BYTES = NAMEDATALEN - 1


def truncate_identifier(name: str) -> str:
    """``name`` cut to at most 63 bytes of UTF-8, at a character boundary."""
    raw = name.encode("utf-8", "surrogatepass")
    if len(raw) <= MAX_IDENTIFIER_BYTES:
        return name
    return raw[:MAX_IDENTIFIER_BYTES].decode("utf-8", "ignore")


def truncation_notice(name: str) -> Notice | None:
    """PostgreSQL's NOTICE for a written identifier that is too long, else None."""
    short = truncate_identifier(name)
    if short == name:
        return None
    return Notice(f'identifier "{name}" will be truncated to "{short}"', sqlstate="42622")
