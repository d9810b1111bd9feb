"""The authentication state machine, fed the bytes of clients' ``p`` messages (no sockets)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import struct

import pytest
import scramp

from pgbarrier.errors import InvalidPassword, ProtocolViolation
from pgbarrier.server import auth
from pgbarrier.server.auth import (
    Authenticator,
    CleartextExchange,
    ConfigError,
    Credential,
    Md5Exchange,
    ScramExchange,
    ScramVerifier,
    Step,
    check_listen_address,
    load_authenticator,
)
from pgbarrier.server.tls import load_tls

# ------------------------------------------------------------------ helpers


def _auth_message(data: bytes) -> tuple[int, bytes]:
    """Decode one AuthenticationRequest ('R'): its code and the rest of its body."""
    assert data[:1] == b"R"
    (length, code) = struct.unpack("!ii", data[1:9])
    assert length == len(data) - 1
    return code, data[9:]


def _sasl_initial(mechanism: str, data: bytes) -> bytes:
    return mechanism.encode() + b"\x00" + struct.pack("!i", len(data)) + data


def _authenticator(method: str, users: dict[str, str]) -> Authenticator:
    creds = {u: Credential(ScramVerifier.derive(p), auth.md5_hash(u, p) if method == "md5" else None)
             for u, p in users.items()}
    return Authenticator(method, creds)


def _scram_with_scramp(exchange: ScramExchange, user: str, password: str) -> None:
    """Run the exchange with scramp's client side; raises what the exchange raises."""
    code, body = _auth_message(exchange.start())
    assert code == 10
    assert body.split(b"\x00")[:-2] == [b"SCRAM-SHA-256"]
    client = scramp.ScramClient(["SCRAM-SHA-256"], user, password)
    code, server_first = _auth_message(
        exchange.receive(_sasl_initial("SCRAM-SHA-256", client.get_client_first().encode())))
    assert code == 11 and exchange.step is Step.EXPECT_SASL_RESPONSE
    client.set_server_first(server_first.decode())
    code, server_final = _auth_message(exchange.receive(client.get_client_final().encode()))
    assert code == 12
    client.set_server_final(server_final.decode())  # checks the server's signature


def _scram_like_libpq(exchange: ScramExchange, password: str) -> bytes:
    """libpq's client: an empty SCRAM user name ("n=,"), computed here with hashlib only."""
    exchange.start()
    bare = "n=,r=rOprNGfwEbeRWgbNEkqO"
    _, server_first = _auth_message(
        exchange.receive(_sasl_initial("SCRAM-SHA-256", ("n,," + bare).encode())))
    attrs = dict(kv.split("=", 1) for kv in server_first.decode().split(","))
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(attrs["s"]),
                                 int(attrs["i"]))
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    without_proof = f"c=biws,r={attrs['r']}"
    auth_message = f"{bare},{server_first.decode()},{without_proof}".encode()
    signature = hmac.new(stored_key, auth_message, hashlib.sha256).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    final = exchange.receive(f"{without_proof},p={base64.b64encode(proof).decode()}".encode())
    server_key = hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    expected = hmac.new(server_key, auth_message, hashlib.sha256).digest()
    code, body = _auth_message(final)
    assert code == 12 and body == b"v=" + base64.b64encode(expected)
    return final


def _md5_answer(user: str, password: str, salt: bytes) -> bytes:
    inner = hashlib.md5((password + user).encode()).hexdigest()
    return b"md5" + hashlib.md5(inner.encode() + salt).hexdigest().encode() + b"\x00"


def _assert_auth_failed(excinfo: pytest.ExceptionInfo, user: str) -> None:
    err = excinfo.value
    assert err.sqlstate == "28P01" and err.severity == "FATAL"
    assert err.message == f'password authentication failed for user "{user}"'


# ------------------------------------------------------------------ SCRAM


def test_scram_full_exchange_with_scramp_client():
    exchange = _authenticator("scram-sha-256", {"root": "secret"}).begin("root")
    assert isinstance(exchange, ScramExchange)
    _scram_with_scramp(exchange, "root", "secret")
    assert exchange.done


