"""pgbarrier's durable meta state; see :mod:`pgbarrier.meta.store`.

Rules this module keeps:

* :func:`open_meta_store` is the one way in: PostgreSQL when a URL is given,
  else SQLite in the data dir.
* A store that cannot be opened (server unreachable, data dir not writable, a
  schema newer than this pgbarrier) raises :class:`MetaStoreError` whose text is
  one line, ``cannot open meta store <where>: <reason>``, with any password in
  ``<where>`` masked; the CLI prints it and exits 2, with no traceback.
* Opening a PostgreSQL store gives up after ``CONNECT_TIMEOUT_S`` unless the URL
  sets its own ``connect_timeout``.
* Records in, records out: the package imports no other pgbarrier package but
  :mod:`pgbarrier.barrier` (epochs, pause states, snapshots). Recovery returns
  what it restored as records (:mod:`pgbarrier.meta.recovery`); the caller loads
  them into the barrier manager and the jobs registry.
"""

from __future__ import annotations

import os
import re
import sqlite3
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pgbarrier.meta.sqlbase import MetaStoreError
from pgbarrier.meta.store import MetaStore

CONNECT_TIMEOUT_S = 10

__all__ = ["MetaStore", "MetaStoreError", "open_meta_store", "redact"]


def open_meta_store(data_dir: str, url: str | None = None, *, migrate: bool = True) -> MetaStore:
    """PostgreSQL when ``url`` is given, else SQLite in ``data_dir``; see the module rules.
    ``migrate=False``: a PostgreSQL store's schema is only checked (its leader migrates)."""
    if url:
        import psycopg

        from pgbarrier.meta.postgres import PostgresMetaStore

        where, errors = redact(url), (psycopg.Error, OSError)
        opener = lambda: PostgresMetaStore(url, connect_timeout=CONNECT_TIMEOUT_S,  # noqa: E731
                                           migrate=migrate)
    else:
        from pgbarrier.meta.sqlite import FILE_NAME, SqliteMetaStore

        where = data_dir if data_dir == ":memory:" else os.path.join(data_dir, FILE_NAME)
        errors = (sqlite3.Error, OSError)
        opener = lambda: SqliteMetaStore(data_dir)  # noqa: E731
    try:
        return opener()
    except MetaStoreError as exc:
        raise MetaStoreError(f"cannot open meta store {where}: {exc}") from exc
    except errors as exc:
        raise MetaStoreError(f"cannot open meta store {where}: {_one_line(exc)}") from exc


def redact(url: str) -> str:
    """``url`` with its password (in the authority, a query parameter or a
    ``password=`` keyword of a libpq key/value string) replaced by ``***``."""
    if "://" not in url:
        return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", url)
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostinfo = netloc.rpartition("@")
        user, sep, _password = userinfo.partition(":")
        netloc = f"{user}{':***' if sep else ''}@{hostinfo}"
    query = parts.query
    if query:
        pairs = [(k, "***" if k.lower() == "password" else v)
                 for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text
