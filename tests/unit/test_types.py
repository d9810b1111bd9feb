"""Text and binary encoding and decoding of every common type, byte for byte.

Each case is a PostgreSQL type, the text PostgreSQL 15 prints for a value
(``DateStyle=ISO``, ``IntervalStyle=postgres``, ``TimeZone=UTC``) and the bytes of
its binary ``*send`` form. Both directions are checked: decode text and binary,
encode text and binary, and round trips. The last test asks a real PostgreSQL
for the same values (skipped when unreachable) so the table cannot drift from it.
"""

from __future__ import annotations

import datetime as dt
import decimal
import struct
import uuid

import pytest

from pgbarrier.errors import PgError
from pgbarrier.pgproto import types as t

U = uuid.UUID("550e8400-e29b-41d4-a716-446655440000")
D = decimal.Decimal


def i32(*xs: int) -> bytes:
    return struct.pack(f"!{len(xs)}i", *xs)


def arr(elem: int, dims: list[int], items: list[bytes | None], has_null: bool = False) -> bytes:
    out = struct.pack("!iiI", len(dims), int(has_null), elem)
    out += b"".join(struct.pack("!ii", d, 1) for d in dims)
    for x in items:
        out += b"\xff\xff\xff\xff" if x is None else struct.pack("!i", len(x)) + x
    return out


