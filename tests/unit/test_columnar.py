"""The columnar result path writes exactly the per-value encoders' bytes (issue 27).

Random values of every type go through DuckDB, then both ways: DuckDB's Python values
(``fetchall``, as the row path gets them) through :mod:`pgbarrier.pgproto.types`'
encoders and :func:`~pgbarrier.pgproto.messages.data_row`, and DuckDB's Arrow batches
through :mod:`pgbarrier.pgproto.columnar`; the bytes must be the same, in text and binary
format, for DataRows and COPY TO's text, CSV and binary rows, with the compiled loops and
their Python source alike.
"""

from __future__ import annotations

import datetime as dt
import decimal
import importlib
import json
import random
import struct
import uuid

import pytest

pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")

from pgbarrier.backends.duckdb_numeric import natural_converter  # noqa: E402
from pgbarrier.backends.duckdb_types import pg_type_oid  # noqa: E402
from pgbarrier.pgproto import columnar  # noqa: E402
from pgbarrier.pgproto import copy_data as cd  # noqa: E402
from pgbarrier.pgproto import messages as m  # noqa: E402
from pgbarrier.pgproto import types as pgt  # noqa: E402
from pgbarrier.result import Column  # noqa: E402

ROWS = 300
rng = random.Random(27)


def _float() -> float:
    pick = rng.random()
    if pick < 0.1:
        return rng.choice([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e15, 1e16,
                           -1e15, 123456789012345.6, 1234567890123456.7, 1e-4, 1e-5, 0.1,
                           5e-324, 1.7976931348623157e308, 100.0, 2.5])
    if pick < 0.5:
        return struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0]
    return rng.uniform(-1, 1) * 10 ** rng.randint(-8, 20)


def _text() -> str:
    alphabet = "ab c\t\n\\\r\x08\x0b\x0c,\"'{}éß€😀NULL"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))


def _ts() -> dt.datetime:
    return dt.datetime(rng.randint(1, 9999), rng.randint(1, 12), rng.randint(1, 28),
                       rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59),
                       rng.choice([0, 500000, rng.randint(0, 999999), 10]))


def _decimal(p: int, s: int) -> decimal.Decimal:
    digits = rng.randint(0, p)
    value = rng.randint(-(10 ** digits - 1), 10 ** digits - 1) if digits else 0
    return decimal.Decimal(value).scaleb(-s)


