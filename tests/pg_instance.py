"""A private PostgreSQL instance a test may restart, kill and stop: never the shared one.

``private_postgres()`` runs Debian's PostgreSQL 15 binaries (``PGBARRIER_TEST_PG_BIN``,
default ``/usr/lib/postgresql/15/bin``): ``initdb -A trust`` into a temporary directory,
as the ``postgres`` OS user when the tests run as root (initdb refuses root), listening on
127.0.0.1 on a free port with its unix socket in that directory. Rules it keeps:

* Every step is bounded (``pg_ctl -w -t``, subprocess timeouts, polls against a deadline);
  nothing sleeps to synchronise.
* It is always cleaned up: the context manager stops the instance (``immediate``; every
  process of it SIGKILLed if that fails) and removes the directory, whatever the test did.
* It skips (fails under ``CI=true``) with the reason when the binaries or the ``postgres``
  user are missing or initdb fails.
* Faults: :meth:`PgInstance.restart` (``pg_ctl restart -m fast``: sessions get 57P01),
  :meth:`PgInstance.kill` (SIGKILL to the postmaster and every process of the instance, as
  a crashed container: sockets just close), :meth:`PgInstance.stop` (connections refused
  until :meth:`PgInstance.start`).
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

PG_BIN = os.environ.get("PGBARRIER_TEST_PG_BIN", "/usr/lib/postgresql/15/bin")
TIMEOUT_S = 60


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"a private PostgreSQL is needed under CI=true: {reason}")
    pytest.skip(f"no private PostgreSQL: {reason}")


def _alive(pid: int) -> bool:
    """Whether ``pid`` exists, a zombie not yet reaped included (a new postmaster refuses
    to start while the pid in postmaster.pid exists at all)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class PgInstance:
    def __init__(self, top: str, port: int, as_postgres: list[str]) -> None:
        self.top = top
        self.data = os.path.join(top, "data")
        self.logfile = os.path.join(top, "log")
        self.port = port
        self._as = as_postgres

    # ---------------------------------------------------------------- addresses

    @property
    def root_url(self) -> str:
        """``postgresql://postgres@127.0.0.1:PORT/`` (pgbarrier's ``--upstream`` form)."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/"

    def url(self, database: str = "postgres") -> str:
        return self.root_url + database

    # ---------------------------------------------------------------- control

    def _run(self, *cmd: str, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*self._as, *cmd], capture_output=True, text=True,
                              timeout=timeout)

    def _pg_ctl(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self._run(os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, *args,
                         timeout=TIMEOUT_S + 10)

    def start(self) -> None:
        done = self._pg_ctl("-w", "-t", str(TIMEOUT_S), "-l", self.logfile, "-o",
                            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.top} "
                            "-c fsync=off -c max_connections=200", "start")
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {done.stderr}\n{self.log_tail()}")

    def stop(self, mode: str = "fast") -> None:
        """Stopped: connections are refused until :meth:`start`."""
        done = self._pg_ctl("-w", "-t", str(TIMEOUT_S), "-m", mode, "stop")
        if done.returncode != 0 and self.running():
            raise RuntimeError(f"pg_ctl stop failed: {done.stderr}\n{self.log_tail()}")

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every session ends with FATAL 57P01."""
        done = self._pg_ctl("-w", "-t", str(TIMEOUT_S), "-m", "fast", "-l", self.logfile,
                            "-o", f"-p {self.port} -c listen_addresses=127.0.0.1 "
                            f"-k {self.top} -c fsync=off -c max_connections=200", "restart")
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl restart failed: {done.stderr}\n{self.log_tail()}")

    def postmaster_pid(self) -> int | None:
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                pid = int(f.readline())
        except (OSError, ValueError):
            return None
        return pid if _alive(pid) else None

    def running(self) -> bool:
        return self.postmaster_pid() is not None

    def _processes(self, postmaster: int) -> list[int]:
        """The postmaster and its children."""
        pids = [postmaster]
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    with open(f"/proc/{entry}/stat") as f:
                        ppid = int(f.read().rsplit(")", 1)[1].split()[1])
                except (OSError, ValueError, IndexError):
                    continue
                if ppid == postmaster:
                    pids.append(int(entry))
        return pids

    def kill(self) -> None:
        """SIGKILL the postmaster and every process of the instance (a crash of the whole
        server: its sockets close without a word); returns once they are all gone."""
        postmaster = self.postmaster_pid()
        if postmaster is None:
            return
        pids = self._processes(postmaster)
        for pid in pids[1:] + pids[:1]:  # the children first: no time for last words
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + TIMEOUT_S
        while any(_alive(pid) for pid in pids):
            if time.monotonic() > deadline:
                raise RuntimeError(f"PostgreSQL processes {pids} outlived SIGKILL")
            time.sleep(0.01)  # polling the processes' end (no event to wait on)

    def accepts(self) -> bool:
        """Whether a new connection is accepted now (one attempt)."""
        import psycopg

        try:
            with psycopg.connect(self.url(), connect_timeout=2):
                return True
        except psycopg.Error:
            return False

    def log_tail(self, n: int = 4000) -> str:
        try:
            with open(self.logfile) as f:
                return f.read()[-n:]
        except OSError:
            return ""

    def destroy(self) -> None:
        try:
            if self.running():
                self._pg_ctl("-w", "-t", "20", "-m", "immediate", "stop")
            if self.running():
                self.kill()
        finally:
            shutil.rmtree(self.top, ignore_errors=True)


@contextmanager
def private_postgres(prefix: str = "pgb_pg_") -> Iterator[PgInstance]:
    """A fresh, running private instance (superuser ``postgres``, trust), destroyed after."""
    initdb = os.path.join(PG_BIN, "initdb")
    if not os.access(initdb, os.X_OK):
        _unavailable(f"{initdb} is not installed (Debian package postgresql-15)")
    as_postgres: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            _unavailable("running as root and there is no postgres OS user to run initdb as")
        if shutil.which("runuser") is None:
            _unavailable("running as root without runuser to become the postgres user")
        as_postgres = ["runuser", "-u", "postgres", "--"]
    top = tempfile.mkdtemp(prefix=prefix)
    os.chmod(top, 0o700)
    if as_postgres:
        shutil.chown(top, "postgres", "postgres")
    inst = PgInstance(top, _free_port(), as_postgres)
    try:
        made = inst._run(initdb, "-D", inst.data, "-U", "postgres", "-A", "trust", "-E", "UTF8",
                         "--no-sync", "--no-instructions", timeout=120)
        if made.returncode != 0:
            _unavailable(f"initdb failed: {made.stderr[-500:]}")
        inst.start()
        yield inst
    finally:
        inst.destroy()


def wait_until(predicate, timeout: float, what: str, pause: float = 0.02) -> float:
    """Poll ``predicate`` until it is true (returns the monotonic time it was) or fail after
    ``timeout`` seconds saying ``what``."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return time.monotonic()
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(pause)  # the pause between polls, not a synchronisation
