"""``eventide mcp-server``: the apps of a folder as MCP tools, over stdio or streamable HTTP.

Over stdio, stdout is the protocol's: everything the command says goes to stderr.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from eventide.errors import EventideError, UsageError

__all__ = ["run_mcp_server"]


def run_mcp_server(
    *,
    apps_dir: Path,
    http_port: int | None,
    host: str,
    session_db: str | None,
    user_id: str,
) -> None:
    """Serve the apps in ``apps_dir`` until the client leaves (stdio) or Ctrl-C (HTTP).

    Raises:
        UsageError: not a folder of apps, a bad database URL, or no ``mcp`` package.
    """
    try:
        from eventide.mcp_server import mcp_registry, serve_http, serve_stdio
    except ImportError as exc:
        raise UsageError(
            "eventide mcp-server needs the mcp extra: pip install 'eventide[mcp]'."
        ) from exc
    from eventide.apps.demo_model import HOW_TO_CONFIGURE, prepare_models
    from eventide.apps.loader import discover_apps
    from eventide.apps.services import build_services
    from eventide.cli.adk_apps import load_any_app

    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    folders = discover_apps(apps_dir)
    services = build_services(session_db=session_db, artifact_root=None, base_dir=apps_dir)
    apps: dict[str, Any] = {}
    demo: list[str] = []
    for name, folder in folders.items():
        try:
            app = load_any_app(folder).app
        except EventideError as exc:
            errors.print(Text(f"App {name!r} will not load: {exc}", style="yellow"))
            continue
        if prepare_models(app.root_agent).uses_demo_model:
            demo.append(name)
        apps[name] = app
    if demo:
        errors.print(
            Text(
                f"Using the offline demo model for {', '.join(demo)}: {HOW_TO_CONFIGURE}.", "yellow"
            )
        )
    registry = mcp_registry(apps_dir, services, apps=apps)
    if http_port is None:
        errors.print(f"Serving {len(apps)} app(s) from {apps_dir.resolve()} as MCP tools on stdio")
        asyncio.run(serve_stdio(registry, user_id=user_id))
        return
    errors.print(
        f"Serving {len(apps)} app(s) from {apps_dir.resolve()} as MCP tools at "
        f"http://{host}:{http_port}/mcp"
    )
    serve_http(registry, port=http_port, host=host, user_id=user_id)
