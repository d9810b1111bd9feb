"""PostgreSQL's formatting functions on DuckDB: ``to_char``, ``to_date``, ``to_timestamp``,
``to_number``.

Rules this module keeps:

* The template must be a literal (PostgreSQL's pictures are compiled here, at translation
  time, into DuckDB's own functions: ``strftime``, ``printf``, ``regexp_extract``,
  ``lpad``...); a template that is not a literal is 0A000 naming the function (DuckDB has no
  function to run PostgreSQL's templates at run time). A NULL template answers NULL.
* ``to_char(timestamp | timestamptz | date | time | interval, template)``: every
  PostgreSQL pattern (:mod:`.templates`) with ``FM`` (no padding), ``TH`` / ``th``
  (ordinal), ``TM`` (English names, unpadded), ``SP`` (ignored as PostgreSQL ignores it),
  ``Month`` / ``Day`` blank-padded to 9, ``RM`` to 4, quoted text and backslash escapes.
  Runs of patterns ``strftime`` prints the same (``YYYY``, ``MM``, ``DD``, ``HH24``...) are
  one ``strftime``; the others are built from DuckDB's parts of the value. A ``date`` is
  formatted as the ``timestamptz`` PostgreSQL casts it to, a ``time`` as an interval. A
  pattern PostgreSQL refuses for an interval is its 22007. Choice: ``TZ`` / ``tz`` is the
  zone abbreviation only for UTC (``UTC``); another zone prints its offset (``+05:30``),
  DuckDB's zones having no abbreviations.
* ``to_char(number, template)``: :mod:`.number_format`.
* ``to_date`` / ``to_timestamp(text, template)``: PostgreSQL's lenient reading
  (formatting.c's DCH_from_char) compiled into one regular expression: blanks skipped
  before fields, a separator in the template matching one separator or blank (or none),
  a digit field followed by a non-digit reading as many digits as there are (else its
  width), ``FM`` fields unbounded, month / day names and AM/PM any case, ``TH`` skipping two
  characters, ``FX`` exact from there, input left over after the template ignored, a
  template left over after the input leaving its fields unset. The fields make the value
  (12-hour clock, ``SSSS``, ``DDD``, ``J``, ``Y,YYY``, ``YY`` -> nearest to 2020, ``CC``,
  ``BC``, ``TZH`` / ``TZM``); ``to_timestamp`` reads it in the session's time zone unless
  the template has an offset. Invalid input is 22007 ``invalid value "..." for "MM"`` (no
  DETAIL), a field out of range 22008 ``date/time field value out of range``, an hour
  beyond the 12-hour clock PostgreSQL's 22007. Not done (0A000): ISO week dates (``IYYY``,
  ``IW``, ``ID``, ``IDDD``), ``W`` / ``WW``, and a template with no year (PostgreSQL gives
  year 1 BC, which DuckDB's values cannot carry). ``TZ`` / ``OF`` are PostgreSQL 15's 0A000.
* ``to_timestamp(double)`` is DuckDB's own, the same.
"""

from __future__ import annotations

import re

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect import build as B
from pgbarrier.backends.duckdb_dialect import number_format
from pgbarrier.backends.duckdb_dialect.datetime_input import from_char
from pgbarrier.backends.duckdb_dialect.templates import Node, datetime_nodes
from pgbarrier.backends.duckdb_dialect.typeof import Context, kind
from pgbarrier.errors import FeatureNotSupported, PgError

__all__ = ["rewrite"]

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_ROMAN_MONTHS = ("I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII")

#: keywords strftime prints as PostgreSQL does (value not an interval; no TH suffix)
_STRFTIME = {"YYYY": "%Y", "MM": "%m", "DD": "%d", "HH24": "%H", "HH": "%I", "HH12": "%I",
             "MI": "%M", "SS": "%S", "MS": "%g", "US": "%f", "FF3": "%g", "FF6": "%f",
             "DDD": "%j", "Mon": "%b", "Dy": "%a", "AM": "%p", "PM": "%p", "YY": "%y",
             "IYYY": "%G", "IW": "%V"}