# DuckDB type -> a random value of it (Python), for INSERT
CASES = {
    "SMALLINT": lambda: rng.randint(-32768, 32767),
    "INTEGER": lambda: rng.choice([-2 ** 31, 2 ** 31 - 1, rng.randint(-2 ** 31, 2 ** 31 - 1)]),
    "UINTEGER": lambda: rng.randint(0, 2 ** 32 - 1),
    "BIGINT": lambda: rng.choice([2 ** 63 - 1, 0, rng.randint(-2 ** 63, 2 ** 63 - 1)]),
    # int64's lowest value has no positive counterpart: its own batch path
    "BIGINT ": lambda: rng.choice([-2 ** 63, rng.randint(-2 ** 63, 2 ** 63 - 1)]),
    "TINYINT": lambda: rng.randint(-128, 127),
    "UBIGINT": lambda: rng.randint(0, 2 ** 64 - 1),
    # numeric in binary from integers: columnar while they fit int64
    "UBIGINT ": lambda: rng.randint(0, 2 ** 63 - 1),
    "HUGEINT": lambda: rng.randint(-2 ** 100, 2 ** 100),
    "DOUBLE": _float,
    "FLOAT": lambda: struct.unpack("<f", rng.getrandbits(32).to_bytes(4, "little"))[0],
    # float4 as data usually is: fixed notation, which pyarrow's digits serve
    "FLOAT ": lambda: rng.choice([round(rng.uniform(-1e6, 1e6), rng.randint(0, 6)),
                                  rng.uniform(-1, 1), 3.4028235e38, 1e-4, 1e6]),
    "DECIMAL(12,2)": lambda: _decimal(12, 2),
    "DECIMAL(18,0)": lambda: _decimal(18, 0),
    "DECIMAL(18,18)": lambda: _decimal(18, 18),
    "DECIMAL(4,4)": lambda: _decimal(4, 4),
    "DECIMAL(9,5)": lambda: _decimal(9, 5),
    "DECIMAL(30,7)": lambda: _decimal(30, 7),
    # wide decimals within int64 unscaled: numeric_send a column at a time
    "DECIMAL(30,7) ": lambda: rng.choice([_decimal(18, 7), decimal.Decimal("-922337203685.4775807"),
                                          decimal.Decimal(0), _decimal(3, 7)]),
    "DECIMAL(38,18)": lambda: _decimal(18, 18),
    # pyarrow prints the tiny ones in exponent form (1E-7): those per value
    "DECIMAL(38,12)": lambda: rng.choice([_decimal(38, 12), _decimal(3, 12)]),
    # unconstrained numeric's storage (duckdb_numeric): printed without its zeros
    "DECIMAL(38,10)": lambda: rng.choice([
        _decimal(38, 10), _decimal(12, 2), decimal.Decimal(rng.randint(-10 ** 6, 10 ** 6)),
        decimal.Decimal("1.5"), decimal.Decimal(0), decimal.Decimal("-0.0000000001"),
        decimal.Decimal("100.10"), decimal.Decimal(10) ** 27, decimal.Decimal("1E-8")]),
    # ... within int64 unscaled: numeric_send at each value's own scale, a column at a time
    "DECIMAL(38,10) ": lambda: rng.choice([
        _decimal(18, 10), _decimal(12, 2), decimal.Decimal(rng.randint(-10 ** 8, 10 ** 8)),
        decimal.Decimal("1.5"), decimal.Decimal(0), decimal.Decimal("-0.0000000001"),
        decimal.Decimal("100.10"), decimal.Decimal("-922337203.6854775807")]),
    "VARCHAR": _text,
    "BOOLEAN": lambda: rng.random() < 0.5,
    "DATE": lambda: _ts().date(),
    "TIMESTAMP": _ts,
    "TIMESTAMPTZ": lambda: _ts().replace(tzinfo=dt.timezone.utc),
    # near the zones' changes of offset (ZONES): the hour around each, to the microsecond
    "TIMESTAMPTZ ": lambda: _near_change(),
    # timestamp(0) to timestamp(3) columns: DuckDB's second and millisecond timestamps
    "TIMESTAMP_S": _ts,
    "TIMESTAMP_MS": _ts,
    "TIME": lambda: _ts().time(),
    "UUID": uuid.uuid4,
    "BLOB": lambda: rng.randbytes(rng.randint(0, 8)),
    "BLOB ": lambda: rng.randbytes(rng.choice([0, 1, 300])),
    "JSON": lambda: '{"a": [1, 2.5, "x"], "b": null}',
    "INTEGER[]": lambda: [rng.choice([None, rng.randint(-5, 5)]) for _ in range(rng.randint(0, 3))],
    "VARCHAR[]": lambda: [_text() for _ in range(rng.randint(0, 3))],
    # arrays: their elements a column at a time, each element quoted as array_out quotes
    "VARCHAR[] ": lambda: [rng.choice([None, "", "NULL", "null", "nul", "NULLs", "a b", "x",
                                       '"', "\\", "{}", ",", _text()])
                           for _ in range(rng.randint(0, 4))],
    "BIGINT[]": lambda: [rng.choice([None, rng.randint(-2 ** 63 + 1, 2 ** 63 - 1)])
                         for _ in range(rng.randint(0, 3))],
    "SMALLINT[]": lambda: [rng.randint(-32768, 32767) for _ in range(rng.randint(0, 3))],
    "DOUBLE[]": lambda: [_float() for _ in range(rng.randint(0, 3))],
    "FLOAT[]": lambda: [rng.choice([None, 1.5, -0.25, 1e-5, 3.4028235e38, 12345.678])
                        for _ in range(rng.randint(0, 3))],
    "BOOLEAN[]": lambda: [rng.choice([None, True, False]) for _ in range(rng.randint(0, 3))],
    "DECIMAL(12,2)[]": lambda: [_decimal(12, 2) for _ in range(rng.randint(0, 3))],
    "DATE[]": lambda: [_ts().date() for _ in range(rng.randint(0, 3))],
    "TIMESTAMP[]": lambda: [rng.choice([None, _ts()]) for _ in range(rng.randint(0, 3))],
    "TIMESTAMPTZ[]": lambda: [_ts().replace(tzinfo=dt.timezone.utc)
                              for _ in range(rng.randint(0, 3))],
    "TIME[]": lambda: [_ts().time() for _ in range(rng.randint(0, 3))],
    "BLOB[]": lambda: [rng.randbytes(rng.randint(0, 4)) for _ in range(rng.randint(0, 3))],
    "UUID[]": lambda: [uuid.uuid4() for _ in range(rng.randint(0, 3))],
    "INTEGER[][]": lambda: [[rng.randint(-5, 5), None] for _ in range(rng.randint(0, 2))],
}
ZONES = ["UTC", "Asia/Tokyo", "America/St_Johns", "Europe/Amsterdam", "Asia/Kolkata",
         # local mean time (+00:53:28), 30-minute summer time, +05:45, a negative summer
         # time (tzdata's Irish rules), a skipped day, summer time by POSIX rule (2040)
         "Europe/Berlin", "Australia/Lord_Howe", "Asia/Kathmandu", "Europe/Dublin",
         "Pacific/Apia", "America/New_York", "Etc/GMT+5"]
#: UTC instants at which some zone of ZONES changes its offset
_CHANGES = [dt.datetime(*t, tzinfo=dt.timezone.utc) for t in (
    (2020, 3, 29, 1), (2020, 10, 25, 1), (2020, 3, 8, 7), (2020, 11, 1, 6),
    (1893, 3, 31, 23, 6, 32), (1916, 4, 30, 22), (2020, 4, 4, 15), (2020, 10, 3, 15, 30),
    (2011, 12, 30, 10), (1985, 12, 31, 18, 30), (2040, 3, 11, 7), (2040, 11, 4, 6),
    (1971, 10, 31, 2), (1880, 8, 2, 0, 25, 21))]


def _near_change() -> dt.datetime:
    moved = rng.choice([0, 1, -1, 1_000_000, -1_000_000, 1_800_000_000, -1_800_000_000,
                        3_599_999_999, -3_599_999_999, rng.randint(-7_200_000_000, 7_200_000_000)])
    return rng.choice(_CHANGES) + dt.timedelta(microseconds=moved)


