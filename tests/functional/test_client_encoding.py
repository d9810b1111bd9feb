"""Client encodings on the DuckDB backend, side by side with PostgreSQL 15 (issue 26, item 8).

The same session runs against PostgreSQL on 127.0.0.1:5432 and against a DuckDB-backed
pgbarrier, each in a fresh database, and the bytes the client gets must be the same:

* psql with ``PGCLIENTENCODING=LATIN1`` / ``WIN1252`` and ``\\encoding``: a script written in
  that encoding (non-ASCII data written and read back, column names, COPY in and out,
  22P05 and 22021, SET/RESET of client_encoding); psql's whole output compared as bytes
  (only psql's ``LOCATION:`` lines, PostgreSQL's C source lines, are dropped);
* psycopg connected with ``client_encoding`` set (LATIN1, WIN1252, GBK, KOI8R): values
  written and read back in text and binary, COPY in and out, errors;
* raw protocol messages (a LATIN1 or WIN1252 Query, Bind values in text and binary, a
  COPY with a bad byte on its third line): the same messages back, field by field.

Skipped when PostgreSQL is unreachable, except under ``CI=true``.
"""

from __future__ import annotations

import difflib
import os
import re
import socket
import struct
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest

from conftest import fresh_postgres_database, require_postgres, start_server, stop_server

_LOCATION = re.compile(rb"^LOCATION:  .*\n", re.M)


@dataclass
class Side:
    host: str
    port: int
    user: str
    database: str

    def psql(self, script: bytes, encoding: str) -> bytes:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env.update(PGCLIENTENCODING=encoding, PGCONNECT_TIMEOUT="10", PGTZ="UTC")
        done = subprocess.run(
            ["psql", "-X", "-a", "-q", "-h", self.host, "-p", str(self.port), "-U", self.user,
             "-d", self.database, "-v", "ON_ERROR_STOP=0", "-v", "VERBOSITY=verbose"],
            input=script, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120,
            env=env)
        return _LOCATION.sub(b"", done.stdout)

    def connect(self, **kw) -> psycopg.Connection:
        return psycopg.connect(host=self.host, port=self.port, user=self.user,
                               dbname=self.database, autocommit=True, **kw)


