"""Recognises ``SET`` / ``RESET`` / ``SHOW`` of one setting, cheaply (no sqlglot parse).

Rules: ``SET [SESSION|LOCAL] name {=|TO} value``, ``SET TIME ZONE value`` (name
``TimeZone``), ``SET NAMES value`` (name ``client_encoding``), ``RESET name``,
``RESET ALL`` (name ``all``), ``SHOW name`` and ``SHOW TIME ZONE``;
``SET TRANSACTION modes`` / ``SET SESSION CHARACTERISTICS AS TRANSACTION modes`` (names
:data:`SET_TRANSACTION` / :data:`SET_CHARACTERISTICS`, the value the modes' text, read
by :func:`transaction_modes`, which also reads ``BEGIN``'s) and ``SHOW TRANSACTION
ISOLATION LEVEL`` (name ``transaction_isolation``). The value is
the raw text after ``=``/``TO`` (use :func:`unquote` for a literal); names keep
the case they were written in. Anything else is ``None`` and goes its way.
Only statements whose first word is SET, RESET or SHOW are looked at.

:func:`own_setting` is the same reading narrowed to pgbarrier's own settings
(:data:`OWN_SETTINGS`, kept per session by :mod:`pgbarrier.session.settings`): the name
lower-cased, the value unquoted. :func:`pgbarrier.sql.route.route` reads it once per text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME = r"[A-Za-z_][A-Za-z0-9_.]*"
_SET = re.compile(
    rf"\s*SET\s+(?:(?:SESSION|LOCAL)\s+)?(?:(TIME\s+ZONE)|(NAMES)|({_NAME})\s*(?:=|\bTO\b))"
    r"\s*(.*?)\s*;?\s*$", re.I | re.S)
_RESET = re.compile(rf"\s*RESET\s+({_NAME})\s*;?\s*$", re.I)
_SHOW = re.compile(rf"\s*SHOW\s+(?:(TIME\s+ZONE)|({_NAME}))\s*;?\s*$", re.I)


WHEN_PAUSED = "batch_refresh_when_paused"
STATEMENT_TIMEOUT = "statement_timeout"
IDLE_IN_TRANSACTION_TIMEOUT = "idle_in_transaction_session_timeout"
IDLE_SESSION_TIMEOUT = "idle_session_timeout"
#: kept for the control plane's name locks, and also passed to the backend
LOCK_TIMEOUT = "lock_timeout"
#: the settings pgbarrier keeps itself (lower case)
OWN_SETTINGS = frozenset({WHEN_PAUSED, STATEMENT_TIMEOUT, IDLE_IN_TRANSACTION_TIMEOUT,
                          IDLE_SESSION_TIMEOUT, LOCK_TIMEOUT})


@dataclass(frozen=True)
class SettingStatement:
    verb: str  # SET | RESET | SHOW
    name: str
    value: str | None = None  # raw text, SET only


_SET_TX = re.compile(
    r"\s*SET\s+(SESSION\s+CHARACTERISTICS\s+AS\s+)?TRANSACTION\b(.*?)\s*;?\s*$", re.I | re.S)
_SHOW_TX = re.compile(r"\s*SHOW\s+TRANSACTION\s+ISOLATION\s+LEVEL\s*;?\s*$", re.I)
#: one transaction mode (PostgreSQL's transaction_mode_item), then an optional comma
_MODE = re.compile(
    r"\s*(?:ISOLATION\s+LEVEL\s+(READ\s+UNCOMMITTED|READ\s+COMMITTED|REPEATABLE\s+READ"
    r"|SERIALIZABLE)\b|READ\s+(ONLY|WRITE)\b|(NOT\s+)?DEFERRABLE\b)\s*(,)?", re.I)
_MODE_PREFIX = re.compile(r"\s*(?:ISOLATION\s+LEVEL\b\s*(?:READ\b\s*|REPEATABLE\b\s*)?"
                          r"|ISOLATION\b\s*|READ\b\s*|NOT\b\s*)?", re.I)
#: the pseudo-names of ``SET TRANSACTION ...`` / ``SET SESSION CHARACTERISTICS AS
#: TRANSACTION ...`` (value: the modes' text, for :func:`transaction_modes`)
SET_TRANSACTION = "TRANSACTION"
SET_CHARACTERISTICS = "SESSION CHARACTERISTICS"


class ModeSyntaxError(ValueError):
    """Transaction modes PostgreSQL would not parse: ``offset`` is the offending token's."""

    def __init__(self, offset: int, token: str) -> None:
        super().__init__(token)
        self.offset = offset
        self.token = token