def test_scram_with_empty_scram_user_name_as_libpq_sends_it():
    exchange = _authenticator("scram-sha-256", {"root": "s3cr:et"}).begin("root")
    _scram_like_libpq(exchange, "s3cr:et")
    assert exchange.done


def test_scram_ignores_the_scram_user_name_and_uses_the_startup_user():
    exchange = _authenticator("scram-sha-256", {"root": "secret", "bob": "other"}).begin("root")
    _scram_with_scramp(exchange, "bob", "secret")  # bob's name, root's password
    assert exchange.done


def test_scram_wrong_password_is_28P01_after_the_proof():
    exchange = _authenticator("scram-sha-256", {"root": "secret"}).begin("root")
    with pytest.raises(InvalidPassword) as excinfo:
        _scram_with_scramp(exchange, "root", "wrong")
    _assert_auth_failed(excinfo, "root")
    assert exchange.step is Step.FAILED and not exchange.done
    with pytest.raises(ProtocolViolation):  # a failed exchange accepts nothing more
        exchange.receive(b"c=biws,r=x,p=AAAA")


def test_scram_unknown_user_fails_at_the_same_step_as_a_wrong_password():
    authenticator = _authenticator("scram-sha-256", {"root": "secret"})
    exchange = authenticator.begin("mallory")
    assert isinstance(exchange, ScramExchange)
    with pytest.raises(InvalidPassword) as excinfo:
        _scram_with_scramp(exchange, "mallory", "secret")
    _assert_auth_failed(excinfo, "mallory")
    # the mock salt is stable per user name, so probing twice shows nothing either
    salts = set()
    for _ in range(2):
        ex = authenticator.begin("mallory")
        ex.start()
        client = scramp.ScramClient(["SCRAM-SHA-256"], "mallory", "x")
        _, first = _auth_message(ex.receive(_sasl_initial("SCRAM-SHA-256",
                                                          client.get_client_first().encode())))
        salts.add(dict(kv.split("=", 1) for kv in first.decode().split(","))["s"])
    assert len(salts) == 1


@pytest.mark.parametrize("payload, why", [
    (_sasl_initial("SCRAM-SHA-1", b"n,,n=,r=abc"), "invalid SASL authentication mechanism"),
    (_sasl_initial("SCRAM-SHA-256-PLUS", b"n,,n=,r=abc"), "invalid SASL authentication mechanism"),
    (b"SCRAM-SHA-256\x00" + struct.pack("!i", 50) + b"n,,n=,r=abc", "SASLInitialResponse"),
    (b"SCRAM-SHA-256\x00" + struct.pack("!i", -1), "SASLInitialResponse"),
    (b"SCRAM-SHA-256", "SASLInitialResponse"),
    (_sasl_initial("SCRAM-SHA-256", b"garbage"), "malformed SCRAM message"),
    (_sasl_initial("SCRAM-SHA-256", b"x,,n=,r=abc"), "malformed SCRAM message"),
    (_sasl_initial("SCRAM-SHA-256", b"n,,n=,r=a\xffb"), "malformed SCRAM message"),
    (_sasl_initial("SCRAM-SHA-256", b"p=tls-server-end-point,,n=,r=abc"),
     "malformed SCRAM message"),
])
def test_malformed_sasl_initial_response_is_08P01(payload, why):
    exchange = _authenticator("scram-sha-256", {"root": "secret"}).begin("root")
    exchange.start()
    with pytest.raises(ProtocolViolation) as excinfo:
        exchange.receive(payload)
    assert excinfo.value.sqlstate == "08P01" and excinfo.value.severity == "FATAL"
    assert why in excinfo.value.message
    assert exchange.step is Step.FAILED


def test_malformed_client_final_is_08P01():
    exchange = _authenticator("scram-sha-256", {"root": "secret"}).begin("root")
    exchange.start()
    exchange.receive(_sasl_initial("SCRAM-SHA-256", b"n,,n=,r=abcdef"))
    with pytest.raises(ProtocolViolation):
        exchange.receive(b"c=biws,r=not-the-nonce,p=AAAA")


