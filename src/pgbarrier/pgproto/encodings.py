"""Client encodings: PostgreSQL's names for them, and text converted to and from UTF8 as
PostgreSQL 15 converts it.

Rules this module keeps:

* Names are PostgreSQL's (``pg_char_to_encoding``): case and every character that is not
  an ASCII letter or digit are ignored, then the name is looked up among PostgreSQL's
  names and aliases (``latin1``, ``ISO_8859-1``, ``win1252``, ``WINDOWS-1252``,
  ``UNICODE``, ``KOI8``...); :func:`encoding_name` gives the canonical name, or None for a
  name PostgreSQL does not know.
* UTF8 and SQL_ASCII need no conversion (PostgreSQL converts nothing between SQL_ASCII and
  a UTF8 database, it only checks the client's bytes are UTF-8): :func:`codec` is None for
  them. Every other encoding PostgreSQL knows has a :class:`Codec` when Python's codec
  converts exactly as PostgreSQL does (:data:`CONVERTED`), checked byte by byte and code
  point by code point against PostgreSQL 15's own conversions (tests/unit/test_encodings.py
  holds what the check found): the 27 single-byte ones (LATIN1-10, ISO_8859_5-8, WIN866,
  WIN874, WIN1250-1258, KOI8R, KOI8U), EUC_CN, GB18030 and GBK (Python's GBK has no euro
  sign, PostgreSQL's writes U+20AC as 0x80: the one addition). The others (EUC_JP,
  EUC_JIS_2004, EUC_KR, EUC_TW, SJIS, SHIFT_JIS_2004, BIG5, UHC, JOHAB: Python's tables
  differ from PostgreSQL's; MULE_INTERNAL, which PostgreSQL itself cannot convert to UTF8)
  have none: a session asking for one is refused (:func:`unsupported`).
* Errors are PostgreSQL's, naming the bytes as it does (the whole character as long as
  its first byte announces, at most what is left): bytes that are not a character of the
  client encoding (or a NUL) are 22021 ``invalid byte sequence for encoding "WIN1252":
  0x00``; a character with no Unicode equivalent is 22P05 ``character with byte sequence
  0x81 in encoding "WIN1252" has no equivalent in encoding "UTF8"``; on the way out a
  character the client encoding lacks is 22P05 ``character with byte sequence 0xe2 0x82
  0xac in encoding "UTF8" has no equivalent in encoding "LATIN1"`` (and a NUL, which
  PostgreSQL text cannot hold, 22021 ``... "UTF8": 0x00``).
* Every encoding here keeps ASCII as ASCII (bytes below 0x80 are those characters, both
  ways), so ASCII text needs no conversion: callers skip it (``bytes.isascii``).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable

from pgbarrier.errors import CharacterNotInRepertoire, UntranslatableCharacter

#: PostgreSQL's encodings (``pg_enc2name_tbl``), in its order
ENCODINGS = (
    "SQL_ASCII", "EUC_JP", "EUC_CN", "EUC_KR", "EUC_TW", "EUC_JIS_2004", "UTF8",
    "MULE_INTERNAL", "LATIN1", "LATIN2", "LATIN3", "LATIN4", "LATIN5", "LATIN6", "LATIN7",
    "LATIN8", "LATIN9", "LATIN10", "WIN1256", "WIN1258", "WIN866", "WIN874", "KOI8R",
    "WIN1251", "WIN1252", "ISO_8859_5", "ISO_8859_6", "ISO_8859_7", "ISO_8859_8", "WIN1250",
    "WIN1253", "WIN1254", "WIN1255", "WIN1257", "KOI8U", "SJIS", "BIG5", "GBK", "UHC",
    "GB18030", "JOHAB", "SHIFT_JIS_2004")

#: PostgreSQL's aliases (``pg_encname_tbl``, cleaned names) that are not a canonical name
_ALIASES = {
    "abc": "WIN1258", "alt": "WIN866", "iso88591": "LATIN1", "iso885910": "LATIN6",
    "iso885913": "LATIN7", "iso885914": "LATIN8", "iso885915": "LATIN9",
    "iso885916": "LATIN10", "iso88592": "LATIN2", "iso88593": "LATIN3", "iso88594": "LATIN4",
    "iso88599": "LATIN5", "koi8": "KOI8R", "mskanji": "SJIS", "shiftjis": "SJIS",
    "tcvn": "WIN1258", "tcvn5712": "WIN1258", "unicode": "UTF8", "vscii": "WIN1258",
    "win": "WIN1251", "win932": "SJIS", "win936": "GBK", "win949": "UHC", "win950": "BIG5",
    "windows1250": "WIN1250", "windows1251": "WIN1251", "windows1252": "WIN1252",
    "windows1253": "WIN1253", "windows1254": "WIN1254", "windows1255": "WIN1255",
    "windows1256": "WIN1256", "windows1257": "WIN1257", "windows1258": "WIN1258",
    "windows866": "WIN866", "windows874": "WIN874", "windows932": "SJIS",
    "windows936": "GBK", "windows949": "UHC", "windows950": "BIG5",
}
_BY_CLEAN_NAME = {**{"".join(c for c in n.lower() if c.isalnum()): n for n in ENCODINGS},
                  **_ALIASES}
#: PostgreSQL's NAMEDATALEN: a longer name is no encoding
_NAMEDATALEN = 64


def encoding_name(name: str) -> str | None:
    """PostgreSQL's canonical name of encoding ``name`` (``pg_char_to_encoding``), or None."""
    if not name or len(name.encode("utf-8", "surrogatepass")) >= _NAMEDATALEN:
        return None
    clean = "".join(c for c in name.lower() if c.isascii() and c.isalnum())
    return _BY_CLEAN_NAME.get(clean)