_STRFTIME_FM = {"MM": "%-m", "DD": "%-d", "HH24": "%-H", "HH": "%-I", "HH12": "%-I",
                "MI": "%-M", "SS": "%-S", "DDD": "%-j", "Month": "%B", "Day": "%A"}
#: patterns PostgreSQL refuses for an interval (INVALID_FOR_INTERVAL)
_NOT_INTERVAL = frozenset({"tz", "TZ", "TZH", "TZM", "OF", "A.D.", "B.C.", "AD", "BC", "a.d.",
                           "b.c.", "ad", "bc", "MONTH", "Month", "month", "MON", "Mon", "mon",
                           "DAY", "Day", "day", "DY", "Dy", "dy", "D", "ID"})
_UTC_NAMES = ("UTC", "Etc/UTC", "GMT", "Etc/GMT", "UCT", "Etc/UCT", "Universal", "Zulu",
              "Etc/Universal", "Etc/Zulu", "Z")


def _fn(name: str, *args: exp.Expr) -> exp.Expr:
    return exp.Anonymous(this=name, expressions=list(args))


def _lit(text: str) -> exp.Expr:
    return exp.Literal.string(text)


def _num(n: int) -> exp.Expr:
    return exp.Literal.number(n)




def _literal_format(node: exp.Anonymous, name: str) -> str | None:
    """The template of a formatting call: its text, None for a NULL template."""
    fmt = node.expressions[1]
    if isinstance(fmt, exp.Null):
        return None
    if isinstance(fmt, exp.Cast) and isinstance(fmt.this, exp.Literal) and fmt.this.is_string:
        fmt = fmt.this
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise FeatureNotSupported(f"{name} with a format that is not a literal is not "
                                  "supported by pgbarrier on DuckDB")
    return fmt.this


def rewrite(node: exp.Expr, ctx: Context) -> exp.Expr | None:
    if not isinstance(node, exp.Anonymous):
        return None
    name = node.name.lower()
    if name not in ("to_char", "to_date", "to_timestamp", "to_number"):
        return None
    if name == "to_timestamp" and len(node.expressions) == 1:
        return None  # to_timestamp(double precision): DuckDB's own
    if len(node.expressions) != 2:
        return None  # DuckDB's error for the wrong number of arguments
    fmt = _literal_format(node, name)
    value = node.expressions[0]
    if fmt is None:
        return exp.Cast(this=exp.Null(), to=exp.DataType.build(
            {"to_char": "TEXT", "to_date": "DATE", "to_timestamp": "TIMESTAMPTZ",
             "to_number": "DECIMAL(38,0)"}[name]))
    if name == "to_number":
        return number_format.to_number(value, fmt)
    if name in ("to_date", "to_timestamp"):
        return from_char(value, fmt, name)
    t = ctx.type_of(value)
    k = kind(t)
    if k in ("int", "number") or k is None and _numeric_format(fmt):
        is_float = t is not None and t.this in (exp.DataType.Type.FLOAT,
                                                exp.DataType.Type.DOUBLE)
        return number_format.to_char(value, fmt, is_float)
    return _to_char(value, fmt, k)


def _numeric_format(fmt: str) -> bool:
    """A template of a number (when the value's type is not known)."""
    return bool(re.fullmatch(r"(?i)[\s90.,DGSLVPRMIFBCEGTHNa-z\"']*", fmt)) and \
        bool(re.search(r"[09]|RN|rn", fmt)) and not re.search(r"YY|HH|MI:|DD|Mon", fmt)


# -- to_char(date/time) ---------------------------------------------------------------------


