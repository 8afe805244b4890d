"""A small app for history tests: each user message makes the model call ``remember``, which
writes state in every scope and saves two artifacts; then the model answers ``ok <value>``."""

from __future__ import annotations

from typing import Any

from eventide import LlmAgent, Runner, ToolContext, types
from eventide.events import Event
from eventide.models.llm_request import LlmRequest
from eventide.testing import FunctionModel
from eventide.testing.scripted_model import ScriptItem, text_response, tool_call_response
from tests.history.conftest import Stores


async def remember(value: str, tool_context: ToolContext) -> dict[str, Any]:
    """Store ``value`` in the session, app, user and temp scopes, and in two artifacts."""
    tool_context.state["last"] = value
    tool_context.state["app:last"] = value
    tool_context.state["user:last"] = value
    tool_context.state["temp:last"] = value
    await tool_context.save_artifact("notes.txt", types.Part(text=value))
    await tool_context.save_artifact("user:profile.txt", types.Part(text=value))
    return {"stored": value}


def answer(request: LlmRequest) -> ScriptItem:
    """Call ``remember`` with the user's new text; after the tool's answer, say ``ok``."""
    last = request.contents[-1]
    part = (last.parts or [types.Part()])[-1]
    if part.function_response is not None:
        return text_response(f"ok {(part.function_response.response or {})['stored']}")
    return tool_call_response(("remember", {"value": part.text or ""}))


def make_runner(stores: Stores) -> tuple[Runner, FunctionModel]:
    model = FunctionModel(function=answer)
    agent = LlmAgent(name="keeper", model=model, tools=[remember])
    runner = Runner(
        app_name=stores.app,
        agent=agent,
        session_service=stores.sessions,
        artifact_service=stores.artifacts,
    )
    return runner, model


async def turn(runner: Runner, user: str, session_id: str, text: str) -> list[Event]:
    """Run one user turn and return its committed events."""
    return [
        e
        async for e in runner.run_async(user_id=user, session_id=session_id, new_message=text)
        if not e.partial
    ]


def conversation(request: LlmRequest) -> list[tuple[str, str]]:
    """The request's contents as ``(role, what)`` pairs: text, ``call:name`` or ``answer:name``."""
    pairs: list[tuple[str, str]] = []
    for content in request.contents:
        for part in content.parts or ():
            if part.function_call is not None:
                what = f"call:{part.function_call.name}"
            elif part.function_response is not None:
                what = f"answer:{part.function_response.name}"
            else:
                what = part.text or ""
            pairs.append((content.role or "", what))
    return pairs
