"""The relay is transparent: random sessions of relayed messages get, byte for byte, the
replies PostgreSQL itself sends them.

Each case is a random script of client reads (Parse, Bind, Describe, Execute, Close,
Flush and Sync of named and unnamed statements and portals, row limits, errors, transaction
blocks, simple Queries), sent over a raw socket once to PostgreSQL and once through
``pgbarrier serve --upstream``, in the same chunks. The replies after start-up must be the
same bytes: whichever way pgbarrier takes a read (the fast path of a whole batch, or the
steps), it adds, drops and reorders nothing. Skipped when PostgreSQL is unreachable
(failing under CI=true).
"""

from __future__ import annotations

import random
import socket
import struct
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from conftest import require_postgres, start_server, stop_server

SEED_CASES = 60

TEXTS = [
    "SELECT $1::int + 1",
    "SELECT generate_series(1, 5) AS n",
    "SELECT 1/0",
    "SELECT 'x'::int",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "INSERT INTO rd VALUES (7) RETURNING id",
    "SELECT count(*) FROM rd",
    "SELEC oops",
    "",
]
NAMES = ["", "s1", "s2"]
PORTALS = ["", "p1"]


def frame(code: bytes, body: bytes = b"") -> bytes:
    return code + struct.pack("!i", len(body) + 4) + body


def cstr(s: str) -> bytes:
    return s.encode() + b"\0"


def parse(name: str, text: str) -> bytes:
    return frame(b"P", cstr(name) + cstr(text) + struct.pack("!h", 0))


def bind(portal: str, stmt: str, params: list[bytes]) -> bytes:
    body = cstr(portal) + cstr(stmt) + struct.pack("!hh", 0, len(params))
    for p in params:
        body += struct.pack("!i", len(p)) + p
    return frame(b"B", body + struct.pack("!h", 0))


def random_read(rng: random.Random) -> list[bytes]:
    """One client read: a simple Query, or extended messages ending in Sync."""
    if rng.random() < 0.2:
        text = rng.choice(TEXTS).replace("$1::int", "41")
        return [frame(b"Q", cstr(text))]
    msgs = []
    for _ in range(rng.randint(1, 6)):
        kind = rng.choice("PPBBDEECH")
        name, portal = rng.choice(NAMES), rng.choice(PORTALS)
        if kind == "P":
            msgs.append(parse(name, rng.choice(TEXTS)))
        elif kind == "B":
            msgs.append(bind(portal, name, [b"41"] if rng.random() < 0.7 else []))
        elif kind == "D":
            which = rng.choice("SP")
            msgs.append(frame(b"D", which.encode() + cstr(name if which == "S" else portal)))
        elif kind == "E":
            msgs.append(frame(b"E", cstr(portal) + struct.pack("!i", rng.choice([0, 0, 2]))))
        elif kind == "C":
            which = rng.choice("SP")
            msgs.append(frame(b"C", which.encode() + cstr(name if which == "S" else portal)))
        else:
            msgs.append(frame(b"H"))
    msgs.append(frame(b"S"))
    return msgs


class Raw:
    """A raw protocol connection whose replies after start-up are recorded."""

    def __init__(self, host: str, port: int, user: str, database: str) -> None:
        self.sock = socket.create_connection((host, port), timeout=30)
        body = struct.pack("!i", 196608) + cstr("user") + cstr(user) + cstr("database") \
            + cstr(database) + b"\0"
        self.sock.sendall(struct.pack("!i", len(body) + 4) + body)
        self.buf = b""
        self.until_ready()
        # each session writes a table of its own: both runs see the same rows
        self.sock.sendall(frame(b"Q", cstr("CREATE TEMP TABLE rd (id int)")))
        self.until_ready()

    def messages(self) -> Iterator[bytes]:
        while True:
            while len(self.buf) >= 5:
                end = 1 + struct.unpack("!i", self.buf[1:5])[0]
                if len(self.buf) < end:
                    break
                msg, self.buf = self.buf[:end], self.buf[end:]
                yield msg
            data = self.sock.recv(65536)
            if not data:
                return
            self.buf += data

    def until_ready(self) -> list[bytes]:
        out = []
        for msg in self.messages():
            out.append(msg)
            if msg[:1] == b"Z":
                break
        return out

    def run(self, reads: list[list[bytes]]) -> list[bytes]:
        """Send each read (in two pieces when it has several messages) and collect the
        replies up to the ReadyForQuery that ends it."""
        replies = []
        for read in reads:
            data = b"".join(read)
            if len(read) > 2:
                cut = len(read[0])
                self.sock.sendall(data[:cut])
                self.sock.sendall(data[cut:])
            else:
                self.sock.sendall(data)
            replies.extend(self.until_ready())
        return replies

    def close(self) -> None:
        try:
            self.sock.sendall(frame(b"X"))
        finally:
            self.sock.close()


@pytest.fixture(scope="module")
def pair():
    dsn = require_postgres()
    database = f"pgb_diff_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(dsn, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{database}"')
    base = dsn.rsplit("/", 1)[0]
    srv = start_server("--database", database, "--upstream", base + "/")
    try:
        yield srv, database, base
    finally:
        code = stop_server(srv)
        with psycopg.connect(dsn, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    assert code == 0, "server did not exit cleanly:\n" + "".join(srv.log)


def _normalized(msg: bytes) -> bytes:
    """A reply with the table OIDs of a RowDescription zeroed: each session's temporary
    table has its own OID."""
    if msg[:1] != b"T":
        return msg
    out = bytearray(msg)
    (n,) = struct.unpack_from("!h", msg, 5)
    pos = 7
    for _ in range(n):
        pos = msg.index(b"\0", pos) + 1
        out[pos:pos + 4] = b"\0\0\0\0"
        pos += 18
    return bytes(out)


def _user(base: str) -> str:
    return base.split("://", 1)[1].split("@", 1)[0] if "@" in base else "postgres"


@pytest.mark.parametrize("seed", range(SEED_CASES))
def test_random_relayed_sessions_get_postgresqls_own_replies(pair, seed):
    srv, database, base = pair
    rng = random.Random(seed)
    reads = [random_read(rng) for _ in range(rng.randint(3, 12))]
    host, port = base.split("@", 1)[1].split(":") if "@" in base else ("127.0.0.1", "5432")
    port = port.split("/", 1)[0]
    user = _user(base)
    direct = Raw(host, int(port), user, database)
    through = Raw(srv.host, srv.port, user, database)
    try:
        want = [_normalized(m) for m in direct.run(reads)]
        got = [_normalized(m) for m in through.run(reads)]
    finally:
        direct.close()
        through.close()
    assert got == want, f"seed {seed}: reads {reads}"
