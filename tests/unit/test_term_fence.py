"""Fencing by term on the PostgreSQL meta store (meta/term.py), two stores on one schema.

Two ``PostgresMetaStore`` objects stand for an old and a new leader; the row lock ordering
is observed in ``pg_stat_activity`` (the new leader's UPDATE waiting on a lock), not timed.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from conftest import require_postgres
from pgbarrier.leadership import NotLeader
from pgbarrier.meta.postgres import PostgresMetaStore
from pgbarrier.meta.store import DatabaseRecord
from pgbarrier.meta.term import FencedWrite, TermFence, read_leader, take_office


@pytest.fixture
def stores() -> Iterator[tuple[PostgresMetaStore, PostgresMetaStore, str]]:
    dsn = require_postgres()
    schema = f"pgb_fence_{uuid.uuid4().hex[:10]}"
    old, new = PostgresMetaStore(dsn, schema), PostgresMetaStore(dsn, schema)
    yield old, new, dsn
    old.close()
    new.close()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _fence(store: PostgresMetaStore, told: list[tuple[int, str]], holder: str) -> TermFence:
    fence = TermFence(lambda term, reason: told.append((term, reason)), error=NotLeader)
    store.set_fence(fence)
    term, _since = take_office(store, holder)
    fence.hold(term)
    return fence


def test_a_write_after_a_newer_term_fails_and_is_not_recorded(stores) -> None:
    old, new, _ = stores
    told_old: list[tuple[int, str]] = []
    _fence(old, told_old, "old")
    old.put_database(DatabaseRecord("a"))
    _fence(new, [], "new")
    assert read_leader(new)[:2] == (2, "new")

    with pytest.raises(NotLeader) as info:
        old.put_database(DatabaseRecord("b"))
    assert info.value.sqlstate == "25006"
    assert told_old == [(1, "term 1 was superseded by term 2")]
    # from now on the old store fails every write without asking, and says so only once
    with pytest.raises(FencedWrite):
        old.delete_database("a")
    assert len(told_old) == 1
    new.put_database(DatabaseRecord("c"))
    assert [d.name for d in new.load_databases()] == ["a", "c"]


def test_writes_batched_together_all_fail(stores) -> None:
    old, new, _ = stores
    _fence(old, [], "old")
    _fence(new, [], "new")
    errors: list[BaseException | None] = []

    def write(i: int) -> None:
        try:
            old.put_database(DatabaseRecord(f"d{i}"))
            errors.append(None)
        except BaseException as exc:  # noqa: BLE001 - collected
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(errors) == 8 and all(isinstance(e, NotLeader) for e in errors), errors
    assert new.load_databases() == []


def test_an_old_leaders_write_holding_the_row_commits_before_the_new_term(stores) -> None:
    old, new, dsn = stores
    fence = _fence(old, [], "old")
    taken: list[tuple[int, str]] = []
    with old._tx() as cur:
        fence.check(cur, old._sql)  # the row is held FOR SHARE until this commits
        cur.execute(old._sql("INSERT INTO {p}databases (name, paused) VALUES (?, ?)"),
                    ("late", False))
        taker = threading.Thread(target=lambda: taken.append(take_office(new, "new")))
        taker.start()
        deadline = time.monotonic() + 30
        with psycopg.connect(dsn, autocommit=True) as adm:
            while not adm.execute("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = "
                                  "'Lock' AND query LIKE 'UPDATE %%leader SET term%%'").fetchone():
                assert time.monotonic() < deadline, "take_office never waited on the row"
                assert taker.is_alive() and not taken
        assert not taken
    taker.join(30)
    assert taken and taken[0][0] == 2
    assert [d.name for d in new.load_databases()] == ["late"]
