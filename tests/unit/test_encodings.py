"""Client encodings: PostgreSQL's names, and conversions with PostgreSQL's own errors.

The expected names, bytes and messages are what PostgreSQL 15 answered (127.0.0.1:5432,
a UTF8 database) for the same input; tests/functional/test_client_encoding_tables.py
compares whole conversion tables with it.
"""

from __future__ import annotations

import struct

import pytest

from pgbarrier.errors import PgError
from pgbarrier.pgproto import encodings as enc
from pgbarrier.pgproto import transcode
from pgbarrier.pgproto import types as pgt


@pytest.mark.parametrize("given, canonical", [
    ("latin1", "LATIN1"), ("LATIN1", "LATIN1"), ("ISO88591", "LATIN1"),
    ("ISO_8859_1", "LATIN1"), ("ISO-8859-1", "LATIN1"), ("l a t i n 1", "LATIN1"),
    ("LATIN-1", "LATIN1"), ("win1252", "WIN1252"), ("WINDOWS1252", "WIN1252"),
    ("Windows-1252", "WIN1252"), ("UNICODE", "UTF8"), ("utf-8", "UTF8"),
    ("KOI8", "KOI8R"), ("koi8-r", "KOI8R"), ("iso_8859_15", "LATIN9"), ("ISO88599", "LATIN5"),
    ("win", "WIN1251"), ("alt", "WIN866"), ("abc", "WIN1258"), ("TCVN5712", "WIN1258"),
    ("mskanji", "SJIS"), ("Shift_JIS", "SJIS"), ("win936", "GBK"), ("windows949", "UHC"),
    ("SQL-ASCII", "SQL_ASCII"), ("mule_internal", "MULE_INTERNAL"), ("EUC-TW", "EUC_TW"),
])
def test_names_are_postgresqls(given, canonical):
    assert enc.encoding_name(given) == canonical


@pytest.mark.parametrize("given", ["FOO", "", "cp1252", "l1", "ütf8", "x" * 60 + "latin1",
                                   "latin 1 1", "UTF16"])
def test_names_postgresql_does_not_know(given):
    assert enc.encoding_name(given) is None


def test_every_postgresql_encoding_is_converted_or_refused():
    assert len(enc.ENCODINGS) == 42
    refused = {n for n in enc.ENCODINGS if enc.unsupported(n)}
    assert refused == {"MULE_INTERNAL", "EUC_JP", "EUC_JIS_2004", "EUC_KR", "EUC_TW", "SJIS",
                       "SHIFT_JIS_2004", "BIG5", "UHC", "JOHAB"}
    assert enc.codec("UTF8") is None and enc.codec("SQL_ASCII") is None
    assert {"LATIN1", "WIN1252", "KOI8U", "EUC_CN", "GBK", "GB18030"} <= set(enc.CODECS)


def _error(fn, *args) -> tuple[str, str]:
    with pytest.raises(PgError) as info:
        fn(*args)
    return info.value.sqlstate, info.value.message


@pytest.mark.parametrize("name, raw, expected", [
    ("WIN1252", b"\x81", ("22P05", 'character with byte sequence 0x81 in encoding "WIN1252" '
                                   'has no equivalent in encoding "UTF8"')),
    ("WIN1252", b"ok \x8d", ("22P05", 'character with byte sequence 0x8d in encoding '
                                      '"WIN1252" has no equivalent in encoding "UTF8"')),
    # the first problem in the text is the one reported
    ("WIN1252", b"\x81\x00", ("22P05", 'character with byte sequence 0x81 in encoding '
                                       '"WIN1252" has no equivalent in encoding "UTF8"')),
    ("WIN1252", b"a\x00\x81", ("22021", 'invalid byte sequence for encoding "WIN1252": 0x00')),
    ("LATIN1", b"a\x00b", ("22021", 'invalid byte sequence for encoding "LATIN1": 0x00')),
    ("GBK", b"\x81", ("22021", 'invalid byte sequence for encoding "GBK": 0x81')),
    ("GBK", b"\x8d\x20", ("22021", 'invalid byte sequence for encoding "GBK": 0x8d 0x20')),
    ("GBK", b"\x81\x20", ("22P05", 'character with byte sequence 0x81 0x20 in encoding "GBK" '
                                   'has no equivalent in encoding "UTF8"')),
    ("EUC_CN", b"\x8e\x01\x7a", ("22021", 'invalid byte sequence for encoding "EUC_CN": '
                                          '0x8e 0x01 0x7a')),
    ("EUC_CN", b"\x8e\x01", ("22021", 'invalid byte sequence for encoding "EUC_CN": 0x8e 0x01')),
    ("GB18030", b"\x81\x30\x81", ("22021", 'invalid byte sequence for encoding "GB18030": '
                                           '0x81 0x30 0x81')),
])
def test_bad_client_bytes_are_postgresqls_errors(name, raw, expected):
    assert _error(enc.CODECS[name].decode, raw) == expected


