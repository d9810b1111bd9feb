"""The session state machine fed with protocol bytes, no socket.

These pin the buenavista 0.5.0 defects pgbarrier must not inherit: full
ErrorResponse fields, NoData, Describe that never executes, skip-until-Sync
after any error (not just Execute), errors in Parse/Bind that keep the
connection, and portals that suspend at the row limit.
"""

from __future__ import annotations

import struct

import pytest

from pgbarrier.app import SERVER_PARAMETERS
from pgbarrier.errors import PgError, ProtocolViolation
from pgbarrier.session.session import Session
from pgbarrier.pgproto import messages as m


def cstr(s: str) -> bytes:
    return s.encode() + b"\x00"


def frame(code: bytes, body: bytes = b"") -> tuple[bytes, bytes]:
    return code, body


def parse(sql: str, name: str = "", oids: tuple[int, ...] = ()) -> tuple[bytes, bytes]:
    return frame(b"P", cstr(name) + cstr(sql) + struct.pack("!h", len(oids))
                 + b"".join(struct.pack("!I", o) for o in oids))


def bind(portal: str = "", stmt: str = "", params: tuple[bytes | None, ...] = (),
         result_formats: tuple[int, ...] = ()) -> tuple[bytes, bytes]:
    body = cstr(portal) + cstr(stmt) + struct.pack("!h", 0) + struct.pack("!h", len(params))
    for p in params:
        body += struct.pack("!i", -1) if p is None else struct.pack("!i", len(p)) + p
    body += struct.pack("!h", len(result_formats)) + b"".join(struct.pack("!h", f) for f in result_formats)
    return frame(b"B", body)


def describe(kind: str, name: str = "") -> tuple[bytes, bytes]:
    return frame(b"D", kind.encode() + cstr(name))


def execute(portal: str = "", max_rows: int = 0) -> tuple[bytes, bytes]:
    return frame(b"E", cstr(portal) + struct.pack("!i", max_rows))


SYNC = frame(b"S")


def query(sql: str) -> tuple[bytes, bytes]:
    return frame(b"Q", cstr(sql))


def responses(data: bytes) -> list[tuple[str, bytes]]:
    out, pos = [], 0
    while pos < len(data):
        code = data[pos:pos + 1].decode()
        (length,) = struct.unpack("!i", data[pos + 1:pos + 5])
        out.append((code, data[pos + 5:pos + 1 + length]))
        pos += 1 + length
    return out


def error_fields(payload: bytes) -> dict[str, str]:
    fields = {}
    for part in payload.rstrip(b"\x00").split(b"\x00"):
        if part:
            fields[chr(part[0])] = part[1:].decode()
    return fields


@pytest.fixture
def session(plane):
    s = Session(plane, SERVER_PARAMETERS)
    s.start(m.StartupMessage({"user": "root", "database": "dev"}))
    start = responses(s.out.take())
    assert [c for c, _ in start][0] == "R" and start[-1] == ("Z", b"I")
    yield s
    s.close()


def send(session: Session, *frames: tuple[bytes, bytes]) -> list[tuple[str, bytes]]:
    for code, body in frames:
        session.handle(m.decode_message(code, body))
    return responses(session.out.take())


def codes(resp: list[tuple[str, bytes]]) -> str:
    return "".join(c for c, _ in resp)


def test_startup_reports_parameters_and_key(plane):
    s = Session(plane, SERVER_PARAMETERS)
    s.start(m.StartupMessage({"user": "root", "database": "dev", "application_name": "t"}))
    resp = responses(s.out.take())
    params = dict(tuple(p.rstrip(b"\x00").decode().split("\x00")) for c, p in resp if c == "S")
    assert params["server_version"] == "15.0"
    assert params["client_encoding"] == "UTF8" and params["DateStyle"] == "ISO, MDY"
    assert params["application_name"] == "t" and params["session_authorization"] == "root"
    assert [c for c, _ in resp if c == "K"] == ["K"]


