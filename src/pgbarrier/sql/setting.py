"""Recognises ``SET`` / ``RESET`` / ``SHOW`` of one setting, cheaply (no sqlglot parse).

Rules: ``SET [SESSION|LOCAL] name {=|TO} value``, ``SET TIME ZONE value`` (name
``TimeZone``), ``SET NAMES value`` (name ``client_encoding``), ``RESET name``,
``RESET ALL`` (name ``all``), ``SHOW name`` and ``SHOW TIME ZONE``. The value is
the raw text after ``=``/``TO`` (use :func:`unquote` for a literal); names keep
the case they were written in. Anything else is ``None`` and goes its way.
Only statements whose first word is SET, RESET or SHOW are looked at.
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


@dataclass(frozen=True)
class SettingStatement:
    verb: str  # SET | RESET | SHOW
    name: str
    value: str | None = None  # raw text, SET only


def parse_setting(sql: str, first_word: str | None) -> SettingStatement | None:
    if first_word == "SET":
        m = _SET.match(sql)
        if not m:
            return None
        name = "TimeZone" if m.group(1) else "client_encoding" if m.group(2) else m.group(3)
        return SettingStatement("SET", name, m.group(4))
    if first_word == "RESET":
        m = _RESET.match(sql)
        return SettingStatement("RESET", m.group(1)) if m else None
    if first_word == "SHOW":
        m = _SHOW.match(sql)
        return SettingStatement("SHOW", "TimeZone" if m.group(1) else m.group(2)) if m else None
    return None


def unquote(value: str) -> str:
    """A SQL literal's text ('it''s' → it's, E'x' → x); other text as it is, trimmed."""
    v = value.strip()
    if len(v) >= 2 and v[0] == v[-1] == "'":
        return v[1:-1].replace("''", "'")
    if len(v) >= 3 and v[0] in "eE" and v[1] == v[-1] == "'":
        return v[2:-1].replace("''", "'")
    return v
