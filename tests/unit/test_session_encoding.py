"""A DuckDB session under a client encoding other than UTF8, fed protocol bytes.

The bytes expected out are what PostgreSQL 15 sends for the same bytes in (checked
against 127.0.0.1:5432 with the same messages); the functional tests compare real
clients side by side.
"""

from __future__ import annotations

import struct

import pytest

from pgbarrier.app import SERVER_PARAMETERS
from pgbarrier.errors import PgError
from pgbarrier.pgproto import encodings
from pgbarrier.pgproto import messages as m
from pgbarrier.session.session import Session


def frame(code: bytes, body: bytes = b"") -> tuple[bytes, bytes]:
    return code, body


def query(sql: bytes) -> tuple[bytes, bytes]:
    return frame(b"Q", sql + b"\x00")


def parse(sql: bytes, name: bytes = b"") -> tuple[bytes, bytes]:
    return frame(b"P", name + b"\x00" + sql + b"\x00" + struct.pack("!h", 0))


def bind(params: tuple[bytes | None, ...], formats: tuple[int, ...] = (),
         result_formats: tuple[int, ...] = ()) -> tuple[bytes, bytes]:
    body = b"\x00\x00" + struct.pack("!h", len(formats))
    body += b"".join(struct.pack("!h", f) for f in formats)
    body += struct.pack("!h", len(params))
    for p in params:
        body += struct.pack("!i", -1) if p is None else struct.pack("!i", len(p)) + p
    body += struct.pack("!h", len(result_formats))
    body += b"".join(struct.pack("!h", f) for f in result_formats)
    return frame(b"B", body)


EXECUTE = frame(b"E", b"\x00" + struct.pack("!i", 0))
SYNC = frame(b"S")


def copy_data(data: bytes) -> tuple[bytes, bytes]:
    return frame(b"d", data)


COPY_DONE = frame(b"c")


def responses(data: bytes) -> list[tuple[str, bytes]]:
    out, pos = [], 0
    while pos < len(data):
        (length,) = struct.unpack("!i", data[pos + 1:pos + 5])
        out.append((data[pos:pos + 1].decode(), data[pos + 5:pos + 1 + length]))
        pos += 1 + length
    return out


def send(session: Session, *frames: tuple[bytes, bytes]) -> list[tuple[str, bytes]]:
    """As the connection hands frames to the session: decoded in its client encoding."""
    for code, body in frames:
        session.handle(m.decode_message(code, body, session.encoding.codec))
    return responses(session.out.take())


def fields(payload: bytes) -> dict[str, bytes]:
    return {chr(p[0]): p[1:] for p in payload.rstrip(b"\x00").split(b"\x00") if p}


def values(resp: list[tuple[str, bytes]]) -> list[list[bytes | None]]:
    rows = []
    for code, body in resp:
        if code != "D":
            continue
        (n,) = struct.unpack("!h", body[:2])
        pos, row = 2, []
        for _ in range(n):
            (size,) = struct.unpack("!i", body[pos:pos + 4])
            pos += 4
            row.append(None if size < 0 else body[pos:pos + size])
            pos += max(size, 0)
        rows.append(row)
    return rows


def column_names(resp: list[tuple[str, bytes]]) -> list[bytes]:
    body = next(b for c, b in resp if c == "T")
    (n,) = struct.unpack("!h", body[:2])
    pos, names = 2, []
    for _ in range(n):
        end = body.index(b"\x00", pos)
        names.append(body[pos:end])
        pos = end + 1 + 18
    return names


def status(resp: list[tuple[str, bytes]]) -> dict[str, bytes]:
    return {b.split(b"\x00")[0].decode(): b.split(b"\x00")[1] for c, b in resp if c == "S"}


def open_session(plane, client_encoding: str | None) -> tuple[Session, list[tuple[str, bytes]]]:
    params = {"user": "root", "database": "dev"}
    if client_encoding is not None:
        params["client_encoding"] = client_encoding
    s = Session(plane, SERVER_PARAMETERS)
    s.start(m.StartupMessage(params))
    return s, responses(s.out.take())


@pytest.fixture
def latin1(plane):
    s, start = open_session(plane, "latin1")
    assert status(start)["client_encoding"] == b"LATIN1"
    yield s
    s.close()


def test_a_utf8_session_converts_nothing(plane):
    s, start = open_session(plane, None)
    assert status(start)["client_encoding"] == b"UTF8"
    assert s.encoding.codec is None
    resp = send(s, query("SELECT 'café' AS \"é\"".encode()))
    assert column_names(resp) == ["é".encode()] and values(resp) == [["café".encode()]]
    s.close()


def test_latin1_query_in_datarow_out(latin1):
    resp = send(latin1, query(b"SELECT 'caf\xe9' AS \"\xe9t\xe9\", length('caf\xe9') AS n"))
    assert [c for c, _ in resp] == ["T", "D", "C", "Z"]
    assert column_names(resp) == [b"\xe9t\xe9", b"n"]
    assert values(resp) == [[b"caf\xe9", b"4"]]