def test_error_response_carries_severity_sqlstate_message_and_position(session):
    resp = send(session, query("SELECT 1; ALTER DATABASE dev PAUZE"))
    assert codes(resp) == "TDCEZ"  # first statement's result, then the error, then RFQ
    fields = error_fields(resp[3][1])
    assert fields["S"] == fields["V"] == "ERROR"
    assert fields["C"] == "42601"
    assert fields["M"] == 'syntax error at or near "PAUZE"'
    assert fields["P"] == str(len("SELECT 1; ALTER DATABASE dev ") + 1)


def test_paused_create_error_has_detail_and_hint(session):
    send(session, query("ALTER DATABASE dev PAUSE"))
    resp = send(session, query(
        "CREATE MATERIALIZED VIEW v WITH (refresh.interval.sec = 5) AS SELECT 1 AS x"))
    assert codes(resp) == "EZ"
    fields = error_fields(resp[0][1])
    assert fields["C"] == "55000"
    assert fields["D"].startswith('database "dev" was paused at ') and fields["D"].endswith(" by root")
    assert fields["H"] == "Resume the database with ALTER DATABASE dev RESUME, then retry."


def test_repeated_pause_sends_a_notice_before_completion(session):
    assert codes(send(session, query("ALTER DATABASE dev PAUSE"))) == "CZ"
    resp = send(session, query("ALTER DATABASE dev PAUSE"))
    assert codes(resp) == "NCZ"
    assert error_fields(resp[0][1])["S"] == "NOTICE"
    assert resp[1][1] == b"ALTER DATABASE\x00"


def test_empty_query_gets_empty_query_response(session):
    assert codes(send(session, query(";"))) == "IZ"
    assert codes(send(session, query(""))) == "IZ"


def test_describe_portal_of_insert_sends_nodata_and_inserts_nothing(session):
    send(session, query("CREATE TABLE t (x INT)"))
    resp = send(session, parse("INSERT INTO t VALUES (1)"), bind(), describe("P"), SYNC)
    assert codes(resp) == "12nZ"
    rows = send(session, query("SELECT count(*) FROM t"))
    assert rows[1] == ("D", struct.pack("!hi", 1, 1) + b"0")


def test_describe_statement_sends_parameter_and_row_description_without_running(session):
    send(session, query("CREATE TABLE t (x INT, y TEXT)"))
    resp = send(session, parse("SELECT x, y FROM t WHERE x = $1", "s1", (23,)), describe("S", "s1"), SYNC)
    assert codes(resp) == "1tTZ"
    assert resp[1][1] == struct.pack("!hI", 1, 23)
    resp = send(session, parse("INSERT INTO t VALUES ($1, 'a')", "s2", (23,)), describe("S", "s2"), SYNC)
    assert codes(resp) == "1tnZ"
    assert send(session, query("SELECT count(*) FROM t"))[1][1].endswith(b"0")


def test_error_skips_every_message_until_sync_and_connection_survives(session):
    resp = send(session, bind(stmt="nosuch"), parse("SELECT 1"), bind(), execute(), SYNC)
    assert codes(resp) == "EZ"
    assert error_fields(resp[0][1])["C"] == "26000"
    resp = send(session, parse("SELECT 1"), bind(), execute(), SYNC)
    assert codes(resp) == "12DCZ"


def test_execute_suspends_at_row_limit_and_resumes(session):
    resp = send(session, parse("SELECT * FROM range(5)"), bind(), describe("P"), execute(max_rows=2),
                execute(max_rows=2), execute(max_rows=2), SYNC)
    assert codes(resp) == "12T" + "DDs" + "DDs" + "DC" + "Z"
    assert resp[-2][1] == b"SELECT 5\x00"


def test_binary_result_format_for_integers(session):
    resp = send(session, parse("SELECT 7::INTEGER AS n"), bind(result_formats=(1,)), describe("P"),
                execute(), SYNC)
    assert codes(resp) == "12TDCZ"
    assert resp[3][1] == struct.pack("!hii", 1, 4, 7)


def test_transaction_status_in_ready_for_query(session):
    assert send(session, query("BEGIN"))[-1] == ("Z", b"T")
    assert send(session, query("SELECT * FROM nosuch"))[-1] == ("Z", b"E")
    resp = send(session, query("SELECT 1"))
    assert error_fields(resp[0][1])["C"] == "25P02" and resp[-1] == ("Z", b"E")
    resp = send(session, query("COMMIT"))
    assert resp[0] == ("C", b"ROLLBACK\x00") and resp[-1] == ("Z", b"I")