def test_scram_plus_is_offered_only_with_a_certificate():
    authenticator = _authenticator("scram-sha-256", {"root": "secret"})
    _, plain = _auth_message(authenticator.begin("root").start())
    _, tls = _auth_message(authenticator.begin("root", cert_pem="-----BEGIN...").start())
    assert plain == b"SCRAM-SHA-256\x00\x00"
    assert tls == b"SCRAM-SHA-256-PLUS\x00SCRAM-SHA-256\x00\x00"


# ------------------------------------------------------------------ md5 and cleartext


def test_md5_exchange():
    exchange = _authenticator("md5", {"root": "secret"}).begin("root")
    assert isinstance(exchange, Md5Exchange)
    code, salt = _auth_message(exchange.start())
    assert code == 5 and len(salt) == 4
    assert exchange.receive(_md5_answer("root", "secret", salt)) == b""
    assert exchange.done


@pytest.mark.parametrize("user, password", [("root", "wrong"), ("nobody", "secret")])
def test_md5_wrong_password_or_unknown_user_is_28P01(user, password):
    exchange = _authenticator("md5", {"root": "secret"}).begin(user)
    _, salt = _auth_message(exchange.start())
    with pytest.raises(InvalidPassword) as excinfo:
        exchange.receive(_md5_answer(user, password, salt))
    _assert_auth_failed(excinfo, user)


def test_md5_answer_for_another_salt_is_refused():
    exchange = Md5Exchange("root", Credential(ScramVerifier.derive("x"), auth.md5_hash("root", "x")),
                           salt=b"\x01\x02\x03\x04")
    exchange.start()
    with pytest.raises(InvalidPassword):
        exchange.receive(_md5_answer("root", "x", b"\x04\x03\x02\x01"))


def test_cleartext_exchange():
    exchange = _authenticator("password", {"root": "sécret"}).begin("root")
    assert isinstance(exchange, CleartextExchange)
    assert _auth_message(exchange.start()) == (3, b"")
    exchange.receive("sécret".encode() + b"\x00")
    assert exchange.done


@pytest.mark.parametrize("user, payload", [
    ("root", b"wrong\x00"),
    ("root", b"\x00"),              # empty password
    ("root", b"\xff\xfe\x00"),      # not UTF-8: cannot be the password
    ("nobody", b"secret\x00"),
])
def test_cleartext_wrong_password_is_28P01(user, payload):
    exchange = _authenticator("password", {"root": "secret"}).begin(user)
    exchange.start()
    with pytest.raises(InvalidPassword) as excinfo:
        exchange.receive(payload)
    _assert_auth_failed(excinfo, user)


@pytest.mark.parametrize("payload", [b"secret", b"sec\x00ret\x00", b""])
def test_cleartext_malformed_packet_is_08P01(payload):
    exchange = _authenticator("password", {"root": "secret"}).begin("root")
    exchange.start()
    with pytest.raises(ProtocolViolation, match="invalid password packet size"):
        exchange.receive(payload)


def test_done_exchange_accepts_nothing_more():
    exchange = _authenticator("password", {"root": "secret"}).begin("root")
    exchange.start()
    exchange.receive(b"secret\x00")
    with pytest.raises(ProtocolViolation):
        exchange.receive(b"secret\x00")


# ------------------------------------------------------------------ verifiers and files


def test_verifier_derivation_matches_rfc_7677_computed_independently():
    v = ScramVerifier.derive("pencil", salt=b"0123456789abcdef")
    salted = hashlib.pbkdf2_hmac("sha256", b"pencil", b"0123456789abcdef", 4096)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    assert v.stored_key == hashlib.sha256(client_key).digest()
    assert v.server_key == hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    assert ScramVerifier.parse(str(v)) == v
    assert str(v).startswith("SCRAM-SHA-256$4096:")
    assert v.check_plain("pencil") and not v.check_plain("Pencil")


@pytest.mark.parametrize("text", [
    "md5abcdef",
    "SCRAM-SHA-256$4096:c2FsdA==$AAAA:BBBB",                                  # short salt, keys
    "SCRAM-SHA-256$1000:" + "A" * 24 + "$" + "A" * 44 + ":" + "A" * 44,      # too few iterations
    "SCRAM-SHA-256$4096:" + "A" * 24 + "$" + "A" * 43 + ":" + "A" * 44,      # bad base64
])
def test_bad_rolpassword_is_refused(text):
    with pytest.raises(ValueError):
        ScramVerifier.parse(text)


