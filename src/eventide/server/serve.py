"""``serve``: run an API app with uvicorn, with graceful shutdown."""

from __future__ import annotations

import gc
import socket
from typing import Any

__all__ = ["serve"]

# Collect the youngest generation after this many new container objects instead of
# CPython's 700. Every turn builds a few hundred short-lived records (events, contents,
# parts, request and response objects); at 700 the collector ran every few turns and
# promoted live in-flight objects to older generations, so that under 200 concurrent
# conversations a quarter of the server's CPU went to collections. Measured with
# benchmarks/bench_server_vs_adk.py.
_GC_THRESHOLDS = (10_000, 20, 20)


def serve(
    api: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    graceful_shutdown_timeout: int | None = 30,
    log_level: str = "info",
    sock: socket.socket | None = None,
    tune_gc: bool = True,
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
        tune_gc: tune the garbage collector for a long-running server process: objects
            alive at start-up (modules, apps) are frozen out of its scans and the
            youngest generation is collected less often. The process is the server's, so
            this is the server's choice; pass False to keep the interpreter's settings.
    """
    import uvicorn

    if tune_gc:
        gc.collect()
        gc.freeze()
        gc.set_threshold(*_GC_THRESHOLDS)

    config = uvicorn.Config(
        api,
        host=host,
        port=port,
        log_level=log_level,
        timeout_graceful_shutdown=graceful_shutdown_timeout,
        lifespan="on",
        ws="auto",  # /run_live, when a websocket library (websockets) is installed
    )
    server = uvicorn.Server(config)
    server.run(sockets=[sock] if sock is not None else None)
