"""The serving core's two I/O-free parts: framing of the client's bytes, and the worker pool."""

from __future__ import annotations

import struct
import threading

import pytest

from pgbarrier.errors import ProtocolViolation
from pgbarrier.server.frames import FrameBuffer
from pgbarrier.server.pool import WorkerPool


def msg(code: bytes, body: bytes = b"") -> bytes:
    return code + struct.pack("!i", len(body) + 4) + body


def test_frames_come_out_whole_and_in_order_however_the_bytes_arrive():
    stream = msg(b"Q", b"SELECT 1\0") + msg(b"S") + msg(b"P", b"x" * 300)
    for cut in range(1, len(stream)):
        buf = FrameBuffer(1 << 20)
        buf.feed(stream[:cut])
        got = buf.frames()
        buf.feed(stream[cut:])
        got += buf.frames()
        assert got == [msg(b"Q", b"SELECT 1\0"), msg(b"S"), msg(b"P", b"x" * 300)]
        assert buf.pending == 0


def test_missing_says_how_much_of_a_long_frame_is_still_to_come():
    buf = FrameBuffer(1 << 20)
    whole = msg(b"d", b"y" * 1000)
    buf.feed(whole[:100])
    assert buf.frames() == [] and buf.missing() == len(whole) - 100


@pytest.mark.parametrize("length", [3, 0, -1, 1025])
def test_a_length_that_cannot_be_is_08p01_after_the_good_frames(length):
    buf = FrameBuffer(1024)
    buf.feed(msg(b"S") + b"Q" + struct.pack("!i", length) + b"rest")
    assert buf.frames() == [msg(b"S")]
    with pytest.raises(ProtocolViolation) as info:
        buf.frames()
    assert info.value.message == f"invalid message length {length}"


def test_the_pool_runs_work_on_threads_started_only_when_none_is_idle():
    pool = WorkerPool(4, min_workers=0, idle_s=60)
    try:
        assert pool.threads == 0
        assert pool.submit(lambda: 41 + 1).result(timeout=10) == 42
        assert pool.threads == 1
        for _ in range(20):  # one at a time: the idle thread takes each
            pool.submit(lambda: None).result(timeout=10)
        assert pool.threads == 1
    finally:
        pool.shutdown()


def test_work_goes_to_the_thread_that_went_idle_last():
    pool = WorkerPool(4, min_workers=4, idle_s=60)
    try:
        release = threading.Event()
        held = [pool.submit(release.wait, 10) for _ in range(3)]  # three threads, all busy
        release.set()
        for f in held:
            f.result(timeout=10)
        assert pool.wait_idle(3, timeout=10)
        last = pool.submit(threading.get_ident).result(timeout=10)
        ran = set()
        for _ in range(50):  # one at a time: the same warm thread runs each, the others sleep
            assert pool.wait_idle(3, timeout=10)
            ran.add(pool.submit(threading.get_ident).result(timeout=10))
        assert ran == {last} and pool.threads == 3
    finally:
        pool.shutdown()


def test_call_runs_work_that_reports_itself_and_survives_its_exception():
    pool = WorkerPool(2, min_workers=0, idle_s=60)
    try:
        done: list[int] = []
        finished = threading.Event()

        def boom() -> None:
            raise RuntimeError("its own to report")

        pool.call(boom)
        pool.call(lambda: (done.append(1), finished.set()))
        assert finished.wait(10) and done == [1]
        assert pool.submit(lambda: "still serving").result(timeout=10) == "still serving"
    finally:
        pool.shutdown()


def test_the_pool_grows_to_its_bound_then_queues_and_passes_exceptions_on():
    pool = WorkerPool(3, min_workers=0, idle_s=60)
    release = threading.Event()
    started = threading.Semaphore(0)

    def hold() -> str:
        started.release()
        release.wait(10)
        return "done"

    try:
        held = [pool.submit(hold) for _ in range(3)]
        for _ in range(3):
            assert started.acquire(timeout=10)
        queued = pool.submit(lambda: "queued")
        assert pool.threads == 3 and not queued.done()
        release.set()
        assert [f.result(timeout=10) for f in held] == ["done"] * 3
        assert queued.result(timeout=10) == "queued"

        class Gone(BaseException):
            pass

        def fail() -> None:
            raise Gone()

        with pytest.raises(Gone):
            pool.submit(fail).result(timeout=10)
    finally:
        pool.shutdown()


def test_idle_threads_end_down_to_the_minimum():
    pool = WorkerPool(4, min_workers=1, idle_s=0.05)
    release = threading.Event()
    try:
        fs = [pool.submit(release.wait, 10) for _ in range(4)]
        release.set()
        for f in fs:
            f.result(timeout=10)
        ended = threading.Event()
        for _ in range(400):  # a bounded wait for the idle timeout to take them
            if pool.threads == 1:
                ended.set()
                break
            ended.wait(0.05)
        assert pool.threads == 1
    finally:
        pool.shutdown()


@pytest.mark.parametrize("data,code", [(b"\x00", 0), (b"p\x00\x00\x00\x08abcd", 112),
                                       (b"\x00\x00\x00\x08\x04\xd2\x16\x2f", 0)])
def test_an_unknown_type_is_refused_before_its_length(data, code):
    # PostgreSQL reads the type byte and refuses it before it reads a length
    buf = FrameBuffer(1024)
    buf.feed(data)
    with pytest.raises(ProtocolViolation) as info:
        buf.frames()
    assert info.value.message == f"invalid frontend message type {code}"


def test_good_frames_come_before_an_unknown_type():
    buf = FrameBuffer(1024)
    buf.feed(b"S\x00\x00\x00\x04?")
    assert buf.frames() == [b"S\x00\x00\x00\x04"]
    with pytest.raises(ProtocolViolation):
        buf.frames()