class _Parts:
    """DuckDB expressions of the fields PostgreSQL's DCH_to_char formats."""

    def __init__(self, value: exp.Expr, k: str | None) -> None:
        self.k = k
        self.interval = k in ("interval", "time")
        if k == "date":
            value = exp.Cast(this=value.copy(), to=exp.DataType.build("TIMESTAMPTZ"))
            k = "timestamptz"
        self.value = value
        self.tz = k == "timestamptz"

    def part(self, name: str) -> exp.Expr:
        v = self.value.copy()
        if self.k == "interval":
            names = {"year": "year", "mon": "month", "mday": "day", "hour": "hour",
                     "min": "minute", "sec": "second"}
            if name == "fsec":
                return B.mod(_fn("datepart", _lit("microseconds"), v),
                               expression=_num(1000000))
            if name in names:
                return _fn("datepart", _lit(names[name]), v)
            return _num(0)
        if self.k == "time":
            if name in ("hour", "min", "sec"):
                return _fn({"hour": "hour", "min": "minute", "sec": "second"}[name], v)
            if name == "fsec":
                return B.mod(_fn("microsecond", v), expression=_num(1000000))
            return _num(0)
        simple = {"year": "year", "mon": "month", "mday": "day", "hour": "hour",
                  "min": "minute", "sec": "second", "yday": "dayofyear", "wday": "dayofweek",
                  "isoyear": "isoyear", "isoweek": "week", "isodow": "isodow"}
        if name in simple:
            return _fn(simple[name], v)
        if name == "fsec":
            return B.mod(_fn("microsecond", v), expression=_num(1000000))
        if name == "julian":
            return exp.cast(_fn("julian", exp.cast(v, "DATE")), "BIGINT")
        if name == "gmtoff":
            if not self.tz:
                return _num(0)
            return _fn("date_part", _lit("timezone"), v)
        raise AssertionError(name)


def _padded(value: exp.Expr, width: int, fm: bool, signed: bool) -> exp.Expr:
    """sprintf("%0*d", FM ? 0 : (x >= 0 ? width : width + 1), x)."""
    if fm:
        return exp.cast(value, "VARCHAR")
    if not signed:
        return _fn("printf", _lit(f"%0{width}d"), value)
    return exp.Case().when(exp.GTE(this=value, expression=_num(0)),
                           _fn("printf", _lit(f"%0{width}d"), value.copy())).else_(
        _fn("printf", _lit(f"%0{width + 1}d"), value.copy()))


def _th(text: exp.Expr, node: Node) -> exp.Expr:
    if node.th is None:
        return text
    return exp.Concat(expressions=[text, number_format._ordinal(text, node.th == "TH")],
                      safe=True)


def _name(names: tuple[str, ...], index: exp.Expr, case: str, width: int | None) -> exp.Expr:
    """names[index] (0-based) in ``case`` ("upper", "lower", "initcap"), padded to ``width``."""
    shown = [n.upper() if case == "upper" else n.lower() if case == "lower" else n
             for n in names]
    value: exp.Expr = exp.Bracket(this=exp.Array(expressions=[_lit(n) for n in shown]),
                                  expressions=[index])
    if width:
        value = _fn("rpad", value, _num(width), _lit(" "))
    return value


def _adjust_year(y: exp.Expr, interval: bool) -> exp.Expr:
    if interval:
        return y
    return exp.Case().when(exp.LTE(this=y, expression=_num(0)),
                           B.sub(_num(1), expression=y.copy())).else_(y.copy())


def _ampm(p: _Parts, upper: bool, dots: bool) -> exp.Expr:
    am, pm = ("A.M.", "P.M.") if dots else ("AM", "PM")
    if not upper:
        am, pm = am.lower(), pm.lower()
    hour = p.part("hour")
    return exp.Case().when(exp.GTE(this=B.mod(hour, expression=_num(24)),
                                   expression=_num(12)), _lit(pm)).else_(_lit(am))


