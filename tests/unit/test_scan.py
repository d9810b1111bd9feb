"""The upstream reply scan (pgproto/scan.py), fed bytes: its Python source and its compiled
extension, the same answers from each."""

from __future__ import annotations

import importlib
import struct

import pytest

from pgbarrier.backends.pg_relay import Upstream, frame

def _implementations(name: str) -> list:
    """Module ``name``'s Python source and, where it was built, its compiled extension."""
    package, _, base = name.rpartition(".")
    found = [importlib.import_module(name)]
    try:
        found.append(importlib.import_module(f"{package}._{base}_c"))
    except ImportError:  # not built here: tests/unit/test_accel.py says whether it must be
        pass
    return found


IMPLEMENTATIONS = _implementations("pgbarrier.pgproto.scan")


@pytest.fixture(params=IMPLEMENTATIONS, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def scan(request):
    return request.param


def cstr(s: str) -> bytes:
    return s.encode() + b"\0"


PARSE_OK, BIND_OK, NO_DATA = frame(b"1"), frame(b"2"), frame(b"n")
READY_I, READY_T, READY_E = frame(b"Z", b"I"), frame(b"Z", b"T"), frame(b"Z", b"E")


def row(value: bytes) -> bytes:
    return frame(b"D", struct.pack("!hi", 1, len(value)) + value)


def complete(tag: str) -> bytes:
    return frame(b"C", cstr(tag))


def error(sqlstate: str) -> bytes:
    return frame(b"E", b"SERROR\0C" + sqlstate.encode() + b"\0Mboom\0\0")


def test_a_whole_reply_stops_after_ready_for_query(scan):
    buf = PARSE_OK + BIND_OK + row(b"1") + row(b"2") + complete("SELECT 2") + READY_T
    stop, start, end, done, commands = scan.replies(buf, 0, 0, 0)
    assert (stop, end, done, commands) == (scan.READY, len(buf), 3, 1)
    assert buf[start:end] == READY_T


def test_held_bytes_ending_mid_message_say_where_the_whole_ones_end(scan):
    buf = row(b"abc") + complete("SELECT 1")
    for cut in range(len(buf)):
        stop, start, end, done, commands = scan.replies(buf[:cut], 0, 0, 0)
        assert stop == scan.MORE and start == end
        assert end in (0, len(row(b"abc")))
        assert end <= cut


def test_draining_stops_at_the_nth_completed_message_and_counts_on(scan):
    buf = PARSE_OK + BIND_OK + NO_DATA + complete("INSERT 0 1")
    stop, _start, end, done, _ = scan.replies(buf, 0, 2, 0)
    assert (stop, end, done) == (scan.DRAINED, len(PARSE_OK + BIND_OK), 2)
    stop, _start, end, done, commands = scan.replies(buf, end, 4, done)
    assert (stop, end, done, commands) == (scan.DRAINED, len(buf), 4, 1)


def test_an_error_and_a_parameter_status_are_stops_for_the_caller(scan):
    status = frame(b"S", cstr("TimeZone") + cstr("UTC"))
    buf = PARSE_OK + status + error("22012") + READY_E
    stop, start, end, done, _ = scan.replies(buf, 0, 0, 0)
    assert stop == scan.PARAMETER and buf[start:end] == status and done == 1
    stop, start, end, done, _ = scan.replies(buf, end, 0, done)
    assert stop == scan.ERROR and buf[start:end] == error("22012") and done == 1
    stop, start, end, done, _ = scan.replies(buf, end, 0, done)
    assert stop == scan.READY and end == len(buf)


def test_copy_in_and_copy_both_stop_the_scan(scan):
    for code in (b"G", b"W"):
        buf = frame(code, b"\0\0\0") + frame(b"N", b"SNOTICE\0\0")
        stop, start, end, _, _ = scan.replies(buf, 0, 0, 0)
        assert stop == scan.COPY_IN and start == 0 and end == 8


def test_lengths_are_read_unsigned_and_a_length_below_four_stops(scan):
    assert scan.length_at(b"D\x00\x00\x01\xc8", 0) == 456
    assert scan.length_at(b"D\x80\x00\x00\x00", 0) == 0x80000000
    bad = b"D\x00\x00\x00\x02" + READY_I
    stop, start, end, _, _ = scan.replies(bad, 0, 0, 0)
    assert stop == scan.MORE and start == end == 0


def test_both_implementations_agree_on_every_cut_of_a_long_stream():
    stream = b"".join([PARSE_OK, BIND_OK, row(b"x" * 300), frame(b"S", cstr("a") + cstr("b")),
                       complete("SELECT 1"), error("40001"), READY_E, NO_DATA,
                       frame(b"s"), frame(b"I"), READY_I, frame(b"G", b"\0\0\0")])
    for cut in range(0, len(stream) + 1, 7):
        for drain in (0, 1, 3):
            answers = {tuple(m.replies(stream[:cut], 0, drain, 0)) for m in IMPLEMENTATIONS}
            assert len(answers) == 1, (cut, drain, answers)


def test_upstream_scan_records_errors_and_parameters_and_moves_on():
    up = Upstream(None, {})  # type: ignore[arg-type] - no socket: bytes are fed
    up.received(PARSE_OK + frame(b"S", cstr("DateStyle") + cstr("ISO, DMY")) + error("23505")
                + READY_E)
    assert up.scan() == 0  # READY
    assert up.state.failed_at == 1 and up.state.failed_sqlstate == "23505"
    assert up.params["DateStyle"] == "ISO, DMY" and up.state.status == ord("E")
    assert up.pos == len(up.buf)


STATES = _implementations("pgbarrier.relay.state")
#: the stop codes RelayState.scan returns (pgproto.scan's)
state_module_codes = IMPLEMENTATIONS[0]


@pytest.fixture(params=STATES, ids=lambda m: m.__name__.rsplit(".", 1)[1])
def state_module(request):
    return request.param


def _scan_all(state, stream: bytes, drain: int) -> list[tuple[int, int, int]]:
    """Every stop of ``state.scan`` over ``stream``, scanning on after each as the pump does
    (a ParameterStatus or a DRAINED stop included)."""
    stops, pos = [], 0
    while True:
        stop, start, pos = state.scan(stream, pos, drain)
        stops.append((stop, start, pos))
        if stop in (state_module_codes.MORE, state_module_codes.READY):
            return stops


def test_relay_state_scan_makes_the_replies_transitions(state_module):
    """The reply accounting is the state's own: completed messages and CommandCompletes
    counted, the first error's SQLSTATE kept (later ones not), ReadyForQuery's status
    recorded, a ParameterStatus handed back to the caller."""
    state = state_module.RelayState()
    state.exchange()
    stream = b"".join([PARSE_OK, BIND_OK, row(b"x"), complete("SELECT 1"),
                       frame(b"S", cstr("a") + cstr("b")), error("40001"), error("42P01"),
                       READY_E])
    stops = _scan_all(state, stream, 0)
    assert [s[0] for s in stops] == [state_module_codes.PARAMETER, state_module_codes.READY]
    assert state.done == 3 and state.take_commands() == 1 and state.take_commands() == 0
    assert state.failed_at == 3 and state.failed_sqlstate == "40001"
    assert state.status == ord("E") and stops[-1][2] == len(stream)
    state.exchange()
    assert state.failed_at is None and state.done == 0


def test_relay_state_scan_draining_stops_at_an_error_or_the_nth_message(state_module):
    state = state_module.RelayState()
    state.exchange()
    stream = PARSE_OK + BIND_OK + complete("INSERT 0 1") + PARSE_OK + error("23505") + READY_E
    stop, _start, end = state.scan(stream, 0, 2)
    assert stop == state_module_codes.DRAINED and state.done == 2
    stop, _start, end = state.scan(stream, end, 5)
    assert stop == state_module_codes.DRAINED and state.failed_sqlstate == "23505"
    assert state.failed_at == 4
    stop, _start, end = state.scan(stream, end, 0)
    assert stop == state_module_codes.READY and end == len(stream)


def test_both_relay_states_agree_on_every_cut_of_a_long_stream():
    stream = b"".join([PARSE_OK, BIND_OK, row(b"x" * 300), frame(b"S", cstr("a") + cstr("b")),
                       complete("SELECT 1"), error("40001"), READY_E, NO_DATA,
                       frame(b"s"), complete("UPDATE 2"), READY_I, frame(b"G", b"\0\0\0")])
    for cut in range(0, len(stream) + 1, 5):
        for drain in (0, 1, 3):
            answers = set()
            for module in STATES:
                state = module.RelayState()
                stops = _scan_all(state, stream[:cut], drain) if drain == 0 else \
                    [state.scan(stream[:cut], 0, drain)]
                answers.add((tuple(stops), state.done, state.commands, state.failed_at,
                             state.failed_sqlstate, state.status))
            assert len(answers) == 1, (cut, drain, answers)
