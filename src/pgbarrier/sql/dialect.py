"""The ``pgbarrier`` sqlglot dialect: RisingWave plus pgbarrier's control statements.

Rules this module keeps:

* :class:`PgBarrier` is sqlglot's RisingWave dialect with these additions, each parsed into a
  real AST node (an ``exp.Expression`` with ``arg_types``), never an ``exp.Command``:

  - ``ALTER DATABASE d PAUSE`` / ``ALTER DATABASE d RESUME`` ->
    :class:`AlterDatabaseBarrier` (``this`` = the database ``Identifier``,
    ``action`` = ``"PAUSE"`` or ``"RESUME"``). Any other ``ALTER DATABASE`` keeps
    sqlglot's behaviour (today: ``exp.Command``).
  - ``FLUSH`` (a bare, unquoted ``FLUSH`` starting a statement) -> :class:`Flush`.
    Tokens after it are a parse error ("Invalid expression / Unexpected token").
  - ``BATCH REFRESH [EVERY n unit | EVERY INTERVAL 'text']`` in a ``CREATE``'s
    property position -> :class:`BatchRefreshProperty` inside ``exp.Create``'s
    properties. ``this`` is ``None`` (no ``EVERY``) or an ``exp.Interval``: a *number*
    literal plus a unit (``SECOND[S]``, ``MINUTE[S]``, ``HOUR[S]``, ``DAY[S]``, kept as
    written, upper-cased) for ``EVERY n unit``, or a *string* literal and no unit for
    ``EVERY INTERVAL 'text'``. ``BATCH REFRESH CRON 'expr' [AT TIME ZONE 'zone']`` sets
    ``cron`` (and ``zone``) to the string literals instead, ``this`` staying ``None``
    (:mod:`pgbarrier.cron` reads them). Once ``BATCH REFRESH`` has been read,
    anything that does not fit raises a ``ParseError`` at the offending token.
  - ``REFRESH MATERIALIZED VIEW [CONCURRENTLY] v`` -> sqlglot's own ``exp.Refresh``
    (``kind="MATERIALIZED VIEW"``, ``this`` = an ``exp.Table``), the node Trino and
    StarRocks parse it into, so it generates (``REFRESH MATERIALIZED VIEW v``) in every
    dialect. ``CONCURRENTLY`` is read and dropped (a pgbarrier refresh never blocks
    readers, which is what it asks for). Once ``REFRESH MATERIALIZED VIEW`` has been
    read, a missing name is a ``ParseError`` and anything after the name (``WITH [NO]
    DATA`` included) is the usual "Unexpected token" at that token. Any other
    ``REFRESH ...`` is the ``exp.Command`` RisingWave makes of it.
  - ``SHOW DATABASES`` / ``SHOW MATERIALIZED VIEWS``, exactly, -> sqlglot's ``exp.Show``
    (``this`` = ``"DATABASES"`` / ``"MATERIALIZED VIEWS"``; MySQL parses ``SHOW
    DATABASES`` into the same node). Any other ``SHOW ...`` (``SHOW search_path``, ``SHOW TABLES``, ``SHOW
    DATABASES LIKE 'x'``) is the ``exp.Command`` RisingWave makes of it.
  - ``ALTER MATERIALIZED VIEW v AS query`` -> sqlglot's ``exp.Alter`` with
    ``kind="MATERIALIZED VIEW"`` and ``actions=[query]`` (the shape sqlglot gives
    ``ALTER VIEW v AS query``). Once ``AS`` has been read, a missing query is a
    ``ParseError`` at the token after ``AS``. Other ``ALTER MATERIALIZED VIEW`` forms
    (``RENAME TO``, ``SET ...``) keep RisingWave's ``exp.Command``.
  - ``CREATE DATABASE d``, ``DROP DATABASE [IF EXISTS] d`` and ``DROP MATERIALIZED VIEW
    ...`` need no hook: sqlglot already parses them into ``exp.Create`` / ``exp.Drop``.

* Each special form is tried first; if it does not match, the parser retreats to where it
  started and defers to RisingWave's parser, so everything that round-trips through the
  RisingWave dialect round-trips the same way here (``WITH (refresh.interval.sec = 5)``
  stays an ``exp.Property``; ``SHOW x`` and ``REFRESH x`` generate as RisingWave's
  Commands do).
* :class:`PgBarrierTokenizer` differs from RisingWave's in two keywords only: ``REFRESH``
  is ``TokenType.REFRESH`` (Postgres makes it a raw-text ``COMMAND``) and ``SHOW`` is not
  in ``COMMANDS``, so the words after them are real tokens with positions. The parser
  rebuilds the same ``exp.Command`` RisingWave would have made for the forms that are
  not ours.
* Generation goes through the generator's ``TRANSFORMS`` (sqlglot 30 dispatches
  ``<key>_sql`` methods only for its own classes). ``BATCH REFRESH ...`` is a
  ``POST_SCHEMA`` property: it is generated after the view name / column list and
  before ``AS``. ``exp.Show`` generates as ``SHOW DATABASES`` / ``SHOW MATERIALIZED
  VIEWS`` when it is exactly one of those; any other ``exp.Show`` keeps the base
  generator's "unsupported" behaviour.
* :class:`PgBarrierParser` records, for error reporting, where parsing failed
  (:attr:`PgBarrierParser.failure`), where it fell back to ``exp.Command``
  (:attr:`PgBarrierParser.fallback`) and the token index at which a ``CREATE``'s or an
  ``ALTER MATERIALIZED VIEW``'s query began (:attr:`PgBarrierParser.query_index`). A
  recorded ``None`` token means "at end of input". These are read by
  :mod:`pgbarrier.sql.statements`; they change nothing else.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.risingwave import RisingWave
from sqlglot.generators.risingwave import RisingWaveGenerator
from sqlglot.parsers.risingwave import RisingWaveParser
from sqlglot.tokens import Token, TokenType

__all__ = [
    "AlterDatabaseBarrier",
    "BatchRefreshProperty",
    "Flush",
    "PgBarrier",
    "PgBarrierGenerator",
    "PgBarrierParser",
    "PgBarrierTokenizer",
    "REFRESH_UNITS",
    "SHOW_LISTS",
]

#: Units accepted by ``BATCH REFRESH EVERY n <unit>``, with their length in seconds.
REFRESH_UNITS: dict[str, int] = {
    "SECOND": 1,
    "SECONDS": 1,
    "MINUTE": 60,
    "MINUTES": 60,
    "HOUR": 3600,
    "HOURS": 3600,
    "DAY": 86400,
    "DAYS": 86400,
}

_BARRIER_ACTIONS = ("PAUSE", "RESUME")

#: The ``SHOW`` forms that are pgbarrier's (``exp.Show.this``), each matched exactly.
SHOW_LISTS: tuple[str, ...] = ("DATABASES", "MATERIALIZED VIEWS")


class AlterDatabaseBarrier(exp.Expression):
    """``ALTER DATABASE <this> PAUSE|RESUME``; ``action`` is the upper-cased keyword."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "action": True}


