"""TLS for client connections: the server-side context, loaded once at start-up.

Rules this module keeps:

* TLS is on only when both a certificate (chain) file and a key file are configured; one
  without the other, or files that do not load, is a start-up error (:class:`ConfigError`),
  never a per-connection one.
* With TLS on, the handler answers an SSLRequest ``S`` and runs the handshake on the same
  socket; without it, ``N``. A GSSENCRequest is always ``N`` (no GSSAPI).
* TLS 1.2 is the minimum; client certificates are not requested.
* ``cert_pem`` is the first certificate of the chain file: what SCRAM-SHA-256-PLUS binds to
  (``tls-server-end-point``).
"""

from __future__ import annotations

import re
import ssl
from dataclasses import dataclass
from pathlib import Path

from pgbarrier.server.auth import ConfigError

_PEM_CERT = re.compile(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", re.S)


@dataclass(frozen=True)
class TlsConfig:
    context: ssl.SSLContext
    cert_pem: str


def load_tls(cert_file: str | None, key_file: str | None) -> TlsConfig | None:
    """The server TLS context, or None when TLS is not configured."""
    if not cert_file and not key_file:
        return None
    if not cert_file or not key_file:
        raise ConfigError("TLS needs both --tls-cert and --tls-key")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert_file, key_file)
        text = Path(cert_file).read_text(encoding="ascii")
    except (OSError, ssl.SSLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot load TLS certificate {cert_file} / key {key_file}: {exc}") \
            from exc
    match = _PEM_CERT.search(text)
    if match is None:
        raise ConfigError(f"{cert_file}: no PEM CERTIFICATE block")
    return TlsConfig(context, match.group(0) + "\n")
