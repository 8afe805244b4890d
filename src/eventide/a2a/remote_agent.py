"""``RemoteA2aAgent``: a remote A2A agent (any runtime) in an Eventide agent tree.

Use it as a sub-agent (an ``LlmAgent`` transfers to it by its description), as a step of a
workflow, or as a tool (``AgentTool(RemoteA2aAgent(...))``). Each time it runs it:

1. resolves the remote's agent card (once: an ``AgentCard``, a URL, or a JSON file);
2. sends the conversation since its last turn (:mod:`eventide.a2a.remote_conversation`) in
   the remote context of its earlier turns, streaming when the card says the remote can;
3. yields the remote's status and text chunks as partial events as they arrive (never
   stored), and each complete answer as an event; files the remote returns are saved as
   artifacts of the session (``artifact_delta``);
4. on ``input-required`` pauses: the event holds the remote's own pending calls (an
   Eventide or google-adk remote) or an ``eventide_a2a_input_required`` call with the
   remote's question; the user's answer (a function response) resumes the remote's task;
5. turns every failure (unreachable, 401/403, timeout, malformed answer, a card that cannot
   be fetched, a failed or canceled remote task) into an error event that says what to do
   (:mod:`eventide.a2a.remote_failures`), retrying only what can succeed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from pathlib import Path
from typing import Any, ClassVar, cast
from urllib.parse import urlparse

import httpx
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types import a2a_pb2
from google.protobuf import json_format
from pydantic import PrivateAttr

from eventide import types
from eventide._ids import new_id
from eventide.a2a.part_conversion import (
    IS_LONG_RUNNING_KEY,
    TYPE_FUNCTION_CALL,
    TYPE_KEY,
    metadata_of,
    to_eventide_part,
    to_eventide_parts,
)
from eventide.a2a.remote_conversation import (
    CONTEXT_ID_KEY,
    INPUT_REQUIRED_FUNCTION,
    TASK_ID_KEY,
    outgoing_message,
)
from eventide.a2a.remote_failures import RemoteFailure, can_retry, describe_failure
from eventide.agents.base_agent import BaseAgent
from eventide.contexts import InvocationContext
from eventide.events import Event, EventActions

__all__ = ["ARTIFACT_ID_KEY", "RemoteA2aAgent"]

ARTIFACT_ID_KEY = "a2a:artifact_id"
"""``custom_metadata`` key on an answer event: the remote artifact it holds."""

DEFAULT_TIMEOUT = 600.0
_RETRY_DELAYS = (0.2, 1.0)
_ENDED = {
    a2a_pb2.TASK_STATE_FAILED: "failed",
    a2a_pb2.TASK_STATE_CANCELED: "was canceled",
    a2a_pb2.TASK_STATE_REJECTED: "was rejected",
}


class _CardError(Exception):
    """The agent card could not be fetched or read."""


class RemoteA2aAgent(BaseAgent):
    """A remote A2A agent, run like a local one (see the module docstring).

    Args:
        name: the agent's name in the tree (a Python identifier).
        agent_card: the remote's ``AgentCard``, the URL of its card (``https://host/.well-
            known/agent-card.json``, or the agent's base URL), or the path of a card file.
        description: what the agent does, for transfers (default: the card's).
        httpx_client: the HTTP client to call the remote with (its headers carry your
            credentials); by default one of its own, closed with the Runner.
        timeout: seconds to wait for the remote's answer.
        **kwargs: ``BaseAgent``'s other fields (callbacks, ...).

    Example:
        >>> helper = RemoteA2aAgent(
        ...     name="facts", agent_card="http://localhost:8001/a2a/facts"
        ... )
        >>> helper.name
        'facts'
    """

    resumes_from_log: ClassVar[bool] = True
    """In a resumable app, an invocation paused on this agent goes on by running it again:
    it reads the remote task to continue from its own events (see
    ``BaseAgent._resume_async_impl``)."""

    agent_card: Any
    timeout: float = DEFAULT_TIMEOUT
    httpx_client: Any = None

    _card: a2a_pb2.AgentCard | None = PrivateAttr(default=None)
    _client: Client | None = PrivateAttr(default=None)
    _own_http: httpx.AsyncClient | None = PrivateAttr(default=None)

    def __init__(
        self,
        name: str,
        agent_card: a2a_pb2.AgentCard | str | Path,
        *,
        description: str = "",
        httpx_client: httpx.AsyncClient | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        **kwargs: Any,
    ) -> None:
        if isinstance(agent_card, a2a_pb2.AgentCard) and not description:
            description = agent_card.description
        if isinstance(agent_card, str) and not agent_card.strip():
            raise ValueError("agent_card is empty: give an AgentCard, its URL or its file.")
        super().__init__(
            name=name,
            agent_card=agent_card,
            description=description,
            httpx_client=httpx_client,
            timeout=timeout,
            **kwargs,
        )
        if isinstance(agent_card, a2a_pb2.AgentCard):
            self._card = agent_card

    # --- the card and the client ---
    @property
    def source(self) -> str:
        """Where the card comes from, for messages and the agent graph."""
        if isinstance(self.agent_card, a2a_pb2.AgentCard):
            interfaces = self.agent_card.supported_interfaces
            return interfaces[0].url if interfaces else self.agent_card.name
        return str(self.agent_card)

    @property
    def graph_detail(self) -> str:
        """What the agent graph (``eventide web``) shows under the agent's name."""
        return f"A2A: {self.source}"

    def _http(self) -> httpx.AsyncClient:
        if isinstance(self.httpx_client, httpx.AsyncClient):
            return self.httpx_client
        if self._own_http is None:
            self._own_http = httpx.AsyncClient(timeout=httpx.Timeout(self.timeout))
        return self._own_http

    async def _fetch_card(self) -> a2a_pb2.AgentCard:
        source = self.agent_card
        if isinstance(source, a2a_pb2.AgentCard):
            return source
        text = str(source)
        if text.startswith(("http://", "https://")):
            parsed = urlparse(text)
            base = f"{parsed.scheme}://{parsed.netloc}"
            path = parsed.path if parsed.path.endswith(".json") else None
            if path is None:
                base = text.rstrip("/")
            resolver = A2ACardResolver(self._http(), base)
            for delay in (*_RETRY_DELAYS, None):
                try:
                    if path is None:
                        return await resolver.get_agent_card()
                    return await resolver.get_agent_card(relative_card_path=path)
                except Exception as exc:
                    if delay is None or not can_retry(exc):
                        raise _CardError(str(exc)) from exc
                    await asyncio.sleep(delay)
        try:
            raw = await asyncio.to_thread(Path(text).read_text, encoding="utf-8")
            card = a2a_pb2.AgentCard()
            json_format.ParseDict(json.loads(raw), card, ignore_unknown_fields=True)
            return card
        except (OSError, ValueError, json_format.ParseError) as exc:
            raise _CardError(str(exc)) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    async def _ensure_client(self) -> Client:
        if self._client is not None:
            return self._client
        card = self._card or await self._fetch_card()
        if not card.supported_interfaces:
            raise _CardError("the card names no interface (supportedInterfaces is empty)")
        self._card = card
        if not self.description and card.description:
            self.description = card.description
        config = ClientConfig(httpx_client=self._http(), streaming=card.capabilities.streaming)
        try:
            self._client = ClientFactory(config).create(card)
        except ValueError as exc:
            raise _CardError(f"no transport of the card is usable here: {exc}") from exc
        return self._client

    async def close(self) -> None:
        """Close the HTTP client this agent made for itself (not one given to it)."""
        if self._own_http is not None:
            await self._own_http.aclose()
            self._own_http = None
            self._client = None

    # --- running ---
    def _event(self, ctx: InvocationContext, **fields: Any) -> Event:
        return Event(invocation_id=ctx.invocation_id, author=self.name, branch=ctx.branch, **fields)

    def _failure(self, ctx: InvocationContext, failure: RemoteFailure) -> Event:
        return self._event(ctx, error_code=failure.code, error_message=failure.message)

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        try:
            client = await self._ensure_client()
        except _CardError as exc:
            yield self._failure(
                ctx,
                RemoteFailure(
                    "A2A_CARD_UNAVAILABLE",
                    f"Cannot get the agent card of the remote agent {self.name!r} from "
                    f"{self.source}: {exc}. Check the URL (or file) and that the agent is up.",
                ),
            )
            return
        outgoing = outgoing_message(self.name, ctx.session.events).message
        if outgoing is None:
            yield self._failure(
                ctx,
                RemoteFailure(
                    "A2A_NOTHING_TO_SEND",
                    f"There is nothing new to send to the remote agent {self.name!r}: it "
                    "answers the user's messages, and none came since its last turn.",
                ),
            )
            return
        url = self._card.supported_interfaces[0].url if self._card is not None else self.source
        state = _Exchange(self, ctx)
        for delay in (*_RETRY_DELAYS, None):
            try:
                request = a2a_pb2.SendMessageRequest(message=outgoing)
                stream = cast(
                    "AsyncGenerator[a2a_pb2.StreamResponse, None]", client.send_message(request)
                )
                async with asyncio.timeout(self.timeout), aclosing(stream) as responses:
                    async for response in responses:
                        for event in await state.take(response):
                            yield event
                break
            except Exception as exc:
                if not state.received and delay is not None and can_retry(exc):
                    await asyncio.sleep(delay)
                    continue
                timed_out = isinstance(exc, TimeoutError)
                failure = describe_failure(
                    httpx.TimeoutException("timed out") if timed_out else exc,
                    agent=self.name,
                    url=url,
                    timeout=self.timeout,
                )
                yield self._failure(ctx, failure)
                return
        for event in state.finish():
            yield event


class _Exchange:
    """One send's responses, turned into events (see the module docstring)."""

    def __init__(self, agent: RemoteA2aAgent, ctx: InvocationContext) -> None:
        self.agent = agent
        self.ctx = ctx
        self.received = False
        self.task_id = ""
        self.context_id = ""
        self.state = a2a_pb2.TASK_STATE_UNSPECIFIED
        self.status_message: a2a_pb2.Message | None = None
        # Answers already given in earlier turns (a task that went on after a pause comes back
        # with every artifact it has): each is an event that names its artifact.
        self.answered: set[str] = {
            str((event.custom_metadata or {}).get(ARTIFACT_ID_KEY))
            for event in ctx.session.events
            if event.author == agent.name and (event.custom_metadata or {}).get(ARTIFACT_ID_KEY)
        }
        self.chunk_ids: dict[str, str] = {}
        self.sent_any = False

    def _metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {}
        if self.task_id:
            metadata[TASK_ID_KEY] = self.task_id
        if self.context_id:
            metadata[CONTEXT_ID_KEY] = self.context_id
        return metadata

    def _event(self, **fields: Any) -> Event:
        ctx = self.ctx
        return Event(
            invocation_id=ctx.invocation_id, author=self.agent.name, branch=ctx.branch, **fields
        )

    async def take(self, response: a2a_pb2.StreamResponse) -> list[Event]:
        """The events one response of the remote gives (partial chunks, answers)."""
        self.received = True
        kind = response.WhichOneof("payload")
        if kind == "message":
            message = response.message
            self.context_id = message.context_id or self.context_id
            self.state = a2a_pb2.TASK_STATE_COMPLETED
            parts = to_eventide_parts(message.parts)
            return [await self._answer(f"message:{message.message_id}", parts)] if parts else []
        if kind == "task":
            task = response.task
            if not task.id or task.status.state == a2a_pb2.TASK_STATE_UNSPECIFIED:
                raise ValueError("its task has no id or no state")
            self.task_id, self.context_id = task.id, task.context_id
            self._status(task.status)
            events: list[Event] = []
            for artifact in task.artifacts:
                events.extend(await self._artifact(artifact, last_chunk=True))
            return events
        if kind == "status_update":
            update = response.status_update
            self.task_id = update.task_id or self.task_id
            self.context_id = update.context_id or self.context_id
            self._status(update.status)
            if update.status.state == a2a_pb2.TASK_STATE_WORKING and update.HasField("status"):
                texts = [p.text for p in update.status.message.parts if p.text]
                if texts:  # the remote's progress: shown while it works, never stored
                    thought = types.Part(text="\n".join(texts), thought=True)
                    content = types.Content(role="model", parts=[thought])
                    return [self._event(content=content, partial=True)]
            return []
        if kind == "artifact_update":
            chunk = response.artifact_update
            return await self._artifact(chunk.artifact, last_chunk=chunk.last_chunk)
        return []

    def _status(self, status: a2a_pb2.TaskStatus) -> None:
        self.state = status.state
        has_message = status.HasField("message") and len(status.message.parts) > 0
        self.status_message = status.message if has_message else None

    async def _artifact(self, artifact: a2a_pb2.Artifact, *, last_chunk: bool) -> list[Event]:
        key = artifact.artifact_id or new_id()
        if key in self.answered:
            return []
        parts = to_eventide_parts(artifact.parts)
        if not last_chunk:
            texts = [p for p in parts if p.text]
            if not texts:
                return []
            event_id = self.chunk_ids.setdefault(key, new_id())
            chunk = types.Content(role="model", parts=texts)
            return [self._event(id=event_id, content=chunk, partial=True)]
        self.answered.add(key)
        return [await self._answer(key, parts, name=artifact.name)]

    async def _answer(self, key: str, parts: list[types.Part], name: str = "") -> Event:
        """A complete answer: text stays in the content, files become session artifacts."""
        ctx = self.ctx
        shown: list[types.Part] = []
        delta: dict[str, int] = {}
        service = ctx.artifact_service
        for part in parts:
            is_file = part.inline_data is not None or part.file_data is not None
            if is_file and service is not None:
                filename = _filename(part, name, key)
                delta[filename] = await service.save_artifact(
                    app_name=ctx.session.app_name,
                    user_id=ctx.session.user_id,
                    session_id=ctx.session.id,
                    filename=filename,
                    artifact=part,
                )
            else:
                shown.append(part)
        self.sent_any = True
        event_id = self.chunk_ids.get(key) or new_id()
        content = types.Content(role="model", parts=shown) if shown else None
        return self._event(
            id=event_id,
            content=content,
            actions=EventActions(artifact_delta=delta),
            custom_metadata={**self._metadata(), ARTIFACT_ID_KEY: key},
        )

    def finish(self) -> list[Event]:
        """The events that close the exchange: a pause, a failure, or the last answer."""
        metadata = self._metadata()
        agent = self.agent.name
        if self.state in (a2a_pb2.TASK_STATE_INPUT_REQUIRED, a2a_pb2.TASK_STATE_AUTH_REQUIRED):
            self.ctx.end_invocation = True
            return [self._pause(metadata)]
        if self.state in _ENDED:
            said = _text(self.status_message)
            return [
                self._event(
                    error_code=f"A2A_TASK_{_ENDED[self.state].split()[-1].upper()}",
                    error_message=f"The remote agent {agent!r}'s task {_ENDED[self.state]}"
                    + (f": {said}" if said else "."),
                    custom_metadata=metadata,
                )
            ]
        if self.state in (a2a_pb2.TASK_STATE_WORKING, a2a_pb2.TASK_STATE_SUBMITTED):
            return [
                self._event(
                    error_code="A2A_TASK_UNFINISHED",
                    error_message=f"The remote agent {agent!r} stopped answering before its "
                    f"task {self.task_id!r} ended; it may still be working.",
                    custom_metadata=metadata,
                )
            ]
        if not self.sent_any:
            said = _text(self.status_message)
            content = types.Content(role="model", parts=[types.Part(text=said)]) if said else None
            return [self._event(content=content, custom_metadata=metadata)]
        return []

    def _pause(self, metadata: dict[str, Any]) -> Event:
        message = self.status_message
        parts: list[types.Part] = []
        waiting: set[str] = set()
        sent: list[a2a_pb2.Part] = list(message.parts) if message is not None else []
        for part in sent:
            converted = to_eventide_part(part)
            if converted is None:
                continue
            call = converted.function_call
            info = metadata_of(part)
            if call is not None and info.get(TYPE_KEY) == TYPE_FUNCTION_CALL:
                if info.get(IS_LONG_RUNNING_KEY) is True and call.id:
                    waiting.add(call.id)
                    parts.append(converted)
            elif converted.text:
                parts.append(converted)
        if not waiting:
            question = _text(message) or "The remote agent needs more input."
            call = types.FunctionCall(
                id=f"a2a-input-{new_id()}", name=INPUT_REQUIRED_FUNCTION, args={"prompt": question}
            )
            parts.append(types.Part(function_call=call))
            waiting.add(call.id or "")
        return self._event(
            content=types.Content(role="model", parts=parts),
            long_running_tool_ids=waiting,
            custom_metadata=metadata,
        )


def _text(message: a2a_pb2.Message | None) -> str:
    if message is None:
        return ""
    return "\n".join(part.text for part in message.parts if part.text)


def _filename(part: types.Part, name: str, key: str) -> str:
    if part.inline_data is not None and part.inline_data.display_name:
        return part.inline_data.display_name
    if part.file_data is not None and part.file_data.display_name:
        return part.file_data.display_name
    return name or key
