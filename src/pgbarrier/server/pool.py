"""Threads for blocking work, only as many as there is work.

Rules this module keeps:

* :meth:`WorkerPool.submit` returns a :class:`concurrent.futures.Future`; the callable's
  exception, BaseExceptions included, is the future's. :meth:`WorkerPool.call` runs a
  callable that reports its own outcome (no future: the serving core's per-batch path).
* A thread is started only when no thread is idle, up to ``max_workers``; past that, work
  waits in arrival order. A thread idle for ``idle_s`` ends, down to ``min_workers``. So
  idle connections cost no thread: threads follow the statements running at once.
* Work goes to the thread that went idle last (a stack, not a queue): with one statement
  at a time one thread does all of it, warm, and the others stay asleep. A hand-off is one
  lock released for that thread, no Condition, no queue.
* The bound is the caller's choice: pgbarrier's server uses the most connections it
  serves at once, since each has at most one piece of work in flight. A smaller bound
  could deadlock (a statement waiting for RESUME, or for a lock, holds its thread while
  the statement that would release it waits for one).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

log = logging.getLogger(__name__)

_Work = tuple[Callable[..., Any], tuple[Any, ...]]


class _Idle:
    """One idle thread's mailbox: ``wake`` is held while it sleeps; a submitter puts the
    work in ``work`` and releases it (``None``: the pool is shutting down)."""

    __slots__ = ("wake", "work")

    def __init__(self) -> None:
        self.wake = threading.Lock()
        self.wake.acquire()
        self.work: _Work | None = None


def _run_into(future: Future, fn: Callable[..., Any], args: tuple[Any, ...]) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args)
    except BaseException as exc:  # noqa: BLE001 - the caller's to handle
        future.set_exception(exc)
    else:
        future.set_result(result)


class WorkerPool:
    def __init__(self, max_workers: int, *, min_workers: int = 2, idle_s: float = 10.0,
                 name: str = "pgbarrier-worker") -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self.min_workers = min(min_workers, max_workers)
        self.idle_s = idle_s
        self._name = name
        self._lock = threading.Lock()
        self._went_idle = threading.Condition(self._lock)
        self._idle_watchers = 0  # threads in wait_idle: only then is going idle announced
        self._idle: list[_Idle] = []  # the thread idle last is at the end
        self._backlog: deque[_Work] = deque()
        self._threads = 0
        self._started = 0
        self._closed = False

    @property
    def threads(self) -> int:
        return self._threads

    def wait_idle(self, n: int, timeout: float) -> bool:
        """Wait until ``n`` threads are idle (True), or ``timeout`` seconds (False)."""
        with self._went_idle:
            self._idle_watchers += 1
            try:
                return self._went_idle.wait_for(lambda: len(self._idle) >= n, timeout)
            finally:
                self._idle_watchers -= 1

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        future: Future = Future()
        self.call(_run_into, future, fn, args)
        return future

    def call(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` on a pool thread; ``fn`` reports its own outcome (an exception
        it lets out is logged, and the thread goes on)."""
        work = (fn, args)
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker pool is shut down")
            if self._idle:
                idle = self._idle.pop()
                idle.work = work
                idle.wake.release()
                return
            if self._threads >= self.max_workers:
                self._backlog.append(work)
                return
            self._threads += 1
            self._started += 1
            n = self._started
        threading.Thread(target=self._work, args=(work,), name=f"{self._name}-{n}",
                         daemon=True).start()

    def _work(self, work: _Work | None) -> None:
        me = _Idle()
        lock = self._lock
        while work is not None:
            fn, args = work
            try:
                fn(*args)
            except BaseException:  # noqa: BLE001 - a call() that did not report its own
                log.exception("unhandled error in %s", threading.current_thread().name)
            del fn, args
            with lock:
                if self._backlog:
                    work = self._backlog.popleft()
                    continue
                if self._closed:
                    break
                me.work = None
                self._idle.append(me)
                if self._idle_watchers:
                    self._went_idle.notify_all()
            work = self._sleep(me)
        with lock:
            self._threads -= 1

    def _sleep(self, me: _Idle) -> _Work | None:
        """Wait for work handed to ``me``; ``None`` to end (idle too long, or shutdown)."""
        while not me.wake.acquire(timeout=self.idle_s):
            with self._lock:
                if me not in self._idle:
                    break  # a submit took ``me`` just now: its work is on the way
                if self._threads > self.min_workers:
                    self._idle.remove(me)
                    return None
        else:
            return me.work
        me.wake.acquire()
        return me.work

    def shutdown(self) -> None:
        """Threads end once the work queued before this is done (they are daemons)."""
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for t in idle:
            t.work = None
            t.wake.release()
