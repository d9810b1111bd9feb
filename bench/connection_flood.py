"""A flood of connections and the server's threads and memory (issue 11, item 5).

Starts ``pgbarrier serve`` (embedded DuckDB in memory) with ``--max-connections``
(default 100) and opens ``--connections`` (default 2,000) raw TCP connections to it, one
after another, each sending a StartupMessage (user root, database dev) and keeping its
socket open. Each is counted by the first message it gets: AuthenticationOk (a session;
read up to ReadyForQuery), ErrorResponse 53300 (refused at the limit), or nothing (closed).
With every socket still open, the server's RSS and thread count are read from /proc.

With ``--compare-ref REF`` the same run is made, side by side, with git commit ``REF``'s
tree (4320867: before the limit; run without ``--max-connections``, which it lacks).

    .venv/bin/python bench/connection_flood.py [--connections 2000] [--max-connections 100]
        [--compare-ref 4320867] [--json PATH]
"""

from __future__ import annotations

import argparse
import socket
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common as c  # noqa: E402

BEFORE_LIMITS = "4320867"
#: wait for the server's first answer to one connection at most this long
ANSWER_TIMEOUT_S = 30.0


def _startup() -> bytes:
    body = struct.pack("!i", 196608) + b"user\0root\0database\0dev\0\0"
    return struct.pack("!i", len(body) + 4) + body


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def _attempt(host: str, port: int) -> tuple[str, socket.socket | None]:
    """One connection: ("session" | "53300" | "other error" | "closed", its socket if open)."""
    sock = socket.create_connection((host, port), timeout=ANSWER_TIMEOUT_S)
    sock.sendall(_startup())
    while True:
        head = _recv_exact(sock, 5)
        if head is None:
            sock.close()
            return "closed", None
        code, length = head[:1], struct.unpack("!i", head[1:])[0]
        body = _recv_exact(sock, length - 4) or b""
        if code == b"E":
            fields = dict((f[:1], f[1:]) for f in body.split(b"\0") if f)
            sock.close()
            return ("53300" if fields.get(b"C") == b"53300" else "other error"), None
        if code == b"Z":
            return "session", sock


def flood(label: str, src: Path | None, connections: int, extra: tuple[str, ...]
          ) -> dict[str, Any]:
    with c.python_path(src):
        srv = c.start_pgbarrier(*extra)
    socks: list[socket.socket] = []
    counts: dict[str, int] = {}
    try:
        base = c.proc_status(srv.proc.pid)
        t0 = time.monotonic()
        for _ in range(connections):
            try:
                outcome, sock = _attempt(srv.host, srv.port)
            except OSError as exc:
                outcome, sock = f"failed: {type(exc).__name__}", None
            counts[outcome] = counts.get(outcome, 0) + 1
            if sock is not None:
                socks.append(sock)
        took = time.monotonic() - t0
        peak = c.proc_status(srv.proc.pid)
    finally:
        for s in socks:
            s.close()
        srv.stop()
    out = {"label": label, "args": list(extra), "connections": connections, "counts": counts,
           "seconds": took, "rss_before_mb": base.get("rss", 0) / 1e6,
           "rss_mb": peak.get("rss", 0) / 1e6, "threads_before": base.get("threads"),
           "threads": peak.get("threads")}
    print(f"{label:>8}: {counts}; RSS {out['rss_before_mb']:.0f} -> {out['rss_mb']:.0f} MB, "
          f"threads {out['threads_before']} -> {out['threads']}, {took:.1f} s", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=2000)
    ap.add_argument("--max-connections", type=int, default=100)
    ap.add_argument("--compare-ref", default=None,
                    help=f"also run git commit REF's tree (before the limit: {BEFORE_LIMITS})")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    targets = [flood("this", None, args.connections,
                     ("--max-connections", str(args.max_connections)))]
    if args.compare_ref:
        with tempfile.TemporaryDirectory(prefix="pgbarrier-before-") as tmp:
            src = c.source_tree(args.compare_ref, Path(tmp))
            targets.append(flood(args.compare_ref, src, args.connections, ()))
    c.write_json(args.json, {"benchmark": "connection_flood", "connections": args.connections,
                             "max_connections": args.max_connections,
                             "compare_ref": args.compare_ref, "targets": targets})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
