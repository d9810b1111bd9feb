"""The session's COPY sub-protocol fed with protocol messages, no socket (DuckDB backend)."""

from __future__ import annotations

import struct

from test_session_protocol import (  # noqa: F401 - fixtures
    SYNC, bind, codes, error_fields, execute, frame, parse, query, send, session)


def copy_data(data: bytes) -> tuple[bytes, bytes]:
    return frame(b"d", data)


COPY_DONE = frame(b"c")


def test_copy_in_response_then_rows_across_messages_then_ready(session):
    send(session, query("CREATE TABLE t (a int, b text)"))
    resp = send(session, query("COPY t FROM STDIN"))
    assert resp == [("G", struct.pack("!bhhh", 0, 2, 0, 0))]  # no ReadyForQuery yet
    assert send(session, copy_data(b"1\tx\n2\t"), SYNC, copy_data(b"y\n")) == []
    resp = send(session, COPY_DONE)
    assert resp == [("C", b"COPY 2\x00"), ("Z", b"I")]
    resp = send(session, query("SELECT count(*) FROM t"))
    assert [p for c, p in resp if c == "D"] == [struct.pack("!hi", 1, 1) + b"2"]


def test_copy_out_frames(session):
    send(session, query("CREATE TABLE t (a int, b text); INSERT INTO t VALUES (1, NULL)"))
    resp = send(session, query("COPY t TO STDOUT (FORMAT csv)"))
    assert resp == [("H", struct.pack("!bhhh", 0, 2, 0, 0)), ("d", b"1,\n"), ("c", b""),
                    ("C", b"COPY 1\x00"), ("Z", b"I")]
    resp = send(session, query("COPY (SELECT 7) TO STDOUT (FORMAT binary)"))
    assert codes(resp) == "HddcCZ"
    assert resp[1][1] == b"PGCOPY\n\xff\r\n\x00" + b"\x00" * 8 + struct.pack("!hi", 1, 4) \
        + struct.pack("!i", 7)
    assert resp[2][1] == b"\xff\xff"


def test_copy_fail_and_bad_data_then_later_copy_messages_are_dropped(session):
    send(session, query("CREATE TABLE t (a int)"))
    send(session, query("COPY t FROM STDIN"))
    resp = send(session, copy_data(b"1\n"), frame(b"f", b"no more\x00"))
    assert codes(resp) == "EZ"
    assert error_fields(resp[0][1])["C"] == "57014"
    assert error_fields(resp[0][1])["M"] == "COPY from stdin failed: no more"
    send(session, query("COPY t FROM STDIN"))
    resp = send(session, copy_data(b"1\t2\n"))  # the row's shape is checked at once
    assert codes(resp) == "EZ" and error_fields(resp[0][1])["C"] == "22P04"
    assert send(session, copy_data(b"2\n"), COPY_DONE) == []  # ignored, as PostgreSQL does
    send(session, query("COPY t FROM STDIN"))
    resp = send(session, copy_data(b"1\nx\n"), COPY_DONE)  # values: a batch at a time
    assert codes(resp) == "EZ" and error_fields(resp[0][1])["W"] == 'COPY t, line 2, column a: "x"'
    resp = send(session, query("SELECT count(*) FROM t"))
    assert [p for c, p in resp if c == "D"] == [struct.pack("!hi", 1, 1) + b"0"]


def test_unexpected_message_during_copy_is_08p01(session):
    send(session, query("CREATE TABLE t (a int)"))
    send(session, query("COPY t FROM STDIN"))
    resp = send(session, copy_data(b"1\n"), query("SELECT 1"))
    assert codes(resp) == "EZ"
    assert error_fields(resp[0][1])["M"] == "unexpected message type 0x51 during COPY from stdin"


def test_cancel_ends_copy_in_at_its_next_message(session):
    send(session, query("CREATE TABLE t (a int)"))
    send(session, query("COPY t FROM STDIN"))
    send(session, copy_data(b"1\n"))
    session.cancel()
    resp = send(session, copy_data(b"2\n"))
    assert codes(resp) == "EZ" and error_fields(resp[0][1])["C"] == "57014"


def test_extended_copy_waits_for_the_sync_after_copydone(session):
    send(session, query("CREATE TABLE t (a int)"))
    resp = send(session, parse("COPY t FROM STDIN"), bind(), execute(), SYNC)
    assert codes(resp) == "12G"  # the Sync sent with Execute is ignored during COPY
    resp = send(session, copy_data(b"1\n"), COPY_DONE)
    assert resp == [("C", b"COPY 1\x00")]
    assert send(session, SYNC) == [("Z", b"I")]
    resp = send(session, parse("COPY t FROM STDIN"), bind(), execute(), SYNC,
                copy_data(b"bad\n"), COPY_DONE, parse("SELECT 1"))
    assert codes(resp) == "12GE"  # then everything up to Sync is skipped
    assert codes(send(session, SYNC)) == "Z"


def test_copy_from_stdin_with_other_statements_in_one_query_is_0a000(session):
    send(session, query("CREATE TABLE t (a int)"))
    resp = send(session, query("SELECT 1; COPY t FROM STDIN"))
    assert error_fields(resp[-2][1])["C"] == "0A000" and resp[-1] == ("Z", b"I")
