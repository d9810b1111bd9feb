"""The SQLite meta store refusing a write (issue 28, item 2): a real SQLite file whose
size is capped with ``PRAGMA max_page_count`` answers SQLITE_FULL, as a full disk does.
The write fails with StoreFailure 53100 (PostgreSQL's disk_full, HINT "Check free disk
space."), nothing of it is kept, everything committed before is, and the store works again
once there is room."""

from __future__ import annotations

from pgbarrier.errors import PgError
from pgbarrier.meta.sqlbase import StoreFailure
from pgbarrier.meta.sqlite import SqliteMetaStore
from pgbarrier.meta.store import DatabaseRecord


def test_a_full_disk_refuses_the_write_with_53100_and_keeps_what_was_committed(tmp_path):
    store = SqliteMetaStore(str(tmp_path))
    try:
        store.put_database(DatabaseRecord("kept", paused=True, paused_by="alice"))
        pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
        store._conn.execute(f"PRAGMA max_page_count = {pages}")
        failure = None
        for i in range(200):  # until a write needs a page the file may not have
            try:
                store.put_database(DatabaseRecord(f"db_{i:03d}_" + "x" * 2000))
            except PgError as exc:
                failure = exc
                break
        assert isinstance(failure, StoreFailure), failure
        assert failure.sqlstate == "53100" and failure.severity == "ERROR"
        assert failure.message.startswith(f'could not write to the meta store "{store.path}": ')
        assert failure.hint == "Check free disk space."
        names = [r.name for r in store.load_databases()]
        assert "kept" in names and f"db_{i:03d}_" + "x" * 2000 not in names
        store._conn.execute("PRAGMA max_page_count = 1073741823")
        store.put_database(DatabaseRecord("after", paused=False))
        records = {r.name: r for r in store.load_databases()}
        assert records["kept"].paused and records["kept"].paused_by == "alice"
        assert "after" in records
    finally:
        store.close()
