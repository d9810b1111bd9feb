"""PostgreSQL's date/time arithmetic and functions where DuckDB answers differently.

DuckDB already answers ``date + int``, ``date - int``, ``date + interval``, ``timestamp -
timestamp``, ``date + time``, ``now() - interval``, ``age``, ``make_date``,
``make_timestamp``, ``to_timestamp(double)`` and most ``date_trunc`` units as PostgreSQL.
Rules this module keeps (operand types from :mod:`.typeof`):

* ``date - date`` is ``integer`` (DuckDB: ``bigint``); a string literal beside a date or
  timestamp is read as PostgreSQL resolves ``unknown``: ``date - '...'`` and ``timestamp -
  '...'`` subtract a date / timestamp, ``timestamp + '...'`` adds an interval, ``date +
  '...'`` is PostgreSQL's 42725 (``operator is not unique: date + unknown``).
* An interval divided by a number uses DuckDB's ``"/"`` function (``integer_division``
  makes ``/`` DuckDB's ``//``, which has no interval form); a dividend not visibly an
  interval keeps DuckDB's reading (:mod:`pgbarrier.backends.duckdb_errors` names it).
* ``extract(field from x)`` is ``numeric`` with PostgreSQL's scale: ``second`` and
  ``epoch`` 6 decimals (``epoch`` of a date none), ``milliseconds`` 3, the others whole
  numbers; a time field of a date is PostgreSQL's 0A000. ``date_part('field', x)`` is the
  same value as ``double precision`` (a date read as a timestamp, as PostgreSQL casts it).
* ``date_trunc``: ``century`` and ``millennium`` start at years ...01 as in PostgreSQL
  (DuckDB's at ...00); a ``date`` is truncated as a ``timestamptz``, as PostgreSQL casts
  it. ``generate_series`` of dates steps ``timestamptz`` values likewise.
* An interval literal is written as the cast of its text, which DuckDB reads as PostgreSQL
  does (``'1 mon'``, ``'2 hrs'``; sqlglot would write units DuckDB cannot read).
* ``justify_days`` / ``justify_hours`` / ``justify_interval`` (DuckDB has none) are
  PostgreSQL's arithmetic on the interval's months, days and microseconds;
  ``make_interval`` and ``date_bin`` are sqlglot's translations (an interval sum,
  DuckDB's ``time_bucket``).
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect import build as B
from pgbarrier.backends.duckdb_dialect.typeof import Context, kind
from pgbarrier.errors import FeatureNotSupported, PgError

__all__ = ["TRANSLATED", "rewrite"]

#: sqlglot's own postgres -> duckdb translations (a statement holding one is generated)
TRANSLATED = (exp.MakeInterval, exp.DateBin)

_TIME_FIELDS = frozenset({"microseconds", "milliseconds", "second", "minute", "hour",
                          "timezone", "timezone_hour", "timezone_minute"})
_UNITS = {"microsecond": "microseconds", "microseconds": "microseconds", "us": "microseconds",
          "usec": "microseconds", "usecs": "microseconds", "useconds": "microseconds",
          "millisecond": "milliseconds", "milliseconds": "milliseconds", "ms": "milliseconds",
          "msec": "milliseconds", "msecs": "milliseconds", "mseconds": "milliseconds",
          "second": "second", "seconds": "second", "s": "second", "sec": "second",
          "secs": "second", "epoch": "epoch", "julian": "julian",
          "minute": "minute", "minutes": "minute", "m": "minute", "min": "minute",
          "mins": "minute", "hour": "hour", "hours": "hour", "h": "hour", "hr": "hour",
          "hrs": "hour", "day": "day", "days": "day", "d": "day", "week": "week",
          "weeks": "week", "w": "week", "month": "month", "months": "month", "mon": "month",
          "mons": "month", "quarter": "quarter", "qtr": "quarter", "year": "year",
          "years": "year", "y": "year", "yr": "year", "yrs": "year", "decade": "decade",
          "decades": "decade", "dec": "decade", "decs": "decade", "century": "century",
          "centuries": "century", "c": "century", "cent": "century",
          "millennium": "millennium", "millennia": "millennium", "mil": "millennium",
          "mils": "millennium", "millenniums": "millennium", "dow": "dow", "doy": "doy",
          "isodow": "isodow", "isoyear": "isoyear", "timezone": "timezone",
          "timezone_hour": "timezone_hour", "timezone_minute": "timezone_minute"}


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))




def _decimal(scale: int) -> exp.DataType:
    return exp.DataType.build(f"DECIMAL(38,{scale})")


def _scaled(micros: exp.Expr, scale: int) -> exp.Expr:
    """``micros`` (an integer of microseconds) in units of 10**(6 - scale)... as a decimal
    of ``scale`` digits: seconds (6) or milliseconds (3), exactly."""
    factor = "0.000001" if scale == 6 else "0.001"
    return exp.Cast(this=exp.Mul(this=exp.Cast(this=micros, to=_decimal(scale)),
                                 expression=exp.Cast(this=exp.Literal.number(factor),
                                                     to=_decimal(scale))), to=_decimal(scale))


def _field(node: exp.Expr) -> str | None:
    if isinstance(node, exp.Var):
        name = node.name.lower()
    elif isinstance(node, exp.Literal) and node.is_string:
        name = node.this.lower()
    elif isinstance(node, exp.Column) and not node.table:
        name = node.name.lower()
    else:
        return None
    return _UNITS.get(name, name)


def _numeric_part(field: str, value: exp.Expr, k: str | None) -> exp.Expr | None:
    """PostgreSQL's ``extract(field from value)`` (numeric) for a value of kind ``k``."""
    if field in ("second", "milliseconds"):
        micros = _fn("date_part", exp.Literal.string("microseconds"), value.copy())
        return _scaled(micros, 6 if field == "second" else 3)
    if field == "epoch":
        if k in ("interval", "time"):
            return exp.Cast(this=_fn("date_part", exp.Literal.string("epoch"), value.copy()),
                            to=_decimal(6))
        if k == "date":
            return exp.Cast(this=exp.IntDiv(this=_fn("epoch_us", value.copy()),
                                            expression=exp.Literal.number(1000000)),
                            to=_decimal(0))
        return _scaled(_fn("epoch_us", value.copy()), 6)
    if field == "julian" and k != "date":
        return None  # DuckDB's fraction of the day is a double: kept as DuckDB answers it
    return exp.Cast(this=_fn("date_part", exp.Literal.string(field), value.copy()),
                    to=_decimal(0))


