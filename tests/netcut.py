"""A TCP forwarder whose connections a test can partition, for faults a kill cannot make.

``Forwarder(target_host, target_port)`` listens on 127.0.0.1 (a free port) and relays
every connection to the target. :meth:`Forwarder.partition` cuts one relayed connection
the way a network partition does: the target side is closed (the server sees the session
end, e.g. PostgreSQL frees its advisory locks) while the client side stays open and
silent (the client is told nothing: its socket never turns readable). Every socket and
thread ends in :meth:`close` (also a context manager).
"""

from __future__ import annotations

import socket
import threading


class _Pair:
    def __init__(self, client: socket.socket, server: socket.socket) -> None:
        self.client, self.server = client, server
        self.partitioned = False

    @property
    def server_side_port(self) -> int:
        """The local port of the connection to the target (``client_port`` in
        ``pg_stat_activity``)."""
        return self.server.getsockname()[1]


class Forwarder:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._pairs: list[_Pair] = []
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self.target, timeout=10)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            pair = _Pair(client, server)
            with self._lock:
                if self._closed:
                    client.close()
                    server.close()
                    return
                self._pairs.append(pair)
            threading.Thread(target=self._pump, args=(pair, client, server), daemon=True).start()
            threading.Thread(target=self._pump, args=(pair, server, client), daemon=True).start()

    @staticmethod
    def _pump(pair: _Pair, src: socket.socket, dst: socket.socket) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            if not data or pair.partitioned:
                if not pair.partitioned:  # an ordinary end: pass it on
                    for s in (src, dst):
                        try:
                            s.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                return
            try:
                dst.sendall(data)
            except OSError:
                return

    def partition(self, server_side_port: int) -> bool:
        """Cut the relayed connection whose target-side local port is ``server_side_port``:
        the target sees it closed, the client sees nothing. False if there is none."""
        with self._lock:
            pairs = [p for p in self._pairs if not p.partitioned
                     and p.server.fileno() != -1 and p.server_side_port == server_side_port]
        for pair in pairs:
            pair.partitioned = True
            try:
                pair.server.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            pair.server.close()
        return bool(pairs)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pairs, self._pairs = self._pairs, []
        self._listener.close()
        for pair in pairs:
            for s in (pair.client, pair.server):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def __enter__(self) -> Forwarder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