class Flush(exp.Expression):
    """``FLUSH``: wait for a checkpoint barrier injected after it to commit."""

    arg_types: ClassVar[dict[str, bool]] = {}


class BatchRefreshProperty(exp.Property):
    """``BATCH REFRESH [EVERY ... | CRON 'expr' [AT TIME ZONE 'zone']]``; ``this`` is
    ``None`` or an ``exp.Interval``, ``cron`` and ``zone`` string literals or ``None``."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False, "cron": False, "zone": False}


class PgBarrierTokenizer(RisingWave.Tokenizer):
    """RisingWave's tokenizer with ``REFRESH`` and ``SHOW`` tokenized as real keywords."""

    KEYWORDS = {
        **RisingWave.Tokenizer.KEYWORDS,
        "REFRESH": TokenType.REFRESH,
    }
    COMMANDS = RisingWave.Tokenizer.COMMANDS - {TokenType.SHOW}


class PgBarrierParser(RisingWaveParser):
    """RisingWave's parser plus the hooks for pgbarrier's statements."""

    STATEMENT_PARSERS = {
        **RisingWaveParser.STATEMENT_PARSERS,
        TokenType.SHOW: lambda self: self._parse_show(),
    }

    __slots__ = ("failure", "fallback", "query_index")

    def reset(self) -> None:
        super().reset()
        #: The token a ParseError was raised at (``None`` = end of input).
        self.failure: Token | None = None
        #: The token where parsing gave up and fell back to ``exp.Command``.
        self.fallback: Token | None = None
        #: Token index (within the statement) where a CREATE's query began.
        self.query_index: int | None = None

    # -- error bookkeeping -------------------------------------------------------------

    def raise_error(self, message: str, token: Token | None = None) -> None:  # type: ignore[override]
        self.failure = token if token else (self._curr if self._curr else None)
        super().raise_error(message, token)  # type: ignore[arg-type]

    def _parse_as_command(self, start: Token) -> exp.Command:
        self.fallback = self._curr if self._curr else None
        return super()._parse_as_command(start)

    def _parse_ddl_select(self) -> exp.Expr | None:
        if self.query_index is None:
            self.query_index = self._index
        return super()._parse_ddl_select()

    def _parse_risingwave_command(self, start: Token) -> exp.Command:
        """The rest of the statement as the ``exp.Command`` RisingWave's parser makes.

        RisingWave tokenizes ``SHOW`` / ``REFRESH`` as commands (the rest is one raw
        string); ours reads real tokens, so rebuild that node: keyword upper-cased, the
        raw text after it up to its last token, trimmed (a comment after the last token
        is kept as the node's comment).
        """
        command = self._parse_as_command(start)
        rest = command.text("expression").strip()
        node = exp.Command(this=start.text.upper(), expression=exp.Literal.string(rest))
        last = self._prev
        if last is not start and last.comments:
            node.add_comments(last.comments)  # a trailing comment is not in the raw text
        return node

    # -- reg* arrays -----------------------------------------------------------------------

    def _parse_types(self, *args: Any, **kwargs: Any) -> exp.Expr | None:
        """sqlglot reads ``regtype`` & co. as ``ObjectIdentifier``, which takes no ``[]``:
        ``x::regtype[]`` (pgcli, psql) becomes an array of the user-defined type."""
        this = super()._parse_types(*args, **kwargs)
        if isinstance(this, exp.ObjectIdentifier) and self._curr and self._next \
                and self._curr.token_type == TokenType.L_BRACKET \
                and self._next.token_type == TokenType.R_BRACKET:
            self._advance(2)
            element = exp.DataType(this=exp.DataType.Type.USERDEFINED,
                                   kind=exp.to_identifier(this.name.lower()))
            return exp.DataType(this=exp.DataType.Type.ARRAY, expressions=[element], nested=True)
        return this

    # -- FLUSH ----------------------------------------------------------------------------

    def _parse_statement(self) -> exp.Expr | None:
        curr = self._curr
        if curr and curr.token_type == TokenType.VAR and curr.text.upper() == "FLUSH":
            self._advance()
            return self.expression(Flush(), token=curr)
        return super()._parse_statement()

    # -- ALTER DATABASE d PAUSE | RESUME, ALTER MATERIALIZED VIEW v AS query -------------

    def _parse_alter(self) -> exp.Alter | exp.Command:
        index = self._index
        if self._match(TokenType.DATABASE):
            name = self._parse_id_var(any_token=False)
            if name and self._match_texts(_BARRIER_ACTIONS) and not self._curr:
                action = self._prev.text.upper()
                return self.expression(AlterDatabaseBarrier(this=name, action=action))  # type: ignore[return-value]
        elif self._match_text_seq("MATERIALIZED", "VIEW"):
            view = self._try_parse(self._parse_table_parts)
            if view and self._match(TokenType.ALIAS):
                query = self._parse_ddl_select()
                if query is None:
                    self.raise_error("Expected a query after AS")
                return self.expression(
                    exp.Alter(this=view, kind="MATERIALIZED VIEW", actions=[query])
                )
        self._retreat(index)
        return super()._parse_alter()

    # -- REFRESH MATERIALIZED VIEW [CONCURRENTLY] v --------------------------------------------

    def _parse_refresh(self) -> exp.Refresh | exp.Command:
        start = self._prev
        if self._match_text_seq("MATERIALIZED", "VIEW"):
            self._match_text_seq("CONCURRENTLY")
            view = self._parse_table_parts()
            return self.expression(exp.Refresh(this=view, kind="MATERIALIZED VIEW"))
        return self._parse_risingwave_command(start)

    # -- SHOW DATABASES | SHOW MATERIALIZED VIEWS --------------------------------------------

    def _parse_show(self) -> exp.Expr | None:
        start = self._prev
        index = self._index
        for form in SHOW_LISTS:
            if self._match_text_seq(*form.split()) and not self._curr:
                return self.expression(exp.Show(this=form))
            self._retreat(index)
        return self._parse_risingwave_command(start)

    # -- BATCH REFRESH [EVERY ...] --------------------------------------------------------

    def _parse_property(self) -> exp.Expr | list[exp.Expr] | None:
        start = self._curr
        if self._match_text_seq("BATCH", "REFRESH"):
            return self._parse_batch_refresh().update_positions(start)
        return super()._parse_property()

    def _parse_batch_refresh(self) -> BatchRefreshProperty:
        if self._match_text_seq("CRON"):
            if not self._match(TokenType.STRING):
                self.raise_error("Expected a string literal after CRON")
            cron = exp.Literal.string(self._prev.text)
            zone = None
            if self._match_text_seq("AT", "TIME", "ZONE"):
                if not self._match(TokenType.STRING):
                    self.raise_error("Expected a string literal after AT TIME ZONE")
                zone = exp.Literal.string(self._prev.text)
            return self.expression(BatchRefreshProperty(this=None, cron=cron, zone=zone))
        if not self._match_text_seq("EVERY"):
            return self.expression(BatchRefreshProperty(this=None))

        interval: exp.Interval | None = None
        if self._match(TokenType.INTERVAL):
            if self._match(TokenType.STRING):
                interval = exp.Interval(this=exp.Literal.string(self._prev.text))
            else:
                self.raise_error("Expected a string literal after INTERVAL")
        elif self._match(TokenType.NUMBER):
            count = self._prev.text
            if self._match_texts(REFRESH_UNITS):
                unit = exp.var(self._prev.text.upper())
                interval = exp.Interval(this=exp.Literal.number(count), unit=unit)
            else:
                self.raise_error("Expected SECOND[S], MINUTE[S], HOUR[S] or DAY[S]")
        else:
            self.raise_error("Expected a number or INTERVAL after EVERY")

        return self.expression(BatchRefreshProperty(this=interval))


