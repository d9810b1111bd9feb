"""PostgreSQL's formatting templates, parsed as PostgreSQL parses them (formatting.c).

Rules this module keeps:

* :func:`datetime_nodes` reads a date/time template (``to_char`` of a timestamp,
  ``to_date``, ``to_timestamp``) into :class:`Node` s exactly as PostgreSQL's
  ``parse_format`` does: at each position an ``FM`` / ``TM`` prefix, then the first keyword
  of :data:`DATETIME_KEYWORDS` (PostgreSQL's table and order: ``HH24`` before ``HH``,
  ``Month`` / ``MONTH`` / ``month`` apart) that starts there, then a ``TH`` / ``th`` /
  ``SP`` suffix; otherwise one character: ``"..."`` is literal text (a backslash quotes the
  next character inside it), a backslash before ``"`` outside it is a literal quote, and a
  printable ASCII character that is not a letter or digit is a separator.
* :func:`number_nodes` reads a number template (``to_char`` of a number, ``to_number``)
  with PostgreSQL's :data:`NUMBER_KEYWORDS` and collects what ``NUMDesc_prepare`` collects
  (:class:`NumberDesc`: digits before / after the decimal point, the first and last ``0``,
  the sign, fill mode...), raising PostgreSQL's 42601 for the combinations it refuses.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pgbarrier.errors import PgError

__all__ = ["DATETIME_KEYWORDS", "NUMBER_KEYWORDS", "Node", "NumberDesc", "datetime_nodes",
           "number_nodes"]

#: (keyword, id, digit field) in PostgreSQL's order (DCH_keywords); lower-case spellings
#: share the id of their upper-case one unless PostgreSQL prints them differently
DATETIME_KEYWORDS: list[tuple[str, str, bool]] = [
    ("A.D.", "A.D.", False), ("A.M.", "A.M.", False), ("AD", "AD", False),
    ("AM", "AM", False), ("B.C.", "B.C.", False), ("BC", "BC", False), ("CC", "CC", True),
    ("DAY", "DAY", False), ("DDD", "DDD", True), ("DD", "DD", True), ("DY", "DY", False),
    ("Day", "Day", False), ("Dy", "Dy", False), ("D", "D", True),
    ("FF1", "FF1", True), ("FF2", "FF2", True), ("FF3", "FF3", True), ("FF4", "FF4", True),
    ("FF5", "FF5", True), ("FF6", "FF6", True), ("FX", "FX", False),
    ("HH24", "HH24", True), ("HH12", "HH12", True), ("HH", "HH", True),
    ("IDDD", "IDDD", True), ("ID", "ID", True), ("IW", "IW", True), ("IYYY", "IYYY", True),
    ("IYY", "IYY", True), ("IY", "IY", True), ("I", "I", True), ("J", "J", True),
    ("MI", "MI", True), ("MM", "MM", True), ("MONTH", "MONTH", False), ("MON", "MON", False),
    ("MS", "MS", True), ("Month", "Month", False), ("Mon", "Mon", False),
    ("OF", "OF", False), ("P.M.", "P.M.", False), ("PM", "PM", False), ("Q", "Q", True),
    ("RM", "RM", False), ("SSSSS", "SSSS", True), ("SSSS", "SSSS", True),
    ("SS", "SS", True), ("TZH", "TZH", False), ("TZM", "TZM", True), ("TZ", "TZ", False),
    ("US", "US", True), ("WW", "WW", True), ("W", "W", True), ("Y,YYY", "Y,YYY", True),
    ("YYYY", "YYYY", True), ("YYY", "YYY", True), ("YY", "YY", True), ("Y", "Y", True),
    ("a.d.", "a.d.", False), ("a.m.", "a.m.", False), ("ad", "ad", False),
    ("am", "am", False), ("b.c.", "b.c.", False), ("bc", "bc", False), ("cc", "CC", True),
    ("day", "day", False), ("ddd", "DDD", True), ("dd", "DD", True), ("dy", "dy", False),
    ("d", "D", True), ("ff1", "FF1", True), ("ff2", "FF2", True), ("ff3", "FF3", True),
    ("ff4", "FF4", True), ("ff5", "FF5", True), ("ff6", "FF6", True), ("fx", "FX", False),
    ("hh24", "HH24", True), ("hh12", "HH12", True), ("hh", "HH", True),
    ("iddd", "IDDD", True), ("id", "ID", True), ("iw", "IW", True), ("iyyy", "IYYY", True),
    ("iyy", "IYY", True), ("iy", "IY", True), ("i", "I", True), ("j", "J", True),
    ("mi", "MI", True), ("mm", "MM", True), ("month", "month", False),
    ("mon", "mon", False), ("ms", "MS", True), ("of", "OF", False), ("p.m.", "p.m.", False),
    ("pm", "pm", False), ("q", "Q", True), ("rm", "rm", False), ("sssss", "SSSS", True),
    ("ssss", "SSSS", True), ("ss", "SS", True), ("tzh", "TZH", False), ("tzm", "TZM", True),
    ("tz", "tz", False), ("us", "US", True), ("ww", "WW", True), ("w", "W", True),
    ("y,yyy", "Y,YYY", True), ("yyyy", "YYYY", True), ("yyy", "YYY", True),
    ("yy", "YY", True), ("y", "Y", True),
]

#: (keyword, id) of number templates (NUM_keywords)
NUMBER_KEYWORDS: list[tuple[str, str]] = [
    (",", ","), (".", "."), ("0", "0"), ("9", "9"), ("B", "B"), ("C", "C"), ("D", "D"),
    ("EEEE", "EEEE"), ("FM", "FM"), ("G", "G"), ("L", "L"), ("MI", "MI"), ("PL", "PL"),
    ("PR", "PR"), ("RN", "RN"), ("SG", "SG"), ("SP", "SP"), ("S", "S"), ("TH", "TH"),
    ("V", "V"), ("b", "B"), ("c", "C"), ("d", "D"), ("eeee", "EEEE"), ("fm", "FM"),
    ("g", "G"), ("l", "L"), ("mi", "MI"), ("pl", "PL"), ("pr", "PR"), ("rn", "rn"),
    ("sg", "SG"), ("sp", "SP"), ("s", "S"), ("th", "th"), ("v", "V"),
]

_PREFIXES = (("FM", "fm"), ("fm", "fm"), ("TM", "tm"), ("tm", "tm"))
_SUFFIXES = (("TH", "TH"), ("th", "th"), ("SP", "sp"))


@dataclass
class Node:
    kind: str                 # "action", "char", "separator" or "space"
    text: str                 # the character(s), or the keyword as written
    key: str = ""             # an action's id
    digit: bool = False       # an action reading / writing a number
    fm: bool = False          # FM prefix: no padding
    tm: bool = False          # TM prefix: translated (here: English) names, unpadded
    th: str | None = None     # "TH" / "th" suffix: an ordinal
    sp: bool = False          # SP suffix (PostgreSQL ignores it)


def _keyword(fmt: str, i: int, table) -> tuple[str, ...] | None:
    first = fmt[i]
    for entry in table:
        if entry[0][0] == first and fmt.startswith(entry[0], i):
            return entry
    return None


def datetime_nodes(fmt: str) -> list[Node]:
    """A date/time template as PostgreSQL's parse_format reads it."""
    nodes: list[Node] = []
    i, n = 0, len(fmt)
    while i < n:
        fm = tm = False
        for prefix, code in _PREFIXES:
            if fmt.startswith(prefix, i):
                fm, tm = code == "fm", code == "tm"
                i += len(prefix)
                break
        if i < n and (kw := _keyword(fmt, i, DATETIME_KEYWORDS)) is not None:
            name, key, digit = kw
            node = Node("action", name, key, digit, fm=fm, tm=tm)
            i += len(name)
            for suffix, code in _SUFFIXES:
                if i < n and fmt.startswith(suffix, i):
                    if code == "sp":
                        node.sp = True
                    else:
                        node.th = code
                    i += len(suffix)
                    break
            nodes.append(node)
            continue
        if i >= n:
            break
        ch = fmt[i]
        if ch == '"':
            i += 1
            while i < n:
                if fmt[i] == '"':
                    i += 1
                    break
                if fmt[i] == "\\" and i + 1 < n:
                    i += 1
                nodes.append(Node("char", fmt[i]))
                i += 1
            continue
        if ch == "\\" and fmt.startswith('"', i + 1):
            i += 1
            ch = '"'
        if 0x20 < ord(ch) < 0x7F and not ch.isalnum():
            nodes.append(Node("separator", ch))
        elif ch.isspace():
            nodes.append(Node("space", ch))
        else:
            nodes.append(Node("char", ch))
        i += 1
    return nodes