#: (type OID, Python value, PostgreSQL's text, PostgreSQL's binary)
CASES = [
    (t.BOOL, True, "t", b"\x01"),
    (t.BOOL, False, "f", b"\x00"),
    (t.INT2, -7, "-7", struct.pack("!h", -7)),
    (t.INT4, 2147483647, "2147483647", struct.pack("!i", 2147483647)),
    (t.INT8, -9000000000, "-9000000000", struct.pack("!q", -9000000000)),
    (t.FLOAT4, 1.5, "1.5", struct.pack("!f", 1.5)),
    (t.FLOAT8, 2.25, "2.25", struct.pack("!d", 2.25)),
    (t.FLOAT8, 1e15, "1e+15", struct.pack("!d", 1e15)),
    (t.FLOAT8, 123456789012345.0, "123456789012345", struct.pack("!d", 123456789012345.0)),
    (t.FLOAT8, 1.5e-7, "1.5e-07", struct.pack("!d", 1.5e-7)),
    (t.FLOAT8, 100.0, "100", struct.pack("!d", 100.0)),
    (t.NUMERIC, D("12.345"), "12.345", bytes.fromhex("0002000000000003000c0d7a")),
    (t.NUMERIC, D("0"), "0", bytes.fromhex("0000000000000000")),
    (t.NUMERIC, D("-0.0000123"), "-0.0000123", bytes.fromhex("0001fffe4000000704ce")),
    (t.NUMERIC, D("10000"), "10000", bytes.fromhex("00010001000000000001")),
    (t.NUMERIC, D("0.10"), "0.10", bytes.fromhex("0001ffff0000000203e8")),
    (t.NUMERIC, D("123456789.000001"), "123456789.000001",
     bytes.fromhex("0005000200000006000109291a8500000064")),
    (t.NUMERIC, D("NaN"), "NaN", bytes.fromhex("00000000c0000000")),
    (t.TEXT, "hé llo", "hé llo", "hé llo".encode()),
    (t.VARCHAR, "abc", "abc", b"abc"),
    (t.BYTEA, b"\xde\xad\x00", "\\xdead00", b"\xde\xad\x00"),
    (t.DATE, dt.date(2024, 2, 29), "2024-02-29", i32(8825)),
    (t.DATE, dt.date(1999, 12, 31), "1999-12-31", i32(-1)),
    (t.TIME, dt.time(12, 34, 56, 789000), "12:34:56.789", struct.pack("!q", 45296789000)),
    (t.TIMETZ, dt.time(12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))), "12:00:00+02",
     struct.pack("!qi", 43200000000, -7200)),
    (t.TIMESTAMP, dt.datetime(2024, 1, 2, 3, 4, 5, 123456), "2024-01-02 03:04:05.123456",
     struct.pack("!q", 757479845123456)),
    (t.TIMESTAMPTZ, dt.datetime(2024, 1, 2, 1, 4, 5, tzinfo=dt.timezone.utc),
     "2024-01-02 01:04:05+00", struct.pack("!q", 757472645000000)),
    (t.INTERVAL, t.Interval(14, 3, 14706700000), "1 year 2 mons 3 days 04:05:06.7",
     struct.pack("!qii", 14706700000, 3, 14)),
    (t.INTERVAL, dt.timedelta(hours=-1), "-01:00:00", struct.pack("!qii", -3600000000, 0, 0)),
    (t.INTERVAL, dt.timedelta(days=-1), "-1 days", struct.pack("!qii", 0, -1, 0)),
    (t.UUID, U, str(U), U.bytes),
    (t.JSON, '{"a": 1}', '{"a": 1}', b'{"a": 1}'),
    (t.JSONB, '{"a": 1}', '{"a": 1}', b'\x01{"a": 1}'),
    (t.ARRAY_OF[t.INT4], [1, 2, None], "{1,2,NULL}",
     arr(t.INT4, [3], [i32(1), i32(2), None], has_null=True)),
    (t.ARRAY_OF[t.INT4], [[1, 2], [3, 4]], "{{1,2},{3,4}}",
     arr(t.INT4, [2, 2], [i32(1), i32(2), i32(3), i32(4)])),
    (t.ARRAY_OF[t.INT4], [], "{}", struct.pack("!iiI", 0, 0, t.INT4)),
    (t.ARRAY_OF[t.TEXT], ["a", "b c", '"q"', "", "NULL", None], '{a,"b c","\\"q\\"","","NULL",NULL}',
     arr(t.TEXT, [6], [b"a", b"b c", b'"q"', b"", b"NULL", None], has_null=True)),
    (t.ARRAY_OF[t.NUMERIC], [D("1.50")], "{1.50}",
     arr(t.NUMERIC, [1], [struct.pack("!hhHhHH", 2, 0, 0, 2, 1, 5000)])),
    (t.ARRAY_OF[t.BOOL], [True, False], "{t,f}", arr(t.BOOL, [2], [b"\x01", b"\x00"])),
    (t.ARRAY_OF[t.DATE], [dt.date(2000, 1, 2)], "{2000-01-02}", arr(t.DATE, [1], [i32(1)])),
    (t.ARRAY_OF[t.FLOAT8], [1.5], "{1.5}", arr(t.FLOAT8, [1], [struct.pack("!d", 1.5)])),
    (t.ARRAY_OF[t.BYTEA], [b"\x01"], '{"\\\\x01"}', arr(t.BYTEA, [1], [b"\x01"])),
    (t.ARRAY_OF[t.UUID], [U], "{" + str(U) + "}", arr(t.UUID, [1], [U.bytes])),
    (t.ARRAY_OF[t.INTERVAL], [dt.timedelta(days=1)], '{"1 day"}',
     arr(t.INTERVAL, [1], [struct.pack("!qii", 0, 1, 0)])),
    (t.ARRAY_OF[t.TIMESTAMPTZ], [dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)],
     '{"2000-01-01 00:00:00+00"}', arr(t.TIMESTAMPTZ, [1], [struct.pack("!q", 0)])),
]
IDS = [f"{t.TYPE_NAME.get(c[0], c[0])}-{c[2][:20]}" for c in CASES]


def _same(a, b) -> bool:
    if isinstance(a, decimal.Decimal) and a.is_nan():
        return isinstance(b, decimal.Decimal) and b.is_nan()
    if isinstance(a, t.Interval) or isinstance(b, t.Interval):
        return t.Interval.of(a) == t.Interval.of(b)
    return a == b and type(a) is type(b) or (isinstance(a, list) and a == b)


