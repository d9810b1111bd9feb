"""Why a text is not JSON, in PostgreSQL's words (its ``json`` input's DETAIL and CONTEXT).

Rules this module keeps:

* DuckDB says only ``Malformed JSON at byte n``; PostgreSQL's DETAIL names the token its
  parser stopped at (``Token "x" is invalid.``, ``Expected ":", but found "1".``, ``The
  input string ended unexpectedly.``, ``Escape sequence "\\q" is invalid.``...) and its
  CONTEXT shows the line up to that token (``JSON data, line 1: {"a":x...``).
  :func:`json_error` reads the text again with PostgreSQL's lexer and grammar
  (src/common/jsonapi.c: tokens, what ends a word, numbers, string escapes) and answers
  (detail, context); None when it finds the text valid.
"""

from __future__ import annotations

_WS = " \t\n\r"
_PUNCT = "{}[],:"


def _alnum(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z") or ("0" <= c <= "9") or c == "_" or c > "\x7f"


class _Fail(Exception):
    def __init__(self, detail: str, start: int, end: int, at_end: bool = False) -> None:
        super().__init__(detail)
        self.detail, self.start, self.end, self.at_end = detail, start, end, at_end


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.pos = 0
        self.kind = ""
        self.start = 0
        self.end = 0
        self.line = 1
        self.line_start = 0

    def next(self) -> None:
        s, p = self.s, self.pos
        while p < len(s) and s[p] in _WS:
            if s[p] == "\n":
                self.line += 1
                self.line_start = p + 1
            p += 1
        self.start = p
        if p >= len(s):
            self.kind, self.end, self.pos = "END", p, p
            return
        c = s[p]
        if c in _PUNCT:
            self.kind, self.end, self.pos = c, p + 1, p + 1
            return
        if c == '"':
            self._string(p)
            return
        if c == "-" or c.isdigit() and c.isascii():
            self._number(p)
            return
        q = p
        while q < len(s) and _alnum(s[q]):
            q += 1
        if q == p:
            self._invalid(p, p + 1)
        word = s[p:q]
        if word not in ("true", "false", "null"):
            self._invalid(p, q)
        self.kind, self.end, self.pos = word, q, q

    def _invalid(self, start: int, end: int) -> None:
        raise _Fail(f'Token "{self.s[start:end]}" is invalid.', start, end)

    def _string(self, p: int) -> None:
        s = self.s
        q = p + 1
        while True:
            if q >= len(s):
                self._invalid(p, q)
            c = s[q]
            if c == '"':
                break
            if ord(c) < 0x20:
                raise _Fail(f"Character with value 0x{ord(c):02x} must be escaped.", p, q + 1)
            if c == "\\":
                q += 1
                if q >= len(s):
                    self._invalid(p, q)
                e = s[q]
                if e == "u":
                    digits = s[q + 1:q + 5]
                    if len(digits) < 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                        raise _Fail('"\\u" must be followed by four hexadecimal digits.', p,
                                    min(q + 1 + len(digits), len(s)))
                    q += 4
                elif e not in '"\\/bfnrt':
                    raise _Fail(f'Escape sequence "\\{e}" is invalid.', p, q + 1)
            q += 1
        self.kind, self.end, self.pos = "STRING", q + 1, q + 1

    def _number(self, p: int) -> None:
        s, q, bad = self.s, p, False
        if q < len(s) and s[q] == "-":
            q += 1
        if q < len(s) and s[q] == "0":
            q += 1
        elif q < len(s) and "1" <= s[q] <= "9":
            while q < len(s) and "0" <= s[q] <= "9":
                q += 1
        else:
            bad = True
        if q < len(s) and s[q] == "." and not bad:
            q += 1
            if q < len(s) and "0" <= s[q] <= "9":
                while q < len(s) and "0" <= s[q] <= "9":
                    q += 1
            else:
                bad = True
        if q < len(s) and s[q] in "eE" and not bad:
            q += 1
            if q < len(s) and s[q] in "+-":
                q += 1
            if q < len(s) and "0" <= s[q] <= "9":
                while q < len(s) and "0" <= s[q] <= "9":
                    q += 1
            else:
                bad = True
        while q < len(s) and _alnum(s[q]):
            q += 1
            bad = True
        if bad:
            self._invalid(p, q)
        self.kind, self.end, self.pos = "NUMBER", q, q


class _Parser:
    def __init__(self, text: str) -> None:
        self.lex = _Lexer(text)

    def expect_fail(self, what: str) -> None:
        lex = self.lex
        if lex.kind == "END":
            raise _Fail("The input string ended unexpectedly.", lex.start, lex.end, True)
        raise _Fail(f'Expected {what}, but found "{lex.s[lex.start:lex.end]}".',
                    lex.start, lex.end)

    def value(self) -> None:
        k = self.lex.kind
        if k == "{":
            self.obj()
        elif k == "[":
            self.arr()
        elif k in ("STRING", "NUMBER", "true", "false", "null"):
            self.lex.next()
        else:
            self.expect_fail("JSON value")

    def obj(self) -> None:
        self.lex.next()
        if self.lex.kind == "}":
            self.lex.next()
            return
        if self.lex.kind != "STRING":
            self.expect_fail('string or "}"')
        while True:
            self.lex.next()
            if self.lex.kind != ":":
                self.expect_fail('":"')
            self.lex.next()
            self.value()
            if self.lex.kind == "}":
                self.lex.next()
                return
            if self.lex.kind != ",":
                self.expect_fail('"," or "}"')
            self.lex.next()
            if self.lex.kind != "STRING":
                self.expect_fail("string")

    def arr(self) -> None:
        self.lex.next()
        if self.lex.kind == "]":
            self.lex.next()
            return
        while True:
            self.value()
            if self.lex.kind == "]":
                self.lex.next()
                return
            if self.lex.kind != ",":
                self.expect_fail('"," or "]"')
            self.lex.next()

    def document(self) -> None:
        self.lex.next()
        self.value()
        if self.lex.kind != "END":
            self.expect_fail("end of input")


def json_error(text: str) -> tuple[str, str] | None:
    """(DETAIL, CONTEXT) of PostgreSQL's ``invalid input syntax for type json`` for
    ``text``; None when PostgreSQL would read it."""
    parser = _Parser(text)
    try:
        parser.document()
    except _Fail as fail:
        return fail.detail, _context(parser.lex, fail)
    except RecursionError:  # nested deeper than Python's stack: no DETAIL
        return None
    return None


def _context(lex: _Lexer, fail: _Fail) -> str:
    """report_json_context: the error's line up to the token's end, at most 50 chars."""
    s = lex.s
    line_start = lex.line_start
    end = fail.end
    start = line_start
    if end - start >= 50:
        start = end - 49
    if start - line_start <= 3:
        start = line_start
    prefix = "..." if start > line_start else ""
    suffix = "..." if not fail.at_end and end < len(s) and s[end] not in "\n\r" else ""
    return f"JSON data, line {lex.line}: {prefix}{s[start:end]}{suffix}"
