from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from eventide.server import create_app
from tests.server.fixture_agents import fixture_apps
from tests.server.harness import ThreadedServer


@pytest.fixture(scope="module")
def server() -> Iterator[ThreadedServer]:
    """One real uvicorn server per test module, serving the fixture apps in memory."""
    with ThreadedServer(create_app(apps=fixture_apps())) as running:
        yield running


@pytest.fixture
def client(server: ThreadedServer) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, timeout=30) as http:
        yield http