def _frames(rows, columns, formats):
    encs = [pgt.encoder(c.type_oid, f, None, c.type_modifier) for c, f in zip(columns, formats)]
    return b"".join(m.data_row([None if v is None else e(v) for e, v in zip(encs, row)])
                    for row in rows)


def _copy_frames(rows, columns, delimiter="\t", null="\\N"):
    encs = [pgt.encoder(c.type_oid, 0, None, c.type_modifier) for c in columns]
    writer = cd.TextWriter(delimiter, null)
    return b"".join(m.copy_data(writer.row([None if v is None else e(v).decode("utf-8")
                                            for e, v in zip(encs, row)])) for row in rows)


def _csv_frames(rows, columns, delimiter=",", null="", quote='"', escape='"', force=()):
    """COPY TO's CSV rows as :func:`pgbarrier.session.copy.copy_out` writes them a row
    at a time (a lone column's ``\\.`` quoted)."""
    encs = [pgt.encoder(c.type_oid, 0, None, c.type_modifier) for c in columns]
    writer = cd.CsvWriter(delimiter, null, quote, escape, force)
    out = []
    for row in rows:
        texts = [None if v is None else e(v).decode("utf-8") for e, v in zip(encs, row)]
        if len(columns) == 1 and texts[0] == "\\.":
            out.append(m.copy_data((writer.field("\\.", True) + "\n").encode()))
        else:
            out.append(m.copy_data(writer.row(texts)))
    return b"".join(out)


def _binary_frames(rows, columns):
    """COPY TO's binary rows (no header), as the row path writes them."""
    encs = [pgt.encoder(c.type_oid, 1, None, c.type_modifier) for c in columns]
    return b"".join(m.copy_data(cd.binary_row([None if v is None else e(v)
                                               for e, v in zip(encs, row)])) for row in rows)


CSV_OPTIONS = [dict(), dict(delimiter="|", null="NULL"), dict(delimiter=";", null="\\N"),
               dict(quote="'", escape="\\"), dict(force=(0, 2)), dict(delimiter="\t"),
               # characters of numbers and dates as the delimiter, quote or NULL string
               dict(delimiter=".", null="0"), dict(quote=":", escape=":", null="t"),
               dict(delimiter="-", null="1")]


@pytest.fixture(params=["compiled", "source"])
def frame_module(request, monkeypatch):
    if request.param == "source":
        monkeypatch.setattr(columnar, "_frame", importlib.import_module("pgbarrier.pgproto.rowframe"))
    return request.param


def _table(con, duck_type: str, zone: str):
    con.execute(f"SET TimeZone = '{zone}'")
    con.execute(f"CREATE OR REPLACE TABLE t (v {duck_type}, w INTEGER)")
    values = [(None if rng.random() < 0.1 else CASES[duck_type](), i) for i in range(ROWS)]
    con.executemany("INSERT INTO t VALUES (?, ?)", values)


@pytest.mark.parametrize("duck_type", list(CASES))
def test_same_bytes_as_the_per_value_encoders(duck_type, frame_module):
    con = duckdb.connect()
    for zone in ZONES if duck_type.startswith("TIMESTAMPTZ") else ["UTC"]:
        _table(con, duck_type, zone)
        query = "SELECT v, w, v AS again FROM t ORDER BY w"
        rows = con.execute(query).fetchall()
        description = con.description
        columns = [Column(d[0], pg_type_oid(d[1])) for d in description]
        result = con._submit(query, None, "stream", 100)
        reader = result.arrow_reader()
        assert columnar.servable(reader.schema)
        batches = list(reader)
        assert columnar.to_rows(batches[0])[:5] == rows[:5] or duck_type in (
            "DOUBLE", "FLOAT", "UUID", "TIMESTAMPTZ", "DOUBLE[]", "FLOAT[]", "UUID[]",
            "TIMESTAMPTZ[]")  # NaN != NaN; uuid as its text
        # what the row path sends: unconstrained numerics without their storage zeros
        natural = natural_converter([d[1] for d in description], columns)
        if natural is not None:
            rows = natural(rows)
        for formats in ([0, 0, 0], [1, 1, 1], [0, 1, 0]):
            formats = [f if pgt.supports_binary(c.type_oid) else 0
                       for f, c in zip(formats, columns)]
            framer = columnar.DataRows(columns, formats)
            got = b"".join(framer.frame(b) for b in batches)
            assert got == _frames(rows, columns, formats), (duck_type, formats)
        for delimiter, null in (("\t", "\\N"), (" ", "NULL"), ("|", ""), (":", "\\N")):
            copier = columnar.CopyTextRows(columns, delimiter, null)
            got = b"".join(copier.frame(b) for b in batches)
            assert got == _copy_frames(rows, columns, delimiter, null), (duck_type, delimiter)
        for options in CSV_OPTIONS:
            opts = {"delimiter": ",", "null": "", "quote": '"', "escape": '"', "force": ()}
            opts.update(options)
            csv = columnar.CopyCsvRows(columns, opts["delimiter"], opts["null"], opts["quote"],
                                       opts["escape"], set(opts["force"]))
            got = b"".join(csv.frame(b) for b in batches)
            assert got == _csv_frames(rows, columns, **opts), (duck_type, options)
        if all(pgt.supports_binary(c.type_oid) for c in columns):
            binary = columnar.CopyBinaryRows(columns)
            got = b"".join(binary.frame(b) for b in batches)
            assert got == _binary_frames(rows, columns), duck_type


