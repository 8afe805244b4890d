"""Server and app information, as ``adk web`` answers it: ``/version``,
``/apps/{app}/app-info``, the UI's ``runtime-config.json`` and config, and memory.

``PATCH /apps/{app}/users/{user}/memory`` adds a session's events to the memory service.
"""

from __future__ import annotations

import logging
import platform
from typing import Any

from fastapi import FastAPI, HTTPException, Request, Response
from pydantic import ValidationError

from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import LlmAgent
from eventide.errors import AppLoadError, AppNotFoundError
from eventide.server.app_registry import AppRegistry
from eventide.server.json_responses import (
    app_load_failed,
    json_response,
    known_app,
    read_json,
    validation_error,
)
from eventide.server.request_models import UpdateMemoryRequest
from eventide.server.session_routes import no_session
from eventide.tools.base_tool import BaseTool
from eventide.tools.base_toolset import BaseToolset
from eventide.types import camel_case_keys

__all__ = ["add_info_routes", "detailed_app_list", "root_agent_of", "runtime_config"]

logger = logging.getLogger("eventide.server")


def runtime_config() -> dict[str, Any]:
    """What ADK's UI reads from ``/dev-ui/assets/config/runtime-config.json``: the API is
    served from the same origin (an empty ``backendUrl``), no telemetry."""
    return {"backendUrl": "", "telemetry": None}


async def root_agent_of(registry: AppRegistry, app_name: str) -> BaseAgent:
    """The app's root agent; 404 for an unknown app, 500 naming the error when it fails to
    load."""
    try:
        runner = await registry.runner(app_name)
    except AppNotFoundError as exc:
        raise HTTPException(404, detail=str(exc)) from exc
    except AppLoadError as exc:
        raise app_load_failed(app_name, exc) from exc
    return runner.agent


async def detailed_app_list(registry: AppRegistry) -> list[dict[str, Any]]:
    """Each served app that loads, as ``adk api_server``'s ``/list-apps?detailed=true``
    describes it; an app that fails to load is logged and left out, as there."""
    apps: list[dict[str, Any]] = []
    for name in registry.names():
        try:
            root = (await registry.runner(name)).agent
        except (AppLoadError, AppNotFoundError) as exc:
            logger.error("Failed to load app %r for the app list: %s", name, exc)
            continue
        folder = registry.folder(name)
        yaml = folder is not None and (folder / "root_agent.yaml").is_file()
        apps.append(
            {
                "name": name,
                "rootAgentName": root.name,
                "description": root.description,
                "language": "yaml" if yaml else "python",
                "isComputerUse": False,
                "agents": None,
            }
        )
    return apps


def _tool_declarations(agent: BaseAgent) -> list[dict[str, Any]]:
    if not isinstance(agent, LlmAgent):
        return []
    declarations: list[dict[str, Any]] = []
    for tool in agent.tools:
        if isinstance(tool, BaseToolset):
            continue  # listing a toolset's tools may connect to its server; not for a listing
        if isinstance(tool, BaseTool):
            declaration = tool.get_declaration()
        else:
            from eventide.tools.function_tool import FunctionTool

            declaration = FunctionTool(tool).get_declaration()
        if declaration is not None:
            declarations.append(declaration.model_dump(mode="json", exclude_none=True))
    if not declarations:
        return []
    return [{"functionDeclarations": [camel_case_keys(d) for d in declarations]}]


def _agent_info(agent: BaseAgent) -> dict[str, Any]:
    instruction = agent.instruction if isinstance(agent, LlmAgent) else ""
    return {
        "name": agent.name,
        "description": agent.description,
        "instruction": instruction if isinstance(instruction, str) else "<dynamic>",
        "tools": _tool_declarations(agent),
        "sub_agents": [sub.name for sub in agent.sub_agents],
    }


def add_info_routes(api: FastAPI, registry: AppRegistry) -> None:
    """Register ``/version``, ``/apps/{app}/app-info``, the UI config routes and memory."""
    from eventide import __version__

    @api.get("/version", summary="The server's version", tags=["server"])
    async def version() -> dict[str, str]:
        """``{"version", "language", "language_version"}``, as ``adk api_server`` sends."""
        return {
            "version": __version__,
            "language": "python",
            "language_version": platform.python_version(),
        }

    @api.get("/apps/{app_name}/app-info", summary="An app's agents and tools", tags=["server"])
    async def app_info(app_name: str) -> Response:
        """The app's root agent name and, per agent, its description, instruction, tools
        (function declarations) and sub-agents."""
        root = await root_agent_of(registry, app_name)
        return json_response(
            {
                "name": app_name,
                "rootAgentName": root.name,
                "description": root.description,
                "language": "python",
                "isComputerUse": False,
                "agents": {agent.name: _agent_info(agent) for agent in root.walk()},
            }
        )

    @api.get("/dev-ui/assets/config/runtime-config.json", include_in_schema=False)
    async def ui_runtime_config() -> dict[str, Any]:
        return runtime_config()

    @api.get("/dev-ui/config", include_in_schema=False)
    async def ui_config() -> dict[str, Any]:
        return {"logo_text": None, "logo_image_url": None}

    @api.patch(
        "/apps/{app_name}/users/{user_id}/memory",
        response_model=None,
        summary="Add a session's events to the memory service",
        tags=["memory"],
    )
    async def update_memory(app_name: str, user_id: str, request: Request) -> Response:
        """Index the session ``{"sessionId": ...}`` in memory so later turns can recall it."""
        data = await read_json(request, required=True)
        try:
            body = UpdateMemoryRequest.model_validate(data)
        except ValidationError as exc:
            raise validation_error(exc) from exc
        known_app(registry, app_name)
        memory = registry.services.memory_service
        if memory is None:
            raise HTTPException(
                409, detail="This server has no memory service; start it with one to use memory."
            )
        session = await registry.services.session_service.get_session(
            app_name=app_name, user_id=user_id, session_id=body.session_id
        )
        if session is None:
            raise HTTPException(404, detail=no_session(app_name, user_id, body.session_id))
        await memory.add_session_to_memory(session)
        return json_response(None)
