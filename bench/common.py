"""What the benchmarks share: paths, starting and stopping the servers they compare, pgbench.

Rules the benchmarks keep:

* Every server a benchmark compares is started by the benchmark itself, on a free
  loopback port, and stopped (terminate, then kill) when it ends, also on errors.
* A comparison is side by side in one run: the targets take turns cell by cell, round
  by round (the order rotates each round), and a cell's figure is the median of its
  rounds. Figures from separate runs are never compared.
* A target that cannot run here (PgBouncer not installed, no buenavista baseline venv,
  PostgreSQL unreachable) is recorded with the reason and its column shows it; a target
  that fails in some cell (pgbench aborts) is recorded with pgbench's error.
* Every benchmark writes its figures as JSON (``--json PATH``); ``bench/report.py`` turns
  them into ``docs/BENCHMARKS.md``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import platform
import pwd
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
WORK = ROOT / ".bench"
BASELINE_VENV = WORK / "baseline"
BASELINE_PY = BASELINE_VENV / "bin" / "python"
RESULTS = WORK / "results"

sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))

#: the PostgreSQL the pass-through benchmark runs against (an admin connection to it)
POSTGRES_DSN = os.environ.get("PGBARRIER_BENCH_POSTGRES",
                              "postgresql://postgres@127.0.0.1:5432/postgres")

_TPS = re.compile(r"^tps = ([\d.]+) \(without initial connection time\)", re.M)
_LAT = re.compile(r"^latency average = ([\d.]+) ms", re.M)
_DONE = re.compile(r"^number of transactions actually processed: (\d+)", re.M)
_READY = re.compile(r"ready: listening on ([\d.]+):(\d+)")


# --------------------------------------------------------------------------- small helpers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, proc: subprocess.Popen[Any] | None = None, timeout: float = 60,
              host: str = "127.0.0.1") -> None:
    """Block until ``host:port`` accepts a TCP connection (or ``proc`` has died)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection((host, port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)  # a benchmark may poll for readiness; tests never do
    raise RuntimeError(f"nothing listening on {host}:{port} after {timeout}s")


def median(values: Iterable[float]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list (p in 0..100)."""
    if not sorted_values:
        raise ValueError("no samples")
    k = math.ceil(p / 100 * len(sorted_values)) - 1
    return sorted_values[max(0, min(len(sorted_values) - 1, k))]


def loadavg() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover
        return float("nan")


def write_json(path: str | None, payload: dict[str, Any]) -> None:
    payload.setdefault("loadavg_end", loadavg())
    payload.setdefault("finished_at", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(payload, indent=2, default=str))


def postgres_reachable(dsn: str = POSTGRES_DSN) -> str | None:
    """None when PostgreSQL answers at ``dsn``, else why not."""
    import psycopg

    try:
        with psycopg.connect(dsn, connect_timeout=5):
            return None
    except psycopg.Error as exc:
        return f"PostgreSQL at {dsn} is unreachable: {str(exc).strip().splitlines()[0]}"


def pgbench_missing() -> str | None:
    return None if shutil.which("pgbench") else "pgbench not found (Debian package postgresql-15)"


def baseline_missing() -> str | None:
    if BASELINE_PY.exists():
        return None
    return (f"buenavista baseline venv not installed ({BASELINE_VENV.relative_to(ROOT)}; "
            "`make bench` creates it)")


def pgbouncer_missing() -> str | None:
    if shutil.which("pgbouncer") or Path("/usr/sbin/pgbouncer").exists():
        return None
    return "pgbouncer not installed (`make bench` installs Debian's pgbouncer)"


def pgbouncer_binary() -> str:
    return shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"


# --------------------------------------------------------------------------- servers


@dataclass
class Server:
    """A server process a benchmark started; ``stop()`` is idempotent."""

    name: str
    proc: subprocess.Popen[Any]
    host: str
    port: int
    log_path: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    _tmp: tempfile.TemporaryDirectory[str] | None = None

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        return self.proc.returncode

    def log_tail(self, n: int = 20) -> str:
        if self.log_path and self.log_path.exists():
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-n:])
        return ""


def start_pgbarrier(*args: str, name: str = "pgbarrier", timeout: float = 60,
                    wrap: list[str] | None = None, src: Path | None = None) -> Server:
    """``python -m pgbarrier serve --port 0 ...``; waits for its ready line (which names the port).
    ``wrap``: a command to run it under (valgrind, say); ``src``: another tree's ``src`` to
    serve from (its own environment: servers started at once from threads must not share
    :func:`python_path`'s)."""
    tmp = tempfile.TemporaryDirectory(prefix="pgbarrier-bench-")
    log_path = Path(tmp.name) / "server.log"
    cmd = [*(wrap or ()), sys.executable, "-m", "pgbarrier", "serve", "--port", "0", *args]
    if "--data-dir" not in args:
        cmd += ["--data-dir", ":memory:"]
    log = open(log_path, "w")  # noqa: SIM115 - the child owns it
    env = None
    if src is not None:
        before = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": str(src) + (os.pathsep + before if before else "")}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, cwd=ROOT, env=env)
    log.close()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = _READY.search(log_path.read_text(errors="replace"))
        if m:
            return Server(name, proc, m.group(1), int(m.group(2)), log_path, _tmp=tmp)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    text = log_path.read_text(errors="replace")
    proc.kill()
    tmp.cleanup()
    raise RuntimeError(f"pgbarrier did not become ready:\n{text[-3000:]}")


def _start_script(name: str, python: Path | str, script: Path, lead: list[str],
                  args: list[str], wrap: list[str] | None = None) -> Server:
    """``python script lead... --port <free> args...``, its output in a log; waits for the port."""
    tmp = tempfile.TemporaryDirectory(prefix=f"{name}-bench-")
    log_path = Path(tmp.name) / "server.log"
    port = free_port()
    log = open(log_path, "w")  # noqa: SIM115
    proc = subprocess.Popen([*(wrap or ()), str(python), *(["-W", "ignore"] if python == BASELINE_PY else []),
                             str(script), *lead, "--port", str(port), *args],
                            stdout=log, stderr=subprocess.STDOUT, cwd=tempfile.gettempdir())
    log.close()
    server = Server(name, proc, "127.0.0.1", port, log_path, _tmp=tmp)
    try:
        wait_port(port, proc, timeout=300 if wrap else 60)
    except RuntimeError as exc:
        text = server.log_tail(40)
        server.stop()
        raise RuntimeError(f"{exc}\n{text}") from None
    return server


def start_baseline(kind: str, *args: str) -> Server:
    """buenavista 0.5.0's own server (``bench/baseline_servers.py``) in the baseline venv."""
    why = baseline_missing()
    if why:
        raise RuntimeError(why)
    return _start_script(f"buenavista-{kind}", BASELINE_PY, BENCH / "baseline_servers.py",
                         [kind], list(args))


def start_minimal_relay(upstream_port: int = 5432, wrap: list[str] | None = None) -> Server:
    """``bench/minimal_relay.py`` (the Python ceiling) in this venv on a free port."""
    return _start_script("minimal-relay", sys.executable, BENCH / "minimal_relay.py", [],
                         ["--upstream-port", str(upstream_port)], wrap)


def start_minimal_duckdb(pool: bool = False, wrap: list[str] | None = None) -> Server:
    """``bench/minimal_duckdb.py`` (the floor for serving DuckDB) in this venv on a free port;
    ``pool``: its statements on a worker thread, not on the loop."""
    return _start_script("minimal-duckdb" + ("-pool" if pool else ""), sys.executable,
                         BENCH / "minimal_duckdb.py", [], ["--pool"] if pool else [], wrap)


def start_pgbouncer(databases: dict[str, str], *, pool_size: int = 20,
                    wrap: list[str] | None = None) -> Server:
    """PgBouncer in session mode on a free port; ``databases`` maps a name to a libpq string.

    ``auth_type = any`` (client names are not checked; each database entry names the
    upstream user). As root it is started with ``-u postgres`` (PgBouncer refuses root).
    """
    why = pgbouncer_missing()
    if why:
        raise RuntimeError(why)
    tmp = tempfile.TemporaryDirectory(prefix="pgbouncer-bench-")
    d = Path(tmp.name)
    port = free_port()
    lines = ["[databases]", *(f"{k} = {v}" for k, v in databases.items()),
             "[pgbouncer]", "listen_addr = 127.0.0.1", f"listen_port = {port}",
             "unix_socket_dir =", "auth_type = any", "pool_mode = session",
             "max_client_conn = 200", f"default_pool_size = {pool_size}",
             f"logfile = {d / 'pgbouncer.log'}", f"pidfile = {d / 'pgbouncer.pid'}",
             "log_connections = 0", "log_disconnections = 0"]
    ini = d / "pgbouncer.ini"
    ini.write_text("\n".join(lines) + "\n")
    cmd = [pgbouncer_binary()]
    as_postgres: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chmod(d, 0o755)
        for p in (d, ini):
            os.chown(p, user.pw_uid, user.pw_gid)
        if wrap:  # a wrapper runs as postgres too: PgBouncer's own -u would drop under it
            as_postgres = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"]
        else:
            cmd += ["-u", "postgres"]
    cmd = [*as_postgres, *(wrap or ()), *cmd, str(ini)]
    out = open(d / "stdout.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    out.close()
    server = Server("pgbouncer", proc, "127.0.0.1", port, d / "pgbouncer.log", _tmp=tmp)
    try:
        wait_port(port, proc, timeout=300 if wrap else 60)
    except RuntimeError as exc:
        text = (d / "stdout.log").read_text(errors="replace")
        server.stop()
        raise RuntimeError(f"{exc}\n{text}") from None
    return server


def start_all(starts: dict[str, Any]) -> dict[str, tuple[Server | None, str | None]]:
    """Start several servers at once (threads); name -> (server or None, why it did not start).

    A start function may return None (nothing to start, e.g. PostgreSQL itself)."""
    from concurrent.futures import ThreadPoolExecutor

    def one(fn: Any) -> tuple[Server | None, str | None]:
        try:
            return fn(), None
        except Exception as exc:  # noqa: BLE001 - the caller records it as the column's note
            return None, str(exc).strip() or type(exc).__name__

    with ThreadPoolExecutor(max_workers=max(1, len(starts))) as pool:
        futures = {name: pool.submit(one, fn) for name, fn in starts.items()}
        return {name: f.result() for name, f in futures.items()}


# --------------------------------------------------------------------------- pgbench


@dataclass
class PgbenchRun:
    tps: float | None
    latency_ms: float | None = None
    error: str | None = None
    transactions: int | None = None
    #: CPU time (user + system) the server process used per transaction, when its pid is known
    server_cpu_us: float | None = None
    #: the part of it spent in the kernel (system calls: socket reads and writes)
    server_sys_us: float | None = None


def add_pgbench_args(ap: Any) -> None:
    """The pgbench run-length options passthrough.py and duckdb_compare.py share."""
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--seconds-one-client", type=float, default=None,
                    help="pgbench -T for the 1-client cells (default: --seconds)")
    ap.add_argument("--transactions", type=int, default=None,
                    help="pgbench -t N instead of -T (smoke runs)")
    ap.add_argument("--rounds", type=int, default=3)


def parse_pgbench_args(ap: Any, argv: list[str] | None) -> Any:
    args = ap.parse_args(argv)
    if args.seconds_one_client is None:
        args.seconds_one_client = args.seconds
    return args


def pgbench_env() -> dict[str, str]:
    # every target gets the same client settings: no TLS or GSS negotiation round trips
    return {**os.environ, "PGCONNECT_TIMEOUT": "10", "PGSSLMODE": "disable",
            "PGGSSENCMODE": "disable", "PGAPPNAME": "pgbench"}


def run_pgbench(server_host: str, port: int, user: str, database: str, *, mode: str,
                clients: int, seconds: float | None = None, transactions: int | None = None,
                script: Path | None = None, select_only: bool = False,
                timeout: float = 300, server_pid: int | None = None) -> PgbenchRun:
    """One pgbench run; its tps (excluding connection time) or its first error line.

    With ``server_pid``, also the server process's CPU time per transaction (connection
    set-up included, so a little above the steady state)."""
    cmd = ["pgbench", "-n", "-M", mode, "-c", str(clients), "-j", str(min(2, clients)),
           "-h", server_host, "-p", str(port), "-U", user]
    if transactions is not None:
        cmd += ["-t", str(transactions)]
    else:
        cmd += ["-T", str(max(1, int(round(seconds or 1))))]
    if select_only:
        cmd.append("-S")
    if script is not None:
        cmd += ["-f", str(script)]
    cmd.append(database)
    cpu0, sys0 = _cpu_seconds(server_pid)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=pgbench_env())
    except subprocess.TimeoutExpired:
        return PgbenchRun(None, error=f"pgbench did not finish within {timeout:.0f}s")
    cpu1, sys1 = _cpu_seconds(server_pid)
    out = proc.stdout + "\n" + proc.stderr
    m = _TPS.search(proc.stdout)
    errs = [ln.strip() for ln in proc.stderr.splitlines()
            if "error" in ln.lower() or "fatal" in ln.lower() or "abort" in ln.lower()]
    if proc.returncode != 0 or m is None or errs:
        msg = errs[0] if errs else (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[0]
        msg = re.sub(r"^pgbench: (error: )?", "", msg)
        return PgbenchRun(None, error=msg[:200])
    lat = _LAT.search(out)
    done = _DONE.search(proc.stdout)
    n = int(done.group(1)) if done else None
    known = n and cpu0 is not None and cpu1 is not None
    cpu_us = 1e6 * (cpu1 - cpu0) / n if known else None
    sys_us = 1e6 * (sys1 - sys0) / n if known else None
    return PgbenchRun(float(m.group(1)), float(lat.group(1)) if lat else None,
                      transactions=n, server_cpu_us=cpu_us, server_sys_us=sys_us)


def _cpu_seconds(pid: int | None) -> tuple[float | None, float | None]:
    """(user + system, system) CPU seconds of process ``pid``, or Nones."""
    if pid is None:
        return None, None
    return proc_times(pid)


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def proc_times(pid: int) -> tuple[float | None, float | None]:
    """(user + system, system) CPU seconds of ``pid``, all its threads, from /proc (Linux;
    the same numbers psutil reads, without needing it)."""
    try:
        rest = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None, None
    utime, stime = int(rest[11]) / _TICK, int(rest[12]) / _TICK
    return utime + stime, stime


def proc_status(pid: int) -> dict[str, int]:
    """``rss`` (bytes) and ``threads`` of ``pid`` from /proc/<pid>/status (Linux)."""
    out: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                out["rss"] = int(line.split()[1]) * 1024
            elif line.startswith("Threads:"):
                out["threads"] = int(line.split()[1])
    except OSError:
        pass
    return out


def pgbench_version() -> str:
    try:
        return subprocess.run(["pgbench", "--version"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "not found"


def rotate(items: list[Any], k: int) -> list[Any]:
    k %= max(1, len(items))
    return items[k:] + items[:k]


def summarise_runs(runs: list[PgbenchRun]) -> dict[str, Any]:
    """A cell: each round's tps, the median of those that ran, and the errors."""
    tps = [r.tps for r in runs]
    errors = sorted({r.error for r in runs if r.error})
    cpu = [r.server_cpu_us for r in runs if r.tps is not None]
    sys_ = [r.server_sys_us for r in runs if r.tps is not None]
    return {"tps": tps, "median": median(tps), "errors": errors,
            "failed_rounds": sum(1 for r in runs if r.error),
            "server_cpu_us": median(cpu), "server_sys_us": median(sys_)}


# --------------------------------------------------------------------------- machine


def machine_info() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:  # pragma: no cover
        pass
    mem_gib = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:  # pragma: no cover
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "mem_gib": mem_gib,
            "kernel": platform.release(), "os": _os_name(), "python": platform.python_version()}


def _os_name() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:  # pragma: no cover
        pass
    return platform.system()


def main_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("pgbarrier", "duckdb", "sqlglot", "psycopg", "buenavista"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def source_tree(ref: str, into: Path) -> Path:
    """git commit ``ref``'s ``src/`` extracted under ``into`` (for a side-by-side run),
    with its compiled loops built in place as its install builds them (its ``setup.py``,
    when it has one and Cython is here: the bench extra; without them its sources run,
    and the column then says less about that commit than its install would)."""
    import tarfile

    files = subprocess.run(["git", "ls-tree", "--name-only", ref], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split()
    wanted = ["src"] + (["setup.py"] if "setup.py" in files else [])
    data = subprocess.run(["git", "archive", ref, *wanted], cwd=ROOT, capture_output=True,
                          check=True).stdout
    tar = into / "src.tar"
    tar.write_bytes(data)
    with tarfile.open(tar) as t:
        t.extractall(into, filter="data")
    if "setup.py" in wanted:  # its extensions only (no pyproject: no metadata to check)
        built = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--build-lib",
                                str(into / "src"), "--build-temp", str(into / "build")],
                               cwd=into, capture_output=True, text=True, timeout=900)
        if built.returncode != 0:
            print(f"{ref}: its compiled loops were not built; its sources run "
                  f"({built.stderr.strip()[-300:]})", file=sys.stderr)
    return into / "src"


@contextlib.contextmanager
def python_path(src: Path | None) -> Iterator[None]:
    """Servers started inside run ``src``'s pgbarrier (None: this tree's)."""
    before = os.environ.get("PYTHONPATH")
    if src is not None:
        os.environ["PYTHONPATH"] = str(src) + (os.pathsep + before if before else "")
    try:
        yield
    finally:
        if src is not None:
            if before is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = before

