"""pgbarrier's client-encoding conversions are PostgreSQL 15's, table by table.

For every encoding pgbarrier converts (:data:`pgbarrier.pgproto.encodings.CODECS`), the
reference PostgreSQL (a fresh UTF8 database on 127.0.0.1:5432) converts byte sequences to
UTF8 (``convert_from``) and code points from UTF8 (``convert_to``), and pgbarrier's codec
must give the same text, or the same error with the same SQLSTATE and message:

* to UTF8: every byte alone and between ASCII letters; for the multibyte encodings every
  two-byte sequence (alone and followed by a letter) and a lead byte cut short; for
  GB18030 the four-byte sequences of a spread of first bytes;
* from UTF8: every code point up to U+25FF (single-byte encodings: past it they have none)
  or U+FFFF (multibyte ones), and a spread of the others.

``convert_from`` checks the whole input before converting it, where the wire converts
character by character; the sequences here hold at most one bad character, so both report
the same one. Skipped when PostgreSQL is unreachable, except under ``CI=true``.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from conftest import fresh_postgres_database
from pgbarrier.errors import PgError
from pgbarrier.pgproto.encodings import CODECS

_FUNCTIONS = """
CREATE FUNCTION to_utf8(b bytea, e name) RETURNS text LANGUAGE plpgsql AS $$
BEGIN RETURN 'OK' || encode(convert_to(convert_from(b, e), 'UTF8'), 'hex');
EXCEPTION WHEN others THEN RETURN 'ER' || SQLSTATE || SQLERRM; END $$;
CREATE FUNCTION from_utf8(t text, e name) RETURNS text LANGUAGE plpgsql AS $$
BEGIN RETURN 'OK' || encode(convert_to(t, e), 'hex');
EXCEPTION WHEN others THEN RETURN 'ER' || SQLSTATE || SQLERRM; END $$;
"""


@pytest.fixture(scope="module")
def reference() -> Iterator[psycopg.Connection]:
    with fresh_postgres_database("pgb_enc_tables") as dsn:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(_FUNCTIONS)
            yield conn


def _sequences(name: str) -> list[bytes]:
    out = [bytes([b]) for b in range(256)] + [b"a" + bytes([b]) + b"b" for b in range(256)]
    if CODECS[name].verify.__name__ == "_single":
        return out
    out += [bytes([a, b]) for a in range(0x80, 0x100) for b in range(0x100)]
    out += [bytes([a, b]) + b"z" for a in range(0x80, 0x100) for b in range(0x100)]
    out += [b"x" + bytes([a]) for a in range(0x80, 0x100)]
    if name == "GB18030":
        out += [bytes([a, b, c, d]) for a in (0x80, 0x81, 0x82, 0x84, 0x85, 0x8f, 0x90, 0xe3,
                                              0xe4, 0xfe, 0xff)
                for b in range(0x2f, 0x3b) for c in range(0x80, 0x100) for d in range(0x2f, 0x3b)]
        out += [bytes([a, b, c]) for a in (0x81, 0x84, 0x90, 0xfe) for b in range(0x2f, 0x3b)
                for c in range(0x7f, 0x100)]
    return out


def _mine_to_utf8(name: str, raw: bytes) -> str:
    try:
        return "OK" + CODECS[name].decode(raw).encode("utf-8").hex()
    except PgError as exc:
        return "ER" + exc.sqlstate + exc.message


def _mine_from_utf8(name: str, cp: int) -> str:
    try:
        return "OK" + CODECS[name].encode(chr(cp)).hex()
    except PgError as exc:
        return "ER" + exc.sqlstate + exc.message


@pytest.mark.parametrize("name", sorted(CODECS))
def test_conversions_to_utf8_are_postgresqls(reference, name):
    seqs = _sequences(name)
    differ = []
    for i in range(0, len(seqs), 100_000):
        chunk = seqs[i:i + 100_000]
        rows = reference.execute(
            "SELECT to_utf8(b, %s) FROM unnest(%s::bytea[]) WITH ORDINALITY AS u(b, i) "
            "ORDER BY i", [name, chunk]).fetchall()
        differ += [(raw.hex(), pg, mine) for raw, (pg,) in zip(chunk, rows)
                   if (mine := _mine_to_utf8(name, raw)) != pg]
    assert not differ, f"{len(differ)} of {len(seqs)} differ, e.g. {differ[:5]}"


@pytest.mark.parametrize("name", sorted(CODECS))
def test_conversions_from_utf8_are_postgresqls(reference, name):
    # every code point a single-byte encoding has is below U+2600 (a check on the whole
    # plane found nothing above): past it, a spread
    every = 0x2600 if CODECS[name].verify.__name__ == "_single" else 0x10000
    rows = reference.execute(
        "SELECT cp, from_utf8(chr(cp), %s) FROM generate_series(1, 1114111) AS cp "
        "WHERE (cp < %s OR cp %% 499 = 0) AND cp NOT BETWEEN 55296 AND 57343", [name, every])
    differ = [(hex(cp), pg, mine) for cp, pg in rows if (mine := _mine_from_utf8(name, cp)) != pg]
    assert not differ, f"{len(differ)} differ, e.g. {differ[:5]}"