def _interval() -> tuple[int, int, int]:
    """Months, days and microseconds of a random interval, the extremes included."""
    if rng.random() < 0.25:
        return (rng.choice([0, 1, -1, 12, -12, 13, -13, 2 ** 31 - 1, -2 ** 31]),
                rng.choice([0, 1, -1, 29, 2 ** 31 - 1, -2 ** 31]),
                rng.choice([0, 1, -1, 2 ** 63 - 1, -2 ** 63 + 1, 86_400_000_000, 500_000,
                            -500_000, 360_000_000_000, 9_223_372_036_854_775]))
    return (rng.randint(-30, 30) * rng.randint(0, 1), rng.randint(-40, 40) * rng.randint(0, 1),
            rng.randint(-10 ** 12, 10 ** 12) * rng.choice([0, 1, 1]))


def test_intervals_same_bytes_as_the_per_value_encoders(frame_module):
    """Interval columns reach the columnar writers as their three fields
    (``duckdb_intervals.parts_query``), exact where DuckDB's Arrow interval (nanoseconds in
    an int64) wraps; the bytes are the per-value encoders' of the same intervals, which
    are also what the row path reads (``months_query``)."""
    from pgbarrier.backends.duckdb_intervals import months_query, parts_query

    con = duckdb.connect()
    con.execute("CREATE TABLE t (v INTERVAL, w INTEGER)")
    values = [None if rng.random() < 0.1 else _interval() for _ in range(ROWS)]
    con.executemany("INSERT INTO t VALUES (to_months(?) + to_days(?) + to_microseconds(?), ?)",
                    [(*(v or (None, None, None)), i) for i, v in enumerate(values)])
    query = "SELECT v, w, v AS again FROM t ORDER BY w"
    expected = [(None if v is None else pgt.Interval(*v), i, None if v is None else pgt.Interval(*v))
                for i, v in enumerate(values)]
    # the row path's values: DuckDB's text of each interval, read back
    row_path = [tuple(pgt.parse_interval(x) if isinstance(x, str) else x for x in row)
                for row in con.execute(months_query(query, 3, (0, 2))).fetchall()]
    assert row_path == expected
    batches = list(con._submit(parts_query(query, 3, (0, 2)), None, "stream", 100).arrow_reader())
    assert columnar.servable(batches[0].schema)
    assert columnar.to_rows(batches[0]) == expected[:100]
    columns = [Column("v", pgt.INTERVAL), Column("w", pgt.INT4), Column("again", pgt.INTERVAL)]
    for fmt in (0, 1):
        encoder = columnar.column_encoder(columns[0], batches[0].schema[0].type, fmt)
        assert not encoder.__qualname__.startswith("_per_value"), encoder.__qualname__
    for formats in ([0, 0, 0], [1, 1, 1], [0, 1, 1]):
        framer = columnar.DataRows(columns, formats)
        got = b"".join(framer.frame(b) for b in batches)
        assert got == _frames(expected, columns, formats), formats
        sliced = framer.frame(batches[0].slice(0, 7)) + framer.frame(batches[0].slice(7))
        assert sliced == _frames(expected[:100], columns, formats)
    copier = columnar.CopyTextRows(columns, "\t", "\\N")
    assert b"".join(copier.frame(b) for b in batches) == _copy_frames(expected, columns)
    csv = columnar.CopyCsvRows(columns, ",", "", '"', '"', set())
    assert b"".join(csv.frame(b) for b in batches) == _csv_frames(expected, columns)
    binary = columnar.CopyBinaryRows(columns)
    assert b"".join(binary.frame(b) for b in batches) == _binary_frames(expected, columns)


def test_sliced_batches_frame_their_own_rows(frame_module):
    con = duckdb.connect()
    _table(con, "VARCHAR", "UTC")
    query = "SELECT v, w, w::DECIMAL(12,2) AS d FROM t ORDER BY w"
    rows = con.execute(query).fetchall()
    columns = [Column(d[0], pg_type_oid(d[1])) for d in con.description]
    batch = next(iter(con._submit(query, None, "stream", 1000).arrow_reader()))
    for fmt in (0, 1):
        framer = columnar.DataRows(columns, [fmt] * 3)
        got = framer.frame(batch.slice(0, 7)) + framer.frame(batch.slice(7, 100))
        assert got == _frames(rows[:107], columns, [fmt] * 3)


@pytest.mark.parametrize("duck_type, served", [
    ("BIT", False), ("INTERVAL", True), ("INTERVAL[]", False), ("STRUCT(a INTEGER)", False), ("TIME WITH TIME ZONE", False),
    ("TIMESTAMP_NS", False), ("MAP(VARCHAR, INTEGER)", False), ("UHUGEINT", False),
    ("INTEGER[][]", True), ("DECIMAL(38,10)", True), ("ENUM('a', 'b')", True), ('"NULL"', True)])
def test_only_types_whose_arrow_values_are_duckdbs_own_take_the_path(duck_type, served):
    """A BIT reads back through Arrow as bytes, not as fetchmany's '101': the row path."""
    from pgbarrier.backends.duckdb_batches import _servable_type

    assert _servable_type(duck_type) is served