def transaction_modes(text: str) -> dict[str, str]:
    """The modes of ``BEGIN``/``START TRANSACTION``/``SET TRANSACTION`` (the text after
    those words): ``{"transaction_isolation": "repeatable read", "transaction_read_only":
    "on", "transaction_deferrable": "off"}`` for those given, in PostgreSQL's syntax
    (space- or comma-separated; a later mode of the same kind wins, as in PostgreSQL).
    Not that syntax is :class:`ModeSyntaxError` naming the offending token."""
    modes: dict[str, str] = {}
    pos, end = 0, len(text.rstrip().rstrip(";").rstrip())
    comma = False
    while pos < end:
        m = _MODE.match(text, pos)
        if m is None or m.end() <= pos:
            # the offending token is the first one no mode can go on with
            at = _MODE_PREFIX.match(text, pos, end).end()  # type: ignore[union-attr]
            tok = re.compile(r"\w+|\S").match(text, at, end)
            raise ModeSyntaxError(at if tok else end, tok.group(0) if tok else ";")
        if m.group(1):
            modes["transaction_isolation"] = " ".join(m.group(1).lower().split())
        elif m.group(2):
            modes["transaction_read_only"] = "on" if m.group(2).upper() == "ONLY" else "off"
        else:
            modes["transaction_deferrable"] = "off" if m.group(3) else "on"
        comma = m.group(4) is not None
        pos = m.end()
    if comma:
        raise ModeSyntaxError(end, ";")
    return modes


def parse_setting(sql: str, first_word: str | None) -> SettingStatement | None:
    if first_word == "SET":
        tx = _SET_TX.match(sql)
        if tx is not None:
            return SettingStatement("SET", SET_CHARACTERISTICS if tx.group(1) else
                                    SET_TRANSACTION, tx.group(2))
        m = _SET.match(sql)
        if not m:
            return None
        name = "TimeZone" if m.group(1) else "client_encoding" if m.group(2) else m.group(3)
        return SettingStatement("SET", name, m.group(4))
    if first_word == "RESET":
        m = _RESET.match(sql)
        return SettingStatement("RESET", m.group(1)) if m else None
    if first_word == "SHOW":
        if _SHOW_TX.match(sql):
            return SettingStatement("SHOW", "transaction_isolation")
        m = _SHOW.match(sql)
        return SettingStatement("SHOW", "TimeZone" if m.group(1) else m.group(2)) if m else None
    return None


def own_setting(sql: str, first_word: str | None) -> SettingStatement | None:
    """A SET/RESET/SHOW of one of pgbarrier's own settings (name lower-cased, value
    unquoted), else None."""
    stmt = parse_setting(sql, first_word)
    if stmt is None or stmt.name.lower() not in OWN_SETTINGS:
        return None
    value = None if stmt.value is None else unquote(stmt.value)
    return SettingStatement(stmt.verb, stmt.name.lower(), value)


def unquote(value: str) -> str:
    """A SQL literal's text ('it''s' → it's, E'x' → x); other text as it is, trimmed."""
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] == "'":
        return v[1:-1].replace("''", "'")
    if len(v) >= 3 and v[0] in "eE" and v[1] == v[-1] == "'":
        return v[2:-1].replace("''", "'")
    return v
