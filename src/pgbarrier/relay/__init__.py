"""The byte relay's own types, below the backends, the session and the server that share them.

Issue 30 gathers the relay's protocol state here (one object, its only writer); today
this package holds what a relay step asks of the event loop (:mod:`pgbarrier.relay.effects`),
which the upstream's pump (:mod:`pgbarrier.backends.pg_relay`), the session relay
(:mod:`pgbarrier.session.relay`) and the connection that carries the requests out
(:mod:`pgbarrier.server.connection`) all name, and the first part of that state
(:mod:`pgbarrier.relay.state`: the client's batch, the upstream's open batch and skipping,
its transaction status, the replies' accounting). :data:`RelayState` is that state's
class as :func:`pgbarrier.accel.load` picks it (the compiled extension type, or the
source): the users take it from here. It imports only pgbarrier's foundations
(:mod:`pgbarrier.accel`, :mod:`pgbarrier.pgproto`).
"""

from pgbarrier import accel

RelayState = accel.load("pgbarrier.relay.state").RelayState

__all__ = ["RelayState"]
