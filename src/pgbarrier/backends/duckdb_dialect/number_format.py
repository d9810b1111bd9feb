"""``to_char`` of a number and ``to_number``, as PostgreSQL's formatting.c answers them.

Rules this module keeps:

* A number template is known when the statement is translated (a literal); PostgreSQL's
  output then depends on the value only through its digit string (the value rounded to
  the template's decimals, ``V`` shifted), its sign and, under ``FM``, its last non-zero
  decimal. :func:`to_char` runs PostgreSQL's ``NUM_processor`` (ported: signs ``S`` /
  ``MI`` / ``PL`` / ``SG`` / ``PR``, ``0`` / ``9`` digits and blanks, ``.`` / ``D``, ``,`` /
  ``G``, ``FM``, ``TH`` / ``th``, ``L``, ``RN`` / ``rn``, ``V``, ``EEEE``, literal text) at
  translation time for every case of those (the digit string's length, sign, leading
  zero, last relevant decimal, an overflow filling ``#``), and the SQL picks the case at
  run time: a ``CASE`` over the digit string DuckDB prints, each branch concatenating
  literal text and characters of that string. Locale-dependent symbols are the C
  locale's (``.``, ``,``, a blank for ``L``), as a server with ``lc_numeric = C`` prints.
* Digits: an integer or ``numeric`` value is rounded as ``numeric`` (half away from zero)
  and printed by DuckDB's DECIMAL (exact); ``real`` / ``double precision`` go through
  ``printf('%.Nf')`` like PostgreSQL's float path (PostgreSQL also caps them at 15
  significant digits, which is not done here). ``EEEE`` is ``printf('%.Ne')`` (a float
  rounding for a ``numeric``); ``RN`` rounds to an integer, ``#`` outside 1..3999.
* ``to_number(text, template)``: the sign (``-``, or ``<`` with ``PR``), the digits read
  (at most as many after the decimal point as the template has; PostgreSQL truncates) and
  the decimal point where the template has one; the value is a ``numeric`` with the
  template's scale (PostgreSQL's has the scale of the digits read).
"""

from __future__ import annotations

from sqlglot import exp

from pgbarrier.backends.duckdb_dialect import build as B
from pgbarrier.backends.duckdb_dialect.templates import NumberDesc, number_nodes

__all__ = ["to_char", "to_number"]

def _lit(text: str) -> exp.Expr:
    return exp.Literal.string(text)


# -- the processor ------------------------------------------------------------------------


class _Out:
    """Output tokens: literal text, ("d", i) the i-th character of the digit string,
    ("th", case), ("roman",)."""

    def __init__(self) -> None:
        self.tokens: list[object] = []

    def text(self, s: str) -> None:
        if self.tokens and isinstance(self.tokens[-1], str):
            self.tokens[-1] += s
        else:
            self.tokens.append(s)

    def token(self, t: tuple) -> None:
        self.tokens.append(t)


