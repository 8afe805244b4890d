"""``serve``: run an API app with uvicorn, with graceful shutdown."""

from __future__ import annotations

import socket
from typing import Any

__all__ = ["serve"]


def serve(
    api: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    graceful_shutdown_timeout: int | None = 30,
    log_level: str = "info",
    sock: socket.socket | None = None,
) -> None:
    """Serve ``api`` (from :func:`create_app`) until SIGINT/SIGTERM.

    On a signal the server stops accepting connections and lets running turns (``/run``,
    ``/run_sse`` streams) finish; turns still running after ``graceful_shutdown_timeout``
    seconds are cancelled cleanly (committed events stay, nothing is half-written), then
    the services are closed. None waits for running turns without limit.

    Args:
        api: the ASGI app.
        host: the interface to listen on (``127.0.0.1`` keeps it local).
        port: the TCP port.
        graceful_shutdown_timeout: see above.
        log_level: uvicorn's log level.
        sock: an already bound socket to serve on instead of ``host``/``port``.
    """
    import uvicorn

    config = uvicorn.Config(
        api,
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=graceful_shutdown_timeout,
        lifespan="on",
        ws="none",
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock] if sock is not None else None)