def _field(node: Node, p: _Parts) -> exp.Expr:
    key, fm = node.key, node.fm
    signed = p.interval
    if p.interval and key in _NOT_INTERVAL:
        err = PgError.by_sqlstate("22007")("invalid format specification for an interval value",
                                           sqlstate="22007")
        err.hint = "Intervals are not tied to specific calendar dates."
        raise err
    if key in ("A.M.", "P.M.", "AM", "PM", "a.m.", "p.m.", "am", "pm"):
        return _ampm(p, key[0].isupper(), "." in key)
    if key in ("HH", "HH12"):
        h = p.part("hour")
        twelve = exp.Case().when(exp.EQ(this=B.mod(h, expression=_num(12)),
                                        expression=_num(0)), _num(12)).else_(
            B.mod(h.copy(), expression=_num(12)))
        return _th(_padded(twelve, 2, fm, signed), node)
    if key == "HH24":
        return _th(_padded(p.part("hour"), 2, fm, signed), node)
    if key == "MI":
        return _th(_padded(p.part("min"), 2, fm, signed), node)
    if key == "SS":
        return _th(_padded(p.part("sec"), 2, fm, signed), node)
    if key.startswith("FF") or key in ("MS", "US"):
        digits = {"MS": 3, "US": 6}.get(key) or int(key[2])
        frac = B.idiv(p.part("fsec"), expression=_num(10 ** (6 - digits))) \
            if digits < 6 else p.part("fsec")
        return _th(_fn("printf", _lit(f"%0{digits}d"), frac), node)
    if key == "SSSS":
        total = B.add(B.add(B.mul(p.part("hour"), expression=_num(3600)),
                                     expression=B.mul(p.part("min"),
                                                        expression=_num(60))),
                        expression=p.part("sec"))
        return _th(exp.cast(total, "VARCHAR"), node)
    if key in ("tz", "TZ"):
        if not p.tz:
            return _lit("")
        off = p.part("gmtoff")
        zone = _fn("current_setting", _lit("TimeZone"))
        text = exp.Case().when(exp.And(this=exp.EQ(this=off, expression=_num(0)), expression=exp.In(
            this=zone, expressions=[_lit(z) for z in _UTC_NAMES])), _lit("UTC")).else_(
            _offset(p, False, True))
        return exp.Lower(this=text) if key == "tz" else text
    if key == "TZH":
        off = p.part("gmtoff")
        return exp.Concat(expressions=[
            exp.Case().when(exp.GTE(this=off, expression=_num(0)), _lit("+")).else_(_lit("-")),
            _fn("printf", _lit("%02d"), B.idiv(_fn("abs", off.copy()),
                                                   expression=_num(3600)))], safe=True)
    if key == "TZM":
        off = p.part("gmtoff")
        return _fn("printf", _lit("%02d"), B.idiv(
            this=B.mod(_fn("abs", off), expression=_num(3600)), expression=_num(60)))
    if key == "OF":
        return _offset(p, fm, False)
    if key in ("A.D.", "B.C.", "AD", "BC", "a.d.", "b.c.", "ad", "bc"):
        dots = "." in key
        ad, bc = ("A.D.", "B.C.") if dots else ("AD", "BC")
        if key[0].islower():
            ad, bc = ad.lower(), bc.lower()
        return exp.Case().when(exp.LTE(this=p.part("year"), expression=_num(0)), _lit(bc)
                               ).else_(_lit(ad))
    if key in ("MONTH", "Month", "month"):
        case = "upper" if key == "MONTH" else "lower" if key == "month" else "initcap"
        return _name(_MONTHS, p.part("mon"), case, None if fm or node.tm else 9)
    if key in ("MON", "Mon", "mon"):
        case = "upper" if key == "MON" else "lower" if key == "mon" else "initcap"
        return _name(tuple(m[:3] for m in _MONTHS), p.part("mon"), case, None)
    if key in ("DAY", "Day", "day"):
        case = "upper" if key == "DAY" else "lower" if key == "day" else "initcap"
        return _name(_DAYS, B.add(p.part("wday"), expression=_num(1)), case,
                     None if fm or node.tm else 9)
    if key in ("DY", "Dy", "dy"):
        case = "upper" if key == "DY" else "lower" if key == "dy" else "initcap"
        return _name(tuple(d[:3] for d in _DAYS), B.add(p.part("wday"),
                                                          expression=_num(1)), case, None)
    if key == "MM":
        return _th(_padded(p.part("mon"), 2, fm, signed), node)
    if key in ("DDD", "IDDD"):
        if p.interval:
            raise _interval_unsupported(key)
        day = p.part("yday") if key == "DDD" else B.add(
            this=B.mul(B.sub(p.part("isoweek"), expression=_num(1)),
                         expression=_num(7)), expression=p.part("isodow"))
        return _th(_padded(day, 3, fm, False), node)
    if key == "DD":
        return _th(_padded(p.part("mday"), 2, fm, False), node)
    if key == "D":
        return _th(exp.cast(B.add(p.part("wday"), expression=_num(1)), "VARCHAR"), node)
    if key == "ID":
        return _th(exp.cast(p.part("isodow"), "VARCHAR"), node)
    if key == "WW":
        if p.interval:
            raise _interval_unsupported(key)
        week = B.add(B.idiv(B.sub(p.part("yday"), expression=_num(1)),
                                       expression=_num(7)), expression=_num(1))
        return _th(_padded(week, 2, fm, False), node)
    if key == "IW":
        if p.interval:
            raise _interval_unsupported(key)
        return _th(_padded(p.part("isoweek"), 2, fm, False), node)
    if key == "Q":
        mon = p.part("mon")
        q = B.add(exp.Paren(this=B.idiv(B.sub(mon, expression=_num(1)),
                                                   expression=_num(3))), expression=_num(1))
        text = _th(exp.cast(q, "VARCHAR"), node)
        if p.interval:
            return exp.Case().when(exp.EQ(this=mon.copy(), expression=_num(0)), _lit("")
                                   ).else_(text)
        return text
    if key == "CC":
        y = p.part("year")
        if p.interval:
            cc: exp.Expr = B.idiv(y, expression=_num(100))
        else:
            cc = exp.Case().when(exp.GT(this=y, expression=_num(0)), B.add(
                this=B.idiv(B.sub(y.copy(), expression=_num(1)),
                                expression=_num(100)), expression=_num(1))).else_(
                B.sub(B.idiv(y.copy(), expression=_num(100)),
                        expression=_num(1)))
        small = exp.Between(this=cc.copy(), low=_num(-99), high=_num(99))
        return _th(exp.Case().when(small, _padded(cc.copy(), 2, fm, True)).else_(
            exp.cast(cc.copy(), "VARCHAR")), node)
    if key == "Y,YYY":
        y = _adjust_year(p.part("year"), p.interval)
        thousands = B.idiv(y, expression=_num(1000))
        return _th(exp.Concat(expressions=[exp.cast(thousands, "VARCHAR"), _lit(","), _fn(
            "printf", _lit("%03d"), B.sub(y.copy(), expression=B.mul(
                this=thousands.copy(), expression=_num(1000))))], safe=True), node)
    if key in ("YYYY", "IYYY", "YYY", "IYY", "YY", "IY", "Y", "I"):
        if key.startswith("I") and p.interval:
            raise _interval_unsupported(key)
        y = _adjust_year(p.part("isoyear" if key.startswith("I") else "year"), p.interval)
        digits = len(key)
        value = y if digits == 4 else B.mod(y, expression=_num(10 ** digits))
        if digits == 1:
            return _th(_fn("printf", _lit("%1d"), value), node)
        return _th(_padded(value, digits, fm, True), node)
    if key in ("RM", "rm"):
        mon = p.part("mon")
        names = _ROMAN_MONTHS if key == "RM" else tuple(r.lower() for r in _ROMAN_MONTHS)
        if p.interval:
            year = p.part("year")
            # PostgreSQL's position in its reversed list, as a month 1..12
            index: exp.Expr = exp.Case().when(
                exp.EQ(this=mon, expression=_num(0)),
                exp.Case().when(exp.GTE(this=year, expression=_num(0)), _num(12)).else_(_num(1))
            ).when(exp.LT(this=mon.copy(), expression=_num(0)),
                   B.add(mon.copy(), expression=_num(13))).else_(mon.copy())
            shown = _name(names, index, "initcap", None if fm else 4)
            return exp.Case().when(exp.And(this=exp.EQ(this=mon.copy(), expression=_num(0)),
                                           expression=exp.EQ(this=year.copy(),
                                                             expression=_num(0))), _lit("")
                                   ).else_(shown)
        return _name(names, mon, "initcap", None if fm else 4)
    if key == "W":
        if p.interval:
            raise _interval_unsupported(key)
        week = B.add(B.idiv(B.sub(p.part("mday"), expression=_num(1)),
                                       expression=_num(7)), expression=_num(1))
        return _th(exp.cast(week, "VARCHAR"), node)
    if key == "J":
        if p.interval:
            raise _interval_unsupported(key)
        return _th(exp.cast(p.part("julian"), "VARCHAR"), node)
    if key == "FX":
        return _lit("")
    raise FeatureNotSupported(f'to_char pattern "{node.text}" is not supported by pgbarrier '
                              "on DuckDB")


