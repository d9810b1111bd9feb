"""Client authentication, free of I/O: credentials loaded at start-up, one exchange per connection.

Rules this module keeps:

* One method for the whole server: ``trust`` when no password source is configured, else
  ``--auth-method`` — ``scram-sha-256`` (the default), ``md5`` or ``password`` (cleartext).
* Password sources: a password file (``user:password`` lines) and/or a users file
  (``user:SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>`` lines, PostgreSQL's
  ``rolpassword``). Blank lines and ``#`` comments are skipped; a bad line, an empty password
  or a user named twice is a start-up error (:class:`ConfigError`) that never echoes a password.
* Plain-text passwords live only while the password file is read: each becomes a
  SCRAM-SHA-256 verifier (4096 iterations, random salt) and, only when the method is md5,
  PostgreSQL's md5 hash ``md5(password || user)``. Cleartext logins are checked against the
  SCRAM verifier, as PostgreSQL checks them against a SCRAM secret.
* One exception, ``keep_passwords`` (an upstream PostgreSQL that runs each session as the
  client's user and may ask for that user's password): then the password file's
  passwords stay in memory for the life of the process (``Credential.password``, never in
  a repr or a log line), and a client's cleartext password (method ``password``) is kept
  on its exchange once it matched. After a successful exchange ``Exchange.password`` is
  that password (None when unknown: a users-file user, or ``keep_passwords`` off); the
  handler hands it to the session, which uses it once, to open its upstream connection.
* A users-file user has only a verifier, so it always authenticates with SCRAM-SHA-256,
  whatever the method (PostgreSQL does the same for an md5 method and a SCRAM secret).
* An unknown user gets the same exchange as a known one (a mock SCRAM salt, a real md5 salt)
  and fails at the same step, so failures do not tell which users exist.
* A wrong password or unknown user raises :class:`InvalidPassword` (FATAL 28P01
  ``password authentication failed for user "u"``); a message that does not parse for the
  step the exchange is at raises :class:`ProtocolViolation` (FATAL 08P01). The handler
  closes the connection after either.
* An exchange is a state machine (:class:`Step`): :meth:`Exchange.start` returns the first
  AuthenticationRequest; :meth:`Exchange.receive` takes the body of one ``p`` message and
  returns what to send next, setting ``done`` when the client is authenticated (the
  handler then starts the session, which sends AuthenticationOk). After success or failure
  it accepts nothing more.
* SCRAM is scramp's server side. Over TLS SCRAM-SHA-256-PLUS (``tls-server-end-point``) is
  offered too. The user name inside the SCRAM messages is ignored (libpq sends an empty one);
  the start-up packet's user counts, as in PostgreSQL.
* Listening on a non-loopback address with trust is refused at start-up unless
  ``trust_any_host`` says it is meant (:func:`check_listen_address`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import logging
import re
import secrets
import socket
import struct
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

import scramp
from scramp.utils import ScramException, ServerError

from pgbarrier.errors import InvalidPassword, ProtocolViolation
from pgbarrier.pgproto.codes import AUTHENTICATION, type_byte

log = logging.getLogger(__name__)

METHODS = ("scram-sha-256", "md5", "password")
DEFAULT_METHOD = "scram-sha-256"
SCRAM = "SCRAM-SHA-256"
SCRAM_PLUS = "SCRAM-SHA-256-PLUS"
SCRAM_ITERATIONS = 4096

_SCRAM = scramp.ScramMechanism(SCRAM)
_ROLPASSWORD = re.compile(
    r"^SCRAM-SHA-256\$(?P<iter>[0-9]+):(?P<salt>[A-Za-z0-9+/=]+)"
    r"\$(?P<stored>[A-Za-z0-9+/=]+):(?P<server>[A-Za-z0-9+/=]+)$"
)


class ConfigError(ValueError):
    """A start-up configuration pgbarrier refuses (the CLI prints it and exits 2)."""


# --------------------------------------------------------------------------- credentials


@dataclass(frozen=True)
class ScramVerifier:
    """A SCRAM-SHA-256 secret: what PostgreSQL keeps in ``rolpassword``."""

    iterations: int
    salt: bytes
    stored_key: bytes
    server_key: bytes

    @classmethod
    def derive(cls, password: str, *, salt: bytes | None = None,
               iterations: int = SCRAM_ITERATIONS) -> ScramVerifier:
        """Derive a verifier (SASLprep, PBKDF2) from a plain-text password."""
        salt_, stored, server, i = _SCRAM.make_auth_info(password, iteration_count=iterations,
                                                         salt=salt)
        return cls(i, salt_, stored, server)

    @classmethod
    def parse(cls, text: str) -> ScramVerifier:
        """Parse ``SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>``; ValueError if bad."""
        match = _ROLPASSWORD.match(text)
        if match is None:
            raise ValueError("not a SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey> secret")
        try:
            salt, stored, server = (base64.b64decode(match[k], validate=True)
                                    for k in ("salt", "stored", "server"))
        except binascii.Error as exc:
            raise ValueError("invalid base64 in the SCRAM secret") from exc
        iterations = int(match["iter"])
        # scramp's server refuses fewer iterations or a shorter salt than these
        if iterations < SCRAM_ITERATIONS:
            raise ValueError(f"iteration count {iterations} is below {SCRAM_ITERATIONS}")
        if len(salt) < 12:
            raise ValueError("salt is shorter than 12 bytes")
        if len(stored) != 32 or len(server) != 32:
            raise ValueError("StoredKey and ServerKey must be 32 bytes each")
        return cls(iterations, salt, stored, server)

    def __str__(self) -> str:
        b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
        return (f"SCRAM-SHA-256${self.iterations}:{b64(self.salt)}"
                f"${b64(self.stored_key)}:{b64(self.server_key)}")

    def check_plain(self, password: str) -> bool:
        """True when ``password`` yields this verifier's StoredKey."""
        try:
            other = ScramVerifier.derive(password, salt=self.salt, iterations=self.iterations)
        except ScramException:  # SASLprep refused it: it cannot be the password
            return False
        return hmac.compare_digest(other.stored_key, self.stored_key)

    def auth_info(self) -> tuple[bytes, bytes, bytes, int]:
        """What scramp's ``auth_fn`` returns."""
        return self.salt, self.stored_key, self.server_key, self.iterations


