"""The Python ceiling for pass-through (issue 13): a minimal relay on one uvloop event loop.

Per client it opens one upstream connection (trust auth, the client's own start-up
packet forwarded), then relays both ways. Every client message is framed and every
Query's first word is looked at (what any proxy that routes statements must at least
do); nothing else is decoded. No TLS, no auth, no cancel, no limits: it exists only to
be measured beside PgBouncer and pgbarrier (``bench/passthrough.py``, target
``minimal-relay``).

    python bench/minimal_relay.py --port P [--upstream-host 127.0.0.1 --upstream-port 5432]
"""

from __future__ import annotations

import argparse
import asyncio
import struct

import uvloop

_INT = struct.Struct("!i")


async def _pipe_upstream(up: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
    while data := await up.read(65536):
        client.write(data)
        await client.drain()
    client.close()


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str,
                 port: int) -> None:
    up_reader, up_writer = await asyncio.open_connection(host, port)
    try:
        (length,) = _INT.unpack(await reader.readexactly(4))
        startup = await reader.readexactly(length - 4)
        if startup[:4] == b"\x04\xd2\x16\x2f":  # SSLRequest: no
            writer.write(b"N")
            (length,) = _INT.unpack(await reader.readexactly(4))
            startup = await reader.readexactly(length - 4)
        up_writer.write(_INT.pack(length) + startup)
        back = asyncio.ensure_future(_pipe_upstream(up_reader, writer))
        buf = b""
        words = 0
        while data := await reader.read(65536):
            buf += data
            pos, n = 0, len(buf)
            while n - pos >= 5:
                end = pos + 1 + _INT.unpack_from(buf, pos + 1)[0]
                if end > n:
                    break
                if buf[pos] == 81:  # Query: its first word
                    words += len(buf[pos + 5:pos + 25].split(None, 1)[:1])
                pos = end
            up_writer.write(buf[:pos])
            buf = buf[pos:]
            await up_writer.drain()
        back.cancel()
    finally:
        up_writer.close()
        writer.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--upstream-host", default="127.0.0.1")
    ap.add_argument("--upstream-port", type=int, default=5432)
    args = ap.parse_args()

    async def run() -> None:
        server = await asyncio.start_server(
            lambda r, w: _serve(r, w, args.upstream_host, args.upstream_port),
            "127.0.0.1", args.port)
        async with server:
            await server.serve_forever()

    uvloop.run(run())


if __name__ == "__main__":
    main()