def test_control_statement_in_transaction_block_is_25001(session):
    send(session, query("BEGIN"))
    resp = send(session, query("FLUSH"))
    fields = error_fields(resp[0][1])
    assert fields["C"] == "25001" and fields["M"] == "FLUSH cannot run inside a transaction block"
    send(session, query("ROLLBACK"))


def test_control_statements_through_extended_protocol_run_once(session, plane):
    before = plane.barrier.snapshot("dev").prev_epoch
    resp = send(session, parse("ALTER DATABASE dev PAUSE"), bind(), describe("P"), execute(), SYNC)
    assert codes(resp) == "12nCZ"
    assert plane.barrier.snapshot("dev").paused
    assert plane.barrier.snapshot("dev").prev_epoch > before
    send(session, query("ALTER DATABASE dev RESUME"))


@pytest.mark.parametrize("code, body, message", [
    (b"P", b"no-terminator", "invalid string in message"),
    (b"B", cstr("") + cstr("") + struct.pack("!h", 5), "insufficient data left in message"),
    (b"E", cstr(""), "insufficient data left in message"),
    (b"D", b"X" + cstr(""), "invalid DESCRIBE message subtype 88"),
    (b"F", b"\0", "insufficient data left in message"),
])
def test_malformed_bodies_of_known_messages_are_errors_not_fatal(code, body, message):
    # PostgreSQL's pq_getmsg* errors are ERROR: the connection stays
    msg = m.decode_message(code, body)
    assert isinstance(msg, m.Undecodable) and msg.type_code == code
    assert (msg.error.sqlstate, msg.error.severity, msg.error.message) == \
        ("08P01", "ERROR", message)


def test_an_unknown_message_type_is_fatal():
    with pytest.raises(ProtocolViolation) as info:
        m.decode_message(b"?", b"")
    assert (info.value.sqlstate, info.value.severity) == ("08P01", "FATAL")


def test_a_function_call_is_answered_like_a_query(session):
    # on DuckDB no function has an OID: PostgreSQL's own 42883, then ReadyForQuery
    resp = send(session, frame(b"F", struct.pack("!ihhh", 1, 0, 0, 0)))
    assert codes(resp) == "EZ"
    err = error_fields(resp[0][1])
    assert (err["C"], err["M"]) == ("42883", "function with OID 1 does not exist")
    assert codes(send(session, query("SELECT 1"))) == "TDCZ"


def test_startup_requests_decode():
    assert isinstance(m.decode_startup(struct.pack("!i", 80877103)), m.SSLRequest)
    assert isinstance(m.decode_startup(struct.pack("!i", 80877104)), m.GSSENCRequest)
    cancel = m.decode_startup(struct.pack("!iII", 80877102, 7, 4_000_000_000))
    assert cancel == m.CancelRequest(7, 4_000_000_000)
    start = m.decode_startup(struct.pack("!i", 196608) + cstr("user") + cstr("root") + b"\x00")
    assert start == m.StartupMessage({"user": "root"})


# --------------------------------------------------------------------------- simple-query implicit transaction


def _count(session: Session, table: str) -> bytes:
    resp = send(session, query(f"SELECT count(*) FROM {table}"))
    return resp[1][1][6:]


def test_multi_statement_query_is_one_implicit_transaction(session):
    send(session, query("CREATE TABLE t (x INT)"))
    resp = send(session, query("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2); SELECT * FROM nosuch"))
    assert codes(resp) == "CCEZ" and resp[-1] == ("Z", b"I")
    assert error_fields(resp[2][1])["C"] == "42P01"
    assert _count(session, "t") == b"0", "the error rolled back the earlier statements"
    resp = send(session, query("INSERT INTO t VALUES (1); INSERT INTO t VALUES (2)"))
    assert codes(resp) == "CCZ" and resp[-1] == ("Z", b"I")
    assert _count(session, "t") == b"2"


