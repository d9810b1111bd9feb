"""Parsed control statements and :func:`parse_control`.

Rules this module keeps:

* :func:`parse_control` takes ONE statement that :func:`pgbarrier.sql.classify.is_control`
  accepted (trailing ``;`` allowed) and returns a frozen dataclass, never a sqlglot
  ``Command``. More than one statement, or a statement that parses into something that is
  not pgbarrier's (say ``SELECT 1``), is a caller bug: ``ValueError``.
* A statement that looks like one of ours but does not parse (sqlglot raises, or falls back
  to ``exp.Command``) is :class:`~pgbarrier.errors.SyntaxError` (42601) worded like
  PostgreSQL's: ``syntax error at or near "PAUZE"`` or ``syntax error at end of input``,
  with ``position`` = 1-based character offset of the offending token in ``sql`` (for end
  of input: one past the last non-blank character). An unterminated quote or comment is
  ``unterminated quoted string at or near "'abc"`` (PostgreSQL's lexer wording).
  Positions are relative to ``sql``; shift them with ``PgError.with_position_offset``.
* Names are normalised like PostgreSQL: unquoted identifiers lower-cased, quoted ones kept
  as written; qualified names are joined with ``.`` (``"s.v"``). ``inputs`` follow the same
  rule (so ``"MyTable"`` stays ``MyTable``); CTE names are not inputs, tables a CTE reads
  are; table functions are not inputs.
* ``CreateMaterializedView.query`` is the original text from the first token after ``AS``
  to the last token of the statement (trailing comments excluded), so it can be sent to
  a backend unchanged; ``definition`` is the whole statement, trimmed, without trailing
  ``;``.
* Refresh interval:

  - no option -> ``None`` (streaming MV); ``BATCH REFRESH`` without ``EVERY`` -> 60;
  - ``WITH (refresh.interval.sec = n)``: ``n`` is an integer literal or a string holding
    one (``'5'``); it must be a positive integer, else 22023
    ``invalid value for parameter "refresh.interval.sec": "0"``;
  - ``EVERY n {SECOND|MINUTE|HOUR|DAY}[S]``: ``n`` a positive integer;
  - ``EVERY INTERVAL 'text'``: PostgreSQL interval input (``'1 minute 30 seconds'``,
    ``'90 seconds'``, ``'1 hour'``, ``'00:01:30'``, ``'1 day 02:00'``, ``'90'``, ``@``
    and ``ago``; a month counts 30 days and a year 365.25 days, as PostgreSQL's
    ``EXTRACT(EPOCH ...)`` counts them) that must come to a positive whole number of
    seconds, else 22023 ``invalid value for BATCH REFRESH EVERY: "..."``;
  - every interval is at most :data:`MAX_REFRESH_INTERVAL_SEC` (22023 above it);
  - giving both ``BATCH REFRESH`` and ``refresh.interval.sec``, or either twice, is
    PostgreSQL's 42601 ``conflicting or redundant options``.
* Any ``WITH (...)`` option other than ``refresh.interval.sec`` is 22023
  ``unrecognized parameter "name"`` (as PostgreSQL says for unknown storage parameters);
  any other CREATE clause sqlglot accepts (``TABLESPACE``, ``USING`` ...) is 0A000.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.optimizer.scope import traverse_scope
from sqlglot.tokens import Token, TokenType

from pgbarrier import errors
from pgbarrier.sql.classify import unterminated_token
from pgbarrier.sql.dialect import (
    REFRESH_UNITS,
    AlterDatabaseBarrier,
    BatchRefreshProperty,
    PgBarrier,
    PgBarrierParser,
)
from pgbarrier.sql.dialect import Flush as FlushNode

__all__ = [
    "DEFAULT_BATCH_REFRESH_SEC",
    "MAX_REFRESH_INTERVAL_SEC",
    "ControlStatement",
    "CreateMaterializedView",
    "Flush",
    "PauseDatabase",
    "ResumeDatabase",
    "normalize_identifier",
    "parse_control",
    "parse_interval_seconds",
]

DEFAULT_BATCH_REFRESH_SEC = 60
MAX_REFRESH_INTERVAL_SEC = 2**31 - 1
REFRESH_OPTION = "refresh.interval.sec"


@dataclass(frozen=True)
class PauseDatabase:
    """``ALTER DATABASE d PAUSE``."""

    database: str


@dataclass(frozen=True)
class ResumeDatabase:
    """``ALTER DATABASE d RESUME``."""

    database: str


@dataclass(frozen=True)
class Flush:
    """``FLUSH``."""


@dataclass(frozen=True)
class CreateMaterializedView:
    """``CREATE MATERIALIZED VIEW``; ``refresh_interval_sec is None`` for a streaming MV."""

    name: str
    columns: tuple[str, ...] | None
    query: str
    if_not_exists: bool
    refresh_interval_sec: int | None
    inputs: frozenset[str]
    definition: str


ControlStatement = PauseDatabase | ResumeDatabase | Flush | CreateMaterializedView

_DIALECT = PgBarrier()


def normalize_identifier(ident: exp.Expr | str) -> str:
    """PostgreSQL's rule: unquoted names fold to lower case, quoted ones stay."""
    if isinstance(ident, exp.Identifier):
        return ident.name if ident.quoted else ident.name.lower()
    if isinstance(ident, exp.Expr):
        return ident.name.lower()
    return ident.lower()


