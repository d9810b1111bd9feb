"""What a database's checkpoint writes to the meta store, and when (the ``on_commit`` hook).

A checkpoint every barrier interval in every database, plus the ones commands
and due refreshes inject, is hundreds of checkpoints a second with a hundred
databases; writing each would make the meta store the bottleneck. What must be
durable is less than that. Rules this module keeps:

* **Pause state** (paused, when, by whom) is written by the checkpoint that
  changed it, before the command's issuer hears back (write-ahead of
  acknowledgement): after ``ALTER DATABASE d PAUSE`` returns, a crash finds
  ``d`` paused.
* **Epochs** are written as one lease for all databases (every database's epochs
  come from the same clock): the store's ``epoch_ceiling`` is ``LEASE_MS`` of physical
  time above the highest epoch handed out when it was written, and a checkpoint of any
  database writes it again only when its ``prev_epoch`` passes it. Every epoch any
  database issues is therefore at or below the recorded ceiling, and recovery, which
  resumes each database from the higher of its own record's ``prev_epoch`` and the
  ceiling, issues only higher ones, whatever the clock says (TiDB's timestamp oracle
  keeps its window the same way). One write per ``LEASE_MS`` serves every database (a
  lease per database was a write per database every ``LEASE_MS``: 333 a second at 1,000
  databases). The price: after a crash epochs may run up to ``LEASE_MS`` ahead of the
  wall clock until the clock catches up (they advance a millisecond per barrier
  meanwhile), so a scheduled refresh may start up to that much early once; and
  ``committed_epoch`` in a database's record (what ``rw_databases`` shows right after a
  crash, until its first checkpoint) is the one of its last pause change or clean
  shutdown. Nothing durable refers to a checkpoint's epoch except through its own write:
  a batch-refresh job's snapshot and committed epochs are in its own record, written
  before its create or refresh is acknowledged.
* Epochs of barriers that are not checkpoints (``--checkpoint-frequency`` > 1)
  are never written on their own: they are uncommitted, nothing durable or
  visible refers to them, and the lease covers them like any other epoch
  handed out (RisingWave also discards uncommitted epochs on recovery).
* A clean shutdown writes each database's exact state and the exact ceiling (the
  highest epoch handed out, :meth:`record_final`), so a clean restart does not jump ahead.
* A database dropped and created again under the same name starts afresh (the
  snapshot's ``generation`` tells them apart).
"""

from __future__ import annotations

import threading

from pgbarrier.barrier.epoch import EPOCH_PHYSICAL_SHIFT_BITS
from pgbarrier.barrier.info import DatabaseSnapshot
from pgbarrier.meta.store import DatabaseRecord, MetaStore

#: how far (physical time) a recorded epoch ceiling runs ahead of the epochs handed out
LEASE_MS = 3000


def _record(snap: DatabaseSnapshot, prev_epoch: int) -> DatabaseRecord:
    return DatabaseRecord(snap.name, snap.paused, snap.paused_at, snap.paused_by, prev_epoch,
                          snap.committed_epoch, pause_reason=snap.pause_reason,
                          resumes_at=snap.resumes_at)


class CheckpointRecorder:
    """Called with each checkpoint's snapshot, from a barrier collector thread (one database's
    checkpoints in order, different databases concurrently)."""

    def __init__(self, store: MetaStore, lease_ms: int = LEASE_MS) -> None:
        self._store = store
        self._lease = lease_ms << EPOCH_PHYSICAL_SHIFT_BITS
        self._lock = threading.Lock()
        #: per database: (generation, pause state written)
        self._written: dict[str, tuple[int, tuple[object, ...]]] = {}
        #: the epoch ceiling written (0: none yet by this process)
        self._ceiling = 0
        self._ceiling_lock = threading.Lock()

    def record(self, snap: DatabaseSnapshot) -> bool:
        """Write what ``snap`` must make durable (see the module rules); True if it wrote."""
        wrote = False
        if snap.prev_epoch > self._ceiling:
            with self._ceiling_lock:  # one writer; the others wait for its ceiling
                if snap.prev_epoch > self._ceiling:
                    ceiling = snap.prev_epoch + self._lease
                    self._store.put_epoch_ceiling(ceiling)  # raises: nothing is remembered
                    self._ceiling = ceiling
                    wrote = True
        pause = (snap.paused, snap.paused_at, snap.paused_by, snap.pause_reason,
                 snap.resumes_at)
        with self._lock:
            last = self._written.get(snap.name)
        if last is not None and last == (snap.generation, pause):
            return wrote
        self._store.put_database(_record(snap, snap.prev_epoch))
        with self._lock:
            self._written[snap.name] = (snap.generation, pause)
        return True

    def record_final(self, snaps: list[DatabaseSnapshot]) -> None:
        """The exact state, once the barrier scheduler has stopped (clean shutdown)."""
        for snap in snaps:
            self._store.put_database(_record(snap, snap.prev_epoch))
            with self._lock:
                self._written.pop(snap.name, None)
        if snaps:
            with self._ceiling_lock:
                self._ceiling = max(snap.prev_epoch for snap in snaps)
                self._store.put_epoch_ceiling(self._ceiling, lower=True)
