"""Answers of pure text tests kept per statement text: a statement run again pays a lookup.

The backends' cheap gates (does a text mention the PostgreSQL catalog, may DuckDB read it
differently, does it read ``FROM`` or call a sequence function...) are substring tests and
regular expressions over the whole text, and one statement meets several of them, some
more than once (``SELECT 1`` on DuckDB: seven). A client's statements repeat (a pool's
``SELECT 1``, an application's handful of texts), so each gate wrapped in
:func:`by_text` answers a text it has seen from a dictionary. Rules this module keeps:

* Only functions of the text alone: nothing a session, a setting or the catalog
  decides may be kept here (there is nothing to invalidate: the same text always gets
  the same answer).
* Bounded: at most :data:`TEXTS` texts per function (least recently used dropped,
  ``functools.lru_cache``), and texts longer than :data:`LONGEST` are tested every
  time, not kept (a bulk ``INSERT`` of megabytes is neither held nor hashed twice).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache, wraps
from typing import TypeVar

#: texts kept per function
TEXTS = 1024
#: the longest text kept
LONGEST = 4096

T = TypeVar("T")


def by_text(fn: Callable[[str], T]) -> Callable[[str], T]:
    """``fn`` (a pure function of one statement text) with its answers kept per text."""
    kept = lru_cache(maxsize=TEXTS)(fn)

    @wraps(fn)
    def answer(sql: str) -> T:
        return kept(sql) if len(sql) <= LONGEST else fn(sql)

    answer.cache_clear = kept.cache_clear  # type: ignore[attr-defined]
    answer.cache_info = kept.cache_info  # type: ignore[attr-defined]
    answer.uncached = fn  # type: ignore[attr-defined]
    return answer