def _table_name(table: exp.Table) -> str:
    return ".".join(normalize_identifier(p) for p in table.parts)


# -- syntax errors ------------------------------------------------------------------------


class _Blame:
    """Builds PostgreSQL-worded 42601 errors for one statement text."""

    def __init__(self, sql: str, tokens: list[Token], semicolon: Token | None) -> None:
        self.sql = sql
        self.tokens = tokens
        self.semicolon = semicolon  # the first trailing ";", PostgreSQL's "end" token

    def near(self, token: Token | None) -> errors.SyntaxError:
        """``syntax error at or near "<token>"``; ``None`` means at end of input."""
        if token is None:
            token = self.semicolon
        if token is None:
            return errors.SyntaxError(
                "syntax error at end of input", position=len(self.sql.rstrip()) + 1
            )
        return self.span(token.start, token.end + 1)

    def span(self, start: int, end: int) -> errors.SyntaxError:
        text = self.sql[start:end]
        return errors.SyntaxError(f'syntax error at or near "{text}"', position=start + 1)

    def after(self, node: exp.Expr) -> errors.SyntaxError:
        """Blame the first token after ``node`` (which must carry a position)."""
        end = node.meta.get("end", -1)
        return self.near(next((t for t in self.tokens if t.start > end), None))

    def at(self, index: int) -> errors.SyntaxError:
        """Blame ``tokens[index]`` (end of input past the last token)."""
        return self.near(self.tokens[index] if 0 <= index < len(self.tokens) else None)

    def command(self, parser: PgBarrierParser) -> errors.SyntaxError:
        """42601 for a statement of ours that sqlglot could only read as a Command."""
        tokens = self.tokens
        if tokens[0].token_type == TokenType.ALTER:
            # ALTER DATABASE <name> PAUSE|RESUME <end>: blame the first token out of place.
            if len(tokens) < 2 or tokens[1].token_type != TokenType.DATABASE:
                return self.at(1)
            if len(tokens) < 3 or tokens[2].token_type not in _NAME_TOKENS:
                return self.at(2)
            if len(tokens) > 3 and tokens[3].text.upper() in ("PAUSE", "RESUME"):
                return self.at(4)
            return self.at(3)
        if tokens[0].token_type == TokenType.CREATE:
            alias = _top_level_alias(tokens)
            if alias is not None and alias + 1 < len(tokens):
                return self.query(alias + 1, parser.fallback)
        return self.near(parser.fallback)

    def query(self, first: int, fallback: Token | None) -> errors.SyntaxError:
        """Blame a CREATE whose query starts at ``tokens[first]``.

        The query is parsed on its own: its own syntax error wins; text that parses into
        something other than a query is blamed on its first token; a sound query puts the
        blame on the header, where sqlglot gave up.
        """
        if self.tokens[first].token_type not in _QUERY_STARTS:
            return self.near(self.tokens[first])
        start = self.tokens[first].start
        text = self.sql[start : self.tokens[-1].end + 1]
        parser: PgBarrierParser = _DIALECT.parser()  # type: ignore[assignment]
        try:
            trees = parser.parse(_DIALECT.tokenize(text), text)
        except ParseError:
            failure = parser.failure
            if failure is None:
                return self.near(None)
            return self.span(start + failure.start, start + failure.end + 1)
        except TokenError:
            return self.near(self.tokens[first])
        if len(trees) == 1 and isinstance(trees[0], exp.Query):
            if fallback is not None and fallback.start < start:
                return self.near(fallback)
        return self.near(self.tokens[first])


