"""One routing decision per statement text: is it pgbarrier's, and which part of it.

:func:`route` is the only place that decides; the relay (what goes upstream as bytes), the
executor (control plane, own settings, catalog rewrite, backend) and the session read its
answer instead of looking at the words again. Rules it keeps:

* A :class:`Route`'s ``kind`` is, for one statement, in this order:

  - ``CONTROL``: it may be a pgbarrier control statement
    (:func:`~pgbarrier.sql.controls.is_control`; the parser then has the last word, and
    what looks like ours but does not parse is a 42601, never passed through);
  - ``SETTING``: a ``SET``/``SHOW``/``RESET`` of one of pgbarrier's own settings
    (:func:`~pgbarrier.sql.setting.own_setting`), read once and kept in ``setting``;
  - ``CATALOG``: it mentions ``rw_catalog``
    (:func:`~pgbarrier.sql.classify.mentions_rw_catalog`; the executor rewrites its
    catalog reads);
  - ``PLAIN``: everything else, which reaches the backend (or the upstream) unchanged.

* A text holding several statements (a simple Query) is ``PLAIN`` only when each of its
  statements is and the text does not mention ``rw_catalog``; otherwise its kind is the
  first statement's that is not ``PLAIN`` (``CATALOG`` when only the mention is left).
  Its ``setting`` is None: each statement is routed again on its own when it runs.
  A text whose only ``;`` ends it is routed as the statement before it.
* ``copy_from_stdin``: the text starts with ``COPY`` and mentions ``STDIN`` (the extended
  protocol cannot relay it: its CopyInResponse needs the full path, which refuses it).
* ``relayable`` (kind ``PLAIN``) is what the byte relay passes upstream in a Query;
  ``relayable_parse`` (``relayable`` and not ``copy_from_stdin``) in a Parse.
* No sqlglot: the cheap checks of :mod:`~pgbarrier.sql.classify` decide, and ordinary SQL
  is settled by its first two characters plus a substring test. Before them, substring
  tests of the upper-cased text (:data:`_MAY_BE_OURS`) settle every text that does not
  contain a word that may start a statement of pgbarrier's (a registered control
  statement's first word, :data:`~pgbarrier.sql.controls.FIRST_WORDS`: ``ALTER``,
  ``CREATE``, ``DROP``, ``FLUSH``, ``REFRESH``, ``SHOW``; ``SET``, ``RESET``), nor ``COPY``, nor
  ``rw_catalog``: such a text is ``PLAIN`` without being split (a new text per
  statement, as clients that inline literals send, costs that much). The tests err only
  towards the full checks (``offset`` contains ``SET``). Routes of texts up to
  :data:`CACHED_TEXT` characters are remembered (:data:`CACHE_SIZE` of them, least
  recently used forgotten first): clients send the same texts again and again. A route is
  a frozen value; ``PLAIN`` without flags is one shared instance.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache

from pgbarrier.sql.classify import leading_words, mentions_rw_catalog, split_statements
from pgbarrier.sql.controls import FIRST_WORDS, is_control
from pgbarrier.sql.setting import SettingStatement, own_setting

__all__ = ["CACHED_TEXT", "CACHE_SIZE", "MAY_BE_OURS_ASCII", "Kind", "Route", "route"]

#: statement texts up to this length have their routes cached (bounded memory)
CACHED_TEXT = 2048
#: routes remembered
CACHE_SIZE = 1024


class Kind(enum.Enum):
    PLAIN = "plain"
    CONTROL = "control"
    SETTING = "setting"
    CATALOG = "catalog"


@dataclass(frozen=True, slots=True)
class Route:
    """Where one statement text goes (see the module rules)."""

    kind: Kind
    #: the own setting a one-statement ``SETTING`` text reads or changes
    setting: SettingStatement | None = None
    copy_from_stdin: bool = False
    #: kind is PLAIN: a Query holding it is relayed upstream as bytes
    relayable: bool = False
    #: relayable and not COPY FROM STDIN: a Parse of it is relayed upstream as bytes
    relayable_parse: bool = False


PLAIN = Route(Kind.PLAIN, relayable=True, relayable_parse=True)
_CONTROL = Route(Kind.CONTROL)
_CATALOG = Route(Kind.CATALOG)
_SETTING_HEADS = frozenset({"SET", "SHO", "RES"})


def route(text: str) -> Route:
    """The routing decision for ``text`` (one statement, or a simple Query's string)."""
    return _cached(text) if len(text) <= CACHED_TEXT else _route(text)


@lru_cache(maxsize=CACHE_SIZE)
def _cached(text: str) -> Route:
    return _route(text)


def _one(text: str) -> Route | None:
    """The route of one statement that is pgbarrier's (control or own setting), else None."""
    if is_control(text):
        return _CONTROL
    head = text.lstrip()[:3].upper()
    if head in _SETTING_HEADS or head[:1] in ("-", "/"):
        words = leading_words(text, 1)
        setting = own_setting(text, words[0]) if words else None
        if setting is not None:
            return Route(Kind.SETTING, setting)
    return None


#: words that may start a statement of pgbarrier's (a control statement's or an own
#: setting's), COPY, and rw_catalog, upper-cased: a text containing none of them is PLAIN
#: (``SET`` covers ``RESET``)
_MAY_BE_OURS = tuple(dict.fromkeys(("SET", "SHOW", *FIRST_WORDS, "COPY", "RW_CATALOG")))
#: the same words as ASCII bytes: an ASCII text's bytes that contain none of them once
#: upper-cased (``bytes.upper`` is ``str.upper`` on ASCII) are PLAIN, relayed, whatever the
#: client encoding (every one PostgreSQL accepts from clients reads ASCII as ASCII); the
#: byte relay tests a text so before decoding it (:mod:`pgbarrier.relay.state`)
MAY_BE_OURS_ASCII = tuple(word.encode("ascii") for word in _MAY_BE_OURS)


def _may_be_ours(text: str) -> bool:
    upper = text.upper()
    for word in _MAY_BE_OURS:
        if word in upper:
            return True
    return False


def _route(text: str) -> Route:
    if not _may_be_ours(text):
        return PLAIN
    if ";" in text:
        pieces = split_statements(text)
        if len(pieces) == 1:
            ours = _one(pieces[0].text)
        else:
            ours = None
            for piece in pieces:
                ours = _one(piece.text)
                if ours is not None:
                    if ours.setting is not None:
                        ours = Route(Kind.SETTING)
                    break
    else:
        ours = _one(text)
    if ours is not None:
        return ours
    if mentions_rw_catalog(text):
        return _CATALOG
    if text.lstrip()[:4].upper() == "COPY" and "STDIN" in text.upper():
        return Route(Kind.PLAIN, copy_from_stdin=True, relayable=True)
    return PLAIN
