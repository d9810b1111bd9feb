"""PostgreSQL's text output of a ``jsonb`` value, from any JSON text of it.

PostgreSQL stores ``jsonb`` parsed and prints it in one canonical form; a backend that keeps
JSON as text (DuckDB) hands back the text as written or compacted. Rules this module keeps:

* :func:`jsonb_text` is PostgreSQL's ``jsonb_out`` of the value ``text`` holds: object keys
  without duplicates (the last one wins), ordered by length in bytes, then bytewise; ``": "``
  between a key and its value and ``", "`` between items; strings escaped as PostgreSQL
  escapes them (``\\"``, ``\\\\``, ``\\b \\f \\n \\r \\t``, other control characters as
  ``\\u00XX``; everything else, ``/`` and non-ASCII included, as is); numbers as ``numeric``
  prints them (``1.50`` keeps its scale, ``1e2`` is ``100``, ``-0`` is ``0``); ``true``,
  ``false``, ``null``. Text that is not JSON is returned as it is.
* :func:`jsonb_column` applies the same rule to a column of values (NULLs kept): the one
  rule for a per-value and a columnar encoder.
"""

from __future__ import annotations

import decimal
import json
from collections.abc import Iterable
from typing import Any

__all__ = ["jsonb_column", "jsonb_text"]

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
            "\t": "\\t"}


class _Pairs(list):
    """An object as its (key, value) pairs, as written."""


def _string(s: str) -> str:
    out = ['"']
    for ch in s:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch < " ":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _number(d: decimal.Decimal) -> str:
    if d.is_zero():
        d = abs(d)  # numeric has no negative zero
    return format(d, "f")


def _out(v: Any, parts: list[str]) -> None:
    if isinstance(v, _Pairs):
        kept: dict[str, Any] = {}
        for key, value in v:
            kept.pop(key, None)
            kept[key] = value
        parts.append("{")
        for i, key in enumerate(sorted(kept, key=lambda k: (len(k.encode()), k.encode()))):
            if i:
                parts.append(", ")
            parts.append(_string(key))
            parts.append(": ")
            _out(kept[key], parts)
        parts.append("}")
    elif isinstance(v, list):
        parts.append("[")
        for i, item in enumerate(v):
            if i:
                parts.append(", ")
            _out(item, parts)
        parts.append("]")
    elif isinstance(v, str):
        parts.append(_string(v))
    elif v is True:
        parts.append("true")
    elif v is False:
        parts.append("false")
    elif v is None:
        parts.append("null")
    else:
        parts.append(_number(v))


def jsonb_text(text: str) -> str:
    """PostgreSQL's text of the jsonb value ``text`` holds (see the module's rules)."""
    try:
        value = json.loads(text, parse_float=decimal.Decimal, parse_int=decimal.Decimal,
                           parse_constant=lambda c: c, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):
        return text
    parts: list[str] = []
    _out(value, parts)
    return "".join(parts)


def jsonb_column(values: Iterable[str | None]) -> list[str | None]:
    """:func:`jsonb_text` of each value of a column (None stays None)."""
    return [None if v is None else jsonb_text(v) for v in values]