@pytest.mark.parametrize("sql, taken", [
    ("SELECT 1", False), ("VALUES (1), (2)", False), ("SELECT * FROM t", True),
    ("select a from t", True), ("TABLE t", True), ("SELECT nextval('s') FROM t", False),
    ("SELECT * FROM pg_catalog.pg_class", False)])
def test_which_statements_take_the_columnar_path(sql, taken):
    from pgbarrier.backends import duckdb_batches
    from pgbarrier.backends.duckdb_batches import BatchReading
    from pgbarrier.sql.classify import leading_words

    reading = BatchReading()
    cur = duckdb.connect()
    duckdb_batches.load()  # what the backend runs beside start-up: the path opens after it
    assert reading.wanted(cur, leading_words(sql, 3), sql, sql) is taken
    if taken:
        reading.ended(sql, 3)  # a short result: the row path next time
        assert not reading.wanted(cur, leading_words(sql, 3), sql, sql)
        reading.long_result(sql)
        assert reading.wanted(cur, leading_words(sql, 3), sql, sql)


def test_until_pyarrow_is_loaded_statements_take_the_row_path(monkeypatch):
    """No statement waits for the import (it would count against its statement_timeout)."""
    import threading

    from pgbarrier.backends import duckdb_batches
    from pgbarrier.sql.classify import leading_words

    monkeypatch.setattr(duckdb_batches, "LOADED", threading.Event())
    sql = "SELECT * FROM t"
    reading = duckdb_batches.BatchReading()
    assert reading.wanted(duckdb.connect(), leading_words(sql, 3), sql, sql) is False
    duckdb_batches.load()
    assert reading.wanted(duckdb.connect(), leading_words(sql, 3), sql, sql) is True


@pytest.mark.parametrize("duck_type, oid, typmod", [
    ("VARCHAR", pgt.BPCHAR, 4 + 6), ("VARCHAR", pgt.BPCHAR, 4 + 1),
    ("TIMESTAMP", pgt.TIMESTAMP, 0), ("TIMESTAMP", pgt.TIMESTAMP, 2),
    ("TIMESTAMP", pgt.TIMESTAMP, 5), ("TIMESTAMP_MS", pgt.TIMESTAMP, 3),
    ("TIMESTAMP_S", pgt.TIMESTAMP, 0), ("TIMESTAMP_MS", pgt.TIMESTAMP, 1), ("TIME", pgt.TIME, 0), ("TIME", pgt.TIME, 3),
    ("TIMESTAMPTZ", pgt.TIMESTAMPTZ, 1)])
def test_declared_widths_and_precisions_same_bytes(duck_type, oid, typmod, frame_module):
    """char(n) blank-padded and timestamp(p)/time(p) rounded, a column at a time."""
    con = duckdb.connect()
    _table(con, duck_type, "UTC")
    con.execute("INSERT INTO t VALUES (TIME '23:59:59.999999', -1)" if duck_type == "TIME"
                else "INSERT INTO t VALUES (NULL, -1)")
    query = "SELECT v, w FROM t ORDER BY w"
    rows = con.execute(query).fetchall()
    columns = [Column("v", oid, typmod), Column("w", pgt.INT4)]
    batches = list(con._submit(query, None, "stream", 100).arrow_reader())
    for fmt in (0, 1):
        encoder = columnar.column_encoder(columns[0], batches[0].schema[0].type, fmt)
        assert not encoder.__qualname__.startswith("_per_value"), encoder.__qualname__
        framer = columnar.DataRows(columns, [fmt, fmt])
        got = b"".join(framer.frame(b) for b in batches)
        assert got == _frames(rows, columns, [fmt, fmt]), fmt
    copier = columnar.CopyTextRows(columns, "\t", "\\N")
    assert b"".join(copier.frame(b) for b in batches) == _copy_frames(rows, columns)


@pytest.mark.parametrize("sql, oid, fmt", [
    ("SELECT 1.5::FLOAT", pgt.FLOAT4, 0), ("SELECT '\\xab'::BLOB", pgt.BYTEA, 0),
    ("SELECT '\\xab'::BLOB", pgt.BYTEA, 1), ("SELECT uuid()", pgt.UUID, 1),
    ("SELECT 1::UBIGINT", pgt.NUMERIC, 1), ("SELECT 1::BIGINT", pgt.NUMERIC, 1),
    ("SELECT 1::DECIMAL(30,2)", pgt.NUMERIC, 0), ("SELECT [1, NULL]", 1007, 0),
    ("SELECT [1, NULL]", 1007, 1), ("SELECT ['a b', NULL]", 1009, 0),
    ("SELECT ['a b', NULL]", 1009, 1), ("SELECT [DATE '2020-01-01']", 1182, 0),
    ("SELECT [1.5::DOUBLE]", 1022, 1), ("SELECT 1.5::DECIMAL(38,10)", pgt.NUMERIC, 1),
    ("SELECT 1.5::DECIMAL(30,2)", pgt.NUMERIC, 1)])
