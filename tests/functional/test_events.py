"""LISTEN rw_refresh / rw_barrier (issue 29, item 8), and LISTEN/NOTIFY themselves, on both
data backends, through real clients (psycopg's ``notifies()``, asyncpg's ``add_listener``).

The event tests run the server in-process with a manual clock and an hour-long barrier
interval (as test_view_suspend.py): time moves with ``clock.advance`` and FLUSH
checkpoints carry it. Every wait has a deadline. An absence is shown with a sentinel:
events go out in the order they happened (one queue, one carrier), so once a later event
has arrived, an earlier one that was going to arrive has too; and a round trip of the
listening session (``SELECT 1``) brings whatever was sent to it before its ReadyForQuery.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import shutil
import uuid
from collections import deque
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import errors as pgerr

from conftest import missing_client_tool
from test_batch_refresh import Harness, in_process

DEADLINE_S = 30


@pytest.fixture(scope="module", params=["duckdb", "postgres"])
def h(request) -> Iterator[Harness]:
    with in_process(request.param) as harness:
        yield harness


def _n(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:6]}"


class Listener:
    """A psycopg session LISTENing; what ``notifies()`` yields beyond what was asked for
    (several may come in one packet) is kept for the next ask."""

    def __init__(self, conn: psycopg.Connection, *channels: str) -> None:
        self.conn = conn
        self.kept: deque[tuple[str, dict | str, int]] = deque()
        for channel in channels:
            conn.execute(f"LISTEN {channel}")

    def next(self, n: int = 1) -> list[tuple[str, dict | str, int]]:
        """The next ``n`` notifications as (channel, payload, pid); JSON payloads decoded."""
        if len(self.kept) < n:
            for note in self.conn.notifies(timeout=DEADLINE_S, stop_after=n - len(self.kept)):
                try:
                    payload = json.loads(note.payload)
                except ValueError:
                    payload = note.payload
                self.kept.append((note.channel, payload, note.pid))
        assert len(self.kept) >= n, f"wanted {n} notifications, got {list(self.kept)}"
        return [self.kept.popleft() for _ in range(n)]

    def payloads(self, n: int = 1) -> list:
        return [p for _c, p, _pid in self.next(n)]

    def nothing_pending(self) -> None:
        """A round trip, then nothing may have arrived."""
        self.conn.execute("SELECT 1")
        got = list(self.kept) + [(x.channel, x.payload) for x in self.conn.notifies(timeout=0)]
        assert got == [], f"unexpected notifications {got}"


def _history(c, view: str) -> list[dict]:
    cur = c.execute("SELECT * FROM rw_catalog.rw_refresh_history "
                    f"WHERE job = '{view}' ORDER BY run_id")
    names = [d.name for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def _expected(h: Harness, row: dict) -> dict:
    """The rw_refresh payload of one history row, as the history tells it."""
    duration = row.get("duration_ms")
    if duration is None:
        duration = round((row["finished_at"] - row["started_at"]).total_seconds() * 1000, 3)
    return {"database": h.database, "view": row["job"], "run_id": row["run_id"],
            "trigger": row["trigger"], "status": row["status"],
            "sqlstate": row.get("sqlstate"), "rows": row["rows"],
            "duration_ms": float(duration), "epoch": row["target_epoch"]}


def test_refresh_events_for_create_manual_scheduled_and_failed_runs(h):
    t, v = _n("t"), _n("v")
    with h.connect() as lc, h.connect() as c:
        listener = Listener(lc, "rw_refresh")
        c.execute(f"CREATE TABLE {t} (id INT, s TEXT)")
        c.execute(f"INSERT INTO {t} VALUES (1, '1'), (2, '2')")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH EVERY 1 SECOND "
                  f"AS SELECT id, CAST(s AS INTEGER) AS n FROM {t}")
        (create,) = listener.payloads()
        c.execute(f"INSERT INTO {t} VALUES (3, '3')")
        c.execute(f"REFRESH MATERIALIZED VIEW {v}")
        (manual,) = listener.payloads()
        h.clock.advance(5000)
        h.settle(c)
        (scheduled,) = listener.payloads()
        assert [create["trigger"], manual["trigger"], scheduled["trigger"]] == \
            ["create", "manual", "schedule"]
        assert [create["rows"], manual["rows"], scheduled["rows"]] == [2, 3, 3]
        history = _history(c, v)
        assert [create, manual, scheduled] == [_expected(h, r) for r in history]
        assert all(p["status"] == "succeeded" and p["sqlstate"] is None
                   for p in (create, manual, scheduled))
        assert create["run_id"] < manual["run_id"] < scheduled["run_id"]
        assert create["epoch"] < manual["epoch"] < scheduled["epoch"]
        # a run that fails is an event too, with its status
        c.execute(f"INSERT INTO {t} VALUES (4, 'four')")
        with pytest.raises(psycopg.Error):
            c.execute(f"REFRESH MATERIALIZED VIEW {v}")
        (failed,) = listener.payloads()
        assert failed["status"] == "failed" and failed["trigger"] == "manual"
        assert failed == _expected(h, _history(c, v)[-1])


def test_barrier_events_for_pause_resume_suspend_and_view_resume(h):
    db = h.database
    t, v = _n("t"), _n("v")
    with h.connect() as lc, h.connect() as c:
        listener = Listener(lc, "rw_barrier")
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
        c.execute(f"ALTER DATABASE {db} PAUSE FOR '10 minutes' REASON 'nightly load'")
        (pause,) = listener.payloads()
        resumes_at = c.execute("SELECT resumes_at FROM rw_catalog.rw_databases "
                               f"WHERE name = '{db}'").fetchone()[0]
        assert pause == {"database": db, "view": None, "event": "pause", "by": "root",
                         "reason": "nightly load", "resumes_at": pause["resumes_at"]}
        assert dt.datetime.fromisoformat(pause["resumes_at"]) == resumes_at
        c.execute(f"ALTER DATABASE {db} PAUSE REASON 'longer'")  # replaces reason, deadline
        (replaced,) = listener.payloads()
        assert (replaced["event"], replaced["reason"], replaced["resumes_at"]) == \
            ("pause", "longer", None)
        c.execute(f"ALTER DATABASE {db} RESUME")
        assert listener.payloads() == [{"database": db, "view": None, "event": "resume",
                                        "by": "root", "reason": None, "resumes_at": None}]
        c.execute(f"ALTER DATABASE {db} RESUME")  # nothing changes: no event
        c.execute(f"ALTER MATERIALIZED VIEW {v} SUSPEND REASON 'upstream broken'")
        c.execute(f"ALTER MATERIALIZED VIEW {v} SUSPEND REASON 'upstream broken'")  # no-op
        c.execute(f"ALTER MATERIALIZED VIEW {v} RESUME")
        assert listener.payloads(2) == [
            {"database": db, "view": v, "event": "suspend", "by": "root",
             "reason": "upstream broken", "resumes_at": None},
            {"database": db, "view": v, "event": "resume", "by": "root", "reason": None,
             "resumes_at": None}]
        # a timed pause that ends by itself
        c.execute(f"ALTER DATABASE {db} PAUSE FOR '1 second'")
        assert listener.payloads()[0]["event"] == "pause"
        h.clock.advance(2000)
        h.settle(c)
        (timed,) = listener.payloads()
        assert timed == {"database": db, "view": None, "event": "resume",
                         "by": "pgbarrier (timed pause)", "reason": None, "resumes_at": None}
        listener.nothing_pending()


def test_unlisten_and_unlisten_all_stop_the_events(h):
    db = h.database
    t, v = _n("t"), _n("v")
    with h.connect() as lc, h.connect() as witness_conn, h.connect() as c:
        listener = Listener(lc, "rw_refresh", "rw_barrier")
        witness = Listener(witness_conn, "rw_refresh", "rw_barrier")
        c.execute(f"CREATE TABLE {t} (id INT)")
        c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
        assert [ch for ch, _p, _pid in listener.next()] == ["rw_refresh"]
        witness.next()
        assert lc.execute("UNLISTEN rw_refresh").statusmessage == "UNLISTEN"
        c.execute(f"REFRESH MATERIALIZED VIEW {v}")
        c.execute(f"ALTER DATABASE {db} PAUSE")
        assert [ch for ch, _p, _pid in witness.next(2)] == ["rw_refresh", "rw_barrier"]
        (only,) = listener.next()
        assert only[0] == "rw_barrier", "the refresh before it was not delivered"
        assert lc.execute("UNLISTEN *").statusmessage == "UNLISTEN"
        c.execute(f"ALTER DATABASE {db} RESUME")
        assert witness.payloads()[0]["event"] == "resume"
        listener.nothing_pending()


def test_events_stay_in_their_database(h):
    db, other = h.database, _n("pgb_other")
    with h.connect() as c:
        c.execute(f"CREATE DATABASE {other}")
    try:
        with h.connect() as lc, psycopg.connect(host="127.0.0.1", port=h.port, user="root",
                                                dbname=other, autocommit=True) as oc:
            mine = Listener(lc, "rw_barrier")
            theirs = Listener(oc, "rw_barrier")
            with h.connect() as c:
                c.execute(f"ALTER DATABASE {db} PAUSE")
                c.execute(f"ALTER DATABASE {db} RESUME")
                c.execute(f"ALTER DATABASE {other} PAUSE")  # a statement of d, about other
            assert [p["database"] for p in mine.payloads(2)] == [db, db]
            (pause,) = theirs.payloads()
            assert (pause["database"], pause["event"]) == (other, "pause"), \
                "the other database's listener got its own event, and none of d's before it"
            mine.nothing_pending()
            oc.execute(f"ALTER DATABASE {other} RESUME")
            assert theirs.payloads()[0]["event"] == "resume"
    finally:
        with h.connect() as c:
            c.execute(f"DROP DATABASE {other}")


def test_asyncpg_add_listener_receives_events_while_idle(h):
    db = h.database
    t, v = _n("t"), _n("v")

    async def go() -> list[tuple[str, dict]]:
        import asyncpg

        conn = await asyncpg.connect(host="127.0.0.1", port=h.port, user="root", database=db)
        try:
            got: asyncio.Queue = asyncio.Queue()
            await conn.add_listener("rw_refresh", lambda _c, _pid, ch, p: got.put_nowait((ch, p)))
            await conn.add_listener("rw_barrier", lambda _c, _pid, ch, p: got.put_nowait((ch, p)))

            def work() -> None:  # another client, while asyncpg's connection sits idle
                with h.connect() as c:
                    c.execute(f"CREATE TABLE {t} (id INT)")
                    c.execute(f"CREATE MATERIALIZED VIEW {v} BATCH REFRESH AS SELECT id FROM {t}")
                    c.execute(f"ALTER MATERIALIZED VIEW {v} SUSPEND")

            await asyncio.get_running_loop().run_in_executor(None, work)
            out = []
            for _ in range(2):
                channel, payload = await asyncio.wait_for(got.get(), DEADLINE_S)
                out.append((channel, json.loads(payload)))
            return out
        finally:
            await conn.close()

    (refresh, suspend) = asyncio.run(go())
    assert refresh[0] == "rw_refresh" and refresh[1]["view"] == v
    assert refresh[1]["trigger"] == "create" and refresh[1]["status"] == "succeeded"
    assert suspend == ("rw_barrier", {"database": db, "view": v, "event": "suspend",
                                      "by": "root", "reason": None, "resumes_at": None})


# -- LISTEN / NOTIFY of any channel: PostgreSQL's own upstream, pgbarrier's on DuckDB ----------


def _connect(server) -> psycopg.Connection:
    return psycopg.connect(server.dsn(), autocommit=True)


def test_listen_notify_between_sessions_and_to_itself(backend_server):
    channel = _n("chan")
    with _connect(backend_server) as lc, _connect(backend_server) as tc:
        listener = Listener(lc, channel, "rw_refresh")
        assert tc.execute(f"NOTIFY {channel}, 'hello'").statusmessage == "NOTIFY"
        tc.execute(f"NOTIFY {channel.upper()}")  # folded, as an identifier; empty payload
        talker_pid = tc.execute("SELECT pg_backend_pid()").fetchone()[0]
        assert listener.next(2) == [(channel, "hello", talker_pid), (channel, "", talker_pid)]
        lc.execute(f"NOTIFY {channel}, 'to myself'")
        (own,) = listener.next()
        assert own[1] == "to myself"
        # an ordinary channel beside pgbarrier's: UNLISTEN of one leaves the other
        lc.execute(f'LISTEN "{channel}_Quoted"')
        tc.execute(f"""NOTIFY "{channel}_Quoted", 'it''s quoted'""")
        assert listener.next()[0][:2] == (f"{channel}_Quoted", "it's quoted")
        lc.execute(f"UNLISTEN {channel}")
        tc.execute(f"NOTIFY {channel}, 'not heard'")
        tc.execute(f"""NOTIFY "{channel}_Quoted", 'heard'""")
        assert listener.next()[0][:2] == (f"{channel}_Quoted", "heard")
        lc.execute("UNLISTEN *")
        tc.execute(f"""NOTIFY "{channel}_Quoted", 'not heard either'""")
        listener.nothing_pending()


def test_listen_and_notify_follow_transactions(backend_server):
    channel, other = _n("chan"), _n("chan")
    with _connect(backend_server) as lc, _connect(backend_server) as tc, \
            _connect(backend_server) as wc:
        listener = Listener(lc)
        witness = Listener(wc, channel, other)
        # LISTEN in a block takes effect at commit: a NOTIFY before it is not heard
        lc.execute("BEGIN")
        lc.execute(f"LISTEN {channel}")
        tc.execute(f"NOTIFY {channel}, 'before commit'")
        assert witness.payloads() == ["before commit"]
        lc.execute("COMMIT")
        listener.nothing_pending()
        tc.execute(f"NOTIFY {channel}, 'after commit'")
        assert listener.payloads() == ["after commit"]
        witness.next()
        # a rolled-back LISTEN never takes effect
        lc.execute("BEGIN")
        lc.execute(f"LISTEN {other}")
        lc.execute("ROLLBACK")
        tc.execute(f"NOTIFY {other}, 'rolled back listen'")
        tc.execute(f"NOTIFY {channel}, 'sentinel'")
        assert witness.payloads(2) == ["rolled back listen", "sentinel"]
        assert listener.payloads() == ["sentinel"]
        # NOTIFY in a block is sent at commit, duplicates once; a rolled-back one never
        tc.execute("BEGIN")
        tc.execute(f"NOTIFY {channel}, 'a'")
        tc.execute(f"NOTIFY {channel}, 'a'")
        tc.execute(f"NOTIFY {channel}, 'b'")
        listener.nothing_pending()
        tc.execute("COMMIT")
        assert listener.payloads(2) == ["a", "b"]
        tc.execute("BEGIN")
        tc.execute(f"NOTIFY {channel}, 'never'")
        tc.execute("ROLLBACK")
        tc.execute(f"NOTIFY {channel}, 'sentinel 2'")
        assert listener.payloads() == ["sentinel 2"]
        # a listener inside a transaction block gets them when the block ends
        lc.execute("BEGIN")
        tc.execute(f"NOTIFY {channel}, 'held'")
        assert witness.payloads(4)[-1] == "held"
        listener.nothing_pending()
        lc.execute("COMMIT")
        assert listener.payloads() == ["held"]


def test_listen_notify_errors(backend_server):
    with _connect(backend_server) as c:
        with pytest.raises(pgerr.InvalidParameterValue) as e:
            c.execute(f"NOTIFY chan, '{'x' * 8000}'")
        assert e.value.diag.message_primary == "payload string too long"
        with pytest.raises(pgerr.SyntaxError) as e:
            c.execute("LISTEN")
        with pytest.raises(pgerr.SyntaxError) as e:
            c.execute("NOTIFY chan 'no comma'")
        assert e.value.diag.message_primary == 'syntax error at or near "\'no comma\'"'
        assert c.execute("SELECT 1").fetchone() == (1,)


def test_psql_prints_notifications(backend_server):
    channel = _n("chan")
    if shutil.which("psql") is None:
        missing_client_tool("psql is not installed")
    done = backend_server.psql(input=f"LISTEN {channel};\nNOTIFY {channel}, 'from psql';\n"
                                     "SELECT 1 AS one;\n")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    heard = [i for i, line in enumerate(lines) if line.startswith(
        f'Asynchronous notification "{channel}" with payload "from psql" received from '
        "server process with PID ")]
    assert len(heard) == 1, done.stdout
    assert lines[heard[0] - 1] == "NOTIFY" and "one" in lines[heard[0] + 1], \
        "printed after the NOTIFY that sent it, before the next command's result"
