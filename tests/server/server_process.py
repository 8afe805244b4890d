"""A server subprocess for the tests: the fixture apps over SQL sessions.

Usage: server_process.py SESSION_DB_URL [GRACEFUL_SHUTDOWN_SECONDS]
Prints {"port": N} on its first stdout line once the socket is bound.
"""

from __future__ import annotations

import json
import socket
import sys

from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService
from eventide.server import create_app, serve
from eventide.sessions.sql_session_service import SqlSessionService
from tests.server.fixture_agents import fixture_apps


class _Services:
    def __init__(self, url: str) -> None:
        self.session_service = SqlSessionService(url)
        self.artifact_service = InMemoryArtifactService()
        self.memory_service = None


def main() -> None:
    url = sys.argv[1]
    graceful = int(sys.argv[2]) if len(sys.argv) > 2 else None
    services = _Services(url)
    api = create_app(apps=fixture_apps(), services=services)

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    print(json.dumps({"port": sock.getsockname()[1]}), flush=True)
    serve(api, sock=sock, graceful_shutdown_timeout=graceful, log_level="warning")


if __name__ == "__main__":
    main()