@pytest.fixture(scope="module")
def sides() -> Iterator[tuple[Side, Side]]:
    """(PostgreSQL, pgbarrier on DuckDB), each on a fresh database of its own."""
    require_postgres()
    srv = start_server()
    name = f"pgb_enc_{uuid.uuid4().hex[:8]}"
    try:
        with psycopg.connect(srv.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        with fresh_postgres_database("pgb_enc") as dsn:
            pg = psycopg.conninfo.conninfo_to_dict(dsn)
            yield (Side(pg.get("host") or "127.0.0.1", int(pg.get("port") or 5432),
                        pg.get("user") or "postgres", pg["dbname"]),
                   Side(srv.host, srv.port, "root", name))
    finally:
        assert stop_server(srv) == 0, "server did not exit cleanly:\n" + "".join(srv.log)


# --------------------------------------------------------------------------- psql

LATIN1_SCRIPT = """\
CREATE TABLE latin (id int, v text);
INSERT INTO latin VALUES (1, 'café'), (2, 'À la carte'), (3, 'naïve ÿ');
SELECT id, v, length(v), upper(v) AS "Été" FROM latin ORDER BY id;
SELECT v FROM latin WHERE v LIKE '%é%';
SELECT 'x' AS "façade", length('é') AS chars;
SELECT * FROM "café";
SELECT chr(8364);
SELECT id, chr(8364) FROM latin ORDER BY id;
COPY latin TO STDOUT;
COPY latin TO STDOUT (FORMAT csv, HEADER);
COPY latin FROM STDIN;
4	über
5	ça\\tva
\\.
COPY latin (id, v) FROM STDIN (FORMAT csv);
6,"«guillemets»"
\\.
COPY latin TO STDOUT (ENCODING 'UTF8');
SELECT id, v FROM latin WHERE id > 3 ORDER BY id;
SHOW client_encoding;
SET client_encoding = 'no_such_encoding';
SET client_encoding TO 'MULE_INTERNAL';
SET NAMES 'ISO-8859-15';
SHOW client_encoding;
RESET client_encoding;
SHOW client_encoding;
DROP TABLE latin;
""".encode("latin-1")

WIN1252_SCRIPT = """\
CREATE TABLE win (id int, v text);
INSERT INTO win VALUES (1, '€ 5'), (2, 'œuvre – “quoted”'), (3, 'Šš Žž');
SELECT id, v, length(v) FROM win ORDER BY id;
SELECT v AS "€uro" FROM win WHERE v LIKE '€%';
SELECT '<0x81>' AS undefined;
SELECT chr(129);
SELECT chr(8364) AS euro, chr(8216) || chr(8217) AS quotes;
COPY win TO STDOUT (FORMAT csv);
\\encoding LATIN1
SHOW client_encoding;
SELECT v FROM win WHERE id = 2;
SELECT v FROM win WHERE id = 3;
\\encoding WIN1252
SELECT v FROM win WHERE id = 3;
DROP TABLE win;
""".encode("cp1252").replace(b"<0x81>", b"\x81")  # a byte WIN1252 leaves undefined


@pytest.mark.parametrize("encoding, script", [("LATIN1", LATIN1_SCRIPT),
                                              ("WIN1252", WIN1252_SCRIPT)])
def test_psql_prints_the_same_bytes(sides, encoding, script):
    postgres, duck = sides
    expected = postgres.psql(script, encoding)
    got = duck.psql(script, encoding)
    assert got == expected, "".join(difflib.unified_diff(
        expected.decode("latin-1").splitlines(True), got.decode("latin-1").splitlines(True),
        "PostgreSQL", "pgbarrier"))
    assert b"22P05" in got  # the scripts do meet the errors they are about


# --------------------------------------------------------------------------- psycopg

_VALUES = {"latin1": "café ÀÉ ÿ", "WIN1252": "€ œ café „x“", "gbk": "中文 ⅰ 简体",
           "koi8r": "привет мир"}


def _psycopg_session(side: Side, encoding: str) -> list[object]:
    out: list[object] = []
    value = _VALUES[encoding]
    with side.connect(client_encoding=encoding) as conn:
        out.append(conn.info.parameter_status("client_encoding"))
        conn.execute("CREATE TABLE pe (id int, v text)")
        try:
            conn.execute("INSERT INTO pe VALUES (1, %s)", [value])
            out.append(conn.execute("SELECT v, length(v), %s::text FROM pe", [value]).fetchall())
            out.append(conn.execute("SELECT v, %s::text FROM pe", [value], binary=True).fetchall())
            with conn.cursor().copy("COPY pe TO STDOUT") as copy:
                out.append([bytes(b) for b in copy])
            with conn.cursor().copy("COPY pe (id, v) FROM STDIN") as copy:
                copy.write_row([2, value[::-1]])
            with conn.cursor().copy("COPY pe TO STDOUT (FORMAT binary)") as copy:
                out.append(b"".join(bytes(b) for b in copy))
            out.append(conn.execute("SELECT id, v FROM pe ORDER BY id").fetchall())
            for sql in ("SELECT chr(26085)", "SELECT chr(26085) AS x FROM pe"):
                try:
                    conn.execute(sql)
                except psycopg.Error as exc:
                    out.append((exc.sqlstate, str(exc)))
        finally:
            conn.execute("DROP TABLE pe")
    return out


@pytest.mark.parametrize("encoding", list(_VALUES))
def test_psycopg_with_client_encoding_gets_the_same_answers(sides, encoding):
    postgres, duck = sides
    assert _psycopg_session(duck, encoding) == _psycopg_session(postgres, encoding)


# --------------------------------------------------------------------------- raw messages


def _msg(code: bytes, body: bytes = b"") -> bytes:
    return code + struct.pack("!i", len(body) + 4) + body


def _bind(params: tuple[bytes, ...], formats: tuple[int, ...],
          result_formats: tuple[int, ...]) -> bytes:
    body = b"\x00\x00" + struct.pack("!h", len(formats))
    body += b"".join(struct.pack("!h", f) for f in formats) + struct.pack("!h", len(params))
    body += b"".join(struct.pack("!i", len(p)) + p for p in params)
    body += struct.pack("!h", len(result_formats))
    return _msg(b"B", body + b"".join(struct.pack("!h", f) for f in result_formats))


def _query(sql: bytes) -> bytes:
    return _msg(b"Q", sql + b"\x00")


_EXTENDED_END = _msg(b"E", b"\x00\x00\x00\x00\x00") + _msg(b"S")

#: (client encoding, batches): each batch is sent alone and answered up to ReadyForQuery
RAW = {
    "LATIN1": [
        _query(b"CREATE TABLE raw_t (a text, b int)"),
        _query(b"SELECT 'caf\xe9' AS \"\xe9\", chr(233)"),
        _query(b"SELECT chr(8364) AS x"),
        _query(b'SELECT * FROM "t\xe9"'),
        _msg(b"P", b"\x00SELECT $1::text, $2::text, $3::json, $4::int4\x00\x00\x00")
        + _bind((b"\xe9", b"\xe9", b'"\xe9"', b"\x00\x00\x00\xe9"), (0, 1, 1, 1), (0, 1, 1, 0))
        + _EXTENDED_END,
        _msg(b"P", b"\x00SELECT $1::text\x00\x00\x00") + _bind((b"a\x00b",), (0,), ())
        + _EXTENDED_END,
        _query(b"COPY raw_t FROM STDIN") + _msg(b"d", b"caf\xe9\t1\n") + _msg(b"c"),
        _query(b"COPY raw_t TO STDOUT"),
        _query(b"SET client_encoding = 'WIN1252'"),
        _query(b"SELECT chr(8364), '\x80'"),
        _query(b"COPY raw_t FROM STDIN") + _msg(b"d", b"x\t2\ny\t3\n\x81\t4\n") + _msg(b"c"),
        _query(b"SELECT set_config('client_encoding', 'LATIN1', false)"),
        _query(b"SELECT chr(8364)"),
        _query(b"DROP TABLE raw_t"),
    ],
    "GBK": [
        _query("SELECT '中文' AS \"列\", '中文' || 'x', chr(8364)".encode("gbk")),
        _query(b"SELECT '\x8d\x20'"),  # reserved as invalid in every multibyte encoding
        _query(b"SELECT '\x81\x20'"),  # well formed, but no character
        _query(b"SELECT 'a\xd6'"),  # cut short at the end
        _query("SELECT chr(12354) AS \"あ\"".encode("gbk")),
    ],
    "GB18030": [
        _query("SELECT '中文€' AS x, chr(128) || chr(65536)".encode("gb18030")),
        _query(b"SELECT '\x81\x30\x81'"),
        _query(b"SELECT '\x81\x30\x81\x30'"),
    ],
}


def _raw_answers(side: Side, encoding: str, batches: list[bytes]) -> list[list[tuple]]:
    params = {b"user": side.user.encode(), b"database": side.database.encode(),
              b"client_encoding": encoding.encode()}
    body = struct.pack("!i", 196608) + b"".join(k + b"\0" + v + b"\0" for k, v in params.items())
    sock = socket.create_connection((side.host, side.port), timeout=30)
    buf = b""

    def answers() -> list[tuple]:
        nonlocal buf
        out: list[tuple] = []
        while True:
            while len(buf) >= 5:
                (n,) = struct.unpack("!i", buf[1:5])
                if len(buf) < 1 + n:
                    break
                code, payload, buf = buf[:1], buf[5:1 + n], buf[1 + n:]
                if code in (b"E", b"N"):  # PostgreSQL's C source fields are its own
                    payload = tuple(f for f in payload.split(b"\0") if f and f[:1] not in b"FLR")
                if code == b"C" and payload.startswith(b"SHOW"):
                    payload = b"SHOW"
                out.append((code, payload))
                if code == b"Z":
                    # ParameterStatus: PostgreSQL sends it after CommandComplete, pgbarrier
                    # before (clients take either): compared as a set per batch
                    said = {p for c, p in out if c == b"S"}
                    return [m for m in out if m[0] != b"S"] + [(b"S", tuple(sorted(said)))]
            data = sock.recv(65536)
            if not data:
                return out + [(b"<closed>",)]
            buf += data

    try:
        sock.sendall(struct.pack("!i", len(body) + 5) + body + b"\0")
        answers()
        return [(sock.sendall(batch), answers())[1] for batch in batches]
    finally:
        sock.close()


@pytest.mark.parametrize("encoding", list(RAW))
def test_raw_messages_get_the_same_answers(sides, encoding):
    postgres, duck = sides
    expected = _raw_answers(postgres, encoding, RAW[encoding])
    got = _raw_answers(duck, encoding, RAW[encoding])
    for i, (a, b) in enumerate(zip(expected, got)):
        assert b == a, f"batch {i}: {RAW[encoding][i]!r}"


def _start_up_answers(side: Side, encoding: str) -> list[tuple[bytes, bytes]]:
    params = {b"user": side.user.encode(), b"database": side.database.encode(),
              b"client_encoding": encoding.encode()}
    body = struct.pack("!i", 196608) + b"".join(k + b"\0" + v + b"\0" for k, v in params.items())
    with socket.create_connection((side.host, side.port), timeout=30) as sock:
        sock.sendall(struct.pack("!i", len(body) + 5) + body + b"\0")
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    out = []
    while len(data) >= 5:
        (n,) = struct.unpack("!i", data[1:5])
        out.append((data[:1], data[5:1 + n]))
        data = data[1 + n:]
    return out


@pytest.mark.parametrize("encoding, sqlstate, message", [
    ("FOO", "22023", 'invalid value for parameter "client_encoding": "FOO"'),
    ("mule-internal", "0A000", "conversion between MULE_INTERNAL and UTF8 is not supported"),
])
def test_start_up_refusals_are_the_same(sides, encoding, sqlstate, message):
    for side in sides:
        answers = _start_up_answers(side, encoding)
        assert [code for code, _ in answers] == [b"R", b"E"], side
        fields = {f[:1]: f[1:] for f in answers[1][1].split(b"\0") if f}
        assert (fields[b"S"], fields[b"C"], fields[b"M"]) == (
            b"FATAL", sqlstate.encode(), message.encode()), side