@dataclass(frozen=True)
class Credential:
    """What pgbarrier keeps for one user: never the password itself."""

    scram: ScramVerifier
    #: hex ``md5(password || user)``, only for password-file users when the method is md5
    md5: str | None = None
    #: a users-file user: only a verifier is known, so only SCRAM can check it
    scram_only: bool = False
    #: the plain-text password, kept only with ``keep_passwords`` (for an upstream login)
    password: str | None = field(default=None, repr=False, compare=False)


def md5_hash(user: str, password: str) -> str:
    """PostgreSQL's stored md5 secret, without its ``md5`` prefix."""
    return hashlib.md5((password + user).encode("utf-8")).hexdigest()


def _lines(path: str):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() and not line.lstrip().startswith("#"):
            user, sep, secret = line.partition(":")
            if not sep or not user.strip():
                raise ConfigError(f"{path}:{number}: expected user:secret")
            yield f"{path}:{number}", user.strip(), secret


def read_password_file(path: str, *, with_md5: bool,
                       keep_passwords: bool = False) -> dict[str, Credential]:
    """``user:password`` lines → credentials; the passwords are dropped once derived,
    unless ``keep_passwords`` (an upstream may ask for them)."""
    creds: dict[str, Credential] = {}
    for where, user, password in _lines(path):
        if not password:
            raise ConfigError(f"{where}: empty password for user {user!r}")
        if user in creds:
            raise ConfigError(f"{where}: user {user!r} is listed twice")
        try:
            verifier = ScramVerifier.derive(password)
        except ScramException as exc:
            raise ConfigError(f"{where}: password of user {user!r} is not valid for SCRAM "
                              f"(SASLprep: {exc})") from None
        creds[user] = Credential(verifier, md5_hash(user, password) if with_md5 else None,
                                 password=password if keep_passwords else None)
    return creds


