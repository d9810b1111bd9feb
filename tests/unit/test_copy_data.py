"""COPY's data formats fed as bytes: text and CSV escaping, split frames, errors, binary."""

from __future__ import annotations

import struct

import pytest

from pgbarrier.errors import PgError
from pgbarrier.pgproto import copy_data as cd
from pgbarrier.sql.copy_options import parse_copy


def feed_all(reader, chunks):
    rows = []
    for c in chunks:
        rows += reader.feed(c)
    return rows + reader.finish()


def test_text_escapes_null_and_end_marker():
    r = cd.TextReader("t", ["a", "b", "c"])
    data = b"1\ta\\tb\\\\c\\nd\t\\N\n\\101\\x42\\q\t\t\\\\N\n\\.\nignored\n"
    assert feed_all(r, [data]) == [(1, ["1", "a\tb\\c\nd", None]), (2, ["ABq", "", "\\N"])]


def test_text_rows_split_across_copydata_messages_and_crlf():
    data = "1\té\r\n2\tx\r\n".encode()
    r = cd.TextReader("t", ["a", "b"])
    rows = feed_all(r, [data[i:i + 1] for i in range(len(data))])
    assert rows == [(1, ["1", "é"]), (2, ["2", "x"])]


def test_text_escaped_delimiter_and_multibyte_octal():
    r = cd.TextReader("t", ["a", "b"], delimiter="|")
    assert feed_all(r, [b"x\\|y|\\303\\251\n"]) == [(1, ["x|y", "é"])]


@pytest.mark.parametrize("line, message", [
    (b"1\t2\t3\n", "extra data after last expected column"),
    (b"1\n", 'missing data for column "b"'),
])
def test_text_field_count_errors(line, message):
    r = cd.TextReader("t", ["a", "b"])
    with pytest.raises(PgError) as info:
        feed_all(r, [line])
    assert (info.value.sqlstate, info.value.message) == ("22P04", message)
    assert info.value.fields["W"].startswith('COPY t, line 1: "1')


def test_invalid_utf8_is_22021():
    with pytest.raises(PgError) as info:
        feed_all(cd.TextReader("t", ["a"]), [b"\xff\n"])
    assert info.value.sqlstate == "22021"


def test_csv_quotes_newlines_nulls_and_force_options():
    r = cd.CsvReader("t", ["a", "b", "c"], force_not_null=[2])
    data = b'1,"x,""y""\nz",\n2,"",""\n,,\n'
    assert feed_all(r, [data[:7], data[7:]]) == [
        (1, ["1", 'x,"y"\nz', ""]), (3, ["2", "", ""]), (4, [None, None, ""])]
    r = cd.CsvReader("t", ["a"], null="NULL", force_null=[0])
    assert feed_all(r, [b'"NULL"\nNULL\n']) == [(1, [None]), (2, [None])]


def test_csv_header_match_and_unterminated_quote():
    r = cd.CsvReader("t", ["a", "b"], header="match")
    assert feed_all(r, [b"a,b\n1,2\n"]) == [(2, ["1", "2"])]
    with pytest.raises(PgError) as info:
        feed_all(cd.CsvReader("t", ["a", "b"], header="match"), [b"a,x\n"])
    assert info.value.message == 'column name mismatch in header line field 2: got "x", ' \
                                 'expected "b"'
    with pytest.raises(PgError) as info:
        feed_all(cd.CsvReader("t", ["a"]), [b'"1\n'])
    assert info.value.message == "unterminated CSV quoted field"


def test_csv_escape_other_than_quote():
    r = cd.CsvReader("t", ["a"], escape="\\")
    assert feed_all(r, [b'"a\\"b\\\\c"\n']) == [(1, ['a"b\\c'])]


def test_binary_reader():
    row = struct.pack("!hi", 2, 1) + b"7" + struct.pack("!i", -1)
    data = cd.BINARY_HEADER + row + cd.BINARY_TRAILER
    r = cd.BinaryReader("t", ["a", "b"])
    assert feed_all(r, [data[i:i + 3] for i in range(0, len(data), 3)]) == [(1, [b"7", None])]
    with pytest.raises(PgError) as info:
        feed_all(cd.BinaryReader("t", ["a"]), [b"PGCOPX\n\xff\r\n\x00" + b"\x00" * 8])
    assert info.value.message == "COPY file signature not recognized"
    with pytest.raises(PgError) as info:
        feed_all(cd.BinaryReader("t", ["a"]), [data])
    assert info.value.message == "row field count is 2, expected 1"


def test_writers():
    assert cd.TextWriter().row(["a\tb\\c\nd", None, ""]) == b"a\\tb\\\\c\\nd\t\\N\t\n"
    assert cd.TextWriter("|").row(["x|y", "t\tz"]) == b"x\\|y|t\\tz\n"
    w = cd.CsvWriter(force_quote=[1])
    assert w.row(['a,"b"', "x", None, "", "l\nm"]) == b'"a,""b""","x",,"","l\nm"\n'
    assert cd.binary_row([b"7", None]) == struct.pack("!hi", 2, 1) + b"7" + struct.pack("!i", -1)


@pytest.mark.parametrize("sql, expect", [
    ("COPY t (a, \"B\") FROM STDIN WITH (FORMAT csv, HEADER match, NULL 'x')",
     dict(table="t", columns=["a", "B"], format="csv", header="match", null="x",
          delimiter=",")),
    ("copy public.t from stdin with csv header delimiter ';' force not null a, b",
     dict(table="public.t", format="csv", header=True, delimiter=";",
          force_not_null=["a", "b"])),
    ("COPY (SELECT 1, ')') TO STDOUT WITH BINARY", dict(query="SELECT 1, ')'",
                                                        format="binary", is_from=False)),
    ("COPY BINARY t TO STDOUT", dict(table="t", format="binary")),
    ("COPY t TO STDOUT (FORMAT csv, FORCE_QUOTE *)", dict(force_quote=True)),
    ("COPY t FROM PROGRAM 'ls'", dict(target="PROGRAM", filename="ls")),
    ("COPY t TO '/x.csv'", dict(target="FILE", filename="/x.csv")),
])
def test_parse_copy(sql, expect):
    st = parse_copy(sql)
    for k, v in expect.items():
        assert getattr(st, k) == v, k


@pytest.mark.parametrize("sql, state, message", [
    ("COPY t FROM STDIN (FORMAT csv, FORMAT text)", "42601", "conflicting or redundant options"),
    ("COPY t FROM STDIN (FORMAT xml)", "22023", 'COPY format "xml" not recognized'),
    ("COPY t FROM STDIN (DELIMITER '||')", "0A000",
     "COPY delimiter must be a single one-byte character"),
    ("COPY t FROM STDIN (FORMAT binary, HEADER)", "0A000", "cannot specify HEADER in BINARY mode"),
    ("COPY t FROM STDIN (QUOTE '''')", "0A000", "COPY quote available only in CSV mode"),
    ("COPY t TO STDOUT (FORMAT csv, HEADER match)", "0A000",
     'cannot use "match" with HEADER in COPY TO'),
    ("COPY t FROM STDIN (FORMAT csv, FORCE_QUOTE *)", "0A000",
     "COPY force quote only available using COPY TO"),
    ("COPY t FROM STDIN (bogus 1)", "42601", 'option "bogus" not recognized'),
    ("COPY t FROM STDOUT", "42601", 'syntax error at or near "STDOUT"'),
])
def test_parse_copy_errors(sql, state, message):
    with pytest.raises(PgError) as info:
        parse_copy(sql)
    assert (info.value.sqlstate, info.value.message) == (state, message)