def test_numeric_array_case_is_pg_binary():
    # written out, the element of {1.50}: ndigits 2, weight 0, sign +, dscale 2, digits 1, 5000
    assert t.numeric_send(D("1.50")) == struct.pack("!hhHhHH", 2, 0, 0, 2, 1, 5000)


@pytest.mark.parametrize("oid, value, text, binary", CASES, ids=IDS)
def test_text_encoding(oid, value, text, binary):
    assert t.encoder(oid, 0)(value) == text.encode()


@pytest.mark.parametrize("oid, value, text, binary", CASES, ids=IDS)
def test_binary_encoding(oid, value, text, binary):
    assert t.supports_binary(oid)
    assert t.encoder(oid, 1)(value) == binary


@pytest.mark.parametrize("oid, value, text, binary", CASES, ids=IDS)
def test_text_decoding_round_trips(oid, value, text, binary):
    decoded = t.decode_param(text.encode(), oid, 0)
    assert _same(decoded, value) or t.encoder(oid, 0)(decoded) == text.encode()
    assert t.encoder(oid, 0)(decoded) == text.encode()


@pytest.mark.parametrize("oid, value, text, binary", CASES, ids=IDS)
def test_binary_decoding_round_trips(oid, value, text, binary):
    encoded = t.encoder(oid, 1)(value)
    decoded = t.decode_param(encoded, oid, 1)
    assert t.encoder(oid, 1)(decoded) == encoded
    assert t.encoder(oid, 0)(decoded) == text.encode()


def test_duckdb_shaped_values_encode_like_postgresql():
    # DuckDB hands over timestamptz in the session zone (printed in it, as PostgreSQL
    # prints in its TimeZone) and floats of float4 columns widened
    berlin = dt.timezone(dt.timedelta(hours=1))
    assert t.to_text(dt.datetime(2024, 1, 1, 13, 0, tzinfo=berlin)) == "2024-01-01 13:00:00+01"
    assert t.to_text(dt.datetime(2024, 1, 1, 13, 0, tzinfo=dt.timezone.utc)) == \
        "2024-01-01 13:00:00+00"
    india = dt.timezone(dt.timedelta(hours=5, minutes=30))
    assert t.to_text(dt.datetime(2024, 1, 1, 5, 30, tzinfo=india)) == "2024-01-01 05:30:00+05:30"
    assert t.encoder(t.TIMESTAMPTZ, 1)(dt.datetime(2024, 1, 1, 13, 0, tzinfo=berlin)) == \
        t.encoder(t.TIMESTAMPTZ, 1)(dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.timezone.utc))
    assert t.encoder(t.FLOAT4, 0)(0.10000000149011612) == b"0.1"
    assert t.encoder(t.NUMERIC, 0)(D("1E+2")) == b"100"
    assert t.encoder(t.NUMERIC, 1)(123456789012345678901234567890) == \
        t.numeric_send(D("123456789012345678901234567890"))
    assert t.encoder(t.TIMESTAMP, 0)(dt.datetime(2024, 1, 2, 3, 4, 5, 120000)) == \
        b"2024-01-02 03:04:05.12"


def test_interval_input_styles():
    assert t.parse_interval("1 year 2 mons 3 days 04:05:06.7") == t.Interval(14, 3, 14706700000)
    assert t.parse_interval("@ 1 hour ago") == t.Interval(0, 0, -3600000000)
    assert t.parse_interval("P1Y2M3DT4H5M6S") == t.Interval(14, 3, 14706000000)
    assert t.parse_interval("2 days 3 seconds 500 microseconds") == t.Interval(0, 2, 3000500)
    assert t.parse_interval("-1 days +23:00:00") == t.Interval(0, -1, 82800000000)
    with pytest.raises(ValueError):
        t.parse_interval("soon")


def test_array_literals_parse():
    assert t.decode_text(t.ARRAY_OF[t.INT4], "{{1,2},{3,NULL}}") == [[1, 2], [3, None]]
    assert t.decode_text(t.ARRAY_OF[t.TEXT], '{"a,b","c\\"d",e}') == ["a,b", 'c"d', "e"]
    assert t.decode_text(t.ARRAY_OF[t.INT4], "[0:1]={5,6}") == [5, 6]
    assert t.decode_text(t.ARRAY_OF[t.TEXT], "{}") == []