def _simulate(num: NumberDesc, number: list, ops: int, sign: str,
              lr_raw: int | None) -> tuple:
    """PostgreSQL's NUM_processor (to_char) on a symbolic digit string ``number`` (each
    element ``("c", char)`` or ``("d", index)``): the output tokens."""
    out = _Out()
    zero_start = num.zero_start - 1 if num.zero_start else 0
    lsign, bracket, fill = num.lsign, num.bracket, num.fill
    pre, post = num.pre, num.post
    if num.roman:
        lsign, bracket, ops, sign = 0, False, 0, "0"
    if num.plus or num.minus:
        sign_wrote = not (num.plus and not num.minus)
    else:
        if sign != "-" and fill:
            bracket = False
        sign_wrote = sign == "+" and fill and not lsign
        if lsign == -1 and pre == num.pre_lsign_num:
            lsign = 1
    if num.roman and (num.plus or num.minus):
        sign_wrote = True
    num_count = post + pre - 1
    last_relevant: int | None = None
    if fill and num.decimal:
        last_relevant = lr_raw
        if last_relevant is not None and num.zero_end > ops:
            last_zero = min(len(number) - 1, num.zero_end - ops)
            if last_relevant < last_zero:
                last_relevant = last_zero
    if not sign_wrote and ops == 0:
        num_count += 1
    state = {"num_in": False, "num_curr": 0, "number_p": 0, "sign_wrote": sign_wrote}

    def char_at(i: int) -> tuple | None:
        return number[i] if 0 <= i < len(number) else None

    def is_dot(i: int | None) -> bool:
        return i is not None and char_at(i) == ("c", ".")

    def predec_space() -> bool:
        return (not num.zero and state["number_p"] == 0 and char_at(0) == ("c", "0")
                and post != 0)

    def numpart(key: str) -> None:
        if num.roman:
            return
        state["num_in"] = False
        curr = state["num_curr"]
        if not state["sign_wrote"] and \
                (curr >= ops or (num.zero and zero_start == curr)) and \
                (not predec_space() or is_dot(last_relevant)):
            if lsign:
                if lsign == -1:
                    out.text("-" if sign == "-" else "+")
                    state["sign_wrote"] = True
            elif bracket:
                out.text(" " if sign == "+" else "<")
                state["sign_wrote"] = True
            elif sign == "+":
                if not fill:
                    out.text(" ")
                state["sign_wrote"] = True
            elif sign == "-":
                out.text("-")
                state["sign_wrote"] = True
        if curr < ops and (zero_start > curr or not num.zero):
            if not fill:
                out.text(" ")
        elif num.zero and curr < ops and zero_start <= curr:
            out.text("0")
            state["num_in"] = True
        else:
            p = state["number_p"]
            ch = char_at(p)
            if ch == ("c", "."):
                if last_relevant is None or not is_dot(last_relevant):
                    out.text(".")
                elif fill and is_dot(last_relevant):
                    out.text(".")
            elif ch is not None:
                if last_relevant is not None and p > last_relevant and key != "0":
                    pass
                elif predec_space():
                    if not fill:
                        out.text(" ")
                    elif is_dot(last_relevant):
                        out.text("0")
                else:
                    if ch[0] == "c":
                        out.text(ch[1])
                    else:
                        out.token(ch)
                    state["num_in"] = True
            if ch is not None:
                state["number_p"] = p + 1
        end = num_count + (1 if ops else 0) + (1 if num.decimal else 0)
        if last_relevant is not None and last_relevant == state["number_p"]:
            end = curr
        if curr + 1 == end:
            if state["sign_wrote"] and bracket:
                out.text(" " if sign == "+" else ">")
            elif lsign == 1:
                out.text("-" if sign == "-" else "+")
        state["num_curr"] = curr + 1

    for node in num.nodes:
        if node.kind != "action":
            out.text(node.text)
            continue
        key = node.key
        if key in ("9", "0", ".", "D"):
            numpart(key)
        elif key in (",", "G"):
            if not state["num_in"]:
                if not fill:
                    out.text(" ")
            else:
                out.text(",")
        elif key == "L":
            out.text(" ")
        elif key in ("RN", "rn"):
            out.token(("roman", key == "rn", fill))
        elif key in ("TH", "th"):
            if num.roman or char_at(0) == ("c", "#") or sign == "-" or num.decimal:
                continue
            out.token(("th", key))
        elif key == "MI":
            if sign == "-":
                out.text("-")
            elif not fill:
                out.text(" ")
        elif key == "PL":
            if sign == "+":
                out.text("+")
            elif not fill:
                out.text(" ")
        elif key == "SG":
            out.text(sign if sign in "+-" else "\x00")
    return tuple(out.tokens)


# -- SQL ----------------------------------------------------------------------------------


def _ordinal(s: exp.Expr, upper: bool) -> exp.Expr:
    """PostgreSQL's get_th of digit string ``s``."""
    names = ("ST", "ND", "RD", "TH") if upper else ("st", "nd", "rd", "th")
    last = exp.Anonymous(this="right", expressions=[s.copy(), exp.Literal.number(1)])
    teen = exp.And(this=exp.GT(this=exp.Length(this=s.copy()), expression=exp.Literal.number(1)),
                   expression=exp.EQ(this=exp.Substring(
                       this=s.copy(), start=exp.Sub(this=exp.Length(this=s.copy()),
                                                    expression=exp.Literal.number(1)),
                       length=exp.Literal.number(1)), expression=_lit("1")))
    return exp.Case().when(teen, _lit(names[3])).when(
        exp.EQ(this=last, expression=_lit("1")), _lit(names[0])).when(
        exp.EQ(this=last.copy(), expression=_lit("2")), _lit(names[1])).when(
        exp.EQ(this=last.copy(), expression=_lit("3")), _lit(names[2])).else_(_lit(names[3]))