def read_users_file(path: str) -> dict[str, Credential]:
    """``user:SCRAM-SHA-256$...`` lines → SCRAM-only credentials."""
    creds: dict[str, Credential] = {}
    for where, user, secret in _lines(path):
        if user in creds:
            raise ConfigError(f"{where}: user {user!r} is listed twice")
        try:
            creds[user] = Credential(ScramVerifier.parse(secret.strip()), scram_only=True)
        except ValueError as exc:
            raise ConfigError(f"{where}: user {user!r}: {exc}") from None
    return creds


# --------------------------------------------------------------------------- messages


_AUTHENTICATION = type_byte(AUTHENTICATION)


def _auth_request(code: int, body: bytes = b"") -> bytes:
    return _AUTHENTICATION + struct.pack("!ii", len(body) + 8, code) + body


def authentication_cleartext_password() -> bytes:
    return _auth_request(3)


def authentication_md5_password(salt: bytes) -> bytes:
    return _auth_request(5, salt)


def authentication_sasl(mechanisms: list[str]) -> bytes:
    return _auth_request(10, b"".join(m.encode() + b"\x00" for m in mechanisms) + b"\x00")


def authentication_sasl_continue(data: bytes) -> bytes:
    return _auth_request(11, data)


def authentication_sasl_final(data: bytes) -> bytes:
    return _auth_request(12, data)


def _password_string(payload: bytes) -> str | None:
    """The body of a PasswordMessage: one NUL-terminated string, nothing after it."""
    if not payload.endswith(b"\x00") or b"\x00" in payload[:-1]:
        raise ProtocolViolation("invalid password packet size")
    try:
        return payload[:-1].decode("utf-8")
    except UnicodeDecodeError:
        return None  # cannot match any password pgbarrier derived


# --------------------------------------------------------------------------- exchanges


class Step(Enum):
    EXPECT_PASSWORD = "expect-password"          # cleartext or md5 PasswordMessage
    EXPECT_SASL_INITIAL = "expect-sasl-initial"  # SASLInitialResponse (client-first)
    EXPECT_SASL_RESPONSE = "expect-sasl-response"  # SASLResponse (client-final)
    DONE = "done"
    FAILED = "failed"


class Exchange:
    """One connection's authentication; subclasses implement :meth:`_receive`."""

    first_step = Step.EXPECT_PASSWORD

    def __init__(self, user: str, credential: Credential | None = None) -> None:
        self.user = user
        self.step = self.first_step
        #: the user's password once authenticated, when pgbarrier keeps it (module rules)
        self.password: str | None = None
        self._kept = credential.password if credential is not None else None

    @property
    def done(self) -> bool:
        return self.step is Step.DONE

    def start(self) -> bytes:
        raise NotImplementedError

    def receive(self, payload: bytes) -> bytes:
        """Take the body of one ``p`` message; return the messages to send next."""
        if self.step in (Step.DONE, Step.FAILED):
            raise ProtocolViolation("unexpected password message")
        try:
            out = self._receive(payload)
        except BaseException:
            self.step = Step.FAILED
            raise
        if self.done and self.password is None:
            self.password = self._kept
        return out

    def _receive(self, payload: bytes) -> bytes:
        raise NotImplementedError

    def _failed(self) -> InvalidPassword:
        return InvalidPassword(f'password authentication failed for user "{self.user}"')


class CleartextExchange(Exchange):
    def __init__(self, user: str, credential: Credential | None, *,
                 keep_password: bool = False) -> None:
        super().__init__(user, credential)
        self._credential = credential
        self._keep = keep_password

    def start(self) -> bytes:
        return authentication_cleartext_password()

    def _receive(self, payload: bytes) -> bytes:
        password = _password_string(payload)
        if not password or self._credential is None \
                or not self._credential.scram.check_plain(password):
            raise self._failed()
        if self._keep:
            self.password = password
        self.step = Step.DONE
        return b""