def test_commit_inside_a_query_ends_the_implicit_block_with_a_warning(session):
    send(session, query("CREATE TABLE t (x INT)"))
    resp = send(session, query(
        "INSERT INTO t VALUES (1); COMMIT; INSERT INTO t VALUES (2); SELECT * FROM nosuch"))
    assert codes(resp) == "CNCCEZ"
    warning = error_fields(resp[1][1])
    assert (warning["S"], warning["C"], warning["M"]) == (
        "WARNING", "25P01", "there is no transaction in progress")
    assert resp[2][1] == b"COMMIT\x00"
    assert _count(session, "t") == b"1", "committed before COMMIT, rolled back after it"


def test_begin_inside_a_query_makes_the_block_explicit(session):
    send(session, query("CREATE TABLE t (x INT)"))
    resp = send(session, query("INSERT INTO t VALUES (1); BEGIN; INSERT INTO t VALUES (2)"))
    assert codes(resp) == "CCCZ" and resp[-1] == ("Z", b"T")
    assert resp[1][1] == b"BEGIN\x00"
    assert send(session, query("ROLLBACK"))[-1] == ("Z", b"I")
    assert _count(session, "t") == b"0", "the statement before BEGIN belonged to the block"


def test_query_stops_at_error_inside_an_explicit_block(session):
    resp = send(session, query("BEGIN; SELECT * FROM nosuch; ROLLBACK"))
    assert codes(resp) == "CEZ" and resp[-1] == ("Z", b"E")
    resp = send(session, query("SELECT 1"))
    assert error_fields(resp[0][1])["C"] == "25P02"
    assert send(session, query("ROLLBACK"))[-1] == ("Z", b"I")


def test_lone_commit_and_nested_begin_warn_as_postgresql(session):
    resp = send(session, query("COMMIT"))
    assert codes(resp) == "NCZ" and error_fields(resp[0][1])["C"] == "25P01"
    send(session, query("BEGIN"))
    resp = send(session, query("BEGIN"))
    assert codes(resp) == "NCZ" and error_fields(resp[0][1])["C"] == "25001"
    assert resp[-1] == ("Z", b"T")
    send(session, query("ROLLBACK"))
    resp = send(session, query("SELECT 1; COMMIT AND CHAIN"))
    assert codes(resp) == "TDCEZ" and error_fields(resp[3][1])["C"] == "25P01"


@pytest.mark.parametrize("text, failing", [("SELECT 1; FLUSH", 1), ("FLUSH; SELECT 1", 0),
                                           ("SELECT 1; ALTER DATABASE dev PAUSE", 1)])
def test_control_statement_in_multi_statement_query_is_25001(session, plane, text, failing):
    resp = send(session, query(text))
    errors = [p for c, p in resp if c == "E"]
    assert len(errors) == 1
    fields = error_fields(errors[0])
    assert fields["C"] == "25001" and fields["M"].endswith("cannot run inside a transaction block")
    assert resp[-1] == ("Z", b"I")
    assert not plane.barrier.snapshot("dev").paused
    # alone, it runs
    assert codes(send(session, query("FLUSH"))) == "CZ"


def test_parameter_status_before_command_complete_and_only_on_change(session):
    resp = send(session, query("SET application_name = 'report'"))
    assert codes(resp) == "SCZ"
    assert resp[0][1] == b"application_name\x00report\x00"
    assert codes(send(session, query("SET application_name = 'report'"))) == "CZ"
    resp = send(session, query("SET TimeZone = 'Etc/UTC'"))
    assert resp[0] == ("S", b"TimeZone\x00Etc/UTC\x00")
    resp = send(session, query("SET TimeZone = 'Mars/Olympus_Mons'"))
    assert codes(resp) == "EZ" and error_fields(resp[0][1])["C"] == "22023"
    resp = send(session, query("SHOW application_name"))
    assert resp[1][1].endswith(b"report")


def test_version_is_postgresql_15_on_duckdb(session):
    resp = send(session, query("SELECT version()"))
    assert b"PostgreSQL 15.0 (pgbarrier" in resp[1][1]


# --------------------------------------------------------------------------- extended protocol


def bind_binary(portal: str, stmt: str, params: tuple[bytes, ...]) -> tuple[bytes, bytes]:
    body = cstr(portal) + cstr(stmt) + struct.pack("!hh", 1, 1) + struct.pack("!h", len(params))
    for p in params:
        body += struct.pack("!i", len(p)) + p
    body += struct.pack("!hh", 1, 1)
    return frame(b"B", body)


