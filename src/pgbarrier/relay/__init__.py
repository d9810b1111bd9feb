"""The byte relay's own types, below the backends, the session and the server that share them.

Issue 30 gathers the relay's protocol state here (one object, its only writer); today
this package holds what a relay step asks of the event loop (:mod:`pgbarrier.relay.effects`),
which the upstream's pump (:mod:`pgbarrier.backends.pg_relay`), the session relay
(:mod:`pgbarrier.session.relay`) and the connection that carries the requests out
(:mod:`pgbarrier.server.connection`) all name. It imports nothing of pgbarrier.
"""