def _extract(node: exp.Extract, ctx: Context) -> exp.Expr | None:
    field = _field(node.this)
    if field is None:
        return None
    value = node.expression
    k = kind(ctx.type_of(value))
    if k == "date" and field in _TIME_FIELDS:
        raise FeatureNotSupported(f'unit "{field}" not supported for type date')
    return _numeric_part(field, value, k)


def _date_part(node: exp.Anonymous, ctx: Context) -> exp.Expr | None:
    if len(node.expressions) != 2:
        return None
    unit, value = node.expressions
    field = _field(unit) if isinstance(unit, exp.Literal) else None
    k = kind(ctx.type_of(value))
    if k == "date":  # PostgreSQL's date_part has no date form: the date is a timestamp
        value, k = exp.Cast(this=value.copy(), to=exp.DataType.build("TIMESTAMP")), "timestamp"
    if field is None:
        return exp.Cast(this=_fn("date_part", unit.copy(), value.copy()),
                        to=exp.DataType.build("DOUBLE"))
    part = _numeric_part(field, value, k)
    if part is None:
        part = _fn("date_part", exp.Literal.string(field), value.copy())
    return exp.Cast(this=part, to=exp.DataType.build("DOUBLE"))


def _date_trunc(node: exp.Anonymous, ctx: Context) -> exp.Expr | None:
    if len(node.expressions) != 2:
        return None
    unit, value = node.expressions
    k = kind(ctx.type_of(value))
    if k == "date":
        value = exp.Cast(this=value.copy(), to=exp.DataType.build("TIMESTAMPTZ"))
    field = _field(unit) if isinstance(unit, exp.Literal) else None
    if field in ("century", "millennium") and k != "interval":
        years = 100 if field == "century" else 1000
        # the first year of the century (millennium) holding the value: ...01
        return B.template(
            "date_trunc('year', v) - to_years(CAST(((year(v) - 1) % y + y) % y AS INT))",
            v=value, y=exp.Literal.number(years))
    if k == "date":
        return _fn("date_trunc", unit.copy(), value)
    return None


#: an interval's months, days and microseconds (DuckDB keeps the three apart too)
_PARTS = ("{'m': datepart('year', v) * 12 + datepart('month', v), 'd': datepart('day', v), "
          "'t': epoch_us(v - to_months(CAST(datepart('year', v) * 12 + datepart('month', v) "
          "AS INT)) - to_days(CAST(datepart('day', v) AS INT)))}")
_U = "86400000000"  # microseconds a day
#: each step binds its values once: list_transform([{...}], lambda s: ...)[1]
_HOURS = (f"{{'m': s.m, 'd': s.d + s.t // {_U}, 't': s.t - s.t // {_U} * {_U}}}",
          f"{{'m': s.m, 'd': CASE WHEN s.d > 0 AND s.t < 0 THEN s.d - 1 "
          f"WHEN s.d < 0 AND s.t > 0 THEN s.d + 1 ELSE s.d END, "
          f"'t': CASE WHEN s.d > 0 AND s.t < 0 THEN s.t + {_U} "
          f"WHEN s.d < 0 AND s.t > 0 THEN s.t - {_U} ELSE s.t END}}")
_DAYS = ("{'m': s.m + s.d // 30, 'd': s.d - s.d // 30 * 30, 't': s.t}",
         "{'m': CASE WHEN s.m > 0 AND s.d < 0 THEN s.m - 1 WHEN s.m < 0 AND s.d > 0 "
         "THEN s.m + 1 ELSE s.m END, 'd': CASE WHEN s.m > 0 AND s.d < 0 THEN s.d + 30 "
         "WHEN s.m < 0 AND s.d > 0 THEN s.d - 30 ELSE s.d END, 't': s.t}")
