"""Error texts google-adk's tests and apps match on (``pytest.raises(..., match=...)``,
``except ValueError as e: if "..." in str(e)``): each Eventide error starts with google-adk
2.13's words, then says what to do. The errors stay Eventide's classes (all ValueErrors, as
google-adk's are)."""

from __future__ import annotations

import re

import pytest

from eventide import (
    App,
    BasePlugin,
    CallbackContext,
    InMemoryRunner,
    InMemorySessionService,
    LlmAgent,
    RunConfig,
    Runner,
    ToolContext,
)
from eventide.auth import ApiKeyScheme, AuthConfig
from eventide.contexts import InvocationContext
from eventide.errors import SessionNotFoundError
from eventide.plugins.plugin_manager import PluginManager
from eventide.testing import ScriptedModel


def _agent() -> LlmAgent:
    return LlmAgent(name="a", model=ScriptedModel(responses=["ok"]))


def test_runner_construction_errors() -> None:
    agent = _agent()
    with pytest.raises(
        ValueError, match=re.escape("Only one of app, agent, or node may be provided.")
    ):
        Runner(
            app=App(name="app", root_agent=agent),
            agent=agent,
            session_service=InMemorySessionService(),
        )
    with pytest.raises(ValueError, match="One of app, agent, or node must be provided"):
        Runner(app_name="app", session_service=InMemorySessionService())
    with pytest.raises(ValueError, match="app_name is required when agent is provided"):
        Runner(agent=agent, session_service=InMemorySessionService())


def test_clone_errors() -> None:
    agent = _agent()
    with pytest.raises(ValueError, match="Cannot update nonexistent fields in LlmAgent: invalid"):
        agent.clone(update={"invalid": 1})
    with pytest.raises(ValueError, match="Cannot update `parent_agent` field in clone"):
        agent.clone(update={"parent_agent": None})


def test_duplicate_plugin_name() -> None:
    manager = PluginManager()
    manager.register_plugin(BasePlugin(name="p1"))
    with pytest.raises(ValueError, match=re.escape("Plugin with name 'p1' already registered.")):
        manager.register_plugin(BasePlugin(name="p1"))


async def test_artifacts_without_an_artifact_service() -> None:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    ctx = CallbackContext(
        InvocationContext(
            invocation_id="i", agent=_agent(), session=session, session_service=service
        )
    )
    with pytest.raises(ValueError, match=re.escape("Artifact service is not initialized.")):
        await ctx.list_artifacts()


async def test_rewind_to_an_unknown_invocation() -> None:
    runner = InMemoryRunner(_agent(), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message="hi"):
        pass
    with pytest.raises(ValueError, match=r"Invocation ID not found: inv_missing"):
        await runner.rewind_async(
            user_id="u", session_id=session.id, rewind_before_invocation_id="inv_missing"
        )
    await runner.close()


async def test_rewind_creates_a_missing_session_with_auto_create_session() -> None:
    """google-adk 2.13 gets or creates the session before rewinding (so a rewind with
    ``auto_create_session`` fails on the invocation, not the session) and takes a
    ``run_config``; before, Eventide raised SessionNotFoundError and refused ``run_config``."""
    service = InMemorySessionService()
    runner = Runner(
        app_name="app", agent=_agent(), session_service=service, auto_create_session=True
    )
    with pytest.raises(ValueError, match=r"Invocation ID not found: inv_missing"):
        await runner.rewind_async(
            user_id="u",
            session_id="missing",
            rewind_before_invocation_id="inv_missing",
            run_config=RunConfig(),
        )
    created = await service.get_session(app_name="app", user_id="u", session_id="missing")
    assert created is not None
    assert created.events == []
    await runner.close()


async def test_rewind_without_auto_create_session_still_needs_the_session() -> None:
    runner = InMemoryRunner(_agent(), app_name="app")
    with pytest.raises(SessionNotFoundError):
        await runner.rewind_async(
            user_id="u", session_id="missing", rewind_before_invocation_id="inv_missing"
        )
    assert (
        await runner.session_service.get_session(app_name="app", user_id="u", session_id="missing")
        is None
    )
    await runner.close()


async def test_confirmation_and_credential_requests_outside_a_tool_call() -> None:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u")
    ctx = ToolContext(
        InvocationContext(
            invocation_id="i", agent=_agent(), session=session, session_service=service
        )
    )
    with pytest.raises(ValueError, match="request_confirmation requires function_call_id"):
        ctx.request_confirmation(hint="sure?")
    with pytest.raises(ValueError, match="request_credential requires function_call_id"):
        ctx.request_credential(AuthConfig(auth_scheme=ApiKeyScheme(name="X-Api-Key")))


def test_an_app_without_root_agent_is_a_value_error() -> None:
    """google-adk 2.13: ``App(name=...)`` alone raises ValueError "root_agent must be
    provided" (a dataclass would raise TypeError for the missing argument)."""
    with pytest.raises(ValueError, match="root_agent must be provided"):
        App(name="app")