class Md5Exchange(Exchange):
    def __init__(self, user: str, credential: Credential | None,
                 salt: bytes | None = None) -> None:
        super().__init__(user, credential)
        self._md5 = credential.md5 if credential is not None else None
        self.salt = salt or secrets.token_bytes(4)

    def start(self) -> bytes:
        return authentication_md5_password(self.salt)

    def _receive(self, payload: bytes) -> bytes:
        answer = _password_string(payload)
        if not answer or self._md5 is None:
            raise self._failed()
        expected = "md5" + hashlib.md5(self._md5.encode("ascii") + self.salt).hexdigest()
        if not hmac.compare_digest(answer.encode("utf-8"), expected.encode("ascii")):
            raise self._failed()
        self.step = Step.DONE
        return b""


class ScramExchange(Exchange):
    """SCRAM-SHA-256 (and -PLUS over TLS) on scramp's server side."""

    first_step = Step.EXPECT_SASL_INITIAL

    def __init__(self, user: str, verifier: ScramVerifier, *,
                 cert_pem: str | None = None, credential: Credential | None = None) -> None:
        super().__init__(user, credential)
        self._verifier = verifier
        self._cert_pem = cert_pem
        self.mechanisms = [SCRAM_PLUS, SCRAM] if cert_pem else [SCRAM]
        self._server: object | None = None

    def start(self) -> bytes:
        return authentication_sasl(self.mechanisms)

    def _receive(self, payload: bytes) -> bytes:
        if self.step is Step.EXPECT_SASL_INITIAL:
            return self._client_first(payload)
        return self._client_final(payload)

    def _client_first(self, payload: bytes) -> bytes:
        end = payload.find(b"\x00")
        if end < 0 or len(payload) < end + 5:
            raise ProtocolViolation("malformed SASLInitialResponse message")
        mechanism = payload[:end].decode("utf-8", "replace")
        (length,) = struct.unpack("!i", payload[end + 1:end + 5])
        data = payload[end + 5:]
        if mechanism not in self.mechanisms:
            raise ProtocolViolation("client selected an invalid SASL authentication mechanism")
        if length != len(data):
            raise ProtocolViolation("malformed SASLInitialResponse message")
        client_first = _scram_text(data)
        header, bare = _split_client_first(client_first)
        cb = ("tls-server-end-point", self._cert_pem) if self._cert_pem else None
        verifier = self._verifier
        server = scramp.ScramMechanism(mechanism).make_server(
            lambda _scram_user: verifier.auth_info(), channel_binding=cb)
        # scramp refuses libpq's empty SCRAM user name ("n=,"); the name is ignored anyway
        # (the start-up packet's user counts), so scramp parses "n=*" while the proof is
        # checked over the bare message the client really sent.
        _scram_call(server.set_client_first, header + re.sub(r"^n=[^,]*", "n=*", bare))
        if not hasattr(server, "client_first_bare"):  # pragma: no cover - scramp changed
            raise RuntimeError("unsupported scramp version: no ScramServer.client_first_bare")
        server.client_first_bare = bare
        self._server = server
        self.step = Step.EXPECT_SASL_RESPONSE
        return authentication_sasl_continue(_scram_call(server.get_server_first).encode())

    def _client_final(self, payload: bytes) -> bytes:
        server = self._server
        try:
            server.set_client_final(_scram_text(payload))  # type: ignore[attr-defined]
        except ScramException as exc:
            if exc.server_error is ServerError.INVALID_PROOF:
                raise self._failed() from None
            raise _malformed(exc) from None
        self.step = Step.DONE
        return authentication_sasl_final(server.get_server_final().encode())  # type: ignore[attr-defined]


def _scram_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ProtocolViolation("malformed SCRAM message",
                                detail="The message is not valid UTF-8.") from None


def _split_client_first(text: str) -> tuple[str, str]:
    """``gs2-header`` (through its second comma) and ``client-first-message-bare``."""
    first = text.find(",")
    second = text.find(",", first + 1) if first >= 0 else -1
    if second < 0:
        raise ProtocolViolation("malformed SCRAM message",
                                detail="The client-first message has no GS2 header.")
    return text[:second + 1], text[second + 1:]