_INTERVAL_MONTHS = (
    "{'m': CASE WHEN s.m > 0 AND (s.d < 0 OR s.d = 0 AND s.t < 0) THEN s.m - 1 "
    "WHEN s.m < 0 AND (s.d > 0 OR s.d = 0 AND s.t > 0) THEN s.m + 1 ELSE s.m END, "
    "'d': CASE WHEN s.m > 0 AND (s.d < 0 OR s.d = 0 AND s.t < 0) THEN s.d + 30 "
    "WHEN s.m < 0 AND (s.d > 0 OR s.d = 0 AND s.t > 0) THEN s.d - 30 ELSE s.d END, "
    "'t': s.t}")
_STEPS = {"justify_hours": _HOURS,
          "justify_days": _DAYS,
          "justify_interval": (_HOURS[0], _DAYS[0], _INTERVAL_MONTHS, _HOURS[1])}


def _justify(name: str, value: exp.Expr) -> exp.Expr:
    """PostgreSQL's justify_days / justify_hours / justify_interval (its timestamp.c),
    step by step on the interval's three parts."""
    sql = _PARTS
    for step in _STEPS[name]:
        sql = f"list_transform([{sql}], lambda s: {step})[1]"
    sql = (f"list_transform([{sql}], lambda s: to_months(CAST(s.m AS INT)) + "
           f"to_days(CAST(s.d AS INT)) + to_microseconds(s.t))[1]")
    return B.template(sql, v=exp.Cast(this=value.copy(), to=exp.DataType.build("INTERVAL")))


def _unknown_operand(node: exp.Add | exp.Sub, ctx: Context) -> exp.Expr | None:
    """A string literal beside a date/time value, read as PostgreSQL resolves unknown."""
    left, right = node.this, node.expression
    lt, rt = kind(ctx.type_of(left)), kind(ctx.type_of(right))
    sub = isinstance(node, exp.Sub)
    if rt != "unknown" or not isinstance(right, exp.Literal):
        return None
    if lt in ("date", "timestamp", "timestamptz", "time"):
        if sub:
            to = ctx.type_of(left).copy()
        elif lt == "date":
            at = right.meta.get("start")  # PostgreSQL points at the operator
            position = ctx.sql.rfind("+", 0, at) + 1 if at is not None else 0
            raise PgError.by_sqlstate("42725")(
                "operator is not unique: date + unknown", sqlstate="42725",
                hint="Could not choose a best candidate operator. You might need to add "
                     "explicit type casts.", position=position or None)
        else:
            to = exp.DataType.build("INTERVAL")
        new = node.copy()
        new.set("expression", exp.Cast(this=right.copy(), to=to))
        if sub and lt == "date":
            return exp.Cast(this=new, to=exp.DataType.build("INT"))
        return new
    return None


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if isinstance(node, exp.Interval) and isinstance(node.this, exp.Literal) and \
            isinstance(node.args.get("unit"), exp.Var):
        # sqlglot splits interval '1 mon' into a unit it writes as DuckDB cannot read
        # (INTERVAL '1' MON): DuckDB reads PostgreSQL's interval text itself
        return exp.Cast(this=exp.Literal.string(f"{node.this.this} {node.args['unit'].name}"),
                        to=exp.DataType.build("INTERVAL"))
    if isinstance(node, exp.Extract):
        return _extract(node, ctx)
    if isinstance(node, exp.Div) and kind(ctx.type_of(node.this)) == "interval":
        # integer_division makes `/` DuckDB's `//`, which has no interval form: call `/`
        return exp.Anonymous(this=exp.to_identifier("/", quoted=True),
                             expressions=[node.this.copy(), node.expression.copy()])
    if isinstance(node, (exp.Add, exp.Sub)):
        new = _unknown_operand(node, ctx)
        if new is not None:
            return new
        if isinstance(node, exp.Sub) and kind(ctx.type_of(node.this)) == "date" and \
                kind(ctx.type_of(node.expression)) == "date":
            return exp.Cast(this=node.copy(), to=exp.DataType.build("INT"))
        return None
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        if name == "date_part":
            return _date_part(node, ctx)
        if name == "date_trunc":
            return _date_trunc(node, ctx)
        if name in ("justify_days", "justify_hours", "justify_interval") and \
                len(node.expressions) == 1:
            return _justify(name, node.expressions[0])
    if isinstance(node, exp.ExplodingGenerateSeries) or isinstance(node, exp.GenerateSeries):
        start = node.args.get("start")
        if kind(ctx.type_of(start)) == "date":
            new = node.copy()
            for arg in ("start", "end"):
                value = new.args.get(arg)
                if value is not None:
                    new.set(arg, exp.Cast(this=value, to=exp.DataType.build("TIMESTAMPTZ")))
            return new
    return None
