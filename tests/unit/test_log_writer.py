"""The log writer thread (pgbarrier.logs): the thread that logs only keeps the record; one
thread writes them in order; nothing is lost at stop; a stuck stderr costs bounded memory."""

from __future__ import annotations

import io
import logging
import sys
import threading

import pytest

from pgbarrier import logs


@pytest.fixture
def restored():
    """The root logger as it was, after the test configured its own."""
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    yield
    logs.stop()
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in before:
        root.addHandler(h)
    root.setLevel(level)


def test_every_record_is_written_in_order_by_stop(restored, monkeypatch):
    captured = io.StringIO()
    monkeypatch.setattr(sys, "stderr", captured)  # here: pytest sets its own before the call
    logs.configure("INFO")
    args = ["before"]
    logging.getLogger("t").info("value %s", args)
    args[0] = "after"  # the message was made when it was logged

    def burst(n: int) -> None:
        for i in range(200):
            logging.getLogger("t").info("thread %d line %d", n, i)

    threads = [threading.Thread(target=burst, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("t").exception("failed")
    logs.stop()
    logging.getLogger("t").info("after stop")  # written directly from now on
    lines = captured.getvalue().splitlines()
    assert "INFO t: value ['before']" in lines[0]
    for n in range(4):
        mine = [line.split("line ")[1] for line in lines if f"thread {n} line" in line]
        assert mine == [str(i) for i in range(200)]
    failed = next(i for i, line in enumerate(lines) if "ERROR t: failed" in line)
    assert lines[failed + 1].startswith("\tTraceback") and "ValueError: boom" in lines[-2]
    assert lines[-1].endswith("INFO t: after stop")


def test_past_the_bound_records_are_dropped_and_counted(monkeypatch):
    monkeypatch.setattr(logs, "_KEPT_AT_MOST", 5)
    deferred = logs._Deferred()
    out = io.StringIO()
    writer = logging.StreamHandler(out)
    writer.setFormatter(logs.TextFormatter())
    for i in range(20):  # nothing drains meanwhile: stderr is not read
        deferred.handle(logging.LogRecord("t", logging.INFO, __file__, 0, "n %d", (i,), None))
    logs._Writer(deferred, writer).drain()
    lines = out.getvalue().splitlines()
    assert [line.rsplit(" ", 1)[1] for line in lines[:5]] == ["0", "1", "2", "3", "4"]
    assert lines[5].endswith("WARNING pgbarrier.logs: 15 log records dropped: stderr did not "
                             "keep up")
    assert len(lines) == 6
