"""Per-view-name DDL locks: CREATE, DROP and REFRESH of one name take turns.

Like PostgreSQL's relation locks, with these rules:

* One holder per ``(database, name)``; the others queue in arrival order and
  the lock is handed to the first of them when the holder lets go.
* A wait ends with 55P03 ``canceling statement due to lock timeout`` once the
  session's ``lock_timeout`` has passed, with 57014 once its
  ``statement_timeout`` has, and with 57014 on a cancel (the waiter's
  ``wake`` event is set by :meth:`SessionInfo.cancel`).
* A DROP never waits behind a first snapshot: a ``drop`` waiter cancels a
  ``create`` holding the lock (when it starts waiting, and whenever the lock
  passes to a create while it waits); that create's client gets 57014 and
  its view is not created. A DROP waits for a REFRESH, as PostgreSQL's does.
* Cheap: one mutex; a lock with no holder and no waiters is forgotten.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from pgbarrier.errors import LockNotAvailable, QueryCanceled


class SessionInfo(Protocol):
    """What a lock needs of a waiting session (``control.SessionInfo`` is one)."""

    wake: threading.Event
    cancelled: bool
    deadline: float | None

    def cancel(self) -> None: ...

Key = tuple[str, str]


@dataclass(eq=False)
class _Lock:
    holder: SessionInfo
    kind: str
    queue: list[tuple[SessionInfo, str]] = field(default_factory=list)


class NameLocks:
    def __init__(self) -> None:
        self._mutex = threading.Lock()
        self._locks: dict[Key, _Lock] = {}

    @contextmanager
    def hold(self, key: Key, info: SessionInfo, kind: str, lock_timeout_ms: int = 0
             ) -> Iterator[bool]:
        """Hold ``key``'s lock for the block; yields whether this DROP cancelled a create."""
        preempted = self._acquire(key, info, kind, lock_timeout_ms)
        try:
            yield preempted
        finally:
            self._release(key, info)

    def _preempt(self, lock: _Lock, kind: str, done: set[int]) -> bool:
        """Under the mutex: a drop cancels the create holding the lock (once per holder)."""
        if kind == "drop" and lock.kind == "create" and id(lock.holder) not in done:
            done.add(id(lock.holder))
            lock.holder.cancel()
            return True
        return False

    def _acquire(self, key: Key, info: SessionInfo, kind: str, lock_timeout_ms: int) -> bool:
        lock_deadline = time.monotonic() + lock_timeout_ms / 1000 if lock_timeout_ms else None
        cancelled: set[int] = set()
        preempted = False
        with self._mutex:
            lock = self._locks.get(key)
            if lock is None:
                self._locks[key] = _Lock(info, kind)
                return False
            lock.queue.append((info, kind))
        try:
            while True:
                info.wake.clear()
                with self._mutex:
                    lock = self._locks[key]
                    if lock.holder is info:
                        return preempted
                    preempted = self._preempt(lock, kind, cancelled) or preempted
                if info.cancelled:
                    raise QueryCanceled()
                now = time.monotonic()
                ends = [d for d in (info.deadline, lock_deadline) if d is not None]
                timeout = max(0.0, min(ends) - now) if ends else None
                if not info.wake.wait(timeout):
                    if lock_deadline is not None and time.monotonic() >= lock_deadline and (
                            info.deadline is None or lock_deadline <= info.deadline):
                        raise LockNotAvailable("canceling statement due to lock timeout")
                    if info.deadline is not None and time.monotonic() >= info.deadline:
                        raise QueryCanceled("canceling statement due to statement timeout")
        except BaseException:
            with self._mutex:
                lock = self._locks[key]
                granted = lock.holder is info
                if not granted:
                    lock.queue = [(i, k) for i, k in lock.queue if i is not info]
            if granted:
                self._release(key, info)
            raise

    def _release(self, key: Key, info: SessionInfo) -> None:
        with self._mutex:
            lock = self._locks[key]
            if lock.holder is not info:
                return
            if not lock.queue:
                del self._locks[key]
                return
            lock.holder, lock.kind = lock.queue.pop(0)
            waiters = [lock.holder, *(i for i, _k in lock.queue)]
        for waiter in waiters:  # the new holder proceeds; a waiting drop may cancel it
            waiter.wake.set()
