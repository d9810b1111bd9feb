"""The serving core: one asyncio event loop (uvloop) owns every client socket.

* :mod:`~pgbarrier.server.frames` splits a byte stream into protocol frames (no I/O);
* :mod:`~pgbarrier.server.pool` runs blocking work (DuckDB statements, the meta store,
  an upstream's full path) on threads that exist only while there is work;
* :mod:`~pgbarrier.server.connection` is one client: start-up, TLS, authentication, then
  its messages handed to the session, a batch at a time;
* :mod:`~pgbarrier.server.upstream_io` is the loop's side of an upstream socket the relay
  reads as bytes;
* :mod:`~pgbarrier.server.listener` accepts, keeps the limits and the registry of sessions
  (cancel keys), and shuts down with a grace period;
* :mod:`~pgbarrier.server.auth`, :mod:`~pgbarrier.server.tls`,
  :mod:`~pgbarrier.sql.startup_params` and :mod:`~pgbarrier.server.lognames` are what
  start-up needs (password exchanges, the TLS context, start-up parameter checks, names safe
  to log).
"""
