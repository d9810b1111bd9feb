"""The default meta store: SQLite in the data dir (``meta.sqlite``).

Rules: a ``:memory:`` data dir gives an in-memory database (nothing survives,
as asked); otherwise WAL with ``synchronous=FULL``, so a committed write
survives ``kill -9`` and power loss. Uses the standard library's sqlite3.

Single-process: SQLite has no session to elect a leader with (docs/SCALE_OUT.md), so the
store holds an exclusive POSIX lock (``fcntl.lockf``) on ``meta.sqlite.lock`` in the data
dir while it is open. A second process opening the same data dir is refused
(:class:`~pgbarrier.meta.sqlbase.MetaStoreError`, which the CLI turns into exit 2 and one
line) instead of both writing. The lock is the process's, counted per store opened (a POSIX
lock is per process, and closing any descriptor of the file would drop it): opening the
store again in the same process, as a restart in tests does, is allowed.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading

from pgbarrier.meta.sqlbase import MetaStoreError, SqlMetaStore

FILE_NAME = "meta.sqlite"
LOCK_NAME = "meta.sqlite.lock"

_held_lock = threading.Lock()
#: lock file path -> [descriptor, stores open]
_held: dict[str, list[int]] = {}


def _lock_data_dir(data_dir: str) -> str:
    path = os.path.realpath(os.path.join(data_dir, LOCK_NAME))
    with _held_lock:
        if path in _held:
            _held[path][1] += 1
            return path
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(fd, 64).decode(errors="replace").strip()
            os.close(fd)
            raise MetaStoreError(
                f"data dir {data_dir} is in use by another pgbarrier process"
                f"{f' (pid {holder})' if holder.isdigit() else ''}; the SQLite meta store "
                "is single-process (several processes need --meta-store postgresql://...)"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        _held[path] = [fd, 1]
        return path


def _unlock(path: str) -> None:
    with _held_lock:
        entry = _held.get(path)
        if entry is None:
            return
        entry[1] -= 1
        if entry[1] == 0:
            del _held[path]
            os.close(entry[0])  # releases the lock


class SqliteMetaStore(SqlMetaStore):
    paramstyle = "?"
    autocommits = True

    def _begin(self, cur: sqlite3.Cursor) -> None:
        cur.execute("BEGIN")

    def __init__(self, data_dir: str) -> None:
        self._lock_path: str | None = None
        if data_dir == ":memory:":
            path = ":memory:"
        else:
            os.makedirs(data_dir, exist_ok=True)
            path = os.path.join(data_dir, FILE_NAME)
            self._lock_path = _lock_data_dir(data_dir)
        try:
            # transactions are opened explicitly (``_begin``); a single write alone is its
            # own transaction (``SqlMetaStore._commit_alone``)
            conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        except BaseException:
            self._release()
            raise
        try:
            if path != ":memory:":
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=FULL")
            super().__init__(conn)
            self.migrate()
        except BaseException:
            conn.close()
            self._release()
            raise

    def _release(self) -> None:
        if self._lock_path is not None:
            _unlock(self._lock_path)
            self._lock_path = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._release()
