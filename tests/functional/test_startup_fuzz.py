"""Malformed start-ups get PostgreSQL's answers (issue 28, item 6).

A table of raw start-up byte sequences, each sent to pgbarrier on DuckDB, pgbarrier on an
upstream PostgreSQL, and the PostgreSQL on 127.0.0.1:5432 itself. Every answer must be the
one written down in the table (what PostgreSQL 15 answers): the SSLRequest/GSSENCRequest
answer bytes, then each message (an ErrorResponse by severity, SQLSTATE and message, as
sent), and whether the server closed the connection.

How a case is run, with no timing in it: every step but the last is a negotiation request
answered by one byte, read before the next step is sent; after the last step the client
shuts its writing side (so a server waiting for more bytes reads the end of the stream)
and reads until the server closes. ``lead`` says how many one-byte answers come first in
that last read (a request pipelined with what follows it).

Where pgbarrier cannot answer as the PostgreSQL here does, the case says why (``not_pg``,
``not_upstream``):

* GSSENCRequest: this PostgreSQL is built with GSSAPI and answers ``G``, then wants a GSSAPI
  handshake; pgbarrier has no GSSAPI encryption and answers ``N``, as a PostgreSQL built
  without GSSAPI does. What follows an ``N`` is written down from PostgreSQL 15's
  ``ProcessStartupPacket`` (a refused GSSENCRequest lets an SSLRequest follow, and the
  other way round; a second one of the same kind is read as protocol 1234.5680).
* Upstream, a start-up packet of 10,000 bytes: the upstream session's own start-up packet
  carries the client's settings and pgbarrier's, so it passes PostgreSQL's limit first.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass, field

import pytest

from conftest import require_postgres
# the same three servers as the odd-input tests: DuckDB, upstream and PostgreSQL itself
from test_wire_odd_input import (  # noqa: F401 - fixtures
    Target, duckdb_target, upstream_target)

TIMEOUT_S = 20
SSL = struct.pack("!ii", 8, 80877103)
GSS = struct.pack("!ii", 8, 80877104)
#: PostgreSQL's DETAIL for bytes behind a negotiation request
MITM = ("This could be either a client-software bug or evidence of an attempted "
        "man-in-the-middle attack.")
UPSTREAM_PACKET = ("pgbarrier opens the upstream session with the client's settings in a start-up "
                   "packet of its own, with more in it: 10,000 bytes of settings from the "
                   "client make one the upstream refuses (08006, saying so)")
GSS_BUILD = ("this PostgreSQL is built with GSSAPI (it answers G); pgbarrier has no GSSAPI "
             "encryption and answers N, as PostgreSQL built without it")


def packet(body: bytes) -> bytes:
    return struct.pack("!i", len(body) + 4) + body


def params(*pairs: tuple[bytes, bytes], protocol: int = 196608, end: bytes = b"\0") -> bytes:
    return packet(struct.pack("!i", protocol) + b"".join(k + b"\0" + v + b"\0" for k, v in pairs)
                  + end)


@dataclass
class Case:
    #: each step's bytes, or a function of the target's user and database giving them
    steps: list[object]
    expected: list[tuple[str, ...]]
    lead: int = 0
    #: why the PostgreSQL here cannot be compared (None: it is)
    not_pg: str | None = None
    #: why pgbarrier on an upstream cannot answer as PostgreSQL (None: it does)
    not_upstream: str | None = None
    #: the expected answer names the target's user (``{user}``)
    uses_names: bool = field(default=False)




def _fill(step: object, t: Target) -> bytes:
    if callable(step):
        return step(t.user.encode(), t.database.encode())
    assert isinstance(step, bytes)
    return step


def ok(*extra: tuple[bytes, bytes], protocol: int = 196608):
    return lambda u, d: params((b"user", u), (b"database", d), *extra, protocol=protocol)


def sized(user: bytes, database: bytes, body: int) -> bytes:
    """A good start-up whose body (after the length word) is ``body`` bytes long."""
    base = len(params((b"user", user), (b"database", database), (b"pgb.pad", b""))) - 4
    return params((b"user", user), (b"database", database),
                  (b"pgb.pad", b"a" * (body - base)))


R = ("R", "0")
Z = ("Z", "I")
CLOSED = ("<closed>",)
STARTED = [R, Z, CLOSED]


def E(sqlstate: str, message: str, severity: str = "FATAL") -> tuple[str, ...]:
    return ("E", severity, sqlstate, message)


def v2(message: str) -> tuple[str, ...]:
    """Protocol 2.0's error: ``E``, one NUL-terminated line."""
    return ("E2", f"FATAL:  {message}\n")


