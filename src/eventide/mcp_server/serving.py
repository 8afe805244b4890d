"""Running the agents' MCP server: over stdio (launched by the client) or streamable HTTP."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from eventide.apps.app import App
from eventide.mcp_server.agent_tools_server import DEFAULT_USER, build_mcp_server
from eventide.server.app_registry import AppRegistry, ServicesLike

__all__ = ["http_app", "mcp_registry", "serve_http", "serve_stdio"]


def mcp_registry(
    apps_dir: Path, services: ServicesLike | None = None, *, apps: dict[str, App] | None = None
) -> AppRegistry:
    """The apps of ``apps_dir`` (and ``apps``, already loaded) on ``services`` (by default
    SQLite sessions and artifact files in ``apps_dir/.eventide``, as ``eventide api-server``
    uses)."""
    if services is None:
        from eventide.apps.services import build_services

        services = build_services(session_db=None, artifact_root=None, base_dir=apps_dir)
    return AppRegistry(services=services, apps_dir=apps_dir, apps=apps)


async def serve_stdio(registry: AppRegistry, *, user_id: str = DEFAULT_USER) -> None:
    """Serve MCP on this process's stdin and stdout until the client closes them."""
    from mcp.server.stdio import stdio_server

    server = build_mcp_server(registry, user_id=user_id)
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    finally:
        await registry.close()


def http_app(registry: AppRegistry, *, user_id: str = DEFAULT_USER, host: str = "127.0.0.1") -> Any:
    """The streamable-HTTP ASGI app (MCP at ``/mcp``)."""
    server = build_mcp_server(registry, user_id=user_id)
    app = server.streamable_http_app(host=host)
    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(asgi: Any) -> AsyncGenerator[None, None]:
        async with inner(asgi):
            try:
                yield
            finally:
                await registry.close()

    app.router.lifespan_context = lifespan
    return app


def serve_http(
    registry: AppRegistry, *, port: int, host: str = "127.0.0.1", user_id: str = DEFAULT_USER
) -> None:
    """Serve MCP over streamable HTTP at ``http://host:port/mcp`` until interrupted."""
    import uvicorn

    uvicorn.run(
        http_app(registry, user_id=user_id, host=host), host=host, port=port, log_level="warning"
    )