# --------------------------------------------------------------------------- errors


def _shown(raw: bytes) -> str:
    return " ".join(f"0x{b:02x}" for b in raw[:8])


def invalid_bytes(encoding: str, raw: bytes) -> CharacterNotInRepertoire:
    """PostgreSQL's report_invalid_encoding: ``raw`` is the bad sequence as it shows it."""
    return CharacterNotInRepertoire(f'invalid byte sequence for encoding "{encoding}": '
                                    f"{_shown(raw)}")


def untranslatable(source: str, target: str, raw: bytes) -> UntranslatableCharacter:
    """PostgreSQL's report_untranslatable_char: ``raw`` (a character of ``source``) has no
    equivalent in ``target``."""
    return UntranslatableCharacter(f'character with byte sequence {_shown(raw)} in encoding '
                                   f'"{source}" has no equivalent in encoding "{target}"')


def _utf8_length(lead: int) -> int:
    """PostgreSQL's pg_utf_mblen."""
    return 1 if lead < 0x80 else 2 if lead & 0xE0 == 0xC0 else 3 if lead & 0xF0 == 0xE0 \
        else 4 if lead & 0xF8 == 0xF0 else 1


# --------------------------------------------------------------------------- codecs

#: (first byte, the bytes from it on) -> the character's length as PostgreSQL's mblen
#: announces it, and as its verifier finds it (-1: not a character of the encoding)
Measure = Callable[[bytes], int]


def _single(_: bytes) -> int:
    return 1


def _two_if_high(s: bytes) -> int:
    """pg_gbk_mblen."""
    return 2 if s[0] >= 0x80 else 1


def _euc_cn_length(s: bytes) -> int:
    """pg_euccn_mblen (PostgreSQL 15 still counts SS2 and SS3 as 3 bytes)."""
    return 1 if s[0] < 0x80 else 3 if s[0] in (0x8E, 0x8F) else 2


def _euc_cn_verify(s: bytes) -> int:
    """pg_euccn_verifier (EUC_KR's): two bytes, both 0xa1..0xfe."""
    if s[0] < 0x80:
        return 1
    if len(s) < 2 or not (0xA1 <= s[0] <= 0xFE and 0xA1 <= s[1] <= 0xFE):
        return -1
    return 2


def _gbk_verify(s: bytes) -> int:
    """pg_gbk_verifychar: any two bytes after a high one, the second not NUL, and not
    0x8d 0x20 (which PostgreSQL 14 on reserves as invalid in every multibyte encoding)."""
    if s[0] < 0x80:
        return 1
    return 2 if len(s) >= 2 and s[1] != 0 and s[:2] != b"\x8d\x20" else -1


def _gb18030_length(s: bytes) -> int:
    """pg_gb18030_mblen (it reads the second byte too)."""
    if s[0] < 0x80:
        return 1
    return 4 if len(s) > 1 and 0x30 <= s[1] <= 0x39 else 2


def _gb18030_verify(s: bytes) -> int:
    """pg_gb18030_verifier."""
    n = len(s)
    if s[0] < 0x80:
        return 1
    if n >= 4 and 0x30 <= s[1] <= 0x39:
        return 4 if (0x81 <= s[0] <= 0xFE and 0x81 <= s[2] <= 0xFE
                     and 0x30 <= s[3] <= 0x39) else -1
    if n >= 2 and 0x81 <= s[0] <= 0xFE:
        return 2 if 0x40 <= s[1] <= 0x7E or 0x80 <= s[1] <= 0xFE else -1
    return -1