def _interval_unsupported(key: str) -> PgError:
    return FeatureNotSupported(f'to_char pattern "{key}" of an interval is not supported by '
                               "pgbarrier on DuckDB")


def _offset(p: _Parts, fm: bool, tz_style: bool) -> exp.Expr:
    """PostgreSQL's OF: +HH, +HH:MM."""
    off = p.part("gmtoff")
    sign = exp.Case().when(exp.GTE(this=off, expression=_num(0)), _lit("+")).else_(_lit("-"))
    hours = B.idiv(_fn("abs", off.copy()), expression=_num(3600))
    minutes = B.idiv(B.mod(_fn("abs", off.copy()), expression=_num(3600)),
                         expression=_num(60))
    return exp.Concat(expressions=[
        sign, exp.cast(hours, "VARCHAR") if fm else _fn("printf", _lit("%02d"), hours.copy()),
        exp.Case().when(exp.EQ(this=minutes, expression=_num(0)), _lit("")).else_(
            exp.Concat(expressions=[_lit(":"), _fn("printf", _lit("%02d"), minutes.copy())],
                       safe=True))], safe=True)


def _strftime_code(node: Node, p: _Parts) -> str | None:
    if p.interval or node.th is not None or node.tm:
        return None
    if node.fm:
        return _STRFTIME_FM.get(node.key)
    return _STRFTIME.get(node.key)