def test_describe_infers_parameter_types_and_bind_reads_binary_by_them(session):
    send(session, query("CREATE TABLE t (x INT, d DATE, v TEXT); INSERT INTO t VALUES (7, '2024-01-02', 'a')"))
    resp = send(session, parse("SELECT v FROM t WHERE x = $1 AND d = $2 LIMIT $3", "s"),
                describe("S", "s"), SYNC)
    assert codes(resp) == "1tTZ"
    assert resp[1][1] == struct.pack("!hIII", 3, 23, 1082, 20)
    # the statement lives across the Sync; its binary parameters are read by the inferred types
    resp = send(session, bind_binary("", "s", (struct.pack("!i", 7), struct.pack("!i", 8767),
                                              struct.pack("!q", 5))), execute(), SYNC)
    assert codes(resp) == "2DCZ"
    assert resp[1][1] == struct.pack("!hi", 1, 1) + b"a"  # text column, binary format: its bytes


def test_describe_of_insert_returning_gives_its_shape_without_running(session):
    send(session, query("CREATE TABLE t (x INT, v TEXT)"))
    resp = send(session, parse("INSERT INTO t VALUES ($1, 'a') RETURNING x, v"), describe("S"), SYNC)
    assert codes(resp) == "1tTZ"
    assert _count(session, "t") == b"0"


def test_ready_for_query_status_through_the_extended_protocol(session):
    assert send(session, parse("BEGIN"), bind(), execute(), SYNC)[-1] == ("Z", b"T")
    resp = send(session, parse("SELECT * FROM nosuch"), bind(), execute(), SYNC)
    assert codes(resp) == "12EZ" and resp[-1] == ("Z", b"E")
    resp = send(session, parse("SELECT 1"), bind(), execute(), SYNC)
    assert error_fields(resp[2][1])["C"] == "25P02" and resp[-1] == ("Z", b"E")
    resp = send(session, parse("COMMIT"), bind(), execute(), SYNC)
    assert resp[-2] == ("C", b"ROLLBACK\x00") and resp[-1] == ("Z", b"I")


def test_transaction_kinds():
    from pgbarrier.session.transaction import TxKind, TxState, after_success, tx_kind

    assert tx_kind("begin isolation level serializable") is TxKind.BEGIN
    assert tx_kind("START TRANSACTION") is TxKind.BEGIN
    assert tx_kind("END WORK") is TxKind.COMMIT
    assert tx_kind("ROLLBACK TO SAVEPOINT a") is TxKind.ROLLBACK_TO
    assert tx_kind("rollback work to a") is TxKind.ROLLBACK_TO
    assert tx_kind("COMMIT AND CHAIN") is TxKind.CHAIN
    assert tx_kind("COMMIT PREPARED 'x'") is None
    assert tx_kind("PREPARE TRANSACTION 'x'") is TxKind.COMMIT
    assert tx_kind("PREPARE p AS SELECT 1") is None
    assert tx_kind("STARTS") is None
    assert after_success(TxState.FAILED, TxKind.ROLLBACK_TO) is TxState.IN_BLOCK
    assert after_success(TxState.IN_BLOCK, TxKind.CHAIN) is TxState.IN_BLOCK
    assert after_success(TxState.IN_BLOCK, TxKind.ROLLBACK) is TxState.IDLE


def test_extended_executes_up_to_sync_are_one_implicit_transaction(session):
    send(session, query("CREATE TABLE tx_t (id INT PRIMARY KEY)"))
    send(session, query("INSERT INTO tx_t VALUES (1)"))
    resp = send(session, parse("INSERT INTO tx_t VALUES ($1)", "ins", (23,)),
                bind(stmt="ins", params=(b"2",)), execute(),
                bind(stmt="ins", params=(b"1",)), execute(),   # duplicate key
                bind(stmt="ins", params=(b"3",)), execute(),   # skipped after the error
                SYNC)
    assert codes(resp) == "12C2EZ" and resp[-1] == ("Z", b"I")
    assert error_fields(resp[4][1])["C"] == "23505"
    rows = send(session, query("SELECT count(*) FROM tx_t"))
    assert rows[1][1].endswith(b"1"), "the INSERT before the error was rolled back at Sync"
    resp = send(session, bind(stmt="ins", params=(b"2",)), execute(),
                bind(stmt="ins", params=(b"3",)), execute(), SYNC)
    assert codes(resp) == "2C2CZ"
    assert send(session, query("SELECT count(*) FROM tx_t"))[1][1].endswith(b"3"), "committed at Sync"


