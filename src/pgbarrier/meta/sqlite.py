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

A write the file system refuses fails its caller with
:class:`~pgbarrier.meta.sqlbase.StoreFailure`: SQLITE_FULL (disk full) is 53100
``could not write to the meta store "<path>": …`` with PostgreSQL's HINT ``Check free disk
space.``, an I/O error, a read-only file or one that cannot be opened 58030; SQLite rolls
the transaction back, so nothing half-written stays, and the next write tries again.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading

from pgbarrier.meta.sqlbase import MetaStoreError, SqlMetaStore, StoreFailure

FILE_NAME = "meta.sqlite"
#: SQLite's primary result codes (the low byte of an extended one) that are the file
#: system's refusal, with PostgreSQL's SQLSTATE for it
_FAILURES = {13: "53100",  # SQLITE_FULL
             10: "58030",  # SQLITE_IOERR
             8: "58030",   # SQLITE_READONLY
             14: "58030"}  # SQLITE_CANTOPEN
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
        self.path = path
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

    def _failure(self, exc: BaseException) -> StoreFailure | None:
        code = getattr(exc, "sqlite_errorcode", None)
        if not isinstance(exc, sqlite3.Error) or code is None:
            return None
        state = _FAILURES.get(code & 0xFF)
        if state is None:
            return None
        return StoreFailure(f'could not write to the meta store "{self.path}": {exc}',
                            sqlstate=state,
                            hint="Check free disk space." if state == "53100" else None)

    def _release(self) -> None:
        if self._lock_path is not None:
            _unlock(self._lock_path)
            self._lock_path = None

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._release()
