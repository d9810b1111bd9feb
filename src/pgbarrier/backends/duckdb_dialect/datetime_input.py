"""``to_date`` / ``to_timestamp(text, template)``: PostgreSQL's reading of a date/time text.

Rules this module keeps:

* The template (a literal, :mod:`.templates`) becomes one DuckDB expression that walks the
  input as PostgreSQL's DCH_from_char walks it, node by node (each step a struct of the
  text left and the fields read, bound with ``list_transform([...], lambda s: ...)[1]``):
  blanks are skipped before a field and at the start; a separator or blank in the template
  takes one separator or blank of the input if there is one; other template text takes one
  character; a digit field followed by a non-digit (or under ``FM``) reads all the digits
  there are (``strtol``), otherwise exactly its width; month and day names, AM/PM, AD/BC
  and roman months match in any case (the first of PostgreSQL's list that matches); ``TH``
  skips two characters; after ``FX`` separators and text take exactly one character and
  no blanks are skipped. Input left over after the template is ignored; a template left
  over after the input leaves its fields unset.
* The value: the year (``YYYY``, ``YYY`` / ``YY`` / ``Y`` moved nearest to 2020, ``Y,YYY``,
  ``CC``, ``BC``), the month (``MM``, names, ``RM``), the day (``DD``; ``DDD`` a day of the
  year, ``J`` a Julian day), the time (12-hour clock with AM/PM, ``SSSS`` added, ``MS`` /
  ``US`` / ``FFn`` fractions scaled by the digits read); ``to_timestamp`` is read in the
  session's time zone, or at the offset ``TZH`` / ``TZM`` give; ``to_date`` keeps the date.
* Errors are PostgreSQL's: 22007 ``invalid value "xx" for "MM"`` (the field's width of the
  input, as PostgreSQL quotes it), ``source string too short for "YYYY" formatting
  field``, ``hour "13" is invalid for the 12-hour clock``; 22008 ``date/time field value
  out of range: "..."``. Their DETAIL and HINT lines are not sent (an error raised inside
  DuckDB carries a message only).
* Not done, 0A000 naming the pattern: ISO week dates (``IYYY``, ``IW``, ``ID``, ``IDDD``),
  ``W`` / ``WW``, and a template without a year (PostgreSQL answers year 1 BC, which
  DuckDB's values cannot carry). ``TZ`` / ``tz`` / ``OF`` are PostgreSQL 15's own 0A000
  (``formatting field "OF" is only supported in to_char``) when the input reaches them.
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect import build as B
from pgbarrier.backends.duckdb_dialect.templates import Node, datetime_nodes
from pgbarrier.errors import FeatureNotSupported

__all__ = ["from_char"]

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_DAYS = ("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
_ROMAN = ("XII", "XI", "X", "IX", "VIII", "VII", "VI", "V", "IV", "III", "II", "I")
_SEPARATOR = r"[\s!-/:-@\[-`{-~]"
_UNSUPPORTED = frozenset({"IYYY", "IYY", "IY", "I", "IW", "ID", "IDDD", "W", "WW"})
_WIDTH = {"HH": 2, "HH12": 2, "HH24": 2, "MS": 3, "US": 6, "TZH": 2, "TZM": 2}
#: digit keywords -> the field they set
_DIGIT_FIELDS = {"HH": "hh12", "HH12": "hh12", "HH24": "hh24", "MI": "mi", "SS": "ss",
                 "MS": "ms", "US": "us", "SSSS": "ssss", "YYYY": "yyyy", "YYY": "yyy",
                 "YY": "yy", "Y": "y", "MM": "mm", "DD": "dd", "DDD": "ddd", "D": "d",
                 "J": "j", "Q": "q", "CC": "cc", "TZM": "tzm", "TZH": "tzh"}


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _next_is_separator(nodes: list[Node], i: int) -> bool:
    """PostgreSQL's is_next_separator."""
    node = nodes[i]
    if node.kind == "action" and node.th is not None:
        return True
    if i + 1 >= len(nodes):
        return True
    nxt = nodes[i + 1]
    if nxt.kind == "action":
        return not nxt.digit
    return not (len(nxt.text) == 1 and nxt.text.isdigit())