def _to_char(value: exp.Expr, fmt: str, k: str | None) -> exp.Expr:
    p = _Parts(value, k)
    pieces: list[exp.Expr] = []
    run: list[str] = []  # a strftime format being collected

    def flush() -> None:
        if not run:
            return
        text = "".join(run)
        run.clear()
        if "%" not in text.replace("%%", ""):
            pieces.append(_lit(text.replace("%%", "%")))
        else:
            pieces.append(_fn("strftime", p.value.copy(), _lit(text)))

    for node in datetime_nodes(fmt):
        if node.kind != "action":
            run.append(node.text.replace("%", "%%"))
            continue
        code = _strftime_code(node, p)
        if code is not None:
            run.append(code)
            continue
        flush()
        pieces.append(_field(node, p))
    flush()
    if not pieces:
        return exp.Case().when(exp.Is(this=value.copy(), expression=exp.Null()), exp.Null()
                               ).else_(_lit(""))
    out = pieces[0] if len(pieces) == 1 else exp.Concat(expressions=pieces, safe=True)
    if len(pieces) == 1 and _fn_of_value(out):
        return out
    # some pieces do not read the value (text, a timestamp's TZH): NULL stays NULL
    return exp.Case().when(exp.Is(this=value.copy(), expression=exp.Null()), exp.Null()
                           ).else_(out)


def _fn_of_value(piece: exp.Expr) -> bool:
    """``piece`` is NULL when the value is (a strftime of it)."""
    return isinstance(piece, exp.Anonymous) and piece.name.lower() == "strftime"
