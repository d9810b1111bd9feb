"""What both sessions on an upstream PostgreSQL answer alike, where backends differ.

libpq's :class:`~pgbarrier.backends.postgres.PostgresSession` (a TLS upstream) and the byte
relay's :class:`~pgbarrier.backends.pg_relay.RelaySession` both hand rows back as the
upstream's own bytes and Bind parameters on as the client sent them. Rules they keep
(the questions are :class:`~pgbarrier.backends.base.BackendSession`'s):

* Parameters are the client's Bind bytes, formats and type OIDs (:class:`WireParams`),
  never decoded: the upstream reads them as PostgreSQL does.
* Rows are the upstream's text bytes, or its binary bytes when the client asked binary
  for every column; with mixed formats the binary columns are converted here from the
  text (only types pgbarrier can both read as text and write as binary; the rest go as
  text).
* FunctionCall on the full path is refused with 0A000 (the byte relay passes FunctionCall
  upstream itself, so this is libpq's TLS path).
* COPY with the client is the upstream's (relayed) or refused, never run here; there is
  no implicit transaction of pgbarrier's: the upstream keeps the extended protocol's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pgbarrier.backends.base import BackendSession, WireParams
from pgbarrier.errors import PgError
from pgbarrier.pgproto import types as pgt


class UpstreamSession(BackendSession):
    """A client's session on an upstream PostgreSQL (see the module rules)."""

    def bind_params(self, wire: WireParams, decode: Callable[[], list[Any]]
                    ) -> list[Any] | WireParams:
        return wire

    def binary_format(self, type_oid: int, all_binary: bool) -> int:
        if all_binary:
            return 1  # the upstream is asked for binary rows and relays them
        # mixed formats: upstream text, converted here for the binary columns
        return 1 if pgt.supports_binary(type_oid) and pgt.supports_text_decode(type_oid) else 0

    def function_call_refused(self, oid: int) -> PgError:
        return PgError("fastpath function calls are not supported by pgbarrier over a "
                       "TLS upstream connection", sqlstate="0A000",
                       hint="Call the function in a SELECT.")
