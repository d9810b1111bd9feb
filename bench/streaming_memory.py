"""Server memory and first-row time for a large DuckDB result (issue 11, item 6).

Starts ``pgbarrier serve`` (embedded DuckDB in memory) and sends, over a raw socket,
``SELECT range, range::text FROM range(<rows>)`` twice:

* ``no read``: the client sends the query and reads nothing. The server's RSS (/proc) is
  polled until it stops moving and the client's receive queue stops filling (the
  server is blocked on the socket), or it passes ``--limit-mb``; its growth over the
  RSS before the query is the figure.
* ``read all``: the client reads everything as fast as it can; time to the first
  DataRow, to the CommandComplete, and the peak RSS growth meanwhile (sampled by a
  thread every 0.1 s).

With ``--compare-ref REF`` the same runs are made, side by side in one run, with the
source tree of git commit ``REF`` (``git archive`` into a temporary directory, put first
on ``PYTHONPATH``): the default ``4320867`` is the last commit before results streamed.

    .venv/bin/python bench/streaming_memory.py [--rows 5000000] [--compare-ref 4320867]
        [--json PATH]
"""

from __future__ import annotations

import argparse
import fcntl
import socket
import struct
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

POLL_S = 0.2
STEADY_SAMPLES = 5
#: the commit before rows streamed (DuckDBSession.execute did fetchall)
BEFORE_STREAMING = "4320867"


def _startup(sock: socket.socket) -> bytes:
    body = struct.pack("!i", 196608) + b"user\x00root\x00database\x00dev\x00\x00"
    sock.sendall(struct.pack("!i", len(body) + 4) + body)
    buf = b""
    while not buf.endswith(b"Z\x00\x00\x00\x05I"):
        data = sock.recv(65536)
        if not data:
            raise ConnectionError("closed during start-up")
        buf += data
    return buf


def _query(sock: socket.socket, sql: str) -> None:
    body = sql.encode() + b"\x00"
    sock.sendall(b"Q" + struct.pack("!i", len(body) + 4) + body)


def _unread(sock: socket.socket) -> int:
    return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.FIONREAD, b"\0" * 4))[0]


def _rss_mb(pid: int) -> float:
    return c.proc_status(pid).get("rss", 0) / 1e6


def no_read(srv: c.Server, sql: str, limit_mb: float, timeout_s: float) -> dict[str, Any]:
    pid = srv.proc.pid
    sock = socket.create_connection((srv.host, srv.port), timeout=60)
    try:
        _startup(sock)
        before = _rss_mb(pid)
        t0 = time.monotonic()
        _query(sock, sql)
        first_byte_s = None
        samples: list[tuple[float, int]] = []
        peak = before
        stopped = "timeout"
        while time.monotonic() - t0 < timeout_s:
            rss, unread = _rss_mb(pid), _unread(sock)
            peak = max(peak, rss)
            if first_byte_s is None and unread > 0:
                first_byte_s = time.monotonic() - t0
            samples.append((rss, unread))
            if rss - before > limit_mb:
                stopped = "limit"
                break
            last = samples[-STEADY_SAMPLES:]
            if len(last) == STEADY_SAMPLES and unread > 0 and len({u for _, u in last}) == 1 \
                    and max(r for r, _ in last) - min(r for r, _ in last) < 2:
                stopped = "steady"
                break
            time.sleep(POLL_S)
        return {"rss_before_mb": before, "rss_after_mb": samples[-1][0], "peak_mb": peak,
                "growth_mb": peak - before, "first_byte_s": first_byte_s,
                "settled_s": time.monotonic() - t0, "stopped": stopped,
                "unread_bytes": samples[-1][1]}
    finally:
        sock.close()


def read_all(srv: c.Server, sql: str) -> dict[str, Any]:
    pid = srv.proc.pid
    sock = socket.create_connection((srv.host, srv.port), timeout=120)
    try:
        _startup(sock)
        before = _rss_mb(pid)
        peak = [before]
        done = threading.Event()

        def sample() -> None:  # beside the reads: the peak may come before the first byte
            while not done.wait(POLL_S / 2):
                peak[0] = max(peak[0], _rss_mb(pid))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        t0 = time.monotonic()
        _query(sock, sql)
        first_row_s = None
        rows = 0
        tag = None
        buf = b""
        pos = 0
        while tag is None or not buf[pos:].startswith(b"Z"):
            data = sock.recv(1 << 20)
            if not data:
                raise ConnectionError("closed mid-result")
            buf = buf[pos:] + data
            pos = 0
            while len(buf) - pos >= 5:
                (length,) = struct.unpack_from("!i", buf, pos + 1)
                end = pos + 1 + length
                if end > len(buf):
                    break
                code = buf[pos]
                if code == 0x44:  # D
                    rows += 1
                    if first_row_s is None:
                        first_row_s = time.monotonic() - t0
                elif code == 0x43:  # C
                    tag = buf[pos + 5:end - 1].decode()
                elif code == 0x45:  # E
                    raise RuntimeError(buf[pos + 5:end].decode(errors="replace"))
                elif code == 0x5A:  # Z
                    break
                pos = end
        total_s = time.monotonic() - t0
        done.set()
        sampler.join()
        peak[0] = max(peak[0], _rss_mb(pid))
        return {"rows": rows, "tag": tag, "first_row_s": first_row_s, "total_s": total_s,
                "rows_per_s": rows / total_s if total_s else None,
                "rss_before_mb": before, "peak_mb": peak[0], "growth_mb": peak[0] - before}
    finally:
        sock.close()


def run_target(label: str, src: Path | None, sql: str, args: argparse.Namespace
               ) -> dict[str, Any]:
    with c.python_path(src):
        out: dict[str, Any] = {"label": label}
        for scenario in ("no_read", "read_all"):
            srv = c.start_pgbarrier()  # a fresh server per scenario: nothing left from before
            try:
                if scenario == "no_read":
                    out[scenario] = no_read(srv, sql, args.limit_mb, args.timeout)
                else:
                    out[scenario] = read_all(srv, sql)
            finally:
                srv.stop()
            print(f"{label:>8} {scenario:>8}: {out[scenario]}", flush=True)
        return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--compare-ref", default=None,
                    help=f"also run git commit REF's tree (before streaming: {BEFORE_STREAMING})")
    ap.add_argument("--limit-mb", type=float, default=4000,
                    help="stop polling a non-reading client once the server grew this much")
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    sql = f"SELECT range, range::text FROM range({args.rows})"
    targets = [run_target("this", None, sql, args)]
    if args.compare_ref:
        with tempfile.TemporaryDirectory(prefix="pgbarrier-before-") as tmp:
            src = c.source_tree(args.compare_ref, Path(tmp))
            targets.append(run_target(args.compare_ref, src, sql, args))
    result = {"benchmark": "streaming_memory", "rows": args.rows, "query": sql,
              "compare_ref": args.compare_ref, "targets": targets, "target_growth_mb": 100}
    c.write_json(args.json, result)
    for t in targets:
        nr, ra = t["no_read"], t["read_all"]
        print(f"{t['label']}: client not reading: +{nr['growth_mb']:.0f} MB ({nr['stopped']}); "
              f"reading: first row {ra['first_row_s']:.3f} s, all {ra['total_s']:.1f} s, "
              f"+{ra['growth_mb']:.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