def test_these_types_are_written_a_column_at_a_time(sql, oid, fmt):
    """The differential test above holds these to the per-value bytes: they must not be
    the per-value encoder itself, or it compares that encoder with itself."""
    con = duckdb.connect()
    t = con._submit(sql, None, "stream", 100).arrow_reader().schema[0].type
    encoder = columnar.column_encoder(Column("v", oid), t, fmt)
    assert not encoder.__qualname__.startswith("_per_value"), encoder.__qualname__


@pytest.mark.parametrize("zone, columnar_text", [
    ("Europe/Berlin", True), ("America/St_Johns", True), ("Etc/GMT+5", True),
    ("EST5EDT", True), ("UTC", True)])
def test_timestamptz_text_in_a_zone_is_written_a_column_at_a_time(zone, columnar_text):
    con = duckdb.connect()
    con.execute(f"SET TimeZone = '{zone}'")
    t = con._submit("SELECT TIMESTAMPTZ '2020-01-01 00:00:00+00'", None, "stream",
                    100).arrow_reader().schema[0].type
    encoder = columnar.column_encoder(Column("v", pgt.TIMESTAMPTZ), t, 0)
    assert encoder.__qualname__.startswith("_per_value") != columnar_text, encoder.__qualname__


def test_a_zone_zoneinfo_does_not_know_is_written_per_value():
    assert columnar._zone("No/Such_Zone") is None
    import pyarrow as pa

    t = pa.timestamp("us", "Europe/Berlin")
    assert columnar._text_encoder(pgt.TIMESTAMPTZ, t) is not None
    assert columnar._text_encoder(pgt.TIMESTAMPTZ, pa.timestamp("us", "No/Such_Zone")) is None


@pytest.mark.parametrize("value", ["\\.", "", "a,b", 'say "hi"', "x\ny", "\\N", "NULL"])
def test_csv_lone_column_and_null_string_are_quoted_as_row_by_row(value, frame_module):
    """A lone column's ``\\.`` (it would end the data), the NULL string itself and the
    characters CSV must quote: the same bytes as the row path's writer, NULLs beside them."""
    con = duckdb.connect()
    con.execute("CREATE TABLE t (v VARCHAR, w INTEGER)")
    con.executemany("INSERT INTO t VALUES (?, ?)", [(value, 1), (None, 2), ("plain", 3)])
    for query in ("SELECT v FROM t ORDER BY w", "SELECT v, w FROM t ORDER BY w"):
        rows = con.execute(query).fetchall()
        columns = [Column(d[0], pg_type_oid(d[1])) for d in con.description]
        batches = list(con._submit(query, None, "stream", 100).arrow_reader())
        for null in ("", "NULL", "\\N"):
            csv = columnar.CopyCsvRows(columns, ",", null, '"', '"', set())
            assert b"".join(csv.frame(b) for b in batches) == \
                _csv_frames(rows, columns, null=null), (query, null)


def test_binary_copy_header_goes_in_the_first_rows_message():
    frames = bytearray(m.copy_data(b"\x00\x01\x00\x00\x00\x01x") * 2)
    got = columnar.with_header(frames, cd.BINARY_HEADER)
    assert got == m.copy_data(cd.BINARY_HEADER + b"\x00\x01\x00\x00\x00\x01x") + \
        m.copy_data(b"\x00\x01\x00\x00\x00\x01x")


def _both_paths(session, sql, monkeypatch, params=None):
    """``sql`` run on the columnar path, then again on the row path (pyarrow as if not
    loaded): (columns, rows) of each, each run checked to have taken its path."""
    import threading

    from pgbarrier.backends import duckdb_batches
    from pgbarrier.result import BatchStream

    batched = session.execute(sql, params)
    assert isinstance(batched.row_source, BatchStream), sql
    columnar = (batched.columns, list(batched.rows()))
    monkeypatch.setattr(duckdb_batches, "LOADED", threading.Event())  # the row path
    plain = session.execute(sql, params)
    monkeypatch.undo()
    assert not isinstance(plain.row_source, BatchStream), sql
    return columnar, (plain.columns, list(plain.rows()))


@pytest.mark.parametrize("sql", [
    "SELECT * FROM t", "SELECT * FROM t WHERE a > 5", "SELECT t.* FROM t",
    "SELECT *, a FROM t", "SELECT g, a FROM t"])
def test_a_star_over_declared_types_takes_the_columnar_path(sql, monkeypatch, dev_session):
    """``SELECT *`` (and COPY of a whole table, which runs one) has a result plan naming
    ``varchar(n)``, ``numeric(p,s)``, ``char(n)`` where DuckDB's values already are those:
    the columnar path serves it, with the row path's columns and values."""
    s = dev_session
    s.execute("CREATE TABLE t (a integer, b varchar(20), c numeric(12,2), d char(3), "
              "e timestamp(3), f text, g numeric)")
    s.execute("INSERT INTO t SELECT i, 'x' || i, i / 3.0, 'ab', TIMESTAMP '2020-01-01' "
              "+ i * INTERVAL '1.2345 second', NULL, i / 8.0 FROM generate_series(1, 1000) g(i)")
    (columns, values), (plain_columns, expected) = _both_paths(s, sql, monkeypatch)
    assert columns == plain_columns
    assert values == expected
    # rows taken as rows print as the row path's: 0.125, not 0.1250000000
    assert [repr(v) for row in values for v in row] == [repr(v) for row in expected for v in row]
    if "*" in sql:
        assert [c.type_modifier for c in columns[1:4]] == [24, (12 << 16 | 2) + 4, 7]


