"""The live sessions as ``pg_stat_activity`` rows, and the signals that end them.

What a connection pays per statement is two attribute stores in
:meth:`~pgbarrier.server.connection.Connection._advance` (a monotonic timestamp and the
batch's frames, plus the transaction's start when a batch begins outside one); the text
is decoded here, only when someone reads ``pg_stat_activity``.

Rules this module keeps (PostgreSQL 15's ``pg_stat_activity`` and ``pg_signal_backend``):

* One row per session past start-up, ``backend_type`` ``client backend``; ``pid`` is the
  BackendKeyData process id; ``client_addr``/``client_port`` are the peer (NULL for
  none); ``query`` is the running or last statement text (several statements of one
  Query joined by ``; ``), cut to 1023 bytes as ``track_activity_query_size = 1024``
  does; ``state`` is ``active`` while a batch runs, else ``idle``, ``idle in
  transaction`` or ``idle in transaction (aborted)``.
* ``xact_start`` is when the batch that opened the current transaction began (a
  statement outside a block is its own transaction), NULL when idle outside one.
* While a statement waits for RESUME (``batch_refresh_when_paused = 'wait'``),
  ``wait_event_type`` is ``IPC`` and ``wait_event`` is ``BarrierResume`` (pgbarrier's
  name, in PostgreSQL's IPC class of waits for another process).
* A signal (``pg_cancel_backend``/``pg_terminate_backend``) to a pid that is no session
  is ``None`` (the caller warns and answers false). On DuckDB there are no roles, so a
  session may signal sessions of its own user only (PostgreSQL's rule for a
  non-superuser, which pgbarrier applies to every DuckDB session although
  ``is_superuser`` reads ``on``): another user's is 42501. Cancel cancels the running
  statement as a CancelRequest does (57014); terminate ends the connection with FATAL
  57P01 ``terminating connection due to administrator command`` (a running statement
  is cancelled first, its output dropped).
"""

from __future__ import annotations

import datetime as dt
import time
from typing import TYPE_CHECKING, Any

from pgbarrier.errors import PgError
from pgbarrier.server.statement_text import query_text
from pgbarrier.session.transaction import TxState

if TYPE_CHECKING:
    from pgbarrier.server.connection import Connection
    from pgbarrier.session.session import Session

_STATES = {TxState.IDLE: "idle", TxState.IN_BLOCK: "idle in transaction",
           TxState.FAILED: "idle in transaction (aborted)"}


def _wall(mono: float | None, now_wall: float, now_mono: float) -> dt.datetime | None:
    if mono is None:
        return None
    return dt.datetime.fromtimestamp(now_wall - (now_mono - mono), dt.timezone.utc)


def state(conn: Connection) -> tuple[str, str] | None:
    """(database, pg_stat_activity state) of ``conn``'s session, None before it started
    serving: the one place a connection's state is decided (metrics read it too)."""
    session = conn.session
    executor = session.executor if session is not None else None
    if session is None or executor is None or not conn._serving:
        return None
    return executor.info.database, "active" if conn.in_batch else _STATES[session.tx]


def activity_record(conn: Connection, now_wall: float, now_mono: float) -> dict[str, Any] | None:
    """``conn``'s ``pg_stat_activity`` row by column name (None before its session started)."""
    current = state(conn)
    if current is None:
        return None
    session = conn.session
    assert session is not None and session.executor is not None
    info = session.executor.info
    batch = conn.last_batch
    active = conn.in_batch
    waiting = info.wait_event if active else None
    in_tx = session.tx is not TxState.IDLE
    return {
        "datname": info.database, "pid": session.process_id, "usename": info.user,
        "application_name": info.application_name,
        "client_addr": conn.peer_addr, "client_port": conn.peer_port,
        "backend_start": dt.datetime.fromtimestamp(conn.started_at, dt.timezone.utc),
        "xact_start": _wall(conn.xact_began, now_wall, now_mono) if active or in_tx else None,
        "query_start": _wall(conn.began, now_wall, now_mono),
        "state_change": _wall(conn.began if active else conn.ended or conn.began,
                              now_wall, now_mono),
        "wait_event_type": waiting[0] if waiting else None,
        "wait_event": waiting[1] if waiting else None,
        "state": current[1],
        "query": query_text(batch, session) if batch else "",
        "backend_type": "client backend",
    }


def records(conns: list[Connection]) -> list[dict[str, Any]]:
    now_wall, now_mono = time.time(), time.monotonic()
    out = []
    for conn in conns:
        rec = activity_record(conn, now_wall, now_mono)
        if rec is not None:
            out.append(rec)
    return out


def check_signal(caller: Session | None, victim: Session, action: str) -> None:
    """42501 unless ``caller`` may signal ``victim`` (same user; see the module rules)."""
    mine = caller.executor.info.user if caller is not None and caller.executor else None
    theirs = victim.executor.info.user if victim.executor else None
    if mine is None or mine != theirs:
        verb = "terminated" if action == "terminate" else "canceled"
        raise PgError(f"must be a member of the role whose process is being {verb} or member "
                      "of pg_signal_backend", sqlstate="42501")
