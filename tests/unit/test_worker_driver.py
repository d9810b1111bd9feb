"""The worker driver (pgbarrier/server/worker_driver.py) driven by frames, with a fake host.

No event loop, no server and no connection: the host records what the driver hands it
(the batch's output, the end of the connection, the next batch asked for), its "loop"
keeps the callbacks a worker hands to the loop until the test runs them, and its pool
runs the work at once. The session is a real one, on the embedded DuckDB in memory.
"""

from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from pgbarrier.app import SERVER_PARAMETERS
from pgbarrier.backends.pg_relay import frame
from pgbarrier.errors import Fatal
from pgbarrier.pgproto import messages as m
from pgbarrier.server.relay_driver import MAX_CHUNKS
from pgbarrier.server.worker_driver import WorkerDriver
from pgbarrier.session.session import Session
from tests.relay_wire import SYNC, RecordedHost, bind, execute, parse, query

TERMINATE = frame(b"X")


class Loop:
    """The callbacks a worker hands to the event loop, run when the test says."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def call_soon_threadsafe(self, fn, *args) -> None:
        self.calls.append((fn, *args))

    def run(self) -> None:
        calls, self.calls = self.calls, []
        for fn, *args in calls:
            fn(*args)


class Host(RecordedHost):
    """The connection's part (worker_driver.Host), recorded."""

    def __init__(self) -> None:
        super().__init__()
        self.loop = Loop()
        self.gated: list[object] = []
        self.server = SimpleNamespace(gate=self.gated.append,
                                      pool=SimpleNamespace(call=lambda fn, *a: fn(*a)))
        self._busy = False
        self.spilled: list[bytes] = []

    def spill(self, data: bytes) -> None:
        """The session's spill: the connection's blocking write, recorded."""
        self.spilled.append(data)


def codes(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        out.append(data[pos:pos + 1])
        pos += 1 + struct.unpack("!i", data[pos + 1:pos + 5])[0]
    return out


@pytest.fixture
def wired(plane):
    session = Session(plane, SERVER_PARAMETERS)
    session.start(m.StartupMessage({"user": "root", "database": "dev"}))
    session.out.take()
    host = Host()
    session.spill = host.spill
    yield SimpleNamespace(host=host, session=session, driver=WorkerDriver(host, session))
    session.close()


def test_a_batch_runs_on_a_worker_and_its_output_ends_it_on_the_loop(wired):
    host, driver = wired.host, wired.driver
    driver.run([query("SELECT 1 AS a")])
    assert host._busy and host.ended == []  # the worker's outcome waits for the loop
    assert len(host.loop.calls) == 1 and not driver.lock.locked()
    host.loop.run()
    assert not host._busy and host.advanced == 1 and host.ends == []
    (out, idle), = host.ended
    assert codes(out) == [b"T", b"D", b"C", b"Z"] and idle
    assert host.gated == [host]  # a statement waits at the server's gate


def test_output_goes_after_each_waited_on_message_with_frames_behind_it(wired):
    host, driver = wired.host, wired.driver
    driver.run([query("SELECT 1"), parse("SELECT 2"), bind(), execute(), SYNC,
                frame(b"H")])
    host.loop.run()
    # the Query's answer went when the Sync was still to come; the Sync's before the Flush
    assert [codes(s) for s in host.spilled] == [[b"T", b"D", b"C", b"Z"],
                                                [b"1", b"2", b"D", b"C", b"Z"]]
    (out, idle), = host.ended
    assert out == b"" and not idle  # a Flush answers with no ReadyForQuery


def test_a_long_batch_spills_once_its_chunks_pile_up(wired):
    host, driver = wired.host, wired.driver
    batch = [parse("SELECT 1"), bind(), execute()] * (MAX_CHUNKS // 2) + [SYNC]
    driver.run(batch)
    host.loop.run()
    assert host.spilled, "nothing was written before the batch ended"
    assert all(len(codes(s)) > MAX_CHUNKS for s in host.spilled)
    (out, idle), = host.ended
    assert codes(out)[-1] == b"Z" and idle


def test_terminate_ends_the_connection_after_what_came_before_it(wired):
    host, driver = wired.host, wired.driver
    driver.run([query("SELECT 1"), TERMINATE, query("SELECT 2")])
    host.loop.run()
    assert [codes(s) for s in host.spilled] == [[b"T", b"D", b"C", b"Z"]]
    (out, idle), = host.ended  # nothing of the Query after the Terminate
    assert out == b"" and not idle
    assert host.ends == [None] and host.advanced == 0


def test_a_bug_in_the_session_is_its_error_and_the_connection_goes_on(wired, monkeypatch):
    host, driver = wired.host, wired.driver
    handle = Session.handle

    def broken(self, msg):
        if isinstance(msg, m.Query) and "boom" in msg.sql:
            raise RuntimeError("a bug")
        return handle(self, msg)

    monkeypatch.setattr(Session, "handle", broken)  # the class's: a Session is slotted
    driver.run([query("SELECT 'boom'"), query("SELECT 1")])
    host.loop.run()
    assert codes(host.spilled[0]) == [b"E"]
    assert b"XX000" in host.spilled[0]
    (out, _idle), = host.ended
    assert codes(out) == [b"T", b"D", b"C", b"Z"] and host.ends == [] and host.advanced == 1


def test_a_fatal_error_ends_the_connection(wired, monkeypatch):
    host, driver = wired.host, wired.driver

    def fatal(self, msg):
        raise Fatal("terminating connection", sqlstate="57P01")

    monkeypatch.setattr(Session, "handle", fatal)
    driver.run([query("SELECT 1")])
    host.loop.run()
    assert host.ended == [] and not host.in_batch and not host._busy
    assert len(host.ends) == 1 and isinstance(host.ends[0], Fatal)


def test_the_next_rows_are_framed_after_the_outcome_is_handed_over_under_the_lock(
        wired, monkeypatch):
    """A suspended portal's next rows are framed while the client reads, the lock held:
    the session's next batch, on another worker, waits for that framing."""
    host, driver = wired.host, wired.driver
    seen: list[tuple[bool, int]] = []
    monkeypatch.setattr(Session, "frame_ahead",
                        lambda self: seen.append((driver.lock.locked(), len(host.loop.calls))))
    driver.run([query("SELECT 1")])
    assert seen == [(True, 1)]  # the outcome already on its way to the loop
    host.loop.run()
    assert host.advanced == 1