@pytest.mark.parametrize("sql", [
    "WITH x AS (SELECT a, b FROM t WHERE a > 5) SELECT * FROM x ORDER BY a",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 900) "
    "SELECT n, n * 2 FROM r",
    "(SELECT b, a FROM t ORDER BY a)",
    "((SELECT a FROM t) UNION ALL (SELECT a + 1000 FROM t)) ORDER BY 1",
    "SELECT generate_series(1, 5000) AS g",
    "SELECT unnest(range(1, 3000)) AS u"])
def test_other_read_shapes_take_the_columnar_path(sql, monkeypatch, dev_session):
    """A WITH that only reads (what BI tools send), a query in parentheses and a FROM-less
    SELECT of a set-returning function: the columnar path, with the row path's columns
    and values."""
    s = dev_session
    s.execute("CREATE TABLE t (a integer, b varchar(20))")
    s.execute("INSERT INTO t SELECT i, 'x' || i FROM generate_series(1, 1000) g(i)")
    columnar, plain = _both_paths(s, sql, monkeypatch)
    assert columnar == plain
    assert len(columnar[1]) >= 900


def test_a_with_that_may_write_keeps_the_row_path(dev_session):
    """DuckDB runs data-modifying WITH clauses, and a result the columnar path cannot serve
    is run again the row way: a WITH whose text has a writing word never takes the path
    (a false match, the word in a string, only costs the row path)."""
    from pgbarrier.result import BatchStream

    s = dev_session
    s.execute("CREATE TABLE t (a integer)")
    s.execute("INSERT INTO t SELECT i FROM generate_series(1, 1000) g(i)")
    for sql in ("WITH d AS (DELETE FROM t WHERE a > 990 RETURNING a) SELECT a FROM d",
                "WITH x AS (SELECT a, 'update' AS w FROM t) SELECT * FROM x"):
        result = s.execute(sql)
        assert not isinstance(result.row_source, BatchStream), sql
        list(result.rows())
    assert list(s.execute("SELECT count(*) FROM t").rows()) == [(990,)]


def test_a_plan_that_converts_values_keeps_the_row_path(dev_session):
    """Values a plan rewrites (a numeric of another scale, an appended input) are its own."""
    from pgbarrier.result import BatchStream

    s = dev_session
    s.execute("CREATE TABLE t (a integer, c numeric(12,2))")
    s.execute("INSERT INTO t SELECT i, i / 3.0 FROM generate_series(1, 1000) g(i)")
    for sql in ("SELECT avg(c) FROM t GROUP BY a", "SELECT c / 3 FROM t"):
        assert not isinstance(s.execute(sql).row_source, BatchStream), sql


def test_the_first_rows_come_alone_then_whole_batches():
    """The client's first row waits for the framing of FIRST_ROWS rows only; the rest of
    DuckDB's first batch follows, then whole batches: every row once and in order."""
    from pgbarrier.backends import duckdb_batches as db

    db.load()
    con = duckdb.connect()
    reading = db.BatchReading()
    total = 3 * db.BATCH_ROWS + 17
    opened = reading.open(con, f"SELECT i FROM range({total}) r(i)", None)
    assert reading.servable(opened)
    sizes, values = [], []
    while (batch := reading.read()) is not None:
        sizes.append(batch.num_rows)
        values.extend(batch.column(0).to_pylist())
    assert values == list(range(total))
    assert sizes[:2] == [db.FIRST_ROWS, db.BATCH_ROWS - db.FIRST_ROWS]
    assert sum(sizes) == total and all(s <= db.BATCH_ROWS for s in sizes), sizes
    assert reading.read() is None


def test_interval_results_take_the_columnar_path_with_the_row_paths_values(monkeypatch,
                                                                          dev_session):
    """A result with interval columns is opened again with each as its three fields: the
    columnar path, with the row path's columns and values (months kept, the largest
    intervals exact), parameters and all."""
    s = dev_session
    s.execute("CREATE TABLE t (a integer, i interval)")
    s.execute("INSERT INTO t SELECT g, g * INTERVAL '1 minute 1.5 seconds' - INTERVAL "
              "'1 month' FROM generate_series(1, 1000) AS x(g)")
    s.execute("INSERT INTO t VALUES (1001, NULL), (1002, INTERVAL '2562047788 hours "
              "54.775807 seconds'), (1003, INTERVAL '-178956970 years -8 months')")
    for sql, params in (("SELECT * FROM t ORDER BY a", None),
                        ("SELECT i, a, i AS j FROM t WHERE a > $1 ORDER BY a", [3]),
                        ("SELECT i FROM t ORDER BY a", None)):
        (columns, values), (plain_columns, plain_values) = _both_paths(s, sql, monkeypatch,
                                                                        params)
        assert columns == plain_columns
        assert values == plain_values, sql
        assert pgt.Interval(0, 0, 2 ** 63 - 1) in [v for row in values for v in row]


