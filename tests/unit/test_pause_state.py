"""The pause state's transitions with a reason and a deadline (issue 29, item 2)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pgbarrier.barrier.pause import Paused, Running, pause, resume

T0 = datetime(2026, 12, 3, 10, 0, tzinfo=timezone.utc)
LATER = T0 + timedelta(minutes=10)


def test_a_pause_takes_its_reason_and_deadline():
    assert pause(Running(), T0, "alice", "nightly load", LATER) == (
        Paused(T0, "alice", "nightly load", LATER), True)


def test_pausing_again_keeps_when_and_who_and_replaces_reason_and_deadline():
    first = Paused(T0, "alice", "nightly load", LATER)
    state, changed = pause(first, T0 + timedelta(minutes=1), "bob", None, None)
    assert (state, changed) == (Paused(T0, "alice"), False)
    assert pause(first, T0, "bob", "nightly load", LATER) == (first, False)


def test_a_timed_resume_resumes_only_the_pause_with_its_deadline():
    paused = Paused(T0, "alice", None, LATER)
    assert resume(paused, LATER) == (Running(), True)
    assert resume(paused, LATER + timedelta(seconds=1)) == (paused, False)
    assert resume(Paused(T0, "alice"), LATER) == (Paused(T0, "alice"), False)
    assert resume(Running(), LATER) == (Running(), False)
    assert resume(paused) == (Running(), True)  # ALTER DATABASE d RESUME resumes any pause