def test_a_value_latin1_lacks_fails_the_statement_with_22p05(latin1):
    resp = send(latin1, query(b"SELECT chr(8364) AS x"))
    assert [c for c, _ in resp] == ["T", "E", "Z"]
    err = fields(resp[1][1])
    assert (err["C"], err["M"]) == (b"22P05", b'character with byte sequence 0xe2 0x82 0xac in '
                                              b'encoding "UTF8" has no equivalent in encoding '
                                              b'"LATIN1"')


def test_an_error_message_is_converted_or_replaced_by_the_22p05(latin1):
    resp = send(latin1, query(b'SELECT * FROM "t\xe9"'))
    err = fields(resp[0][1])
    assert (err["C"], err["M"]) == (b"42P01", b'relation "t\xe9" does not exist')
    # its message names the euro sign: the client is told that cannot be said in LATIN1
    resp = send(latin1, query(b"SELECT chr(8364)::int"))
    assert [c for c, _ in resp] == ["E", "Z"]
    err = fields(resp[0][1])
    assert (err["S"], err["C"]) == (b"ERROR", b"22P05")
    assert err["M"].endswith(b'has no equivalent in encoding "LATIN1"')


def test_win1252_bytes_with_no_unicode_equivalent_are_22p05(plane):
    s, _ = open_session(plane, "WIN1252")
    resp = send(s, query(b"SELECT '\x80\x81' AS x"))
    assert [c for c, _ in resp] == ["E", "Z"]
    assert fields(resp[0][1])["M"] == (b'character with byte sequence 0x81 in encoding "WIN1252" '
                                       b'has no equivalent in encoding "UTF8"')
    resp = send(s, query(b"SELECT '\x80' AS euro, length('\x80\x9c')"))
    assert values(resp) == [[b"\x80", b"2"]]
    s.close()


def test_bind_values_convert_in_text_format_and_for_text_types_in_binary(latin1):
    resp = send(latin1, parse(b"SELECT $1::text, $2::text, $3::bytea, $4::int4"),
                bind((b"\xe9", b"\xe9", b"\xe9", b"\x00\x00\x00\xe9"), (0, 1, 0, 1), (0, 1, 0, 0)),
                EXECUTE, SYNC)
    # the bytea's text \xe9 reads as U+00E9, stored as its UTF-8 bytes, as in PostgreSQL
    assert values(resp) == [[b"\xe9", b"\xe9", b"\\xc3a9", b"233"]]
    resp = send(latin1, parse(b"SELECT $1::text"), bind((b"a\x00b",), (0,)), EXECUTE, SYNC)
    assert [c for c, _ in resp] == ["1", "E", "Z"]
    assert fields(resp[1][1])["M"] == b'invalid byte sequence for encoding "LATIN1": 0x00'


def test_set_reset_and_set_config_switch_the_conversion(latin1):
    resp = send(latin1, query(b"SET client_encoding = 'win1252'"))
    assert status(resp) == {"client_encoding": b"WIN1252"}
    assert values(send(latin1, query(b"SELECT chr(8364)"))) == [[b"\x80"]]
    assert values(send(latin1, query(b"SHOW client_encoding"))) == [[b"WIN1252"]]
    resp = send(latin1, query(b"RESET client_encoding"))  # back to the start-up value
    assert status(resp) == {"client_encoding": b"LATIN1"}
    resp = send(latin1, query(b"SELECT set_config('client_encoding', 'WIN1252', false)"))
    assert status(resp) == {"client_encoding": b"WIN1252"}
    assert values(send(latin1, query(b"SELECT chr(8364)"))) == [[b"\x80"]]
    resp = send(latin1, query(b"DISCARD ALL"))
    assert status(resp) == {"client_encoding": b"LATIN1"}
    resp = send(latin1, query(b"SET NAMES 'UNICODE'"))
    assert status(resp) == {"client_encoding": b"UNICODE"}
    assert values(send(latin1, query("SELECT 'é'".encode()))) == [["é".encode()]]


@pytest.mark.parametrize("value, sqlstate, message", [
    ("FOO", "22023", 'invalid value for parameter "client_encoding": "FOO"'),
    ("MULE_INTERNAL", "0A000", "conversion between MULE_INTERNAL and UTF8 is not supported"),
    ("EUC_TW", "0A000", "conversion between EUC_TW and UTF8 is not supported"),
])
def test_start_up_refusals_are_postgresqls(plane, value, sqlstate, message):
    s = Session(plane, SERVER_PARAMETERS)
    with pytest.raises(PgError) as info:
        s.start(m.StartupMessage({"user": "root", "database": "dev", "client_encoding": value}))
    assert (info.value.sqlstate, info.value.message) == (sqlstate, message)