def _gbk_euro(exc: UnicodeError) -> tuple[bytes, int]:
    """PostgreSQL's GBK writes U+20AC as 0x80 (Python's has no euro sign)."""
    if isinstance(exc, UnicodeEncodeError) and exc.object[exc.start] == "\u20ac":
        return b"\x80", exc.start + 1
    raise exc


codecs.register_error("pgbarrier-gbk-euro", _gbk_euro)


class Codec:
    """Conversion between one client encoding and UTF8, with PostgreSQL's errors."""

    __slots__ = ("name", "python", "errors", "length", "verify")

    def __init__(self, name: str, python: str, *, errors: str = "strict",
                 length: Measure = _single, verify: Measure = _single) -> None:
        #: PostgreSQL's name
        self.name = name
        #: Python's codec, and the error handler its encoding runs with
        self.python = python
        self.errors = errors
        #: PostgreSQL's mblen and verifier for this encoding
        self.length = length
        self.verify = verify

    def __repr__(self) -> str:
        return f"Codec({self.name})"

    def decode(self, raw: bytes) -> str:
        """The client's bytes as text (22021 or 22P05 as PostgreSQL answers them)."""
        try:
            text = raw.decode(self.python)
        except UnicodeDecodeError as exc:
            raise self._decode_error(raw, exc.start) from None
        if "\x00" in text:
            raise self._decode_error(raw, len(raw))
        return text

    def valid_length(self, raw: bytes) -> int:
        """How many bytes of ``raw`` convert before its first bad character."""
        try:
            raw.decode(self.python)
            at = len(raw)
        except UnicodeDecodeError as exc:
            at = exc.start
        nul = raw.find(b"\x00", 0, at)
        return at if nul < 0 else nul

    def _decode_error(self, raw: bytes,
                      at: int) -> CharacterNotInRepertoire | UntranslatableCharacter:
        nul = raw.find(b"\x00", 0, at)
        if nul >= 0:  # PostgreSQL stops at the first NUL
            return invalid_bytes(self.name, b"\x00")
        rest = raw[at:]
        size = self.verify(rest)
        if size < 0:
            return invalid_bytes(self.name, rest[:self.length(rest)])
        return untranslatable(self.name, "UTF8", rest[:size])

    def encode(self, text: str) -> bytes:
        """``text`` in the client encoding (22P05 for a character it lacks)."""
        try:
            out = text.encode(self.python, self.errors)
        except UnicodeEncodeError as exc:
            if "\x00" in text[:exc.start]:
                raise invalid_bytes("UTF8", b"\x00") from None
            raise untranslatable("UTF8", self.name,
                                 text[exc.start].encode("utf-8", "surrogatepass")) from None
        if b"\x00" in out:
            raise invalid_bytes("UTF8", b"\x00")
        return out

    def to_utf8(self, raw: bytes) -> bytes:
        """The client's bytes converted to UTF-8 (ASCII as it is)."""
        return raw if raw.isascii() and b"\x00" not in raw else self.decode(raw).encode("utf-8")

    def from_utf8(self, raw: bytes) -> bytes:
        """UTF-8 bytes (valid: pgbarrier's own) converted to the client encoding."""
        return raw if raw.isascii() and b"\x00" not in raw else self.encode(raw.decode("utf-8"))

    def incomplete_tail(self, raw: bytes) -> int:
        """Where a last character that goes on past the end of ``raw`` starts (its first
        byte announces more bytes than are left), else ``len(raw)``."""
        try:
            raw.decode(self.python)
        except UnicodeDecodeError as exc:
            rest = raw[exc.start:]
            if exc.start + self.length(rest) > len(raw) and self.verify(rest) < 0 \
                    and b"\x00" not in rest:
                return exc.start
        return len(raw)

    def incremental(self) -> Transcoder:
        """A converter of a stream to UTF-8 in pieces (COPY FROM STDIN's data)."""
        return Transcoder(self)


class Transcoder:
    """Converts a stream to UTF-8 piece by piece: a character split between two pieces
    waits for its rest (PostgreSQL's COPY keeps such a tail for its next read); at the
    end, a character left incomplete is 22021."""

    __slots__ = ("codec", "tail", "good")

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self.tail = b""
        #: after a conversion error: the piece's text before the bad character, converted
        self.good = b""

    def feed(self, data: bytes) -> bytes:
        if self.tail:
            data = self.tail + data
            self.tail = b""
        codec = self.codec
        if codec.verify is not _single and not data.isascii():
            cut = codec.incomplete_tail(data)
            if cut < len(data):
                data, self.tail = data[:cut], data[cut:]
        return self._convert(data)

    def finish(self) -> bytes:
        tail, self.tail = self.tail, b""
        return self._convert(tail) if tail else b""

    def _convert(self, data: bytes) -> bytes:
        codec = self.codec
        try:
            return codec.to_utf8(data)
        except (CharacterNotInRepertoire, UntranslatableCharacter):
            self.good = codec.to_utf8(data[:codec.valid_length(data)])
            raise