@dataclass
class NumberDesc:
    """NUMDesc: what a number template asks for."""

    pre: int = 0                 # digits before the decimal point
    post: int = 0                # digits after it
    decimal: bool = False        # "." or D
    zero: bool = False           # a 0 before the decimal point...
    zero_start: int = 0          # ... the first (1-based position among the digits)
    zero_end: int = 0            # the last 0 (position among all digits)
    fill: bool = False           # FM
    lsign: int = 0               # S: -1 before the number, 1 after
    pre_lsign_num: int = 0
    bracket: bool = False        # PR
    minus: bool = False          # MI (or SG)
    plus: bool = False           # PL (or SG)
    roman: bool = False          # RN / rn
    multi: int = 0               # V: digits shifted
    multi_flag: bool = False
    eeee: bool = False           # EEEE
    blank: bool = False          # B
    nodes: list[Node] = field(default_factory=list)


def _syntax(message: str, detail: str | None = None) -> PgError:
    err = PgError.by_sqlstate("42601")(message, sqlstate="42601")
    err.detail = detail
    return err


def number_nodes(fmt: str) -> NumberDesc:
    """A number template as PostgreSQL reads it (parse_format and NUMDesc_prepare)."""
    num = NumberDesc()
    i, n = 0, len(fmt)
    while i < n:
        kw = _keyword(fmt, i, NUMBER_KEYWORDS)
        if kw is not None:
            name, key = kw
            num.nodes.append(Node("action", name, key))
            _prepare(num, key)
            i += len(name)
            continue
        ch = fmt[i]
        if ch == '"':
            i += 1
            while i < n:
                if fmt[i] == '"':
                    i += 1
                    break
                if fmt[i] == "\\" and i + 1 < n:
                    i += 1
                num.nodes.append(Node("char", fmt[i]))
                i += 1
            continue
        if ch == "\\" and fmt.startswith('"', i + 1):
            i += 1
            ch = '"'
        num.nodes.append(Node("space" if ch.isspace() else "char", ch))
        i += 1
    return num


