"""What every rule's answer is made of: the context it reads and PostgreSQL's error it builds.

Rules this module keeps:

* :class:`Ctx` is all a rule may read: DuckDB's exception, its text and message, its caret,
  the statement DuckDB ran, and the session's lookups (tables' columns, constraints), which
  are called only by the rules that need them (an error path, never a statement's).
* :func:`err` builds the PgError with PostgreSQL's fields (``W`` context and the
  one-letter name fields as keywords); :func:`fixed_answer` an answer from templates.
* The token helpers find PostgreSQL's positions in the statement (an operator, a list's
  items, the bracket around a token) from sqlglot's tokens (:mod:`.carets`), never from
  the text by hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pgbarrier.backends.duckdb_constraint_errors import Lookup
from pgbarrier.backends.duckdb_failing_row import Query
from pgbarrier.backends.duckdb_errors import carets, scopes
from pgbarrier.errors import PgError


@dataclass
class Ctx:
    """What a rule's answer may read: DuckDB's error and the statement it ran."""

    exc: BaseException
    sql: str | None
    text: str                 # DuckDB's whole text
    message: str              # its first line, prefix and "!" dropped
    position: int | None      # DuckDB's caret, 1-based in ``sql``
    columns: scopes.ColumnsLookup | None = None
    constraints: Lookup | None = None
    #: runs a read on a connection of its own (duckdb_failing_row)
    query: Query | None = None
    #: the client's own text when pgbarrier's dialect translation rewrote it (DuckDB's caret
    #: is then in ``sql`` only): positions a rule finds in it are the client's
    client_sql: str | None = None
    #: set by :func:`literal_at` when it answered a position in ``client_sql``
    client_position: bool = False
    #: the statement's parameter values (DuckDB's), for a read of its rows again
    params: list[Any] | None = None
    #: set by :func:`literal_at` when the failing input was a bind parameter's value
    param_context: str | None = None

    @property
    def written(self) -> str | None:
        """The statement as the client wrote it."""
        return self.client_sql if self.client_sql is not None else self.sql


def err(state: str, message: str, *, detail: str | None = None, hint: str | None = None,
        position: int | None = None, context: str | None = None,
        **fields: str) -> PgError:
    e = PgError.by_sqlstate(state)(message, detail=detail, hint=hint, position=position,
                                   sqlstate=state)
    if context:
        e.fields["W"] = context
    for code, value in fields.items():
        if value is not None:
            e.fields[code] = value
    return e


def fixed_answer(state: str, message: str, *, hint: str | None = None, caret: bool = True
           ) -> Callable[[re.Match[str], Ctx], PgError]:
    """An answer made of templates (``{name}`` is the pattern's group)."""
    def answer(m: re.Match[str], ctx: Ctx) -> PgError:
        groups = {k: v for k, v in m.groupdict().items() if v is not None}
        return err(state, message.format(**groups),
                   hint=hint.format(**groups) if hint else None,
                   position=ctx.position if caret else None)
    return answer


def literal_at(ctx: Ctx, value: str) -> int | None:
    """Where PostgreSQL points for input ``value`` of a literal (:mod:`.carets`); in the
    client's own text when the dialect translation rewrote it."""
    if ctx.client_sql is not None:
        ctx.client_position = True
        found = carets.literal_position(ctx.client_sql, value, None)
    else:
        found = carets.literal_position(ctx.sql, value, ctx.position)
    if found is None and ctx.params:
        # a bind parameter's value: PostgreSQL refuses it at Bind, saying which
        k = next((i for i, v in enumerate(ctx.params) if isinstance(v, str) and v == value),
                 None)
        if k is not None:
            ctx.param_context = f"unnamed portal parameter ${k + 1} = '...'"
    return found


def list_index(toks: tuple[carets.Tok, ...], i: int) -> int | None:
    """Which element of its comma list (a VALUES row, a select list) token ``i`` starts."""
    depth, commas = 0, 0
    for j in range(i - 1, -1, -1):
        kind = toks[j].kind.name
        if kind == "R_PAREN":
            depth += 1
        elif kind == "L_PAREN":
            if depth == 0:
                return commas
            depth -= 1
        elif kind == "COMMA" and depth == 0:
            commas += 1
        elif kind in ("SELECT", "DISTINCT") and depth == 0:
            return commas
    return None


def ident_name(name: str, ctx: Ctx) -> str:
    """A name as PostgreSQL folds it: lower-cased unless the statement quoted it."""
    if ctx.sql and f'"{name}"' in ctx.sql:
        return name
    return name.lower()


def operator_position(ctx: Ctx, op: str) -> int | None:
    """PostgreSQL points at the operator: the first ``op`` token at the caret's depth."""
    toks = carets.tokens(ctx.sql)
    i = carets.token_at(ctx.sql, ctx.position)
    if i is None:
        return ctx.position
    depth = 0
    for tok in toks[i:]:
        if tok.kind.name == "L_PAREN":
            depth += 1
        elif tok.kind.name == "R_PAREN":
            depth -= 1
            if depth < 0:
                break
        elif depth == 0 and _is_op(tok, op):
            return tok.start + 1
    depth = 0
    for tok in reversed(toks[:i]):
        if tok.kind.name == "R_PAREN":
            depth += 1
        elif tok.kind.name == "L_PAREN":
            depth -= 1
            if depth < 0:
                break
        elif depth == 0 and _is_op(tok, op):
            return tok.start + 1
    return ctx.position


def _is_op(tok: carets.Tok, op: str) -> bool:
    return tok.text == op or (op == "~~" and tok.text.upper() == "LIKE") or \
        (op == "~~*" and tok.text.upper() == "ILIKE")


def bracket_items(toks: tuple[carets.Tok, ...], open_i: int) -> list[tuple[int, int]]:
    """The comma-separated items inside the bracket opened at token ``open_i``:
    (first token, one past the last token) each."""
    out, depth, start = [], 0, open_i + 1
    for j in range(open_i + 1, len(toks)):
        kind = toks[j].kind.name
        if kind in ("L_PAREN", "L_BRACKET"):
            depth += 1
        elif kind in ("R_PAREN", "R_BRACKET"):
            if depth == 0:
                if j > start:
                    out.append((start, j))
                return out
            depth -= 1
        elif kind == "COMMA" and depth == 0:
            out.append((start, j))
            start = j + 1
    return out


def enclosing_open(toks: tuple[carets.Tok, ...], i: int) -> int | None:
    """The unmatched ``(`` / ``[`` before token ``i``."""
    depth = 0
    for j in range(i - 1, -1, -1):
        kind = toks[j].kind.name
        if kind in ("R_PAREN", "R_BRACKET"):
            depth += 1
        elif kind in ("L_PAREN", "L_BRACKET"):
            if depth == 0:
                return j
            depth -= 1
    return None


def case_results(toks: tuple[carets.Tok, ...], i: int) -> list[tuple[int, int]]:
    """The THEN / ELSE results of the CASE at token ``i``."""
    out: list[tuple[int, int]] = []
    depth, start = 0, None
    for j in range(i + 1, len(toks)):
        kind, word = toks[j].kind.name, toks[j].text.upper()
        if kind == "L_PAREN" or word == "CASE":
            depth += 1
        elif kind == "R_PAREN" or (word == "END" and depth > 0):
            depth -= 1
        elif depth == 0 and word in ("WHEN", "ELSE", "END", "THEN"):
            if start is not None and j > start:
                out.append((start, j))
            start = j + 1 if word in ("THEN", "ELSE") else None
            if word == "END":
                break
    return out