def test_text_converts_both_ways():
    latin1, win1252 = enc.CODECS["LATIN1"], enc.CODECS["WIN1252"]
    assert latin1.decode(b"caf\xe9 \x80") == "café \x80"
    assert win1252.decode(b"\x80 \x9c") == "€ œ"
    assert win1252.encode("€ œ café") == b"\x80 \x9c caf\xe9"
    assert enc.CODECS["KOI8R"].to_utf8(b"\xd0\xd2") == "пр".encode()
    assert enc.CODECS["GBK"].encode("中文€") == b"\xd6\xd0\xce\xc4\x80"  # PostgreSQL's euro
    assert enc.CODECS["GB18030"].decode(b"\x81\x30\x81\x30") == "\x80"
    assert latin1.from_utf8(b"plain ascii") == b"plain ascii"


def test_characters_the_client_encoding_lacks_are_22p05_naming_their_utf8_bytes():
    assert _error(enc.CODECS["LATIN1"].encode, "a€") == (
        "22P05", 'character with byte sequence 0xe2 0x82 0xac in encoding "UTF8" has no '
                 'equivalent in encoding "LATIN1"')
    assert _error(enc.CODECS["WIN1252"].from_utf8, "\x81".encode()) == (
        "22P05", 'character with byte sequence 0xc2 0x81 in encoding "UTF8" has no '
                 'equivalent in encoding "WIN1252"')
    assert _error(enc.CODECS["LATIN1"].encode, "a\x00€") == (
        "22021", 'invalid byte sequence for encoding "UTF8": 0x00')


def test_a_stream_keeps_a_character_split_between_pieces():
    t = enc.CODECS["GB18030"].incremental()
    data = "a中\x80b".encode("gb18030")
    out = b"".join(t.feed(data[i:i + 1]) for i in range(len(data))) + t.finish()
    assert out.decode() == "a中\x80b"
    t = enc.CODECS["GBK"].incremental()
    assert t.feed(b"x\xd6") == b"x"
    with pytest.raises(PgError) as info:
        t.finish()
    assert info.value.message == 'invalid byte sequence for encoding "GBK": 0xd6'


def test_a_bad_character_in_a_stream_keeps_what_came_before_it():
    t = enc.CODECS["WIN1252"].incremental()
    with pytest.raises(PgError):
        t.feed(b"a\tb\n\xe9\x81")
    assert t.good == "a\tb\né".encode()


def test_client_encoding_state_follows_the_setting():
    state = enc.ClientEncoding()
    assert state.codec is None and state.name == "UTF8"
    state.set("LATIN1")
    assert state.codec is enc.CODECS["LATIN1"]
    state.set("UNICODE")
    assert (state.name, state.codec) == ("UNICODE", None)
    with pytest.raises(ValueError):
        state.set("EUC_TW")


def test_binary_values_convert_only_for_text_types():
    latin1 = enc.CODECS["LATIN1"]
    assert transcode.binary_to_utf8(pgt.TEXT, b"\xe9", latin1) == "é".encode()
    assert transcode.binary_to_utf8(pgt.JSONB, b"\x01\"\xe9\"", latin1) == b'\x01"\xc3\xa9"'
    assert transcode.binary_to_utf8(pgt.BYTEA, b"\xe9", latin1) == b"\xe9"
    assert transcode.binary_to_utf8(pgt.INT4, b"\x00\x00\x00\xe9", latin1) == b"\x00\x00\x00\xe9"
    array = pgt.encode_binary(1009, ["é", None, "a"])  # text[]: each element converted
    head = struct.pack("!iiIii", 1, 1, pgt.TEXT, 3, 1)
    assert array == head + b"\x00\x00\x00\x02\xc3\xa9\xff\xff\xff\xff\x00\x00\x00\x01a"
    back = transcode.binary_from_utf8(1009, array, latin1)
    assert back == head + b"\x00\x00\x00\x01\xe9\xff\xff\xff\xff\x00\x00\x00\x01a"
    assert transcode.binary_to_utf8(1009, back, latin1) == array
    assert transcode.binary_to_utf8(1009, b"\x00\x01", latin1) == b"\x00\x01"  # left to refuse


def test_an_error_the_client_encoding_cannot_hold_becomes_the_22p05_saying_so():
    err = PgError('relation "t€" does not exist', sqlstate="42P01")
    fields = transcode.error_response(err, enc.CODECS["LATIN1"])
    assert b"C22P05\x00" in fields and b'in encoding "LATIN1"' in fields
    ok = transcode.error_response(PgError('relation "té" does not exist', sqlstate="42P01"),
                                  enc.CODECS["LATIN1"])
    assert b'relation "t\xe9" does not exist' in ok