_QUERY_STARTS = frozenset(
    {TokenType.SELECT, TokenType.WITH, TokenType.L_PAREN, TokenType.VALUES, TokenType.TABLE}
)
_NAME_TOKENS = frozenset({TokenType.VAR, TokenType.IDENTIFIER}) | PgBarrierParser.ID_VAR_TOKENS


def _top_level_alias(tokens: list[Token]) -> int | None:
    """Index of the first ``AS`` outside parentheses (the one before a CREATE's query)."""
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.token_type == TokenType.L_PAREN:
            depth += 1
        elif tok.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and tok.token_type == TokenType.ALIAS:
            return i
    return None


# -- entry point --------------------------------------------------------------------------


def parse_control(sql: str) -> ControlStatement:
    """Parse one pgbarrier control statement (see the module rules)."""
    unterminated = unterminated_token(sql)
    if unterminated is not None:
        noun, at = unterminated
        raise errors.SyntaxError(f'unterminated {noun} at or near "{sql[at:]}"', position=at + 1)
    try:
        tokens = _DIALECT.tokenize(sql)
    except TokenError as exc:
        raise errors.SyntaxError("syntax error", detail=str(exc)) from None

    end = len(tokens)
    while end and tokens[end - 1].token_type == TokenType.SEMICOLON:
        end -= 1
    semicolon = tokens[end] if end < len(tokens) else None
    tokens = tokens[:end]
    if not tokens:
        raise ValueError("parse_control: empty statement")
    if any(t.token_type == TokenType.SEMICOLON for t in tokens):
        raise ValueError("parse_control: expected exactly one statement")
    blame = _Blame(sql, tokens, semicolon)

    parser: PgBarrierParser = _DIALECT.parser()  # type: ignore[assignment]
    try:
        tree = parser.parse(tokens, sql)[0]
    except ParseError:
        raise blame.near(parser.failure) from None

    if isinstance(tree, exp.Command):
        raise blame.command(parser)
    if isinstance(tree, AlterDatabaseBarrier):
        name = normalize_identifier(tree.this)
        return PauseDatabase(name) if tree.args["action"] == "PAUSE" else ResumeDatabase(name)
    if isinstance(tree, FlushNode):
        return Flush()
    if isinstance(tree, exp.Create) and _is_materialized_view(tree):
        return _create_mv(sql, blame, parser, tree)
    raise ValueError(f"parse_control: not a pgbarrier control statement: {sql!r}")


def _is_materialized_view(tree: exp.Create) -> bool:
    props = tree.args.get("properties")
    return tree.kind == "VIEW" and bool(
        props and any(isinstance(p, exp.MaterializedProperty) for p in props.expressions)
    )


# -- CREATE MATERIALIZED VIEW ---------------------------------------------------------------


