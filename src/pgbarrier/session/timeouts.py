"""Deadlines that fire a callback: ``statement_timeout`` enforced by pgbarrier itself.

Rules this module keeps:

* One daemon thread for the whole process sleeps until the earliest deadline of
  a heap (no thread per statement or per connection).
* :meth:`Timers.arm` returns a :class:`Timer`; :meth:`Timer.disarm` guarantees that,
  once it returns, the callback has either already run to its end or will never
  run: a statement that ended is never interrupted by its own late deadline (and
  the interrupt cannot land on the session's next statement).
* Callbacks run on the timer thread and must be quick (they request a cancel); one that
  fails is logged and the thread goes on. A deadline however far (2^31 ms) is waited for
  in steps of at most an hour, within what the platform's waits accept.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable


class Timer:
    __slots__ = ("_lock", "_callback", "_owner", "deadline")

    def __init__(self, deadline: float, callback: Callable[[], None], owner: Timers) -> None:
        self._lock = threading.Lock()
        self._callback: Callable[[], None] | None = callback
        self._owner = owner
        self.deadline = deadline

    def fire(self) -> None:
        with self._lock:
            callback, self._callback = self._callback, None
            if callback is not None:
                callback()

    def disarm(self) -> None:
        """After this returns the callback is done or will never run."""
        with self._lock:
            if self._callback is None:
                return
            self._callback = None
        self._owner._disarmed()

    @property
    def armed(self) -> bool:
        return self._callback is not None


class Timers:
    def __init__(self) -> None:
        self._heap: list[tuple[float, int, Timer]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._dead = 0  # disarmed timers still in the heap

    def _disarmed(self) -> None:
        with self._cond:
            self._dead += 1
            if self._dead > 1024 and self._dead * 2 > len(self._heap):
                # many short statements each left a disarmed deadline: compact the heap
                self._heap = [e for e in self._heap if e[2].armed]
                heapq.heapify(self._heap)
                self._dead = 0

    def arm(self, delay_s: float, callback: Callable[[], None]) -> Timer:
        timer = Timer(time.monotonic() + delay_s, callback, self)
        with self._cond:
            heapq.heappush(self._heap, (timer.deadline, next(self._seq), timer))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="pgbarrier-timers",
                                                daemon=True)
                self._thread.start()
            if self._heap[0][2] is timer:
                self._cond.notify()
        return timer

    def _loop(self) -> None:
        while True:
            with self._cond:
                while True:
                    # drop disarmed timers at the top so an idle heap does not grow
                    while self._heap and not self._heap[0][2].armed:
                        heapq.heappop(self._heap)
                        self._dead = max(0, self._dead - 1)
                    if not self._heap:
                        self._cond.wait()
                        continue
                    wait = self._heap[0][0] - time.monotonic()
                    if wait <= 0:
                        _, _, timer = heapq.heappop(self._heap)
                        break
                    self._cond.wait(min(wait, _MAX_WAIT_S))  # the platform's limit is lower
            try:
                timer.fire()
            except Exception:  # noqa: BLE001 - one callback must not stop every deadline
                log.exception("a statement deadline's callback failed")


#: the longest single wait of the timer thread (a far deadline is waited for in steps)
_MAX_WAIT_S = 3600.0
log = logging.getLogger(__name__)

#: the process's timer thread
TIMERS = Timers()