def _tokens_sql(tokens: tuple, s: exp.Expr, roman: exp.Expr | None) -> exp.Expr:
    parts: list[exp.Expr] = []
    for t in tokens:
        if isinstance(t, str):
            if "\x00" in t:
                return exp.Null()
            parts.append(_lit(t))
        elif t[0] == "d":
            parts.append(exp.Substring(this=s.copy(), start=exp.Literal.number(t[1] + 1),
                                       length=exp.Literal.number(1)))
        elif t[0] == "th":
            parts.append(_ordinal(s, t[1] == "TH"))
        elif t[0] == "roman":
            value = roman.copy()
            if t[1]:
                value = exp.Lower(this=value)
            if not t[2]:
                value = exp.Anonymous(this="lpad", expressions=[value, exp.Literal.number(15),
                                                                 _lit(" ")])
            parts.append(value)
    if not parts:
        return _lit("")
    if len(parts) == 1:
        return parts[0]
    return exp.Concat(expressions=parts, safe=True)




_ROMAN = ("CASE WHEN n BETWEEN 1 AND 3999 THEN repeat('M', n // 1000) || "
          "['', 'C', 'CC', 'CCC', 'CD', 'D', 'DC', 'DCC', 'DCCC', 'CM'][n // 100 % 10 + 1] || "
          "['', 'X', 'XX', 'XXX', 'XL', 'L', 'LX', 'LXX', 'LXXX', 'XC'][n // 10 % 10 + 1] || "
          "['', 'I', 'II', 'III', 'IV', 'V', 'VI', 'VII', 'VIII', 'IX'][n % 10 + 1] "
          "ELSE '###############' END")


def to_char(value: exp.Expr, fmt: str, is_float: bool) -> exp.Expr:
    """PostgreSQL's to_char(number, fmt) for a literal template."""
    num = number_nodes(fmt)
    if not fmt:
        return _lit("")
    if num.eeee:
        digits = exp.Anonymous(this="printf", expressions=[_lit(f"%.{num.post}e"),
                                                            exp.cast(value.copy(), "DOUBLE")])
        return B.template("list_transform([x], lambda p: CASE WHEN starts_with(p, '-') "
                         "THEN p ELSE ' ' || p END)[1]", x=digits)
    if num.roman:
        rounded = exp.cast(exp.Anonymous(this="round", expressions=[value.copy()]), "BIGINT") \
            if not is_float else exp.cast(exp.Anonymous(this="round_even", expressions=[
                value.copy(), exp.Literal.number(0)]), "BIGINT")
        roman = B.template(_ROMAN, n=rounded)
        tokens = _simulate(num, [], 0, "+", None)
        return exp.Case().when(exp.Is(this=value.copy(), expression=exp.Null()), exp.Null()
                               ).else_(_tokens_sql(tokens, _lit(""), roman))
    pre = num.pre + num.multi
    post = num.post
    num.pre = pre
    shifted = value.copy()
    if num.multi:
        shifted = exp.Mul(this=exp.Paren(this=shifted),
                          expression=exp.Literal.number(10 ** num.multi))
    if is_float:
        printed = exp.Anonymous(this="printf", expressions=[_lit(f"%.{post}f"),
                                                             exp.cast(shifted, "DOUBLE")])
    else:
        printed = exp.cast(exp.cast(exp.Anonymous(this="round", expressions=[
            shifted, exp.Literal.number(post)]), f"DECIMAL(38,{post})"), "VARCHAR")
    # the cases, as DuckDB SQL text (an AST of this size costs sqlglot seconds): by the
    # length of the digit string p.s, its sign p.n, then its leading zero p.z and last
    # relevant decimal p.r (computed once per value)
    frac = post + 1 if post else 0
    cases: list[str] = []
    for int_len in range(1, max(pre, 0) + 1):
        ops = pre - int_len
        by_sign = {}
        for sign in ("+", "-"):
            variants: dict[tuple, list[str]] = {}
            for fz in ((False, True) if int_len == 1 else (False,)):
                lrs: list[int | None] = [None]
                if num.fill and num.decimal and post:
                    lrs = list(range(int_len, int_len + post + 1))
                for lr in lrs:
                    number: list = [("d", k) for k in range(int_len)]
                    if fz:
                        number[0] = ("c", "0")
                    if post:
                        number.append(("c", "."))
                        number += [("d", int_len + 1 + j) for j in range(post)]
                    tokens = _simulate(num, number, ops, sign, lr)
                    cond = []
                    if int_len == 1:
                        cond.append("p.z" if fz else "NOT p.z")
                    if lr is not None:
                        cond.append(f"p.r = {lr + 1}")
                    variants.setdefault(tokens, []).append(" AND ".join(cond) or "true")
            by_sign[sign] = _choice(variants)
        cases.append(f"WHEN {int_len + frac} THEN CASE WHEN p.n THEN {by_sign['-']} "
                      f"ELSE {by_sign['+']} END")
    # overflow: PostgreSQL's '#' string, its decimal point at the template's
    hashes: list = [("c", "#")] * (pre + post + 1)
    hashes[pre] = ("c", ".")
    lr_over = (pre + post if post else pre) if num.fill and num.decimal else None
    overflow = {sign: _tokens_text(_simulate(num, hashes, 0, sign, lr_over))
                for sign in ("+", "-")}
    over = f"CASE WHEN p.n THEN {overflow['-']} ELSE {overflow['+']} END"
    body = over if not cases else (f"CASE WHEN length(p.s) > {pre + frac} THEN {over} "
                                   f"ELSE CASE length(p.s) {' '.join(cases)} END END")
    # bind the digit string, its sign, leading zero and last relevant decimal once:
    # list_transform([...], lambda p: ...)[1]
    digits = "CASE WHEN starts_with(q, '-') THEN substr(q, 2) ELSE q END"
    return exp.Paren(this=B.raw(
        f"list_transform([list_transform([{printed.sql('duckdb')}], lambda q: {{'s': {digits}, "
        f"'n': starts_with(q, '-'), 'z': left({digits}, 1) = '0', "
        f"'r': length(rtrim({digits}, '0'))}})[1]], lambda p: {body})[1]"))


