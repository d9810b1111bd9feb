"""The byte relay's own types, below the backends, the session and the server that share them.

Issue 30 gathers the relay's protocol state here, one object written only by its
transitions: :mod:`pgbarrier.relay.state` holds the client's batch, the upstream's phase
(an enum, :class:`pgbarrier.relay.state.Phase`: idle, batch open, skipping to Sync) and
transaction status, the replies' accounting, and the relay's own
bookkeeping (the client bytes queued for the upstream, the replies expected, the
statements and portals that live upstream, the routed texts, COPY), with the queueing of
relayed messages that every relayed batch runs. :mod:`pgbarrier.relay.effects` is what a
relay step asks of the event loop, which the upstream's pump
(:mod:`pgbarrier.backends.pg_relay`), the session relay (:mod:`pgbarrier.session.relay`)
and the connection that carries the requests out (:mod:`pgbarrier.server.connection`,
its fast path :mod:`pgbarrier.server.core`) all name. :data:`RelayState` is the state's
class as :func:`pgbarrier.accel.load` picks it (the compiled extension type, or the
source), and :data:`UpstreamCore` the base class of the upstream (the fields every
relayed batch reads): the users take them from here. It imports only pgbarrier's foundations
(:mod:`pgbarrier.accel`, :mod:`pgbarrier.pgproto`) and the words of
:mod:`pgbarrier.sql.route` that decide, from a text's bytes, that it is relayed.
"""

from pgbarrier import accel

_state = accel.load("pgbarrier.relay.state")
RelayState = _state.RelayState
UpstreamCore = _state.UpstreamCore

__all__ = ["RelayState", "UpstreamCore"]