def _alter_database_barrier_sql(gen: Any, e: AlterDatabaseBarrier) -> str:
    return f"ALTER DATABASE {gen.sql(e, 'this')} {e.args['action']}"


def _flush_sql(gen: Any, e: Flush) -> str:
    return "FLUSH"


def _show_sql(gen: Any, e: exp.Show) -> str:
    plain = not any(v for k, v in e.args.items() if k != "this")
    if plain and e.name in SHOW_LISTS:
        return f"SHOW {e.name}"
    return gen.show_sql(e)


def _batch_refresh_sql(gen: Any, e: BatchRefreshProperty) -> str:
    cron = e.args.get("cron")
    if cron is not None:
        zone = e.args.get("zone")
        return f"BATCH REFRESH CRON {gen.sql(cron)}" + (
            f" AT TIME ZONE {gen.sql(zone)}" if zone is not None else "")
    interval = e.this
    if not isinstance(interval, exp.Interval):
        return "BATCH REFRESH"
    value = interval.this
    if isinstance(value, exp.Literal) and value.is_string:
        return f"BATCH REFRESH EVERY INTERVAL {gen.sql(value)}"
    return f"BATCH REFRESH EVERY {gen.sql(value)} {gen.sql(interval, 'unit')}"


class PgBarrierGenerator(RisingWaveGenerator):
    """RisingWave's generator plus pgbarrier's nodes."""

    TRANSFORMS = {
        **RisingWaveGenerator.TRANSFORMS,
        AlterDatabaseBarrier: _alter_database_barrier_sql,
        Flush: _flush_sql,
        BatchRefreshProperty: _batch_refresh_sql,
        exp.Show: _show_sql,
    }

    PROPERTIES_LOCATION = {
        **RisingWaveGenerator.PROPERTIES_LOCATION,
        BatchRefreshProperty: exp.Properties.Location.POST_SCHEMA,
    }


class PgBarrier(RisingWave):
    """sqlglot dialect ``"pgbarrier"``: RisingWave plus pgbarrier's control statements."""

    Tokenizer = PgBarrierTokenizer
    Parser = PgBarrierParser
    Generator = PgBarrierGenerator