@pytest.mark.parametrize("encoding", ["LATIN1", "WIN1252", "WIN1251", "GBK", "GB18030"])
def test_a_client_encoding_other_than_utf8_same_bytes_as_the_row_path(encoding, frame_module):
    """DataRows with the session's codec: what the row path sends, each value through
    transcode.result_encoder; a batch whose text is all ASCII as it is, one with other
    characters converted, one holding a character the encoding lacks failing with the row
    path's 22P05."""
    from pgbarrier.errors import PgError
    from pgbarrier.pgproto import encodings, transcode

    codec = encodings.codec(encoding)
    con = duckdb.connect()
    con.execute("CREATE TABLE e (t VARCHAR, n INTEGER, j JSON, a VARCHAR[], d DATE)")
    texts = ["plain", "", "caf\u00e9", "\u00fcber", "\u20ac 5", "\u0416\u0438", "\u4e2d\u6587",
             None, "tab\there", "\u00e9" * 300]
    representable = [t for t in texts if t is None or _encodable(codec, t)]
    ascii_only = [t for t in texts if t is None or t.isascii()]
    for values, fails in ((ascii_only, False), (representable, False), (texts, True)):
        con.execute("DELETE FROM e")
        con.executemany("INSERT INTO e VALUES (?, ?, ?, ?, ?)", [
            (t, i, None if t is None else json.dumps({"k": t}, ensure_ascii=False),
             None if t is None else [t, None],
             dt.date(2020, 1, 1 + i % 28)) for i, t in enumerate(values * 20)])
        fails = fails and len(representable) < len(texts)
        query = "SELECT * FROM e"
        rows = con.execute(query).fetchall()
        columns = [Column(d[0], pg_type_oid(d[1])) for d in con.description]
        batches = list(con._submit(query, None, "stream", 64).arrow_reader())
        for formats in ([0] * 5, [1] * 5):
            encs = [transcode.result_encoder(pgt.encoder(c.type_oid, f, None, c.type_modifier),
                                             f, c.type_oid, codec)
                    for c, f in zip(columns, formats)]
            framer = columnar.DataRows(columns, formats, codec)
            if fails:
                with pytest.raises(PgError) as row_path:
                    [[None if v is None else e(v) for e, v in zip(encs, row)] for row in rows]
                with pytest.raises(PgError) as batched:
                    [framer.frame(b) for b in batches]
                assert batched.value.sqlstate == row_path.value.sqlstate == "22P05"
                continue
            want = b"".join(m.data_row([None if v is None else e(v) for e, v in zip(encs, row)])
                            for row in rows)
            assert b"".join(framer.frame(b) for b in batches) == want, (encoding, formats)


def _encodable(codec, text: str) -> bool:
    try:
        codec.encode(text)
    except Exception:  # noqa: BLE001 - the codec's 22P05
        return False
    return True


def test_infinite_dates_and_timestamps_are_postgresqls(frame_module):
    """DuckDB's infinity and -infinity (its largest date and timestamp and their negations)
    print as PostgreSQL prints them, beside finite values, and are sent in binary as
    PostgreSQL sends its own (the type's largest and smallest values); has_infinity sees
    them (a short result holding one stays off the row path: duckdb_batches)."""
    con = duckdb.connect()
    con.execute("SET TimeZone = 'Europe/Berlin'")
    batch = con.sql(
        "SELECT * FROM (VALUES ('infinity'::DATE, '-infinity'::TIMESTAMP, "
        "'infinity'::TIMESTAMPTZ), ('-infinity'::DATE, 'infinity'::TIMESTAMP, "
        "'-infinity'::TIMESTAMPTZ), ('2024-01-02'::DATE, '2024-01-02 03:04:05'::TIMESTAMP, "
        "'2024-07-01 12:00:00+00'::TIMESTAMPTZ)) v(d, ts, tz)").to_arrow_table().to_batches()[0]
    cols = [Column("d", pgt.DATE), Column("ts", pgt.TIMESTAMP), Column("tz", pgt.TIMESTAMPTZ)]
    fields = _data_rows(columnar.DataRows(cols, [0, 0, 0], None).frame(batch))
    assert fields == [[b"infinity", b"-infinity", b"infinity"],
                      [b"-infinity", b"infinity", b"-infinity"],
                      [b"2024-01-02", b"2024-01-02 03:04:05", b"2024-07-01 14:00:00+02"]]
    rows = _data_rows(columnar.DataRows(cols, [1, 1, 1], None).frame(batch))
    i32, i64 = (2 ** 31 - 1).to_bytes(4, "big"), (2 ** 63 - 1).to_bytes(8, "big")
    assert rows[0] == [i32, (-2 ** 63).to_bytes(8, "big", signed=True), i64]
    assert rows[1] == [(-2 ** 31).to_bytes(4, "big", signed=True), i64,
                       (-2 ** 63).to_bytes(8, "big", signed=True)]
    assert columnar.has_infinity(batch) and not columnar.has_infinity(batch.slice(2))


def _data_rows(buf: bytes) -> list[list[bytes | None]]:
    """The fields of each DataRow of a framed buffer."""
    buf, at, rows = bytes(buf), 0, []
    while at < len(buf):
        assert buf[at:at + 1] == b"D"
        end = at + 1 + int.from_bytes(buf[at + 1:at + 5], "big")
        p, fields = at + 7, []
        for _ in range(int.from_bytes(buf[at + 5:at + 7], "big")):
            size = int.from_bytes(buf[p:p + 4], "big", signed=True)
            fields.append(None if size < 0 else buf[p + 4:p + 4 + size])
            p += 4 + max(size, 0)
        rows.append(fields)
        at = end
    return rows