def test_password_file_keeps_no_plain_text(tmp_path):
    path = tmp_path / "passwords"
    path.write_text("# comment\n\nroot:hunter2:with:colons\nbob:pw\n")
    creds = auth.read_password_file(str(path), with_md5=False)
    assert set(creds) == {"root", "bob"}
    assert creds["root"].scram.check_plain("hunter2:with:colons")
    assert creds["root"].md5 is None
    assert "hunter2" not in repr(creds)
    with_md5 = auth.read_password_file(str(path), with_md5=True)
    assert with_md5["bob"].md5 == hashlib.md5(b"pwbob").hexdigest()


@pytest.mark.parametrize("content, message", [
    ("roothunter2\n", "passwords:1: expected user:secret"),
    (":hunter2\n", "passwords:1: expected user:secret"),
    ("root:\n", "passwords:1: empty password"),
    ("root:hunter2\nroot:hunter2\n", "passwords:2: user 'root' is listed twice"),
])
def test_bad_password_file_is_a_config_error_without_the_password(tmp_path, content, message):
    path = tmp_path / "passwords"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message) as excinfo:
        load_authenticator(None, str(path), None)
    assert "hunter2" not in str(excinfo.value)


def test_users_file_users_always_use_scram(tmp_path):
    salt, stored, server, i = scramp.ScramMechanism().make_auth_info("secret", salt=b"s" * 16)
    line = (f"alice:SCRAM-SHA-256${i}:{base64.b64encode(salt).decode()}"
            f"${base64.b64encode(stored).decode()}:{base64.b64encode(server).decode()}\n")
    (tmp_path / "users").write_text(line)
    (tmp_path / "passwords").write_text("root:pw\n")
    for method in ("md5", "password"):
        authenticator = load_authenticator(method, str(tmp_path / "passwords"),
                                           str(tmp_path / "users"))
        exchange = authenticator.begin("alice")
        assert isinstance(exchange, ScramExchange)
        _scram_with_scramp(exchange, "alice", "secret")
        assert exchange.done
        assert not isinstance(authenticator.begin("root"), ScramExchange)
        assert not isinstance(authenticator.begin("unknown"), ScramExchange)


def test_load_authenticator_rules(tmp_path):
    (tmp_path / "pw").write_text("root:a\n")
    (tmp_path / "empty").write_text("# nobody\n")
    assert load_authenticator(None, None, None) is None  # trust
    assert load_authenticator(None, str(tmp_path / "pw"), None).method == "scram-sha-256"
    with pytest.raises(ConfigError, match="needs --password-file"):
        load_authenticator("md5", None, None)
    with pytest.raises(ConfigError, match="unknown"):
        load_authenticator("trust", str(tmp_path / "pw"), None)
    with pytest.raises(ConfigError, match="no users"):
        load_authenticator(None, str(tmp_path / "empty"), None)
    with pytest.raises(ConfigError, match="cannot read"):
        load_authenticator(None, str(tmp_path / "missing"), None)
    with pytest.raises(ConfigError, match="both"):
        (tmp_path / "u").write_text(f"root:{ScramVerifier.derive('a')}\n")
        load_authenticator(None, str(tmp_path / "pw"), str(tmp_path / "u"))


# ------------------------------------------------------------------ start-up checks


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1"])
def test_trust_is_fine_on_loopback(host):
    check_listen_address(host, None)


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "10.1.2.3"])
def test_trust_on_other_hosts_is_refused_unless_asked_for(host):
    with pytest.raises(ConfigError, match="--password-file or --users-file"):
        check_listen_address(host, None)
    check_listen_address(host, None, trust_any_host=True)
    check_listen_address(host, _authenticator("md5", {"root": "x"}))


def test_tls_needs_both_files(tmp_path):
    assert load_tls(None, None) is None
    with pytest.raises(ConfigError, match="both"):
        load_tls(str(tmp_path / "cert.pem"), None)
    with pytest.raises(ConfigError, match="cannot load"):
        load_tls(str(tmp_path / "cert.pem"), str(tmp_path / "key.pem"))