def _alternatives(words) -> str:
    return "^(?i:" + "|".join(w.replace(".", r"\.") for w in words) + ")"


class _Steps:
    """The walk over the input: one struct per template node."""

    def __init__(self, nodes: list[Node], name: str) -> None:
        self.nodes = nodes
        self.name = name
        self.fields: list[str] = []
        for node in nodes:
            for f in self._fields_of(node):
                if f not in self.fields:
                    self.fields.append(f)

    def _fields_of(self, node: Node) -> list[str]:
        if node.kind != "action":
            return []
        key = node.key
        if key in ("TZ", "tz", "OF"):
            return []  # PostgreSQL 15's 0A000 when the input reaches it (_step)
        if key in _UNSUPPORTED:
            raise FeatureNotSupported(f'{self.name} pattern "{node.text}" is not supported by '
                                      "pgbarrier on DuckDB")
        if key in ("A.M.", "P.M.", "a.m.", "p.m.", "AM", "PM", "am", "pm"):
            return ["pm"]
        if key in ("A.D.", "B.C.", "a.d.", "b.c.", "AD", "BC", "ad", "bc"):
            return ["bc"]
        if key in ("MONTH", "Month", "month", "MON", "Mon", "mon"):
            return ["month_name"]
        if key in ("RM", "rm"):
            return ["rm"]
        if key in ("DAY", "Day", "day", "DY", "Dy", "dy", "FX"):
            return []
        if key == "Y,YYY":
            return ["y_yyy"]
        if key == "TZH":
            return ["tz_sign", "tzh"]
        if key.startswith("FF"):
            return ["us"]
        field = _DIGIT_FIELDS.get(key)
        if field is None:
            raise FeatureNotSupported(f'{self.name} pattern "{node.text}" is not supported by '
                                      "pgbarrier on DuckDB")
        return [field]

    def _struct(self, **changes: str) -> str:
        items = [f"'{f}': {changes.get(f, 's.' + f)}" for f in ("r", "e", *self.fields)]
        return "{" + ", ".join(items) + "}"

    def sql(self) -> str:
        """The final state's expression, over the input column ``t``."""
        state = self._struct(r="t", e="''", **{f: "''" for f in self.fields})
        fx = False
        for i, node in enumerate(self.nodes):
            skip = not fx and (node.kind == "action" and node.key != "FX" or i == 0)
            r1 = r"regexp_replace(s.r, '^\s+', '')" if skip else "s.r"
            step = self._step(node, i, r1, fx)
            if node.kind == "action" and node.key == "FX":
                fx = True
            if step is None:
                continue
            state = (f"list_transform([{state}], lambda s: CASE WHEN s.e <> '' OR s.r = '' "
                     f"THEN s ELSE {step} END)[1]")
        return state

    def _error(self, message_sql: str) -> str:
        """A failed step: ``e`` is "SQLSTATE:message" (22007 unless it says otherwise)."""
        if not message_sql.startswith("'0A000:"):
            message_sql = "'22007:' || " + message_sql
        return self._struct(e=message_sql)

    def _step(self, node: Node, i: int, r1: str, fx: bool) -> str | None:
        if node.kind in ("space", "separator"):
            if fx:
                return self._struct(r="substr(s.r, 2)")
            return self._struct(r=f"CASE WHEN regexp_matches({r1}, '^{_SEPARATOR}') "
                                  f"THEN substr({r1}, 2) ELSE {r1} END")
        if node.kind == "char":
            return self._struct(r="substr(s.r, 2)")
        key = node.key
        th = node.th is not None
        kw = node.text.replace("'", "''")
        if key in ("TZ", "tz", "OF"):
            return self._error(_sql_str(f'0A000:formatting field "{node.text}" is only '
                                        "supported in to_char"))
        if key == "FX" or key in ("DAY", "Day", "day", "DY", "Dy", "dy"):
            if key == "FX":
                return None
            words = _DAYS if key.upper() == "DAY" else tuple(d[:3] for d in _DAYS)
            return self._word(r1, words, None, kw, th)
        if key in ("A.M.", "P.M.", "a.m.", "p.m."):
            return self._word(r1, ("a.m.", "p.m."), "pm", kw, th)
        if key in ("AM", "PM", "am", "pm"):
            return self._word(r1, ("am", "pm"), "pm", kw, th)
        if key in ("A.D.", "B.C.", "a.d.", "b.c."):
            return self._word(r1, ("a.d.", "b.c."), "bc", kw, th)
        if key in ("AD", "BC", "ad", "bc"):
            return self._word(r1, ("ad", "bc"), "bc", kw, th)
        if key in ("MONTH", "Month", "month"):
            return self._word(r1, _MONTHS, "month_name", kw, th)
        if key in ("MON", "Mon", "mon"):
            return self._word(r1, tuple(m[:3] for m in _MONTHS), "month_name", kw, th)
        if key in ("RM", "rm"):
            return self._word(r1, _ROMAN, "rm", kw, th)
        if key == "Y,YYY":
            m = rf"regexp_extract({r1}, '^\d+,\d{{3}}')"
            return (f"CASE WHEN {m} = '' THEN {self._error(self._invalid(r1, 5, kw))} ELSE "
                    f"{self._struct(y_yyy=m, r=self._after(r1, m, th))} END")
        sign_changes: dict[str, str] = {}
        body = r1
        if key == "TZH":
            sign_changes["tz_sign"] = f"CASE WHEN regexp_matches({r1}, '^[+\\- ]') THEN " \
                                      f"left({r1}, 1) ELSE '' END"
            body = f"CASE WHEN regexp_matches({r1}, '^[+\\- ]') THEN substr({r1}, 2) " \
                   f"ELSE {r1} END"
        width = _WIDTH.get(key) or (int(key[2]) if key.startswith("FF") else len(node.text))
        field = self._fields_of(node)[-1]
        if node.fm or _next_is_separator(self.nodes, i):
            m = rf"regexp_extract({body}, '^[+-]?\d+')"
            read = self._struct(**{field: m, "r": self._after(body, m, th)}, **sign_changes)
            return (f"CASE WHEN {m} = '' THEN {self._error(self._invalid(body, width, kw))} "
                    f"ELSE {read} END")
        chunk = f"left({body}, {width})"
        short = _sql_str(f'source string too short for "{node.text}" formatting field')
        rest = f"substr({body}, {width + 3})" if th else f"substr({body}, {width + 1})"
        return (f"CASE WHEN length({chunk}) < {width} THEN {self._error(short)} "
                rf"WHEN NOT regexp_full_match({chunk}, '[+-]?\d+') THEN "
                f"{self._error(self._invalid(body, width, kw))} "
                f"ELSE {self._struct(**{field: chunk, 'r': rest}, **sign_changes)} END")

    @staticmethod
    def _after(r1: str, m: str, th: bool) -> str:
        return f"substr({r1}, length({m}) + {3 if th else 1})"

    @staticmethod
    def _invalid(r1: str, width: int, kw: str) -> str:
        return f"'invalid value \"' || left({r1}, {width}) || '\" for \"{kw}\"'"

    def _word(self, r1: str, words, field: str | None, kw: str, th: bool) -> str:
        m = f"regexp_extract({r1}, '{_alternatives(words)}')"
        shown = rf"regexp_extract({r1}, '^\S*')"
        invalid = f"'invalid value \"' || {shown} || '\" for \"{kw}\"'"
        changes = {"r": self._after(r1, m, th)}
        if field is not None:
            changes[field] = m
        return (f"CASE WHEN {m} = '' THEN {self._error(invalid)} ELSE "
                f"{self._struct(**changes)} END")