# --------------------------------------------------------------------------- start-up packets
# (PostgreSQL 15's ProcessStartupPacket, fed as bytes; tests/functional/test_startup_fuzz.py
# compares the same with a live PostgreSQL)


def _body(*pairs: bytes, protocol: int = 196608, end: bytes = b"\x00") -> bytes:
    return struct.pack("!i", protocol) + b"".join(p + b"\x00" for p in pairs) + end


@pytest.mark.parametrize("body", [
    _body(b"user", b"root", end=b""),               # no terminator
    _body(),                                        # only the terminator... is fine: see below
    struct.pack("!i", 196608),                      # only the version
    _body(b"user", end=b""),                        # a name without its value
    _body(b"user", b"root") + b"xx",                # bytes after the terminator
    _body(b"user", b"root") + b"\x00",              # two terminators
])
def test_startup_layout_must_end_at_its_last_byte(body):
    if body == _body():
        assert m.decode_startup(body) == m.StartupMessage({})
        return
    with pytest.raises(ProtocolViolation) as info:
        m.decode_startup(body)
    assert info.value.message == "invalid startup packet layout: expected terminator as last byte"


@pytest.mark.parametrize("code,old", [(2 << 16, True), (1 << 16, True), (1, True), (0, False),
                                      (4 << 16, False), (80877103 + 0, None)])
def test_unsupported_protocols(code, old):
    if old is None:  # the SSLRequest code is a request, not a version
        assert isinstance(m.decode_startup(struct.pack("!i", code)), m.SSLRequest)
        return
    with pytest.raises(m.UnsupportedProtocol) as info:
        m.decode_startup(_body(b"user", b"u", protocol=code))
    err = info.value
    assert (err.sqlstate, err.severity, err.old_format) == ("0A000", "FATAL", old)
    answer = m.startup_error_response(err)
    if old:
        assert answer == (b"EFATAL:  unsupported frontend protocol "
                          + f"{code >> 16}.{code & 0xFFFF}".encode()
                          + b": server supports 3.0 to 3.0\n\x00")
    else:
        assert answer[:1] == b"E" and struct.unpack("!i", answer[1:5])[0] == len(answer) - 1


def test_startup_names_that_are_not_utf8_keep_their_bytes():
    start = m.decode_startup(_body(b"user", b"\xff", b"database", b"d\xfe",
                                   b"application_name", b"\xff"))
    assert start.parameters["user"] == "\udcff"
    assert start.parameters["database"] == "d\udcfe"
    assert start.parameters["application_name"] == "\ufffd"
    err = PgError(f'role "{start.parameters["user"]}" does not exist', sqlstate="28000")
    assert b'role "\xff" does not exist' in m.startup_error_response(err)


@pytest.mark.parametrize("value,ok", [("true", True), ("t", True), ("on", True), ("1", True),
                                      ("of", True), ("database", True), ("maybe", False),
                                      ("", False), ("o", False), ("truex", False)])
def test_replication_values_are_postgresqls(value, ok):
    body = _body(b"user", b"u", b"replication", value.encode())
    if ok:
        assert m.decode_startup(body).parameters["replication"] == value
    else:
        with pytest.raises(PgError) as info:
            m.decode_startup(body)
        assert (info.value.sqlstate, info.value.message) == (
            "22023", f'invalid value for parameter "replication": "{value}"')


def test_cancel_requests_of_another_length_are_marked():
    assert m.decode_startup(struct.pack("!iII", 80877102, 7, 9)).complete
    assert not m.decode_startup(struct.pack("!iI", 80877102, 7)).complete
    assert not m.decode_startup(struct.pack("!iIII", 80877102, 7, 9, 1)).complete