def _sb(name: str, python: str) -> Codec:
    return Codec(name, python)


#: the client encodings pgbarrier converts, by PostgreSQL's name
CODECS: dict[str, Codec] = {c.name: c for c in (
    _sb("LATIN1", "latin-1"), _sb("LATIN2", "iso8859_2"), _sb("LATIN3", "iso8859_3"),
    _sb("LATIN4", "iso8859_4"), _sb("LATIN5", "iso8859_9"), _sb("LATIN6", "iso8859_10"),
    _sb("LATIN7", "iso8859_13"), _sb("LATIN8", "iso8859_14"), _sb("LATIN9", "iso8859_15"),
    _sb("LATIN10", "iso8859_16"), _sb("ISO_8859_5", "iso8859_5"),
    _sb("ISO_8859_6", "iso8859_6"), _sb("ISO_8859_7", "iso8859_7"),
    _sb("ISO_8859_8", "iso8859_8"), _sb("WIN866", "cp866"), _sb("WIN874", "cp874"),
    _sb("WIN1250", "cp1250"), _sb("WIN1251", "cp1251"), _sb("WIN1252", "cp1252"),
    _sb("WIN1253", "cp1253"), _sb("WIN1254", "cp1254"), _sb("WIN1255", "cp1255"),
    _sb("WIN1256", "cp1256"), _sb("WIN1257", "cp1257"), _sb("WIN1258", "cp1258"),
    _sb("KOI8R", "koi8_r"), _sb("KOI8U", "koi8_u"),
    Codec("EUC_CN", "gb2312", length=_euc_cn_length, verify=_euc_cn_verify),
    Codec("GBK", "gbk", errors="pgbarrier-gbk-euro", length=_two_if_high, verify=_gbk_verify),
    Codec("GB18030", "gb18030", length=_gb18030_length, verify=_gb18030_verify),
)}
#: encodings that need no conversion from or to UTF8
UNCONVERTED = frozenset({"UTF8", "SQL_ASCII"})
#: every client encoding pgbarrier takes
CONVERTED = frozenset(CODECS) | UNCONVERTED
#: the same, as a sentence lists them
CONVERTED_LIST = ", ".join(["UTF8", "SQL_ASCII", *CODECS])


def codec(name: str) -> Codec | None:
    """The codec of canonical encoding ``name``; None when it needs no conversion
    (KeyError: pgbarrier cannot convert it, see :func:`unsupported`)."""
    if name in UNCONVERTED:
        return None
    return CODECS[name]


def unsupported(name: str) -> bool:
    """PostgreSQL knows encoding ``name`` (canonical) but pgbarrier cannot convert it."""
    return name not in CONVERTED


def utf8_error(raw: bytes, at: int) -> CharacterNotInRepertoire:
    """PostgreSQL's 22021 for bytes that are not UTF-8 at ``raw[at]`` (the whole sequence
    its first byte announces, at most what is left)."""
    return invalid_bytes("UTF8", raw[at:at + _utf8_length(raw[at])])


class ClientEncoding:
    """One session's client encoding as the wire converts it: ``name`` as ``SHOW`` and
    ParameterStatus give it, ``codec`` None when nothing is converted. The session's
    settings change it in place (SET, RESET, DISCARD ALL, ``set_config``); the wire
    session reads ``codec`` for each message."""

    __slots__ = ("name", "codec")

    def __init__(self, name: str = "UTF8") -> None:
        self.name = name
        self.codec: Codec | None = None
        self.set(name)

    def set(self, shown: str) -> None:
        """The encoding is now ``shown`` (a name :func:`encoding_name` knows and pgbarrier
        converts; ``UNICODE`` is shown as given, as PostgreSQL shows it)."""
        canonical = encoding_name(shown)
        if canonical is None or canonical not in CONVERTED:
            raise ValueError(f"no client encoding {shown!r}")
        self.name = shown
        self.codec = codec(canonical)

    def __repr__(self) -> str:
        return f"ClientEncoding({self.name})"


#: the encoding of a session pgbarrier converts nothing for (UTF8, or an upstream
#: PostgreSQL that converts itself); shared, never changed
UNCONVERTED_SESSION = ClientEncoding()
