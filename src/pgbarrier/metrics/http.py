"""``/metrics`` over HTTP: prometheus_client's WSGI server on a daemon thread."""

from __future__ import annotations

import threading
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server

__all__ = ["MetricsServer"]


class MetricsServer:
    """Serves ``registry`` on ``host:port`` (0 picks a free port: :attr:`port` says which)
    until :meth:`stop`. Raises OSError when the address cannot be bound."""

    def __init__(self, registry: CollectorRegistry, host: str, port: int) -> None:
        self._httpd: Any
        self._thread: threading.Thread
        self._httpd, self._thread = start_http_server(port, addr=host, registry=registry)
        self._thread.name = "pgbarrier-metrics"
        self.host, self.port = self._httpd.server_address[:2]

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
