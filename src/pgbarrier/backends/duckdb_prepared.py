"""SQL-level ``PREPARE`` / ``EXECUTE`` / ``DEALLOCATE`` on DuckDB, with PostgreSQL's results.

DuckDB has its own PREPARE/EXECUTE, but its EXECUTE comes back as a statement without
rows and tag ``EXECUTE``, and it has no typed parameter list. Rules this module keeps:

* ``PREPARE name [(type, ...)] AS statement`` keeps the statement per session (names
  folded to lower case unless quoted, as PostgreSQL's); a name already prepared is 42P05
  ``prepared statement "p" already exists``. The statement is not planned until EXECUTE
  (PostgreSQL analyses it at PREPARE: an error in it shows at the first EXECUTE here).
* ``EXECUTE name [(arg, ...)]`` runs the kept statement through the session's ordinary
  path with the arguments as its ``$n`` parameters, so it returns what the statement
  returns: its rows and its own tag (``SELECT 1``, ``INSERT 0 1``), as PostgreSQL does.
  The arguments are evaluated by DuckDB (``SELECT args``), each cast to its declared type
  when PREPARE gave types. An unknown name is 26000 ``prepared statement "p" does not
  exist``; a wrong number of arguments 42601 ``wrong number of parameters for prepared
  statement "p"`` with PostgreSQL's DETAIL.
* ``DEALLOCATE [PREPARE] name`` forgets one (26000 if unknown), ``DEALLOCATE ALL`` and
  ``DISCARD ALL`` every one. Protocol-level prepared statements are the wire session's and
  not listed here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pgbarrier.errors import PgError, SyntaxError

_NAME = r'("(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_PREPARE = re.compile(rf"\s*PREPARE\s+{_NAME}\s*(?:\((.*?)\))?\s*AS\s+(.*?)\s*;?\s*$",
                      re.I | re.S)
_EXECUTE = re.compile(rf"\s*EXECUTE\s+{_NAME}\s*(?:\((.*)\))?\s*;?\s*$", re.I | re.S)
_DEALLOCATE = re.compile(rf"\s*DEALLOCATE\s+(?:PREPARE\s+)?{_NAME}\s*;?\s*$", re.I | re.S)


@dataclass(frozen=True)
class Prepared:
    statement: str
    types: tuple[str, ...]


def _name(token: str) -> str:
    if token.startswith('"'):
        return token[1:-1].replace('""', '"')
    return token.lower()


def _split_types(text: str) -> tuple[str, ...]:
    """``int, numeric(10, 2), text`` -> the types (commas inside parentheses kept)."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return tuple(out)


def _missing(name: str) -> PgError:
    return PgError(f'prepared statement "{name}" does not exist', sqlstate="26000")


class SqlPrepared:
    """One session's SQL-prepared statements."""

    def __init__(self) -> None:
        self._statements: dict[str, Prepared] = {}

    def prepare(self, sql: str) -> None:
        m = _PREPARE.match(sql)
        if m is None:
            raise SyntaxError("syntax error at or near \"PREPARE\"", position=1)
        name = _name(m.group(1))
        if name in self._statements:
            raise PgError(f'prepared statement "{name}" already exists', sqlstate="42P05")
        self._statements[name] = Prepared(m.group(3), _split_types(m.group(2) or ""))

    def lookup(self, sql: str) -> tuple[Prepared, str | None, str]:
        """The statement ``EXECUTE`` names, its argument list's text (None: none) and name."""
        m = _EXECUTE.match(sql)
        if m is None:
            raise SyntaxError("syntax error at or near \"EXECUTE\"", position=1)
        name = _name(m.group(1))
        prepared = self._statements.get(name)
        if prepared is None:
            raise _missing(name)
        args = m.group(2)
        return prepared, args if args is not None and args.strip() else None, name

    def statement_of(self, sql: str) -> Prepared | None:
        """The statement an ``EXECUTE`` text names, or None (for Describe)."""
        m = _EXECUTE.match(sql)
        return self._statements.get(_name(m.group(1))) if m else None

    def deallocate(self, sql: str) -> None:
        m = _DEALLOCATE.match(sql)
        if m is None:
            raise SyntaxError("syntax error at or near \"DEALLOCATE\"", position=1)
        name = _name(m.group(1))
        if self._statements.pop(name, None) is None:
            raise _missing(name)

    def clear(self) -> None:
        self._statements.clear()


def wrong_count(name: str, expected: int, got: int) -> PgError:
    return PgError(f'wrong number of parameters for prepared statement "{name}"',
                   sqlstate="42601", detail=f"Expected {expected} parameters but got {got}.")