def test_set_of_an_encoding_pgbarrier_cannot_convert_is_0a000_naming_it(latin1):
    resp = send(latin1, query(b"SET client_encoding = 'SJIS'"))
    err = fields(resp[0][1])
    assert (err["C"], err["M"], err["D"]) == (
        b"0A000", b'invalid value for parameter "client_encoding": "SJIS"',
        b"Conversion between SJIS and UTF8 is not supported.")
    assert latin1.encoding.name == "LATIN1"


def test_copy_from_stdin_is_converted_and_a_bad_character_reported_on_its_line(plane):
    s, _ = open_session(plane, "WIN1252")
    send(s, query(b"CREATE TABLE t (a text, b int)"))
    resp = send(s, query(b"COPY t FROM STDIN"), copy_data(b"\x80\t1\nc\xe9"),
                copy_data(b"\t2\n"), COPY_DONE)
    assert [c for c, _ in resp] == ["G", "C", "Z"]
    assert values(send(s, query(b"SELECT a FROM t ORDER BY b"))) == [[b"\x80"], [b"c\xe9"]]
    resp = send(s, query(b"COPY t FROM STDIN"), copy_data(b"x\t3\ny\t4\n\x81\t5\n"), COPY_DONE)
    err = fields(next(b for c, b in resp if c == "E"))
    assert (err["C"], err["W"]) == (b"22P05", b"COPY t, line 3")
    s.close()


def test_copy_to_stdout_in_the_client_encoding_or_its_own(latin1):
    send(latin1, query(b"CREATE TABLE t (a text)"), query(b"INSERT INTO t VALUES ('caf\xe9')"))
    resp = send(latin1, query(b"COPY t TO STDOUT (FORMAT csv, HEADER)"))
    assert [b for c, b in resp if c == "d"] == [b"a\n", b"caf\xe9\n"]
    resp = send(latin1, query(b"COPY t TO STDOUT (ENCODING 'UTF8')"))
    assert [b for c, b in resp if c == "d"] == ["café\n".encode()]


def test_copy_encoding_names_are_checked_as_postgresql_checks_them(latin1):
    resp = send(latin1, query(b"COPY (SELECT 1) TO STDOUT (ENCODING 'foo')"))
    assert fields(resp[0][1])["M"] == b'argument to option "encoding" must be a valid encoding name'
    resp = send(latin1, query(b"COPY (SELECT 1) TO STDOUT (ENCODING 'MULE_INTERNAL')"))
    assert fields(resp[0][1])["M"] == (b'default conversion function for encoding "UTF8" to '
                                       b'"MULE_INTERNAL" does not exist')


def test_relayed_sessions_keep_the_shared_unconverted_state():
    assert encodings.UNCONVERTED_SESSION.codec is None


def test_copy_encoding_converts_in_a_utf8_session(plane):
    s, _ = open_session(plane, None)
    send(s, query(b"CREATE TABLE t (a text)"))
    resp = send(s, query(b"COPY t FROM STDIN (ENCODING 'LATIN1')"), copy_data(b"caf\xe9\n"),
                COPY_DONE)
    assert [c for c, _ in resp] == ["G", "C", "Z"]
    send(s, query("INSERT INTO t VALUES ('€')".encode()))
    resp = send(s, query(b"COPY t TO STDOUT (ENCODING 'WIN1252')"))
    assert [b for c, b in resp if c == "d"] == [b"caf\xe9\n", b"\x80\n"]
    resp = send(s, query(b"COPY t TO STDOUT (ENCODING 'LATIN1')"))
    err = fields(next(b for c, b in resp if c == "E"))
    assert err["C"] == b"22P05" and err["M"].endswith(b'in encoding "LATIN1"')
    resp = send(s, query(b"COPY t FROM STDIN (ENCODING 'SJIS')"))
    err = fields(resp[0][1])
    assert (err["C"], err["M"]) == (b"0A000", b"conversion between SJIS and UTF8 is not supported")
    s.close()


def test_binary_copy_converts_text_fields_in_the_client_encoding(latin1):
    send(latin1, query(b"CREATE TABLE t (a text, n int)"))
    head = b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8
    row = struct.pack("!h", 2) + struct.pack("!i", 4) + b"caf\xe9" + struct.pack("!ii", 4, 7)
    resp = send(latin1, query(b"COPY t FROM STDIN (FORMAT binary)"),
                copy_data(head + row + b"\xff\xff"), COPY_DONE)
    assert [c for c, _ in resp] == ["G", "C", "Z"]
    assert values(send(latin1, query(b"SELECT a, length(a) FROM t"))) == [[b"caf\xe9", b"4"]]
    resp = send(latin1, query(b"COPY t TO STDOUT (FORMAT binary)"))
    data = b"".join(b for c, b in resp if c == "d")
    assert data == head + row + b"\xff\xff"