def test_parameter_decoding_errors_are_postgresqls():
    with pytest.raises(PgError) as info:
        t.decode_param(b"abc", t.INT4, 0)
    assert info.value.sqlstate == "22P02"
    assert info.value.message == 'invalid input syntax for type integer: "abc"'
    with pytest.raises(PgError) as info:
        t.decode_param(b"\x00\x01", t.INT4, 1)
    assert info.value.sqlstate == "22P03"
    # an inferred type is a guess: text it cannot read stays text for the backend
    assert t.decode_param(b"abc", t.INT4, 0, strict=False) == "abc"
    # dates have spellings only the backend knows (infinity, BC...)
    assert t.decode_param(b"infinity", t.DATE, 0) == "infinity"
    # OID 0 is unknown: text stays text
    assert t.decode_param(b"{1,2}", 0, 0) == "{1,2}"


def test_against_postgresql():
    """The encoders give exactly PostgreSQL's text and binary output for the same values."""
    psycopg = pytest.importorskip("psycopg")
    from conftest import postgres_dsn

    try:
        conn = psycopg.connect(postgres_dsn(), autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    literals = [
        "true", "-7::int2", "9000000000::int8", "0.1::float4", "1e300::float8", "'NaN'::float8",
        "12.345::numeric", "-0.0000123::numeric", "1e20::numeric", "0.10::numeric",
        "'x y'::text", "'\\xdead'::bytea", "'2024-01-02'::date", "'12:34:56.789'::time",
        "'12:00:00+02'::timetz", "'2024-01-02 03:04:05.123456'::timestamp",
        "'2024-01-02 03:04:05+02'::timestamptz", "'1 year 2 mons 3 days 04:05:06.7'::interval",
        "'-1 hour'::interval", f"'{U}'::uuid", "'{\"a\": 1}'::json", "'{\"a\": 1}'::jsonb",
        "ARRAY[1,2,NULL]::int4[]", "ARRAY[['a','b c'],['\"q\"',NULL]]::text[]",
        "ARRAY[1.5,NULL]::numeric[]", "'{}'::int4[]", "ARRAY['\\x01'::bytea]",
        "ARRAY['1 day'::interval]", "ARRAY[''::text, 'NULL']",
    ]
    with conn:
        conn.execute("SET TimeZone = 'UTC'")
        pg = conn.pgconn
        for lit in literals:
            as_text = pg.exec_params(f"SELECT {lit}".encode(), None, None, None, 0)
            as_binary = pg.exec_params(f"SELECT {lit}".encode(), None, None, None, 1)
            oid, text = as_text.ftype(0), as_text.get_value(0, 0)
            binary = as_binary.get_value(0, 0)
            value = t.decode_text(oid, text.decode())
            assert t.encoder(oid, 0)(value) == text, lit
            assert t.encoder(oid, 1)(value) == binary, lit
            assert t.encoder(oid, 0)(t.decode_binary(oid, binary)) == text, lit


@pytest.mark.parametrize("value,text", [
    # PostgreSQL 15's output of these intervals (IntervalStyle postgres)
    (t.Interval(-14, 3, -11045500000), "-1 years -2 mons +3 days -03:04:05.5"),
    (t.Interval(-12, 2, 10800000000), "-1 years +2 days 03:00:00"),
    (t.Interval(1, -2, 10800000000), "1 mon -2 days +03:00:00"),
    (t.Interval(0, -2, 3600000000), "-2 days +01:00:00"),
    (t.Interval(10, 0, 0), "10 mons"),
    (t.Interval(0, 0, 0), "00:00:00"),
])
def test_interval_text_marks_a_positive_field_after_a_negative_one(value, text):
    assert t.interval_text(value) == text
    assert t.parse_interval(text) == value