def _choice(variants: dict[tuple, list[str]]) -> str:
    """The output of the variant whose condition holds (the last one without a test)."""
    items = list(variants.items())
    if len(items) == 1:
        return _tokens_text(items[0][0])
    whens = " ".join(f"WHEN ({') OR ('.join(conds)}) THEN {_tokens_text(tokens)}"
                     for tokens, conds in items)
    return f"CASE {whens} END"


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _ordinal_text(s: str, upper: bool) -> str:
    names = ("ST", "ND", "RD", "TH") if upper else ("st", "nd", "rd", "th")
    return (f"CASE WHEN length({s}) > 1 AND substr({s}, length({s}) - 1, 1) = '1' "
            f"THEN '{names[3]}' WHEN right({s}, 1) = '1' THEN '{names[0]}' "
            f"WHEN right({s}, 1) = '2' THEN '{names[1]}' WHEN right({s}, 1) = '3' "
            f"THEN '{names[2]}' ELSE '{names[3]}' END")


def _tokens_text(tokens: tuple) -> str:
    """The output tokens of one case as DuckDB SQL over the digit string ``p.s``."""
    parts: list[str] = []
    run: list[int] = []  # consecutive characters of p.s: one substr

    def flush() -> None:
        if run:
            parts.append(f"substr(p.s, {run[0] + 1}, {len(run)})")
            run.clear()

    for t in tokens:
        if isinstance(t, tuple) and t[0] == "d":
            if run and t[1] != run[-1] + 1:
                flush()
            run.append(t[1])
            continue
        flush()
        if isinstance(t, str):
            if "\x00" in t:
                return "NULL"
            parts.append(_sql_str(t))
        elif t[0] == "th":
            parts.append(_ordinal_text("p.s", t[1] == "TH"))
    flush()
    if not parts:
        return "''"
    return " || ".join(parts)


def to_number(text: exp.Expr, fmt: str) -> exp.Expr:
    """PostgreSQL's to_number(text, fmt) for a literal template (see the module's rules)."""
    num = number_nodes(fmt)
    post = num.post
    negative = "regexp_matches(t, '-')" + (" OR regexp_matches(t, '<')" if num.bracket else "")
    if num.decimal:
        digits = ("regexp_replace(split_part(t, '.', 1), '[^0-9]', '', 'g') || '.' || "
                  f"left(regexp_replace(split_part(t, '.', 2), '[^0-9]', '', 'g'), {post})")
    else:
        digits = "regexp_replace(t, '[^0-9]', '', 'g')"
    sql = (f"CASE WHEN t IS NULL THEN NULL WHEN trim({digits}, '.') = '' THEN "
           "error('pgbarrier:22P02:invalid input syntax for type numeric: \" \"') "
           f"ELSE CAST(CASE WHEN {negative} THEN '-' ELSE '' END || {digits} "
           f"AS DECIMAL(38,{post})) END")
    if num.multi:
        sql = f"CAST(({sql}) / {10 ** num.multi} AS DECIMAL(38,{post + num.multi}))"
    return B.template(sql, t=text)