def _value_sql(fields: list[str], name: str) -> str:
    """The date / timestamptz of the fields read (state ``q``), PostgreSQL's checks."""

    def num(f: str, default: int = 0) -> str:
        if f not in fields:
            return str(default)
        return f"coalesce(TRY_CAST(nullif(q.{f}, '') AS BIGINT), {default})"

    def has(f: str) -> str:
        return f"q.{f} <> ''" if f in fields else "false"

    adjust = ("CASE WHEN {y} < 70 THEN {y} + 2000 WHEN {y} < 100 THEN {y} + 1900 "
              "WHEN {y} < 520 THEN {y} + 2000 WHEN {y} < 1000 THEN {y} + 1000 ELSE {y} END")
    year = "0"
    short = "false"
    for f, adj in (("y", True), ("yy", True), ("yyy", True)):
        if f in fields:
            value = adjust.format(y=num(f)) if adj else num(f)
            year = f"CASE WHEN {has(f)} THEN {value} ELSE {year} END"
            short = f"({short} OR {has(f)})" if f in ("y", "yy") else short
    if "yyyy" in fields:
        year = f"CASE WHEN {has('yyyy')} THEN {num('yyyy')} ELSE {year} END"
    if "y_yyy" in fields:
        yv = ("CAST(split_part(q.y_yyy, ',', 1) AS BIGINT) * 1000 + "
              "CAST(split_part(q.y_yyy, ',', 2) AS BIGINT)")
        year = f"CASE WHEN {has('y_yyy')} THEN {yv} ELSE {year} END"
    any_year = " OR ".join(has(f) for f in ("y", "yy", "yyy", "yyyy", "y_yyy") if f in fields) \
        or "false"
    bc = "lower(left(q.bc, 1)) = 'b'" if "bc" in fields else "false"
    if "cc" in fields:
        cc = num("cc")
        year = (f"CASE WHEN {has('cc')} AND NOT ({any_year}) THEN ({cc} - 1) * 100 + 1 "
                f"WHEN {has('cc')} AND {short} THEN CASE WHEN ({year}) % 100 = 0 "
                f"THEN {cc} * 100 ELSE ({year}) % 100 + ({cc} - 1) * 100 END ELSE {year} END")
    year = f"CASE WHEN {bc} THEN 1 - ({year}) ELSE {year} END"
    month = num("mm", 1)
    if "month_name" in fields:
        names = ", ".join(_sql_str(m.lower()) for m in _MONTHS)
        abbrevs = ", ".join(_sql_str(m[:3].lower()) for m in _MONTHS)
        month = (f"CASE WHEN {has('month_name')} THEN coalesce(list_position([{names}], "
                 f"lower(q.month_name)), list_position([{abbrevs}], lower(q.month_name))) "
                 f"ELSE {month} END")
    if "rm" in fields:
        romans = ", ".join(_sql_str(r) for r in reversed(_ROMAN))
        month = f"CASE WHEN {has('rm')} THEN list_position([{romans}], upper(q.rm)) " \
                f"ELSE {month} END"
    day = num("dd", 1)
    date = f"make_date(CAST({year} AS INT), CAST({month} AS INT), CAST({day} AS INT))"
    if "ddd" in fields:
        date = (f"CASE WHEN {has('ddd')} AND NOT ({has('mm')} OR {has('dd')}) THEN "
                f"make_date(CAST({year} AS INT), 1, 1) + CAST({num('ddd', 1)} - 1 AS INT) "
                f"ELSE {date} END")
    if "j" in fields:
        date = (f"CASE WHEN {has('j')} THEN DATE '1970-01-01' + CAST({num('j')} - 2440588 "
                f"AS INT) ELSE {date} END")
    pm = "lower(left(q.pm, 1)) = 'p'" if "pm" in fields else "false"
    hour = num("hh24")
    twelve_bad = "false"
    if "hh12" in fields:
        h12 = num("hh12")
        hour = (f"CASE WHEN {has('hh12')} THEN CASE WHEN {pm} AND {h12} < 12 THEN {h12} + 12 "
                f"WHEN NOT ({pm}) AND {h12} = 12 THEN 0 ELSE {h12} END ELSE {hour} END")
        twelve_bad = f"{has('hh12')} AND NOT ({h12} BETWEEN 1 AND 12)"
    elif "pm" in fields:
        hour = f"CASE WHEN {pm} AND {hour} < 12 THEN {hour} + 12 ELSE {hour} END"
    minute, second = num("mi"), num("ss")
    micros = "0"
    if "ms" in fields:
        micros = f"CASE WHEN {has('ms')} THEN CAST(rpad(q.ms, 3, '0') AS BIGINT) * 1000 " \
                 f"ELSE {micros} END"
    if "us" in fields:
        micros = f"CASE WHEN {has('us')} THEN CAST(rpad(q.us, 6, '0') AS BIGINT) " \
                 f"ELSE {micros} END"
    seconds = f"({hour}) * 3600 + ({minute}) * 60 + ({second})"
    if "ssss" in fields:
        seconds += f" + {num('ssss')}"
    stamp = (f"CAST({date} AS TIMESTAMP) + to_microseconds(CAST(({seconds}) * 1000000 + "
             f"({micros}) AS BIGINT))")
    if name == "to_date":
        result = date
    elif "tzh" in fields or "tzm" in fields:
        sign = "CASE WHEN q.tz_sign = '-' THEN -1 ELSE 1 END" if "tzh" in fields else "1"
        offset = f"({sign}) * ({num('tzh')} * 3600 + {num('tzm')} * 60)"
        result = f"timezone('UTC', {stamp} - to_seconds(CAST({offset} AS BIGINT)))"
    else:
        result = f"CAST({stamp} AS TIMESTAMPTZ)"
    in_range = (f"try({date}) IS NOT NULL AND ({hour}) BETWEEN 0 AND 24 AND "
                f"({minute}) BETWEEN 0 AND 59 AND ({second}) BETWEEN 0 AND 60")
    hour_error = (f"error('pgbarrier:22007:hour \"' || CAST({num('hh12')} AS VARCHAR) || "
                  "'\" is invalid for the 12-hour clock')")
    range_error = ("error('pgbarrier:22008:date/time field value out of range: \"' || q.t "
                   "|| '\"')")
    return (f"CASE WHEN q.e <> '' THEN error('pgbarrier:' || q.e) "
            f"WHEN {twelve_bad} THEN {hour_error} WHEN {in_range} THEN {result} "
            f"ELSE {range_error} END")


def from_char(text: exp.Expr, fmt: str, name: str) -> exp.Expr:
    """PostgreSQL's to_date / to_timestamp(text, fmt) for a literal template."""
    nodes = datetime_nodes(fmt)
    steps = _Steps(nodes, name)
    fields = steps.fields
    if not any(f in fields for f in ("yyyy", "yyy", "yy", "y", "y_yyy", "j", "cc")):
        raise FeatureNotSupported(f"{name} with a format that has no year is not supported "
                                  "by pgbarrier on DuckDB")
    final = steps.sql()
    # the input is bound once as t; it rides along in the state (for the range error); the
    # SQL is text (parsing an AST of this size costs sqlglot a good part of a second)
    sql = (f"list_transform([{text.sql('duckdb')}], lambda t: CASE WHEN t IS NULL THEN NULL "
           f"ELSE list_transform([{{'t': t, 's': {final}}}], "
           f"lambda w: list_transform([struct_insert(w.s, t := w.t)], "
           f"lambda q: {_value_sql(fields, name)})[1])[1] END)[1]")
    return exp.Paren(this=B.raw(sql))
