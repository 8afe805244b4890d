"""One namespace per framework, so each scenario is written once.

Eventide's public names mirror google-adk's, so the two sides differ only in where the names
are imported from (and in the SQL session service's constructor).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

__all__ = ["FRAMEWORKS", "Api", "load_api"]

FRAMEWORKS = ("eventide", "adk")


@dataclass(slots=True, kw_only=True)
class Api:
    """The names a scenario needs, taken from one framework."""

    name: str
    types: Any
    Runner: Any
    LlmAgent: Any
    BaseAgent: Any
    BaseLlm: Any
    LlmResponse: Any
    Event: Any
    EventActions: Any
    RunConfig: Any
    StreamingMode: Any
    InMemorySessionService: Any
    sql_session_service: Any  # callable(url) -> session service, or None when unavailable
    sql_unavailable_reason: str = ""


def load_api(name: str) -> Api:
    """Import one framework's public names (``eventide`` or ``adk``)."""
    if name == "eventide":
        return _load_eventide()
    if name == "adk":
        return _load_adk()
    raise ValueError(f"unknown framework {name!r}; use one of {', '.join(FRAMEWORKS)}")


def _load_eventide() -> Api:
    import eventide

    llm_agent = getattr(eventide, "LlmAgent", None)
    if llm_agent is None:  # before the lead's LlmAgent is exported from the package
        try:
            llm_agent = importlib.import_module("eventide.agents.llm_agent").LlmAgent
        except (ImportError, AttributeError):
            llm_agent = None
    sql: Any = None
    reason = ""
    try:
        module = importlib.import_module("eventide.sessions.sql_session_service")
        sql = module.SqlSessionService
    except (ImportError, AttributeError) as exc:
        reason = f"eventide.sessions.sql_session_service.SqlSessionService: {exc}"
    return Api(
        name="eventide",
        types=eventide.types,
        Runner=eventide.Runner,
        LlmAgent=llm_agent,
        BaseAgent=eventide.BaseAgent,
        BaseLlm=eventide.BaseLlm,
        LlmResponse=eventide.LlmResponse,
        Event=eventide.Event,
        EventActions=eventide.EventActions,
        RunConfig=eventide.RunConfig,
        StreamingMode=eventide.StreamingMode,
        InMemorySessionService=eventide.InMemorySessionService,
        sql_session_service=sql,
        sql_unavailable_reason=reason,
    )


def _load_adk() -> Api:
    from google.adk.agents import BaseAgent, LlmAgent
    from google.adk.agents.run_config import RunConfig, StreamingMode
    from google.adk.events import Event, EventActions
    from google.adk.models import BaseLlm, LlmResponse
    from google.adk.runners import Runner
    from google.adk.sessions import DatabaseSessionService, InMemorySessionService
    from google.genai import types

    def sql(url: str) -> Any:
        return DatabaseSessionService(db_url=url)

    return Api(
        name="adk",
        types=types,
        Runner=Runner,
        LlmAgent=LlmAgent,
        BaseAgent=BaseAgent,
        BaseLlm=BaseLlm,
        LlmResponse=LlmResponse,
        Event=Event,
        EventActions=EventActions,
        RunConfig=RunConfig,
        StreamingMode=StreamingMode,
        InMemorySessionService=InMemorySessionService,
        sql_session_service=sql,
    )
