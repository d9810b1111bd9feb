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
* Other names (``REFRESH``/``DROP``/``ALTER MATERIALIZED VIEW``, databases) follow the
  same rule. A name must be an identifier: a string literal or parameter in its place is
  42601 at it, and an empty quoted name is PostgreSQL's 42601 ``zero-length delimited
  identifier``.
* Both :func:`parse_control` and :func:`truncation_notices` are pure functions of the
  text, and their answers are kept per text (texts up to :data:`_CACHED_TEXT` characters,
  :data:`_CACHED` of them): a client runs the same ``PAUSE``/``RESUME`` again and again,
  and each used to tokenize it twice (about 0.25 ms of a 0.4 ms statement). Statements
  are frozen; a failing text is parsed again each time (errors are not kept).
* This module reads PostgreSQL's grammar; it does not decide what a backend supports.
  Clauses one backend cannot honour are kept in the statement with their 1-based
  positions (``*_at``), and the control plane refuses them there (:mod:`pgbarrier.control`).
* ``RefreshMaterializedView``: ``REFRESH MATERIALIZED VIEW [CONCURRENTLY] v [WITH [NO]
  DATA]``: ``concurrently``, ``with_data`` (None when not given) and ``with_at`` (the
  ``WITH``). A clause that is not exactly ``WITH [NO] DATA`` is 42601 at its first wrong
  token.
* ``DropMaterializedView``: ``DROP MATERIALIZED VIEW [IF EXISTS] v [, ...] [CASCADE |
  RESTRICT]``: ``names`` (``name`` is the first), ``cascade`` with ``cascade_at``, and
  ``second_at`` (the second name, when there are several). Other clauses sqlglot accepts
  there (``PURGE``, a column list...) are 42601 at their first token.
* ``ShowDatabases`` / ``ShowMaterializedViews``: exactly ``SHOW DATABASES`` / ``SHOW
  MATERIALIZED VIEWS`` (the classifier passes no other ``SHOW``).