def _create_mv(
    sql: str, blame: _Blame, parser: PgBarrierParser, tree: exp.Create
) -> CreateMaterializedView:
    tokens = blame.tokens
    query = tree.expression
    index = parser.query_index
    alias = _top_level_alias(tokens)
    if not isinstance(query, exp.Query) or index is None or index >= len(tokens):
        raise blame.at(alias + 1 if alias is not None else len(tokens))
    if tokens[index - 1].token_type != TokenType.ALIAS:
        # A query without AS right before it (sqlglot is lenient, PostgreSQL is not).
        raise blame.at(alias + 1 if alias is not None and alias < index else index)

    target = tree.this
    columns: tuple[str, ...] | None = None
    if isinstance(target, exp.Schema):
        names = []
        for col in target.expressions:
            if not isinstance(col, exp.Identifier):
                # PostgreSQL takes names only: blame what follows the name (its type).
                ident = col.this if isinstance(col.this, exp.Identifier) else col
                raise blame.after(ident)
            names.append(normalize_identifier(col))
        columns = tuple(names)
        target = target.this
    if not isinstance(target, exp.Table):
        raise blame.at(3)

    definition = sql.strip()
    while definition.endswith(";"):
        definition = definition[:-1].rstrip()

    return CreateMaterializedView(
        name=_table_name(target),
        columns=columns,
        query=sql[tokens[index].start : tokens[-1].end + 1],
        if_not_exists=bool(tree.args.get("exists")),
        refresh_interval_sec=_refresh_interval(tree),
        inputs=_inputs(query),
        definition=definition,
    )


def _refresh_interval(tree: exp.Create) -> int | None:
    seconds: int | None = None
    seen = False
    props = tree.args.get("properties")
    for prop in props.expressions if props else ():
        if isinstance(prop, exp.MaterializedProperty):
            continue
        if isinstance(prop, BatchRefreshProperty):
            value = _batch_refresh_seconds(prop)
        elif type(prop) is exp.Property:
            key = prop.this.sql() if isinstance(prop.this, exp.Dot) else prop.name
            if key.lower() != REFRESH_OPTION:
                raise errors.InvalidParameterValue(f'unrecognized parameter "{key}"')
            value = _option_seconds(prop.args.get("value"))
        else:
            clause = prop.key.removesuffix("property").upper() or prop.key.upper()
            raise errors.FeatureNotSupported(
                f"{clause} is not supported for materialized views",
                detail=f"pgbarrier does not support this clause: {prop.sql(dialect=_DIALECT)}",
            )
        if seen:
            err = errors.SyntaxError("conflicting or redundant options")
            starts = [i.meta["start"] for i in prop.walk() if "start" in i.meta]
            err.position = min(starts) + 1 if starts else None
            raise err
        seen = True
        seconds = value
    return seconds


def _check_range(seconds: int, message: str, detail: str) -> int:
    if not 0 < seconds <= MAX_REFRESH_INTERVAL_SEC:
        raise errors.InvalidParameterValue(message, detail=detail)
    return seconds


def _option_seconds(value: exp.Expr | None) -> int:
    if isinstance(value, exp.Literal):
        text = value.this
    elif value is None:
        text = ""
    else:
        text = value.sql(dialect=_DIALECT)
    message = f'invalid value for parameter "{REFRESH_OPTION}": "{text}"'
    detail = f"{REFRESH_OPTION} must be a positive integer (at most {MAX_REFRESH_INTERVAL_SEC})."
    stripped = text.strip()
    if not (stripped.isascii() and stripped.isdigit()):
        raise errors.InvalidParameterValue(message, detail=detail)
    return _check_range(int(stripped), message, detail)


def _batch_refresh_seconds(prop: BatchRefreshProperty) -> int:
    interval = prop.this
    if not isinstance(interval, exp.Interval):
        return DEFAULT_BATCH_REFRESH_SEC
    value = interval.this
    detail = (
        "The refresh interval must be a positive whole number of seconds"
        f" (at most {MAX_REFRESH_INTERVAL_SEC})."
    )
    if isinstance(value, exp.Literal) and value.is_string:
        text = value.this
        message = f'invalid value for BATCH REFRESH EVERY: "INTERVAL \'{text}\'"'
        seconds = parse_interval_seconds(text)
        if seconds is None:
            raise errors.InvalidParameterValue(message, detail=detail)
        return _check_range(seconds, message, detail)
    count = value.name if value else ""
    unit = interval.text("unit").upper()
    message = f'invalid value for BATCH REFRESH EVERY: "{count} {unit}"'
    if not (count.isascii() and count.isdigit()) or unit not in REFRESH_UNITS:
        raise errors.InvalidParameterValue(message, detail=detail)
    return _check_range(int(count) * REFRESH_UNITS[unit], message, detail)