def _prepare(num: NumberDesc, key: str) -> None:
    """PostgreSQL's NUMDesc_prepare for one keyword."""
    if num.eeee and key != "EEEE":
        raise _syntax('"EEEE" must be the last pattern used')
    if key == "9":
        if num.bracket:
            raise _syntax('"9" must be ahead of "PR"')
        if num.multi_flag:
            num.multi += 1
        elif num.decimal:
            num.post += 1
        else:
            num.pre += 1
    elif key == "0":
        if num.bracket:
            raise _syntax('"0" must be ahead of "PR"')
        if not num.zero and not num.decimal:
            num.zero = True
            num.zero_start = num.pre + 1
        if not num.decimal:
            num.pre += 1
        else:
            num.post += 1
        num.zero_end = num.pre + num.post
    elif key == "B":
        if num.pre == 0 and num.post == 0 and not num.zero:
            num.blank = True
    elif key in ("D", "."):
        if num.decimal:
            raise _syntax("multiple decimal points")
        if num.multi_flag:
            raise _syntax('cannot use "V" and decimal point together')
        num.decimal = True
    elif key == "FM":
        num.fill = True
    elif key == "S":
        if num.lsign:
            raise _syntax('cannot use "S" twice')
        if num.plus or num.minus or num.bracket:
            raise _syntax('cannot use "S" and "PL"/"MI"/"SG"/"PR" together')
        if not num.decimal:
            num.lsign = -1
            num.pre_lsign_num = num.pre
        elif num.lsign == 0:
            num.lsign = 1
    elif key == "MI":
        if num.lsign:
            raise _syntax('cannot use "S" and "MI" together')
        num.minus = True
    elif key == "PL":
        if num.lsign:
            raise _syntax('cannot use "S" and "PL" together')
        num.plus = True
    elif key == "SG":
        if num.lsign:
            raise _syntax('cannot use "S" and "SG" together')
        num.minus = num.plus = True
    elif key == "PR":
        if num.lsign or num.plus or num.minus:
            raise _syntax('cannot use "PR" and "S"/"PL"/"MI"/"SG" together')
        num.bracket = True
    elif key in ("RN", "rn"):
        num.roman = True
    elif key == "V":
        if num.decimal:
            raise _syntax('cannot use "V" and decimal point together')
        num.multi_flag = True
    elif key == "EEEE":
        if num.eeee:
            raise _syntax('cannot use "EEEE" twice')
        if num.blank or num.fill or num.lsign or num.bracket or num.minus or num.plus or \
                num.roman or num.multi_flag:
            raise _syntax('"EEEE" is incompatible with other formats',
                          '"EEEE" may only be used together with digit and decimal point '
                          'patterns.')
        num.eeee = True