* ``AlterMaterializedViewName``: ``ALTER MATERIALIZED VIEW v RENAME TO w`` and ``... SET
  SCHEMA s`` (read from the tokens, nothing after them checked: the control plane relays
  the text unless ``v`` is pgbarrier's).
* ``AlterMaterializedViewAs``: ``ALTER MATERIALIZED VIEW v AS query``; ``query`` is the
  original text after ``AS``, cut like ``CreateMaterializedView.query``.
* ``CreateDatabase`` / ``DropDatabase``: ``CREATE DATABASE d [[WITH] option ...]`` and
  ``DROP DATABASE [IF EXISTS] d [[WITH] (FORCE)]``. CREATE's options are kept as the
  client's text (``options``; the control plane passes them to an upstream PostgreSQL,
  which judges them, and refuses them on DuckDB with 0A000 naming the first one,
  lower-cased as PostgreSQL names options: ``CREATE DATABASE option "owner" is not
  supported``). DROP's only option is ``FORCE`` (``force``); any other is PostgreSQL's
  42601 ``unrecognized DROP DATABASE option "x"``. ``CREATE DATABASE IF NOT EXISTS`` is
  0A000. A ``.`` or ``,`` after the name, a ``WITH`` with nothing after it, or a
  non-word there is PostgreSQL's 42601.
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
* Calendar schedule (issue 29, item 6): ``BATCH REFRESH CRON 'expr' [AT TIME ZONE 'zone']``
  or ``WITH (refresh.cron = 'expr' [, refresh.timezone = 'zone'])`` (a zone from either
  place goes with an expression from either) -> ``refresh_cron`` (blanks collapsed) and
  ``refresh_timezone`` (the tz database's spelling, UTC when not given), with
  ``refresh_interval_sec`` the default 60 (a batch-refresh view's marker). The values are
  checked here (:func:`pgbarrier.cron.check`: 22023 naming the field that is wrong, or the
  zone); a second schedule (``EVERY``, ``refresh.interval.sec``, another ``refresh.cron``) or
  a second zone is 42601 ``conflicting or redundant options``; a zone without an
  expression is 22023.
* A batch-refresh view's other ``WITH (refresh.x = value)`` options (keys beginning
  ``refresh.``: ``refresh.retry_backoff.sec``...) are kept in ``refresh_options`` as (key,
  value text, position), for the control plane to check (:mod:`pgbarrier.jobs.policy`); a
  streaming view's are storage text like any other.
* PostgreSQL's storage clauses of ``CREATE MATERIALIZED VIEW`` are read from the tokens
  between the name (or column list) and ``AS``: ``USING method``, ``TABLESPACE name`` and
  the ``WITH (...)`` options other than ``refresh.interval.sec``, kept as their original
  text in ``storage`` (``("USING", "USING heap")``, ``("WITH", "fillfactor = 70")``...)
  with ``storage_at`` (the first one's position); a trailing ``WITH [NO] DATA`` is
  ``with_data`` (None when not given, positioned by ``with_data_at``) and is not part of
  ``query``. Anything else between the name and ``AS`` (whatever sqlglot made of it) is
  42601 at its first token: no message ever names sqlglot's own node names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from functools import lru_cache
from fractions import Fraction

from sqlglot import exp
from sqlglot.errors import ParseError, TokenError
from sqlglot.optimizer.scope import traverse_scope
from sqlglot.tokens import Token, TokenType

from pgbarrier import errors
from pgbarrier.errors import Notice
from pgbarrier.cron import check as check_cron
from pgbarrier.pgproto import types as pgt
from pgbarrier.sql.grammar import END, NAME, QNAME, WORD, ControlStatement
from pgbarrier.sql.classify import unterminated_token
from pgbarrier.sql.identifiers import truncate_identifier, truncation_notice
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
    "AlterMaterializedViewAs",
    "AlterMaterializedViewName",
    "ControlStatement",
    "CreateDatabase",
    "CreateMaterializedView",
    "DropDatabase",
    "DropMaterializedView",
    "Flush",
    "PauseDatabase",
    "RenameDatabase",
    "RefreshMaterializedView",
    "ResumeDatabase",
    "STATEMENTS",
    "ShowDatabases",
    "ShowMaterializedViews",
    "normalize_identifier",
    "parse_control",
    "parse_interval",
    "parse_interval_seconds",
    "truncation_notices",
]

DEFAULT_BATCH_REFRESH_SEC = 60
MAX_REFRESH_INTERVAL_SEC = 2**31 - 1
REFRESH_OPTION = "refresh.interval.sec"
CRON_OPTION = "refresh.cron"
ZONE_OPTION = "refresh.timezone"
#: the WITH options that are pgbarrier's (the rest are PostgreSQL's storage parameters)
SCHEDULE_OPTIONS = (REFRESH_OPTION, CRON_OPTION, ZONE_OPTION)


@dataclass(frozen=True)
class PauseDatabase(ControlStatement):
    """``ALTER DATABASE d PAUSE [FOR [INTERVAL] 'interval'] [REASON 'text']``. Its shapes
    also catch ``ALTER DATABASE d <one word>`` (PostgreSQL has no one-word action): a typo
    such as ``PAUZE`` is 42601, not relayed.

    ``for_ms``: how long the pause lasts before it resumes by itself (None: until RESUME).
    The clauses come in either order, each once; the interval is PostgreSQL's interval
    input (:func:`parse_interval_seconds`'s forms): text that is not one is 22007
    ``invalid input syntax for type interval``, one that is not positive (or is over
    :data:`MAX_REFRESH_INTERVAL_SEC` seconds) 22023. Nothing else may follow (42601)."""

    SHAPES = (("ALTER", "DATABASE", NAME, "PAUSE"), ("ALTER", "DATABASE", NAME, WORD, END))
    TAG = "ALTER DATABASE"

    database: str
    for_ms: int | None = None
    reason: str | None = None

    @classmethod
    def parse_tokens(cls, blame: Any) -> PauseDatabase | None:
        return _pause_clauses(blame)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.pause_database(self, info, session)


@dataclass(frozen=True)
class ResumeDatabase(ControlStatement):
    """``ALTER DATABASE d RESUME``."""

    SHAPES = (("ALTER", "DATABASE", NAME, "RESUME"),)
    TAG = "ALTER DATABASE"

    database: str

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.resume_database(self, info, session)


@dataclass(frozen=True)
class Flush(ControlStatement):
    """``FLUSH``."""

    SHAPES = (("FLUSH",),)
    TAG = "FLUSH"

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.flush(info)


@dataclass(frozen=True)
class CreateMaterializedView(ControlStatement):
    """``CREATE MATERIALIZED VIEW``; ``refresh_interval_sec is None`` for a streaming MV."""

    SHAPES = (("CREATE", "MATERIALIZED", "VIEW"),)
    TAG = "CREATE MATERIALIZED VIEW"

    name: str
    columns: tuple[str, ...] | None
    query: str
    if_not_exists: bool
    refresh_interval_sec: int | None
    inputs: frozenset[str]
    definition: str
    #: PostgreSQL's storage clauses as (kind, original text): kind USING, TABLESPACE or
    #: WITH (one per storage parameter other than refresh.interval.sec)
    storage: tuple[tuple[str, str], ...] = ()
    storage_at: int | None = None
    #: ``WITH DATA`` (True), ``WITH NO DATA`` (False), or not given (None)
    with_data: bool | None = None
    with_data_at: int | None = None
    #: a calendar schedule (``BATCH REFRESH CRON``, ``refresh.cron``) as kept, and its
    #: zone (UTC when not given); ``refresh_interval_sec`` is then the default, 60
    refresh_cron: str | None = None
    refresh_timezone: str | None = None
    #: a batch-refresh view's ``WITH (refresh.x = value)`` options other than the
    #: interval, as (key, value text, 1-based position); read by jobs/policy.py
    refresh_options: tuple[tuple[str, str, int], ...] = ()

    def passes_through(self, plane: Any, info: Any, session: Any) -> bool:
        return plane.create_passes_through(self, info, session)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.create_mv(self, info, session)


@dataclass(frozen=True)
class RefreshMaterializedView(ControlStatement):
    """``REFRESH MATERIALIZED VIEW [CONCURRENTLY] v [WITH [NO] DATA]``."""

    SHAPES = (("REFRESH", "MATERIALIZED", "VIEW"),)
    TAG = "REFRESH MATERIALIZED VIEW"

    name: str
    concurrently: bool = False
    with_data: bool | None = None
    with_at: int | None = None

    def passes_through(self, plane: Any, info: Any, session: Any) -> bool:
        return not plane.is_ours(info, self.name, session)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.refresh_mv(self, info, session)


@dataclass(frozen=True)
class DropMaterializedView(ControlStatement):
    """``DROP MATERIALIZED VIEW [IF EXISTS] v [, ...] [CASCADE | RESTRICT]``."""

    SHAPES = (("DROP", "MATERIALIZED", "VIEW"),)
    TAG = "DROP MATERIALIZED VIEW"

    name: str
    if_exists: bool
    names: tuple[str, ...] = ()
    cascade: bool = False
    cascade_at: int | None = None
    second_at: int | None = None

    def __post_init__(self) -> None:
        if not self.names:
            object.__setattr__(self, "names", (self.name,))

    def passes_through(self, plane: Any, info: Any, session: Any) -> bool:
        return not any(plane.is_ours(info, n, session) for n in self.names)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.drop_mv(self, info, session)


@dataclass(frozen=True)
class AlterMaterializedViewName(ControlStatement):
    """``ALTER MATERIALIZED VIEW v RENAME TO w`` / ``... SET SCHEMA s``: ``action`` is
    ``"RENAME TO"`` or ``"SET SCHEMA"``, ``target`` the new name or schema as PostgreSQL
    reads it."""

    SHAPES = tuple(("ALTER", "MATERIALIZED", "VIEW", *head, QNAME, *action)
                   for head in ((), ("IF", "EXISTS"))
                   for action in (("RENAME", "TO"), ("SET", "SCHEMA")))
    TAG = "ALTER MATERIALIZED VIEW"

    name: str
    action: str
    target: str = ""
    if_exists: bool = False

    @classmethod
    def parse_tokens(cls, blame: Any) -> AlterMaterializedViewName | None:
        return _alter_mv_name(blame)

    def passes_through(self, plane: Any, info: Any, session: Any) -> bool:
        return not plane.is_ours(info, self.name, session)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.alter_mv_name(self, info, session)


@dataclass(frozen=True)
class AlterMaterializedViewAs(ControlStatement):
    """``ALTER MATERIALIZED VIEW v AS query``; ``query`` is the original text after ``AS``."""

    SHAPES = (("ALTER", "MATERIALIZED", "VIEW", QNAME, "AS"),)
    TAG = "ALTER MATERIALIZED VIEW"

    name: str
    query: str

    def passes_through(self, plane: Any, info: Any, session: Any) -> bool:
        return not plane.is_ours(info, self.name, session)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.alter_mv(self, info, session)


@dataclass(frozen=True)
class ShowMaterializedViews(ControlStatement):
    """``SHOW MATERIALIZED VIEWS``."""

    SHAPES = (("SHOW", "MATERIALIZED", "VIEWS", END),)
    TAG = "SHOW"
    IN_TRANSACTION = True
    DESCRIBE = (("Name", pgt.TEXT),)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.show_materialized_views(info)


@dataclass(frozen=True)
class ShowDatabases(ControlStatement):
    """``SHOW DATABASES``."""

    SHAPES = (("SHOW", "DATABASES", END),)
    TAG = "SHOW"
    IN_TRANSACTION = True
    DESCRIBE = (("Name", pgt.TEXT),)

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.show_databases(info)


@dataclass(frozen=True)
class CreateDatabase(ControlStatement):
    """``CREATE DATABASE d [[WITH] option ...]``: ``options`` is the client's text after
    the name (None: none), from 1-based ``options_at``."""

    SHAPES = (("CREATE", "DATABASE"),)
    TAG = "CREATE DATABASE"

    name: str
    options: str | None = None
    options_at: int | None = None

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.create_database(self, info, session)


@dataclass(frozen=True)
class DropDatabase(ControlStatement):
    """``DROP DATABASE [IF EXISTS] d [[WITH] (FORCE)]``."""

    SHAPES = (("DROP", "DATABASE"),)
    TAG = "DROP DATABASE"

    name: str
    if_exists: bool
    force: bool = False

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.drop_database(self, info, session)


@dataclass(frozen=True)
class RenameDatabase(ControlStatement):
    """``ALTER DATABASE d RENAME TO e``."""

    SHAPES = (("ALTER", "DATABASE", NAME, "RENAME", "TO"),)
    TAG = "ALTER DATABASE"

    name: str
    new_name: str

    @classmethod
    def parse_tokens(cls, blame: Any) -> RenameDatabase | None:
        return _rename_database(blame)

    def passes_through(self, plane: Any, info: Any, session: Any) -> bool:
        return not plane.database_exists(self.name)  # not pgbarrier's: PostgreSQL's

    def run(self, plane: Any, info: Any, session: Any) -> Any:
        return plane.rename_database(self, info, session)


#: the statements read here, in the order their token readers are tried
STATEMENTS: tuple[type[ControlStatement], ...] = (
    PauseDatabase, ResumeDatabase, Flush, CreateMaterializedView, RefreshMaterializedView,
    DropMaterializedView, AlterMaterializedViewAs, AlterMaterializedViewName,
    ShowMaterializedViews, ShowDatabases, CreateDatabase, DropDatabase, RenameDatabase,
)

_DIALECT = PgBarrier()


def normalize_identifier(ident: exp.Expr | str) -> str:
    """PostgreSQL's rule: unquoted names fold to lower case, quoted ones stay; either is
    cut to 63 bytes (:mod:`pgbarrier.sql.identifiers`)."""
    if isinstance(ident, exp.Identifier):
        name = ident.name if ident.quoted else ident.name.lower()
    elif isinstance(ident, exp.Expr):
        name = ident.name.lower()
    else:
        name = ident.lower()
    return truncate_identifier(name)


#: control statement texts whose parse and notices are kept, and the longest kept
_CACHED = 256
_CACHED_TEXT = 8192


def truncation_notices(sql: str) -> list[Notice]:
    """PostgreSQL's scanner NOTICE (42622) for each identifier of ``sql`` over 63 bytes."""
    if len(sql) <= _CACHED_TEXT:
        return list(_cached_notices(sql))
    return _truncation_notices(sql)


@lru_cache(maxsize=_CACHED)
def _cached_notices(sql: str) -> tuple[Notice, ...]:
    return tuple(_truncation_notices(sql))


def _truncation_notices(sql: str) -> list[Notice]:
    try:
        tokens = _DIALECT.tokenize(sql)
    except TokenError:
        return []
    notices = []
    for tok in tokens:
        if tok.token_type not in (TokenType.VAR, TokenType.IDENTIFIER):
            continue
        name = tok.text if tok.token_type == TokenType.IDENTIFIER else tok.text.lower()
        notice = truncation_notice(name)
        if notice is not None:
            notices.append(notice)
    return notices


def _table_name(table: exp.Table) -> str:
    """pgbarrier's name of a materialized view: ``v``, or ``schema.v`` outside ``public``
    (``public.v`` and ``"public".v`` are ``v``)."""
    parts = [normalize_identifier(p) for p in table.parts]
    return parts[-1] if parts[:-1] == ["public"] else ".".join(parts)


# -- syntax errors ------------------------------------------------------------------------


class _Blame:
    """Builds PostgreSQL-worded 42601 errors for one statement text."""

    def __init__(self, sql: str, tokens: list[Token], semicolon: Token | None) -> None:
        self.sql = sql
        self.tokens = tokens
        self.semicolon = semicolon  # the first trailing ";", PostgreSQL's "end" token

    def sql_tokens(self) -> list[Token]:
        """The statement's tokens again (with a trailing ``WITH [NO] DATA``)."""
        return _DIALECT.tokenize(self.sql)

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
            if len(tokens) > 1 and _is_word(tokens[1], "MATERIALIZED"):
                # ALTER MATERIALIZED VIEW <name> AS ...: only the name can have failed.
                return self.at(3)
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
_KEYWORD = re.compile(r"[^\W\d][\w$]*")


def _is_word(token: Token, word: str | None = None) -> bool:
    """An unquoted word (``word`` itself, case-insensitively, when given)."""
    if token.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
        return False
    if word is not None:
        return token.text.upper() == word
    return _KEYWORD.fullmatch(token.text) is not None


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


def parse_control(sql: str, statements: Iterable[type[ControlStatement]] = STATEMENTS
                  ) -> ControlStatement:
    """Parse one control statement (see the module rules) of ``statements`` (the
    registry, :data:`pgbarrier.sql.controls.STATEMENTS`, passes them all)."""
    statements = tuple(statements)
    if len(sql) <= _CACHED_TEXT:
        return _cached_parse(sql, statements)
    return _parse_control(sql, statements)


@lru_cache(maxsize=_CACHED)
def _cached_parse(sql: str, statements: tuple[type[ControlStatement], ...]) -> ControlStatement:
    return _parse_control(sql, statements)


def _parse_control(sql: str, statements: tuple[type[ControlStatement], ...] = STATEMENTS
                   ) -> ControlStatement:
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
    with_data, with_at, tokens = _trailing_with_data(tokens)
    blame = _Blame(sql, tokens, semicolon)
    database_options = _database_options(blame)
    if isinstance(database_options, errors.PgError):
        raise database_options
    if database_options is not None:  # the name's statement, then its options
        cut, options, options_at, force = database_options
        head = _parse_control(sql[:tokens[cut - 1].end + 1], statements)
        if isinstance(head, CreateDatabase):
            return CreateDatabase(head.name, options, options_at)
        assert isinstance(head, DropDatabase)
        return DropDatabase(head.name, head.if_exists, force)

    for statement in statements:  # the statements that read themselves from the tokens
        read = statement.parse_tokens(blame)
        if read is not None:
            return read
    parser: PgBarrierParser = _DIALECT.parser()  # type: ignore[assignment]
    try:
        tree = parser.parse(tokens, sql)[0]
    except ParseError:
        refresh = _refresh_with_data(blame, parser.failure)
        if isinstance(refresh, errors.PgError):
            raise refresh from None
        if refresh is None:
            raise blame.near(parser.failure) from None
        tree = parser.parse(tokens[: refresh[2]], sql)[0]
        if not (isinstance(tree, exp.Refresh) and tree.text("kind") == "MATERIALIZED VIEW"):
            raise blame.near(parser.failure) from None
        at = 4 if _is_word(tokens[3], "CONCURRENTLY") else 3
        return RefreshMaterializedView(_object_name(blame, tree.this, at), concurrently=at == 4,
                                       with_data=refresh[0], with_at=refresh[1])

    if isinstance(tree, exp.Command):
        raise blame.command(parser)
    if isinstance(tree, AlterDatabaseBarrier):
        name = normalize_identifier(tree.this)
        return PauseDatabase(name) if tree.args["action"] == "PAUSE" else ResumeDatabase(name)
    if isinstance(tree, FlushNode):
        return Flush()
    if isinstance(tree, exp.Create) and _is_materialized_view(tree):
        return _create_mv(sql, blame, parser, tree, with_data, with_at)
    if with_data is not None:  # WITH [NO] DATA ends only a CREATE MATERIALIZED VIEW
        raise blame.near(None if with_at is None else next(
            t for t in blame.sql_tokens() if t.start + 1 == with_at))
    if isinstance(tree, exp.Create) and tree.kind == "DATABASE":
        return CreateDatabase(_object_name(blame, tree.this, 2))
    if isinstance(tree, exp.Drop) and tree.kind == "DATABASE":
        tables = tree.args.get("tables") or []
        if_exists = bool(tree.args.get("exists"))
        name = _object_name(blame, tables[0] if tables else None, 4 if if_exists else 2)
        return DropDatabase(name, if_exists=if_exists)
    if isinstance(tree, exp.Drop) and tree.kind == "VIEW" and tree.args.get("materialized"):
        return _drop_mv(blame, tree)
    if isinstance(tree, exp.Refresh) and tree.text("kind") == "MATERIALIZED VIEW":
        at = 4 if len(tokens) > 3 and _is_word(tokens[3], "CONCURRENTLY") else 3
        return RefreshMaterializedView(_object_name(blame, tree.this, at), concurrently=at == 4)
    if isinstance(tree, exp.Show) and tree.name == "DATABASES":
        return ShowDatabases()
    if isinstance(tree, exp.Show) and tree.name == "MATERIALIZED VIEWS":
        return ShowMaterializedViews()
    if isinstance(tree, exp.Alter) and tree.text("kind") == "MATERIALIZED VIEW":
        return _alter_mv(sql, blame, parser, tree)
    raise ValueError(f"parse_control: not a pgbarrier control statement: {sql!r}")


def _object_name(blame: _Blame, table: exp.Expr | None, at: int) -> str:
    """The normalised name of ``table``, whose first token is ``tokens[at]``.

    Every part must be an identifier written as one (sqlglot also reads a string literal
    as a name, and a parameter as a part): else 42601 at the offending part.
    """
    if not isinstance(table, exp.Table):
        raise blame.at(at)
    for part in table.parts:
        if not isinstance(part, exp.Identifier) or "start" not in part.meta:
            raise blame.at(at)
        start = part.meta["start"]
        token = next((t for t in blame.tokens if t.start == start), None)
        if token is not None and token.token_type == TokenType.STRING:
            raise blame.near(token)
        if part.quoted and not part.name:
            raise errors.SyntaxError(
                'zero-length delimited identifier at or near """"', position=start + 1
            )
    return _table_name(table)


# -- REFRESH / DROP / ALTER MATERIALIZED VIEW, CREATE / DROP DATABASE -------------------------


def _refresh_with_data(blame: _Blame, failure: Token | None
                       ) -> errors.PgError | tuple[bool, int, int] | None:
    """``REFRESH MATERIALIZED VIEW v WITH [NO] DATA``: (with_data, position of ``WITH``,
    index of ``WITH``), a 42601 when the clause is not exactly that, None if it is not
    such a statement.

    The dialect stops at ``WITH``; a clause that is not exactly ``WITH [NO] DATA`` is
    42601 at its first wrong token (end of input when it is cut short).
    """
    tokens = blame.tokens
    if tokens[0].token_type != TokenType.REFRESH or failure is None:
        return None
    if failure.token_type != TokenType.WITH:
        return None
    i = next(k for k, t in enumerate(tokens) if t is failure)
    name_at = 4 if len(tokens) > 3 and _is_word(tokens[3], "CONCURRENTLY") else 3
    if i <= name_at:
        return None  # WITH where the name belongs
    words = ["WITH", "DATA"]
    if i + 1 < len(tokens) and _is_word(tokens[i + 1], "NO"):
        words = ["WITH", "NO", "DATA"]
    for k, word in enumerate(words):
        if i + k >= len(tokens) or not _is_word(tokens[i + k], word):
            return blame.at(i + k)
    if i + len(words) < len(tokens):
        return blame.at(i + len(words))
    return (len(words) == 2, failure.start + 1, i)


def _trailing_with_data(tokens: list[Token]) -> tuple[bool | None, int | None, list[Token]]:
    """A ``CREATE MATERIALIZED VIEW``'s trailing ``WITH [NO] DATA``: (with_data, position
    of ``WITH``, the tokens without it); (None, None, tokens) when there is none."""
    if (len(tokens) < 6 or tokens[0].token_type != TokenType.CREATE
            or not _is_word(tokens[-1], "DATA")):
        return None, None, tokens
    k = len(tokens) - 2
    no = _is_word(tokens[k], "NO")
    if no:
        k -= 1
    if tokens[k].token_type != TokenType.WITH:
        return None, None, tokens
    return not no, tokens[k].start + 1, tokens[:k]


def _database_options(blame: _Blame
                      ) -> errors.PgError | tuple[int, str, int, bool] | None:
    """``CREATE DATABASE d ...`` / ``DROP DATABASE [IF EXISTS] d ...``: what follows the name.

    None when the statement is not one of those, or has nothing after a sound name (the
    parser then reports whatever else is wrong); an error; or (tokens up to and with the
    name, the options' text, its 1-based position, FORCE given).
    """
    tokens = blame.tokens
    if len(tokens) < 3 or tokens[1].token_type != TokenType.DATABASE:
        return None
    verb = tokens[0].token_type
    if verb not in (TokenType.CREATE, TokenType.DROP):
        return None
    i = 2
    if _is_word(tokens[2], "IF") and len(tokens) > 3:
        if verb == TokenType.DROP and _is_word(tokens[3], "EXISTS"):
            i = 4
        elif verb == TokenType.CREATE and tokens[3].token_type == TokenType.NOT:
            return errors.FeatureNotSupported(
                "CREATE DATABASE IF NOT EXISTS is not supported",
                detail="pgbarrier supports CREATE DATABASE name, without options.",
                position=tokens[2].start + 1,
            )
    if i >= len(tokens) or tokens[i].token_type not in _NAME_TOKENS:
        return None
    i += 1
    if i >= len(tokens):
        return None
    cut = i
    if tokens[i].token_type in (TokenType.DOT, TokenType.COMMA):
        return blame.at(i)
    if tokens[i].token_type == TokenType.WITH:
        i += 1
    paren = i < len(tokens) and tokens[i].token_type == TokenType.L_PAREN
    if paren:
        i += 1
    if i >= len(tokens) or not _is_word(tokens[i]):
        return blame.at(i)
    options_at = tokens[cut].start + 1
    if verb == TokenType.CREATE:
        return cut, blame.sql[tokens[cut].start:tokens[-1].end + 1], options_at, False
    # DROP: (FORCE) is all PostgreSQL 15 has, in parentheses, WITH or not
    word = tokens[i].text.lower()
    if not paren:
        return blame.at(i)
    if word != "force":
        return errors.SyntaxError(f'unrecognized DROP DATABASE option "{word}"',
                                  position=tokens[i].start + 1)
    if i + 2 != len(tokens) or tokens[i + 1].token_type != TokenType.R_PAREN:
        return blame.at(min(i + 1, len(tokens) - 1))
    return cut, blame.sql[tokens[cut].start:tokens[-1].end + 1], options_at, True


def _token_index_after(blame: _Blame, node: exp.Expr) -> int:
    """Index of the first token after ``node`` (``len(tokens)`` if none)."""
    end = max((n.meta["end"] for n in node.walk() if "end" in n.meta), default=-1)
    return next((k for k, t in enumerate(blame.tokens) if t.start > end), len(blame.tokens))


def _drop_mv(blame: _Blame, tree: exp.Drop) -> DropMaterializedView:
    tokens = blame.tokens
    tables = tree.args.get("tables") or []
    if_exists = bool(tree.args.get("exists"))
    name = _object_name(blame, tables[0] if tables else None, 5 if if_exists else 3)
    names = [name]
    for table in tables[1:]:
        names.append(_object_name(blame, table, _token_index_after(blame, tables[len(names) - 1]) + 1))

    # After the names only CASCADE or RESTRICT may follow (PostgreSQL's grammar).
    after = _token_index_after(blame, tables[-1])
    cascade = after < len(tokens) and _is_word(tokens[after], "CASCADE")
    cascade_at = tokens[after].start + 1 if cascade else None
    if after < len(tokens) and (cascade or _is_word(tokens[after], "RESTRICT")):
        after += 1
    if after < len(tokens):
        raise blame.at(after)

    second_at = None
    if len(tables) > 1:
        second = _token_index_after(blame, tables[0]) + 1  # past the comma
        second_at = tokens[second].start + 1 if second < len(tokens) else None
    return DropMaterializedView(name, if_exists=if_exists, names=tuple(names), cascade=cascade,
                                cascade_at=cascade_at, second_at=second_at)


def _alter_mv_name(blame: _Blame) -> AlterMaterializedViewName | None:
    """``ALTER MATERIALIZED VIEW v RENAME TO w`` / ``SET SCHEMA s``, read from the tokens
    (the control plane relays it unless ``v`` is pgbarrier's); None for any other text."""
    t = blame.tokens
    if len(t) < 6 or not (_is_word(t[0], "ALTER") and _is_word(t[1], "MATERIALIZED")
                          and _is_word(t[2], "VIEW")):
        return None
    first = 3
    if_exists = _is_word(t[3], "IF") and _is_word(t[4], "EXISTS")
    if if_exists:
        first = 5
    i = first + 1
    while i + 1 < len(t) and t[i].token_type == TokenType.DOT:
        i += 2
    if i + 1 >= len(t):
        return None
    pair = (t[i].text.upper(), t[i + 1].text.upper())
    if pair not in (("RENAME", "TO"), ("SET", "SCHEMA")):
        return None
    parts = [_ident_text(tok) for tok in t[first:i:2]]
    name = parts[-1] if parts[:-1] in ([], ["public"]) else ".".join(parts)  # pgbarrier's naming
    if len(t) != i + 3:
        raise blame.at(min(i + 3, len(t)) if len(t) > i + 2 else i + 2)
    if t[i + 2].token_type not in _NAME_TOKENS:
        raise blame.at(i + 2)
    return AlterMaterializedViewName(name, f"{pair[0]} {pair[1]}", _ident_text(t[i + 2]),
                                     if_exists)


def _rename_database(blame: _Blame) -> RenameDatabase | None:
    """``ALTER DATABASE d RENAME TO e``, read from the tokens; None for any other text
    (a bad name after ``TO`` is PostgreSQL's 42601 at that token)."""
    t = blame.tokens
    if not (len(t) >= 5 and _is_word(t[0], "ALTER") and _is_word(t[1], "DATABASE")
            and _is_word(t[3], "RENAME") and _is_word(t[4], "TO")):
        return None
    if len(t) == 5:
        raise blame.at(5)
    if len(t) > 6:
        raise blame.at(6)
    for i in (2, 5):
        if t[i].token_type not in _NAME_TOKENS:
            raise blame.at(i)
    return RenameDatabase(_ident_text(t[2]), _ident_text(t[5]))


def _pause_clauses(blame: _Blame) -> PauseDatabase | None:
    """``ALTER DATABASE d PAUSE`` followed by clauses (see :class:`PauseDatabase`); None for
    any other text (a bare PAUSE is the dialect's)."""
    t = blame.tokens
    if not (len(t) > 4 and _is_word(t[0], "ALTER") and t[1].token_type == TokenType.DATABASE
            and t[2].token_type in _NAME_TOKENS and _is_word(t[3], "PAUSE")):
        return None
    for_ms: int | None = None
    reason: str | None = None
    seen: set[str] = set()
    i = 4
    while i < len(t):
        word = t[i].text.upper() if _is_word(t[i]) else ""
        if word not in ("FOR", "REASON") or word in seen:
            raise blame.at(i)
        seen.add(word)
        i += 1
        if word == "FOR" and i < len(t) and _is_word(t[i], "INTERVAL"):
            i += 1
        if i >= len(t) or t[i].token_type != TokenType.STRING:
            raise blame.at(i)
        text = t[i].text
        if word == "REASON":
            reason = text
        else:
            for_ms = _pause_ms(text)
        i += 1
    return PauseDatabase(truncate_identifier(_ident_text(t[2])), for_ms, reason)


def _pause_ms(text: str) -> int:
    """Milliseconds of a ``PAUSE FOR`` interval (rounded up), or its 22007 / 22023."""
    seconds = parse_interval(text)
    if seconds is None:
        raise errors.PgError(f'invalid input syntax for type interval: "{text}"',
                             sqlstate="22007")
    if not 0 < seconds <= MAX_REFRESH_INTERVAL_SEC:
        raise errors.InvalidParameterValue(
            f'invalid value for PAUSE FOR: "{text}"',
            detail="A timed pause lasts a positive interval, at most "
                   f"{MAX_REFRESH_INTERVAL_SEC} seconds.")
    return -((-seconds * 1000) // 1)


def _ident_text(token: Token) -> str:
    """A name token as PostgreSQL reads it: quoted kept, unquoted folded to lower case."""
    return token.text if token.token_type == TokenType.IDENTIFIER else token.text.lower()


def _alter_mv(
    sql: str, blame: _Blame, parser: PgBarrierParser, tree: exp.Alter
) -> AlterMaterializedViewAs:
    tokens = blame.tokens
    name = _object_name(blame, tree.this, 3)
    actions = tree.args.get("actions") or []
    index = parser.query_index
    if len(actions) != 1 or not isinstance(actions[0], exp.Query):
        raise blame.at(index if index is not None else len(tokens))
    if index is None or index >= len(tokens):
        raise blame.at(len(tokens))
    return AlterMaterializedViewAs(name, query=sql[tokens[index].start : tokens[-1].end + 1])


# -- CREATE MATERIALIZED VIEW ---------------------------------------------------------------


def _is_materialized_view(tree: exp.Create) -> bool:
    props = tree.args.get("properties")
    return tree.kind == "VIEW" and bool(
        props and any(isinstance(p, exp.MaterializedProperty) for p in props.expressions)
    )


def _create_mv(
    sql: str, blame: _Blame, parser: PgBarrierParser, tree: exp.Create,
    with_data: bool | None = None, with_data_at: int | None = None,
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
    if not isinstance(target.this if isinstance(target, exp.Schema) else target, exp.Table):
        raise blame.at(3)
    after = _token_index_after(blame, target)
    if isinstance(target, exp.Schema):  # past the column list's ")"
        while after < len(tokens) and tokens[after].token_type != TokenType.R_PAREN:
            after += 1
        after += 1
    options: list[tuple[str, str, int]] = []
    storage = _storage_clauses(blame, after, index - 1, options)
    seconds, cron_text, zone = _refresh_schedule(tree)
    if seconds is None:  # a streaming view's refresh.* options are storage text
        options = []
    storage = [("WITH" if kind == "REFRESH" else kind, text, at) for kind, text, at in storage
               if seconds is None or kind != "REFRESH"]
    if isinstance(target, exp.Schema):
        target = target.this

    definition = sql.strip()
    while definition.endswith(";"):
        definition = definition[:-1].rstrip()

    return CreateMaterializedView(
        name=_table_name(target),
        columns=columns,
        query=sql[tokens[index].start : tokens[-1].end + 1],
        if_not_exists=bool(tree.args.get("exists")),
        refresh_interval_sec=seconds,
        refresh_cron=cron_text,
        refresh_timezone=zone,
        refresh_options=tuple(options),
        inputs=query_inputs(query),
        definition=definition,
        storage=tuple((kind, text) for kind, text, _ in storage),
        storage_at=storage[0][2] if storage else None,
        with_data=with_data,
        with_data_at=with_data_at,
    )


def _storage_clauses(blame: _Blame, i: int, alias: int,
                     options: list[tuple[str, str, int]] | None = None
                     ) -> list[tuple[str, str, int]]:
    """PostgreSQL's clauses between a CREATE MATERIALIZED VIEW's name and ``AS``
    (``tokens[i:alias]``), as (kind, original text, 1-based position); pgbarrier's own
    (``BATCH REFRESH ...``, ``refresh.interval.sec``) are skipped, the parser read them.
    Other ``refresh.`` options are of kind ``REFRESH``, and (key, value, position) in
    ``options``. Anything else is 42601 at its first token."""
    tokens, sql = blame.tokens, blame.sql
    found: list[tuple[str, str, int]] = []

    def text(a: int, b: int) -> str:  # tokens[a..b] inclusive, as written
        return sql[tokens[a].start : tokens[b].end + 1]

    while i < alias:
        tok = tokens[i]
        if tok.token_type == TokenType.USING or _is_word(tok, "TABLESPACE"):
            if i + 1 >= alias or tokens[i + 1].token_type not in _NAME_TOKENS:
                raise blame.at(i + 1)
            kind = "USING" if tok.token_type == TokenType.USING else "TABLESPACE"
            found.append((kind, text(i, i + 1), tok.start + 1))
            i += 2
        elif tok.token_type == TokenType.WITH and i + 1 < alias \
                and tokens[i + 1].token_type == TokenType.L_PAREN:
            depth, start, k = 0, i + 2, i + 1
            while k < alias:
                t = tokens[k]
                if t.token_type == TokenType.L_PAREN:
                    depth += 1
                elif t.token_type == TokenType.R_PAREN:
                    depth -= 1
                if (depth == 1 and t.token_type == TokenType.COMMA) or depth == 0:
                    if k == start:
                        raise blame.at(k)
                    eq = next((j for j in range(start, k) if tokens[j].token_type == TokenType.EQ),
                              k)
                    key = "".join(x.text for x in tokens[start:eq]).lower()
                    if key.startswith("refresh.") and key not in SCHEDULE_OPTIONS and eq < k - 1:
                        # pgbarrier's own (a batch-refresh view's policy, jobs/policy.py)
                        value = (tokens[eq + 1].text if eq + 2 == k
                                 and tokens[eq + 1].token_type == TokenType.STRING
                                 else text(eq + 1, k - 1))
                        if options is not None:
                            options.append((key, value, tokens[start].start + 1))
                        found.append(("REFRESH", text(start, k - 1), tokens[start].start + 1))
                    elif key not in SCHEDULE_OPTIONS:
                        found.append(("WITH", text(start, k - 1), tokens[start].start + 1))
                    start = k + 1
                if depth == 0:
                    break
                k += 1
            if depth != 0:
                raise blame.at(alias)
            i = k + 1
        elif _is_word(tok, "BATCH") and i + 1 < alias and tokens[i + 1].token_type == TokenType.REFRESH:
            i += 2
            if i < alias and _is_word(tokens[i], "EVERY"):
                i += 3  # EVERY n UNIT | EVERY INTERVAL 'text' (the parser checked them)
            elif i < alias and _is_word(tokens[i], "CRON"):
                i += 2  # CRON 'expr' [AT TIME ZONE 'zone'] (the parser checked them)
                if i < alias and _is_word(tokens[i], "AT"):
                    i += 4
        else:
            raise blame.at(i)
    return found


def _refresh_schedule(tree: exp.Create) -> tuple[int | None, str | None, str | None]:
    """(interval seconds, cron expression, zone) of a CREATE: (None, None, None) for a
    streaming view; a cron schedule comes with the default interval (60). One schedule
    (``BATCH REFRESH ...``, ``refresh.interval.sec``, ``refresh.cron``) and one zone
    (``AT TIME ZONE``, ``refresh.timezone``) at most, else 42601 ``conflicting or redundant
    options``; a zone without a cron expression is 22023."""
    seconds: int | None = None
    cron_text: str | None = None
    cron_what = f'parameter "{CRON_OPTION}"'
    zone: str | None = None
    zone_what = f'parameter "{ZONE_OPTION}"'
    seen = zone_seen = False
    props = tree.args.get("properties")
    for prop in props.expressions if props else ():
        if isinstance(prop, exp.MaterializedProperty):
            continue
        is_zone = False
        if isinstance(prop, BatchRefreshProperty) and prop.args.get("cron") is not None:
            value: Any = prop.args["cron"].this
            cron_what = "BATCH REFRESH CRON"
            if prop.args.get("zone") is not None:
                zone, zone_what, zone_seen = prop.args["zone"].this, "AT TIME ZONE", True
        elif isinstance(prop, BatchRefreshProperty):
            value = _batch_refresh_seconds(prop)
        elif type(prop) is exp.Property:
            key = (prop.this.sql() if isinstance(prop.this, exp.Dot) else prop.name).lower()
            if key not in SCHEDULE_OPTIONS:
                continue  # a storage parameter: _storage_clauses keeps its text
            if key == REFRESH_OPTION:
                value = _option_seconds(prop.args.get("value"))
            else:
                value = _option_text(prop.args.get("value"), key)
                is_zone = key == ZONE_OPTION
        else:
            continue  # USING / TABLESPACE: _storage_clauses read them from the tokens
        if zone_seen if is_zone else seen:
            err = errors.SyntaxError("conflicting or redundant options")
            starts = [i.meta["start"] for i in prop.walk() if "start" in i.meta]
            err.position = min(starts) + 1 if starts else None
            raise err
        if is_zone:
            zone, zone_seen = value, True
        else:
            seen = True
            if isinstance(value, str):
                cron_text = value
            else:
                seconds = value
    if cron_text is not None:
        kept, zone = check_cron(cron_text, zone, what=cron_what, zone_what=zone_what)
        return DEFAULT_BATCH_REFRESH_SEC, kept, zone
    if zone_seen:
        raise errors.InvalidParameterValue(
            f'parameter "{ZONE_OPTION}" needs a cron schedule',
            hint="Give BATCH REFRESH CRON 'expression' or refresh.cron as well.")
    return seconds, None, None


def _option_text(value: exp.Expr | None, key: str) -> str:
    """A string option's text: a string literal, else 22023."""
    if isinstance(value, exp.Literal) and value.is_string:
        return value.this
    text = "" if value is None else value.sql(dialect=_DIALECT)
    raise errors.InvalidParameterValue(f'invalid value for parameter "{key}": "{text}"',
                                       detail=f"{key} takes a string literal.")


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
    """Seconds in a PostgreSQL interval literal's text, or None if it is not whole/valid."""
    total = parse_interval(text)
    if total is None or total.denominator != 1:
        return None
    return int(total)


def parse_interval(text: str) -> Fraction | None:
    """Seconds in a PostgreSQL interval literal's text (exact), or None if it is not valid.

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
    return total


# -- inputs ---------------------------------------------------------------------------------


def query_inputs(query: exp.Expr) -> frozenset[str]:
    """The relations ``query`` reads, named as the module docstring says."""
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