def _scram_call(fn, *args):  # noqa: ANN001, ANN202
    try:
        return fn(*args)
    except ScramException as exc:
        raise _malformed(exc) from None


def _malformed(exc: ScramException) -> ProtocolViolation:
    return ProtocolViolation("malformed SCRAM message", detail=str(exc))


# --------------------------------------------------------------------------- authenticator


class Authenticator:
    """The server's method and credentials; :meth:`begin` makes one exchange per connection."""

    def __init__(self, method: str, credentials: dict[str, Credential], *,
                 keep_passwords: bool = False) -> None:
        if method not in METHODS:
            raise ConfigError(f"unknown authentication method {method!r} "
                              f"(choose from {', '.join(METHODS)})")
        self.method = method
        self.keep_passwords = keep_passwords
        self._credentials = credentials
        self._mock_secret = secrets.token_bytes(32)

    @property
    def user_count(self) -> int:
        return len(self._credentials)

    def begin(self, user: str, *, cert_pem: str | None = None) -> Exchange:
        """The exchange for ``user``; ``cert_pem`` is the server certificate when on TLS."""
        cred = self._credentials.get(user)
        if self.method == "scram-sha-256" or (cred is not None and cred.scram_only):
            verifier = cred.scram if cred is not None else self._mock_verifier(user)
            return ScramExchange(user, verifier, cert_pem=cert_pem, credential=cred)
        if self.method == "md5":
            return Md5Exchange(user, cred)
        return CleartextExchange(user, cred, keep_password=self.keep_passwords)

    def _mock_verifier(self, user: str) -> ScramVerifier:
        """A verifier no password matches, stable per user name (PostgreSQL's mock auth)."""
        seed = hmac.new(self._mock_secret, user.encode("utf-8"), hashlib.sha256).digest()
        return ScramVerifier(SCRAM_ITERATIONS, seed[:16], secrets.token_bytes(32),
                             secrets.token_bytes(32))


def load_authenticator(method: str | None, password_file: str | None,
                       users_file: str | None, *,
                       keep_passwords: bool = False) -> Authenticator | None:
    """Read the password sources; None means trust (no source configured).
    ``keep_passwords``: keep what an upstream login needs (see the module rules)."""
    if not password_file and not users_file:
        if method:
            raise ConfigError(f"--auth-method {method} needs --password-file or --users-file")
        return None
    method = method or DEFAULT_METHOD
    if method not in METHODS:
        raise ConfigError(f"unknown --auth-method {method!r} (choose from {', '.join(METHODS)})")
    creds: dict[str, Credential] = {}
    if password_file:
        creds.update(read_password_file(password_file, with_md5=method == "md5",
                                        keep_passwords=keep_passwords))
    if users_file:
        for user, cred in read_users_file(users_file).items():
            if user in creds:
                raise ConfigError(f"user {user!r} is in both {password_file} and {users_file}")
            creds[user] = cred
    if not creds:
        raise ConfigError("no users in " + " or ".join(f for f in (password_file, users_file) if f))
    return Authenticator(method, creds, keep_passwords=keep_passwords)


# --------------------------------------------------------------------------- listen address


def is_loopback(host: str) -> bool:
    """True when every address ``host`` names is a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    if not host:
        return False  # all interfaces
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0]).is_loopback for i in infos)


def check_listen_address(host: str, authenticator: Authenticator | None, *,
                         trust_any_host: bool = False) -> None:
    """Refuse trust on a non-loopback address unless ``trust_any_host``; ConfigError says why."""
    if authenticator is not None or is_loopback(host):
        return
    if not trust_any_host:
        raise ConfigError(
            f"refusing to listen on {host or '*'} without authentication: anyone who can reach "
            "it could connect as any user. Give --password-file or --users-file, or "
            "--trust-any-host if trust on this address is intended.")
    log.warning("trust authentication on non-loopback address %s (--trust-any-host)", host)