def nego(*options: str) -> tuple[str, ...]:
    return ("v", "3.0", *options)


def unsupported(major: int, minor: int) -> str:
    return f"unsupported frontend protocol {major}.{minor}: server supports 3.0 to 3.0"


LAYOUT = E("08P01", "invalid startup packet layout: expected terminator as last byte")
NO_USER = E("28000", "no PostgreSQL user name specified in startup packet")

CASES: dict[str, Case] = {
    "a good start-up": Case([ok()], STARTED),
    # ---------------------------------------------------------------- protocol versions
    "protocol 2.0 (answered in 2.0's format)": Case([ok(protocol=2 << 16)],
                                                    [v2(unsupported(2, 0)), CLOSED]),
    "protocol 1.0": Case([ok(protocol=1 << 16)], [v2(unsupported(1, 0)), CLOSED]),
    "protocol 2.5": Case([ok(protocol=(2 << 16) | 5)], [v2(unsupported(2, 5)), CLOSED]),
    "protocol 0.1": Case([ok(protocol=1)], [v2(unsupported(0, 1)), CLOSED]),
    "protocol 0.0 (answered in 3.0's format)": Case(
        [ok(protocol=0)], [E("0A000", unsupported(0, 0)), CLOSED]),
    "protocol 4.0": Case([ok(protocol=4 << 16)], [E("0A000", unsupported(4, 0)), CLOSED]),
    "protocol 65535.65535": Case([ok(protocol=-1)],
                                 [E("0A000", unsupported(65535, 65535)), CLOSED]),
    "protocol 3.1": Case([ok(protocol=(3 << 16) | 1)], [nego(), R, Z, CLOSED]),
    "protocol 3.99": Case([ok(protocol=(3 << 16) | 99)], [nego(), R, Z, CLOSED]),
    "a _pq_. protocol option": Case([ok((b"_pq_.foo", b"1"))], [nego("_pq_.foo"), R, Z, CLOSED]),
    "protocol 3.2 with two _pq_. options": Case(
        [ok((b"_pq_.a", b"1"), (b"_pq_.b", b""), protocol=(3 << 16) | 2)],
        [nego("_pq_.a", "_pq_.b"), R, Z, CLOSED]),
    # ---------------------------------------------------------------- names
    "a user name that is not UTF-8": Case(
        [lambda u, d: params((b"user", b"\xff\xfe"), (b"database", d))],
        [R, E("28000", 'role "\udcff\udcfe" does not exist'), CLOSED]),
    "a database name that is not UTF-8": Case(
        [lambda u, d: params((b"user", u), (b"database", b"x\xff"))],
        [R, E("3D000", 'database "x\udcff" does not exist'), CLOSED]),
    "an application_name that is not UTF-8": Case([ok((b"application_name", b"\xff"))],
                                                  STARTED),
    "no user": Case([lambda u, d: params((b"database", d))], [NO_USER, CLOSED]),
    "an empty user": Case([lambda u, d: params((b"user", b""), (b"database", d))],
                          [NO_USER, CLOSED]),
    "no parameters": Case([params()], [NO_USER, CLOSED]),
    "no user, protocol 3.1": Case([params(protocol=(3 << 16) | 1)], [nego(), NO_USER, CLOSED]),
    "a database that does not exist": Case(
        [lambda u, d: params((b"user", u), (b"database", b"no_such_database_28"))],
        [R, E("3D000", 'database "no_such_database_28" does not exist'), CLOSED]),
    # ---------------------------------------------------------------- packet layout
    "parameters without their terminator": Case(
        [lambda u, d: params((b"user", u), (b"database", d), end=b"")], [LAYOUT, CLOSED]),
    "only a protocol version": Case([packet(struct.pack("!i", 196608))], [LAYOUT, CLOSED]),
    "a name without its value": Case(
        [lambda u, d: packet(struct.pack("!i", 196608) + b"user\0" + u + b"\0database\0")],
        [LAYOUT, CLOSED]),
    "a name at the very end": Case([packet(struct.pack("!i", 196608) + b"user\0")],
                                   [LAYOUT, CLOSED]),
    "bytes after the terminator": Case(
        [lambda u, d: packet(struct.pack("!i", 196608) + b"user\0" + u + b"\0\0xx")],
        [LAYOUT, CLOSED]),
    "two terminators": Case(
        [lambda u, d: packet(struct.pack("!i", 196608) + b"user\0" + u + b"\0\0\0")],
        [LAYOUT, CLOSED]),
    "a length word shorter than the packet sent": Case(
        [lambda u, d: struct.pack("!i", len(ok()(u, d)) - 6) + ok()(u, d)[4:]],
        [LAYOUT, CLOSED]),
    "a layout error comes before NegotiateProtocolVersion": Case(
        [lambda u, d: params((b"user", u), (b"_pq_.x", b"1"), protocol=(3 << 16) | 1,
                             end=b"")], [LAYOUT, CLOSED]),
    # ---------------------------------------------------------------- lengths (closed)
    "length 0": Case([struct.pack("!i", 0)], [CLOSED]),
    "length 4": Case([struct.pack("!i", 4)], [CLOSED]),
    "length 7": Case([struct.pack("!i", 7) + b"\0\3\0"], [CLOSED]),
    "a negative length": Case([struct.pack("!i", -1)], [CLOSED]),
    "length 10005 (over 10,000 bytes of body)": Case([struct.pack("!i", 10005)], [CLOSED]),
    "length 2**31 - 1": Case([struct.pack("!i", 2**31 - 1)], [CLOSED]),
    "a packet cut short": Case([lambda u, d: ok()(u, d)[:-3]], [CLOSED]),
    "nothing at all": Case([b""], [CLOSED]),
    "three bytes": Case([b"\0\0\0"], [CLOSED]),
    "an HTTP request": Case([b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"], [CLOSED]),
    "a typed message first": Case([b"Q\0\0\0\x0dSELECT 1\0"], [CLOSED]),
    "a 10,000-byte packet is read": Case([lambda u, d: sized(u, d, 10000)], STARTED,
                                         not_upstream=UPSTREAM_PACKET),
    "a 10,001-byte packet is not": Case([lambda u, d: sized(u, d, 10001)], [CLOSED]),
    # ---------------------------------------------------------------- parameters
    "an unknown parameter": Case([ok((b"no_such_setting", b"1"))],
                                 [R, E("42704", 'unrecognized configuration parameter '
                                                '"no_such_setting"'), CLOSED]),
    "an unknown parameter in options": Case(
        [ok((b"options", b"-c no_such_setting=1"))],
        [R, E("42704", 'unrecognized configuration parameter "no_such_setting"'), CLOSED]),
    "options -c without a value": Case(
        [ok((b"options", b"-c work_mem"))], [R, E("42601", "-c work_mem requires a value"),
                                             CLOSED]),
    "options: a word that is no switch": Case(
        [ok((b"options", b"garbage -c work_mem=1MB"))],
        [R, E("42601", "invalid command-line argument for server process: garbage"), CLOSED]),
    "options: an unknown switch": Case(
        [ok((b"options", b"-z"))],
        [R, E("42601", "invalid command-line argument for server process: -z"), CLOSED]),
    "options: -c at the end": Case(
        [ok((b"options", b"-c"))],
        [R, E("42601", "invalid command-line argument for server process: -c"), CLOSED]),
    "options: a lone --": Case([ok((b"options", b"--"))], STARTED),
    "options: -c name=value": Case([ok((b"options", b"-c work_mem=4MB"))], STARTED),
    "replication=maybe": Case([ok((b"replication", b"maybe"))],
                              [E("22023", 'invalid value for parameter "replication": "maybe"'),
                               CLOSED]),
    "replication= (empty)": Case([ok((b"replication", b""))],
                                 [E("22023", 'invalid value for parameter "replication": ""'),
                                  CLOSED]),
    "replication=of (a prefix of off)": Case([ok((b"replication", b"of"))], STARTED),
    "replication=true (no replication here)": Case(
        [ok((b"replication", b"true"))],
        [E("28000", 'no pg_hba.conf entry for replication connection from host "127.0.0.1", '
                    'user "{user}", no encryption'), CLOSED], uses_names=True),
    # ---------------------------------------------------------------- negotiation
    "SSLRequest, then a start-up": Case([SSL, ok()], ["N", *STARTED]),
    "SSLRequest twice": Case([SSL, SSL], ["N", E("0A000", unsupported(1234, 5679)), CLOSED]),
    "SSLRequest, then the end": Case([SSL, b""], ["N", CLOSED]),
    "an SSLRequest of 16 bytes": Case([struct.pack("!ii", 16, 80877103) + bytes(8), ok()],
                                      ["N", *STARTED]),
    "SSLRequest with the start-up behind it": Case(
        [lambda u, d: SSL + ok()(u, d)],
        ["N", E("08P01", "received unencrypted data after SSL request"), CLOSED], lead=1),
    "an SSLRequest after the start-up": Case(
        [lambda u, d: ok()(u, d) + SSL],
        [R, Z, E("08P01", "invalid frontend message type 0"), CLOSED]),
    "a zero byte after the start-up": Case(
        [lambda u, d: ok()(u, d) + b"\0"],
        [R, Z, E("08P01", "invalid frontend message type 0"), CLOSED]),
    "a PasswordMessage after the start-up": Case(
        [lambda u, d: ok()(u, d) + b"p\0\0\0\x08abcd"],
        [R, Z, E("08P01", "invalid frontend message type 112"), CLOSED]),
    "GSSENCRequest, then a start-up": Case([GSS, ok()], ["N", *STARTED], not_pg=GSS_BUILD),
    "GSSENCRequest twice": Case([GSS, GSS], ["N", E("0A000", unsupported(1234, 5680)), CLOSED],
                                not_pg=GSS_BUILD),
    "GSSENCRequest, SSLRequest, start-up": Case([GSS, SSL, ok()], ["N", "N", *STARTED],
                                                not_pg=GSS_BUILD),
    "SSLRequest, GSSENCRequest, start-up": Case([SSL, GSS, ok()], ["N", "N", *STARTED],
                                                not_pg=GSS_BUILD),
    "SSLRequest, GSSENCRequest, SSLRequest, start-up": Case(
        [SSL, GSS, SSL, ok()], ["N", "N", "N", *STARTED], not_pg=GSS_BUILD),
    "GSSENCRequest with the start-up behind it": Case(
        [lambda u, d: GSS + ok()(u, d)],
        ["N", E("08P01", "received unencrypted data after GSSAPI encryption request"), CLOSED],
        lead=1, not_pg=GSS_BUILD),
    # ---------------------------------------------------------------- CancelRequest
    "a CancelRequest for no session": Case([struct.pack("!iiii", 16, 80877102, 1, 2)], [CLOSED]),
    "a CancelRequest of 12 bytes": Case([struct.pack("!iii", 12, 80877102, 1)], [CLOSED]),
    "a CancelRequest of 20 bytes": Case([struct.pack("!iiiii", 20, 80877102, 1, 2, 3)],
                                        [CLOSED]),
    "SSLRequest, then a CancelRequest": Case([SSL, struct.pack("!iiii", 16, 80877102, 1, 2)],
                                             ["N", CLOSED]),
}


# --------------------------------------------------------------------------- running a case


def answer(t: Target, case: Case) -> list[tuple[str, ...] | str]:
    steps = [_fill(s, t) for s in case.steps]
    out: list[tuple[str, ...] | str] = []
    with socket.create_connection((t.host, t.port), timeout=TIMEOUT_S) as sock:
        for step in steps[:-1]:
            sock.sendall(step)
            byte = sock.recv(1)
            if not byte:
                return [*out, CLOSED]
            out.append(byte.decode("latin-1"))
        try:
            sock.sendall(steps[-1])
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # it closed already: what it said is still to read
            pass
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
    out += [chr(b) for b in data[:case.lead]]
    return out + summary(data[case.lead:])


def _fields(body: bytes) -> dict[str, str]:
    return {chr(p[0]): p[1:].decode("utf-8", "surrogateescape") for p in body.split(b"\0") if p}


def summary(data: bytes) -> list[tuple[str, ...]]:
    """Each message: an ErrorResponse by severity, SQLSTATE, message (and its DETAIL, where
    one is written down below); protocol 2.0's error as its line; AuthenticationRequest by
    its code, NegotiateProtocolVersion by version and options; ParameterStatus and
    BackendKeyData left out (their values are each server's). Then ``<closed>``."""
    out: list[tuple[str, ...]] = []
    while data:
        code = data[:1]
        if code == b"E" and data[1:6] == b"FATAL":  # protocol 2.0: no length word
            end = data.index(b"\0")
            out.append(("E2", data[1:end].decode()))
            data = data[end + 1:]
            continue
        (length,) = struct.unpack("!i", data[1:5])
        body, data = data[5:1 + length], data[1 + length:]
        if code == b"E":
            f = _fields(body)
            out.append(("E", f["S"], f["C"], f["M"]))
            if f.get("D") is not None and f["M"].startswith("received unencrypted"):
                assert f["D"] == MITM
        elif code == b"R":
            out.append(("R", str(struct.unpack("!i", body[:4])[0])))
        elif code == b"v":
            version, n = struct.unpack("!ii", body[:8])
            names = [x.decode() for x in body[8:].split(b"\0")[:n]]
            out.append(("v", f"{version >> 16}.{version & 0xFFFF}", *names))
        elif code == b"Z":
            out.append(("Z", body.decode()))
        elif code not in (b"S", b"K"):
            out.append((code.decode("latin-1"),))
    return [*out, CLOSED]


def expected(case: Case, t: Target) -> list[tuple[str, ...] | str]:
    if not case.uses_names:
        return case.expected
    return [item if isinstance(item, str) else
            tuple(x.replace("{user}", t.user) for x in item) for item in case.expected]


@pytest.fixture(params=["duckdb", "upstream", "postgres"])
def target(request) -> Target:
    if request.param == "postgres":
        require_postgres()
        return Target("127.0.0.1", 5432, "postgres")
    return request.getfixturevalue(f"{request.param}_target")


@pytest.mark.parametrize("name", list(CASES))
def test_startup_gets_postgresqls_answer(target, name):
    case = CASES[name]
    if target.port == 5432 and target.host == "127.0.0.1" and case.not_pg:
        pytest.skip(case.not_pg)
    if target.database.startswith("pgb_odd_") and case.not_upstream:
        pytest.skip(case.not_upstream)
    assert answer(target, case) == expected(case, target)
