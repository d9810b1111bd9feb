"""A test hook: pause the server at a named point so a test can ``kill -9`` it there.

Rules this module keeps:

* Inert unless the environment variable ``PGBARRIER_TEST_PAUSE_AT`` is set
  (read once, at import). Its value is a comma-separated list of point names,
  e.g. ``drop:after-intent``.
* Reaching a listed point logs ``test pause at <name>`` (WARNING, to the
  server's log) and blocks that thread for good; the test waits for the log
  line, never a sleep, then kills the process. Points named in the code:
  ``create:after-intent``, ``create:after-backend`` (batch-refresh views),
  ``create-streaming:after-intent``, ``create-streaming:after-backend``,
  ``drop:after-intent``, ``drop:after-backend``, ``drop-streaming:after-backend``,
  ``drop-database:after-intent``, ``drop-database:after-backend``.
"""

from __future__ import annotations

import logging
import os
import threading

log = logging.getLogger(__name__)

_POINTS = frozenset(p.strip() for p in os.environ.get("PGBARRIER_TEST_PAUSE_AT", "").split(",")
                    if p.strip())


def reached(name: str) -> None:
    """Block here for good when ``name`` is listed in ``PGBARRIER_TEST_PAUSE_AT``."""
    if name in _POINTS:
        log.warning("test pause at %s", name)
        threading.Event().wait()
