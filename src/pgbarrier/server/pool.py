"""Threads for blocking work, only as many as there is work.

Rules this module keeps:

* :meth:`WorkerPool.submit` returns a :class:`concurrent.futures.Future`; the callable's
  exception, BaseExceptions included, is the future's.
* A thread is started only when no thread is idle, up to ``max_workers``; past that, work
  waits in arrival order. A thread idle for ``idle_s`` ends, down to ``min_workers``. So
  idle connections cost no thread: threads follow the statements running at once.
* The bound is the caller's choice: pgbarrier's server uses the most connections it
  serves at once, since each has at most one piece of work in flight. A smaller bound
  could deadlock (a statement waiting for RESUME, or for a lock, holds its thread while
  the statement that would release it waits for one).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

log = logging.getLogger(__name__)

_Item = tuple[Future, Callable[..., Any], tuple[Any, ...]]


class WorkerPool:
    def __init__(self, max_workers: int, *, min_workers: int = 2, idle_s: float = 10.0,
                 name: str = "pgbarrier-worker") -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self.min_workers = min(min_workers, max_workers)
        self.idle_s = idle_s
        self._name = name
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        #: one token per idle thread (taken by a submit that it will serve)
        self._idle = threading.Semaphore(0)
        self._lock = threading.Lock()
        self._threads = 0
        self._started = 0
        self._closed = False

    @property
    def threads(self) -> int:
        return self._threads

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        future: Future = Future()
        if self._closed:
            raise RuntimeError("the worker pool is shut down")
        self._queue.put((future, fn, args))
        if self._idle.acquire(blocking=False):
            return future
        with self._lock:
            if self._threads >= self.max_workers:
                return future
            self._threads += 1
            self._started += 1
            n = self._started
        threading.Thread(target=self._work, name=f"{self._name}-{n}", daemon=True).start()
        return future

    def _work(self) -> None:
        get = self._queue.get
        while True:
            try:
                item = get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._threads <= self.min_workers:
                        continue
                    if self._idle.acquire(blocking=False):
                        self._threads -= 1
                        return
                continue  # a submit took this thread's token: its work is on the way
            if item is None:
                with self._lock:
                    self._threads -= 1
                return
            future, fn, args = item
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args)
                except BaseException as exc:  # noqa: BLE001 - the caller's to handle
                    future.set_exception(exc)
                else:
                    future.set_result(result)
                del future, fn, args, item
            self._idle.release()

    def shutdown(self) -> None:
        """Threads end once the work queued before this is done (they are daemons)."""
        self._closed = True
        with self._lock:
            n = self._threads
        for _ in range(n):
            self._queue.put(None)