# -- interval text --------------------------------------------------------------------------

_SECONDS_PER: dict[str, Fraction] = {}
for _names, _sec in (
    (("microsecond", "microseconds", "us", "usec", "usecs"), Fraction(1, 1_000_000)),
    (("millisecond", "milliseconds", "ms", "msec", "msecs"), Fraction(1, 1000)),
    (("second", "seconds", "s", "sec", "secs"), Fraction(1)),
    (("minute", "minutes", "m", "min", "mins"), Fraction(60)),
    (("hour", "hours", "h", "hr", "hrs"), Fraction(3600)),
    (("day", "days", "d"), Fraction(86400)),
    (("week", "weeks", "w"), Fraction(7 * 86400)),
    (("month", "months", "mon", "mons"), Fraction(30 * 86400)),
    (("year", "years", "y", "yr", "yrs"), Fraction(36525 * 864)),
):
    for _name in _names:
        _SECONDS_PER[_name] = _sec

_NUMBER = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))([a-z]*)")
_TIME = re.compile(r"([+-]?)(\d+):(\d+)(?::(\d+(?:\.\d*)?))?")


def parse_interval_seconds(text: str) -> int | None:
    """Seconds in a PostgreSQL interval literal's text, or None if it is not whole/valid.

    Handles ``n unit`` pairs (also ``nunit``), ``hh:mm[:ss[.f]]``, a bare number before a
    time (days) or alone (seconds), a leading ``@`` and a trailing ``ago``.
    """
    words = text.strip().lower().split()
    if words and words[0] == "@":
        words = words[1:]
    elif words and words[0].startswith("@"):
        words[0] = words[0][1:]
    negate = bool(words) and words[-1] == "ago"
    if negate:
        words = words[:-1]
    if not words:
        return None

    total = Fraction(0)
    pending: Fraction | None = None  # a bare number waiting for its unit
    for word in words:
        time = _TIME.fullmatch(word)
        if time:
            sign, hours, minutes, secs = time.groups()
            value = int(hours) * 3600 + int(minutes) * 60 + Fraction(secs or "0")
            total += -value if sign == "-" else value
            if pending is not None:  # '1 01:00:00' = one day and an hour
                total += pending * 86400
                pending = None
            continue
        if word in _SECONDS_PER:
            if pending is None:
                return None
            total += pending * _SECONDS_PER[word]
            pending = None
            continue
        number = _NUMBER.fullmatch(word)
        if not number or pending is not None:
            return None
        amount, unit = Fraction(number.group(1)), number.group(2)
        if unit:
            if unit not in _SECONDS_PER:
                return None
            total += amount * _SECONDS_PER[unit]
        else:
            pending = amount
    if pending is not None:
        total += pending  # a trailing bare number counts seconds
    if negate:
        total = -total
    if total.denominator != 1:
        return None
    return int(total)


# -- inputs ---------------------------------------------------------------------------------


def _inputs(query: exp.Expr) -> frozenset[str]:
    names: set[str] = set()
    try:
        for scope in traverse_scope(query):
            for source in scope.sources.values():
                if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
                    names.add(_table_name(source))
    except Exception:  # noqa: BLE001 - scope analysis is best effort; fall back to a walk
        ctes = {normalize_identifier(c.args["alias"].this) for c in query.find_all(exp.CTE)}
        for table in query.find_all(exp.Table):
            if not isinstance(table.this, exp.Identifier):
                continue
            name = _table_name(table)
            if table.db or name not in ctes:
                names.add(name)
    return frozenset(names)
