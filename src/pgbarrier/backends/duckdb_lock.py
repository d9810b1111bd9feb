"""``LOCK [TABLE] [ONLY] name [*] [, ...] [IN ACCESS SHARE MODE] [NOWAIT]`` on DuckDB.

Rules this module keeps:

* PostgreSQL's order of checks: outside a transaction block it is 25P01 (``LOCK TABLE can
  only be used in transaction blocks``) before any name is looked up; then every relation
  must exist (42P01, as a query of it would say).
* Only ACCESS SHARE mode (the default is ACCESS EXCLUSIVE) is taken, and it takes nothing:
  it conflicts only with ACCESS EXCLUSIVE (DROP, ALTER), and a DuckDB transaction's
  catalog is a snapshot, so a concurrent DROP or ALTER does not change what the
  transaction sees (what pg_dump locks its tables for). Any other mode would have to
  block other sessions' writes, which DuckDB cannot do: 0A000 naming the mode.
* Statement syntax pgbarrier does not read is 42601 at the first token it cannot take.
"""

from __future__ import annotations

import re

from pgbarrier.errors import FeatureNotSupported, PgError, SyntaxError

__all__ = ["lock_targets"]

_NAME = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_QUALIFIED = rf"{_NAME}(?:\s*\.\s*{_NAME})?"
_TARGET = re.compile(rf"\s*(?:ONLY\s+)?({_QUALIFIED})(?:\s*\*)?\s*", re.I)
_HEAD = re.compile(r"\s*LOCK(?:\s+TABLE\b)?", re.I)
_MODE = re.compile(r"IN\s+((?:[A-Za-z]+\s+)+?)MODE\b\s*", re.I)
_MODES = frozenset({"ACCESS SHARE", "ROW SHARE", "ROW EXCLUSIVE", "SHARE UPDATE EXCLUSIVE",
                    "SHARE", "SHARE ROW EXCLUSIVE", "EXCLUSIVE", "ACCESS EXCLUSIVE"})
_NOWAIT = re.compile(r"NOWAIT\b\s*", re.I)


def _syntax_error(sql: str, at: int) -> SyntaxError:
    rest = sql[at:].strip().rstrip(";").split()
    return SyntaxError(f'syntax error at or near "{rest[0] if rest else ";"}"',
                       position=at + 1 + (len(sql[at:]) - len(sql[at:].lstrip())))


def lock_targets(sql: str, in_block: bool) -> list[str]:
    """The relations of a LOCK statement (as written, to look up), after the checks above."""
    head = _HEAD.match(sql)
    if head is None:
        raise _syntax_error(sql, 0)
    at = head.end()
    names: list[str] = []
    while True:
        m = _TARGET.match(sql, at)
        if m is None:
            raise _syntax_error(sql, at)
        names.append(m.group(1))
        at = m.end()
        if not sql.startswith(",", at):
            break
        at += 1
    mode = "ACCESS EXCLUSIVE"
    m = _MODE.match(sql, at)
    if m is not None:
        mode = " ".join(m.group(1).upper().split())
        if mode not in _MODES:
            raise _syntax_error(sql, m.start(1))
        at = m.end()
    m = _NOWAIT.match(sql, at)
    if m is not None:
        at = m.end()
    if sql[at:].strip().strip(";").strip():
        raise _syntax_error(sql, at)
    if not in_block:
        raise PgError("LOCK TABLE can only be used in transaction blocks", sqlstate="25P01")
    if mode != "ACCESS SHARE":
        raise FeatureNotSupported(
            f"LOCK TABLE ... IN {mode} MODE is not supported on the DuckDB backend",
            hint="Only ACCESS SHARE mode (what pg_dump takes) is; DuckDB's transactions "
                 "see a snapshot of the catalog.")
    return names
