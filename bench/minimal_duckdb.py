"""The Python floor for serving DuckDB over the wire (issue 13): a minimal server on uvloop.

What any Python server that answers PostgreSQL clients from DuckDB must at least do per
statement: read the socket, frame the messages, run the statement on a DuckDB cursor,
fetch its rows, encode them as text and write the reply. Nothing else: trust start-up
with no checks, no catalog, no type mapping beyond ``str()``, no errors beyond a generic
ErrorResponse, no cancel, no TLS, no limits. The simple and the extended protocol are
served (Parse, Bind with text parameters, Describe, Execute, Sync), enough for pgbench's
``-M simple``, ``extended`` and ``prepared``.

``--pool`` hands each batch of messages to a worker thread and its reply back to the
loop (``loop.run_in_executor``), as a server that keeps blocking work off its loop must;
without it the statement runs on the loop thread. ``bench/duckdb_overhead.py`` measures
both beside pgbarrier and DuckDB in process: the floor shows what the wire and a thread
hand-off cost by themselves, so what pgbarrier adds on top is its own.

    python bench/minimal_duckdb.py --port P [--pool]
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import struct
from typing import Any

import duckdb
import uvloop

_INT = struct.Struct("!i")
_SHORT = struct.Struct("!h")


def _msg(code: bytes, body: bytes) -> bytes:
    return code + _INT.pack(len(body) + 4) + body


_READY = _msg(b"Z", b"I")
_START = (_msg(b"R", _INT.pack(0))
          + b"".join(_msg(b"S", k + b"\0" + v + b"\0") for k, v in (
              (b"server_version", b"15.0"), (b"client_encoding", b"UTF8"),
              (b"DateStyle", b"ISO, MDY"), (b"integer_datetimes", b"on"),
              (b"standard_conforming_strings", b"on")))
          + _msg(b"K", _INT.pack(1) + _INT.pack(1)) + _READY)


def _cstr(body: bytes, pos: int) -> tuple[str, int]:
    end = body.index(b"\0", pos)
    return body[pos:end].decode(), end + 1


def _row_description(description: Any) -> bytes:
    out = [_SHORT.pack(len(description))]
    for col in description:
        out.append(col[0].encode() + b"\0" + struct.pack("!ihihih", 0, 0, 25, -1, -1, 0))
    return _msg(b"T", b"".join(out))


def _data_rows(rows: list[tuple[Any, ...]]) -> bytes:
    out = []
    for row in rows:
        parts = [_SHORT.pack(len(row))]
        for v in row:
            if v is None:
                parts.append(_INT.pack(-1))
            else:
                b = str(v).encode()
                parts.append(_INT.pack(len(b)) + b)
        out.append(_msg(b"D", b"".join(parts)))
    return b"".join(out)


class _Session:
    def __init__(self, cur: duckdb.DuckDBPyConnection) -> None:
        self.cur = cur
        self.statements: dict[str, str] = {}
        self.portals: dict[str, tuple[str, list[Any]]] = {}
        self.skipping = False
        self.describe = False  # a Describe waits for the Execute behind it

    def _run(self, sql: str, params: list[Any], describe: bool) -> bytes:
        cur = self.cur
        cur.execute(sql, params or None)
        rows = cur.fetchall()
        desc = cur.description
        out = _row_description(desc) if describe and desc else b""
        if desc is None:
            return out + _msg(b"C", b"OK\0")
        return out + _data_rows(rows) + _msg(b"C", b"SELECT %d\0" % len(rows))

    def handle(self, frames: list[bytes]) -> bytes:
        out: list[bytes] = []
        for frame in frames:
            code, body = frame[0], frame[5:]
            try:
                if code == 0x51:  # Query
                    out.append(self._run(body[:-1].decode(), [], True) + _READY)
                elif code == 0x53:  # Sync
                    self.skipping = False
                    out.append(_READY)
                elif self.skipping:
                    continue
                elif code == 0x50:  # Parse
                    name, pos = _cstr(body, 0)
                    self.statements[name], _ = _cstr(body, pos)
                    out.append(_msg(b"1", b""))
                elif code == 0x42:  # Bind: text parameters only
                    portal, pos = _cstr(body, 0)
                    name, pos = _cstr(body, pos)
                    (nfmt,) = _SHORT.unpack_from(body, pos)
                    pos += 2 + 2 * nfmt
                    (nparams,) = _SHORT.unpack_from(body, pos)
                    pos += 2
                    params: list[Any] = []
                    for _ in range(nparams):
                        (n,) = _INT.unpack_from(body, pos)
                        pos += 4
                        params.append(None if n < 0 else body[pos:pos + n].decode())
                        pos += max(n, 0)
                    self.portals[portal] = (self.statements[name], params)
                    out.append(_msg(b"2", b""))
                elif code == 0x44:  # Describe: answered at Execute (its row description)
                    self.describe = True
                    if body[0] == 0x53:
                        out.append(_msg(b"t", _SHORT.pack(0)))
                elif code == 0x45:  # Execute
                    portal, _ = _cstr(body, 0)
                    sql, params = self.portals[portal]
                    out.append(self._run(sql, params, self.describe))
                    self.describe = False
                elif code == 0x58:  # Terminate
                    return b"".join(out) + b"X"
            except (duckdb.Error, KeyError, ValueError) as exc:
                err = b"SERROR\0C42000\0M" + str(exc).encode() + b"\0\0"
                out.append(_msg(b"E", err))
                if code == 0x51:
                    out.append(_READY)
                else:
                    self.skipping = True
        return b"".join(out)


class _Protocol(asyncio.Protocol):
    def __init__(self, db: duckdb.DuckDBPyConnection,
                 pool: concurrent.futures.ThreadPoolExecutor | None) -> None:
        self.db, self.pool = db, pool
        self.buf = b""
        self.session: _Session | None = None
        self.transport: Any = None
        self.busy = False

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buf += data
        if not self.busy:
            self._advance()

    def _advance(self) -> None:
        buf, pos, frames = self.buf, 0, []
        while len(buf) - pos >= 5:
            if self.session is None:  # start-up: a length, then the packet
                (n,) = _INT.unpack_from(buf, pos)
                if len(buf) - pos < n:
                    break
                code = buf[pos + 4:pos + 8]
                pos += n
                if code == b"\x04\xd2\x16\x2f":  # SSLRequest: no
                    self.transport.write(b"N")
                    continue
                self.session = _Session(self.db.cursor())
                self.transport.write(_START)
                continue
            end = pos + 1 + _INT.unpack_from(buf, pos + 1)[0]
            if end > len(buf):
                break
            frames.append(buf[pos:end])
            pos = end
        self.buf = buf[pos:]
        if not frames:
            return
        assert self.session is not None
        if self.pool is None:
            self._reply(self.session.handle(frames))
            return
        self.busy = True
        fut = asyncio.get_running_loop().run_in_executor(self.pool, self.session.handle, frames)
        fut.add_done_callback(lambda f: self._reply(f.result()))

    def _reply(self, out: bytes) -> None:
        self.busy = False
        if out.endswith(b"X"):
            self.transport.write(out[:-1])
            self.transport.close()
            return
        self.transport.write(out)
        if self.buf:
            self._advance()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--pool", action="store_true",
                    help="run each batch on a worker thread, not on the loop")
    args = ap.parse_args()
    db = duckdb.connect(":memory:")
    pool = concurrent.futures.ThreadPoolExecutor(8) if args.pool else None

    async def run() -> None:
        loop = asyncio.get_running_loop()
        server = await loop.create_server(lambda: _Protocol(db, pool), "127.0.0.1", args.port)
        async with server:
            await server.serve_forever()

    uvloop.run(run())


if __name__ == "__main__":
    main()
