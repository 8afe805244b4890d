"""Serving an ASGI app on a real local port for the A2A tests, and the official client on it."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import uvicorn
from a2a.client import Client, ClientConfig, ClientFactory
from a2a.client.card_resolver import A2ACardResolver
from a2a.types import a2a_pb2


@asynccontextmanager
async def serving(app: Any) -> AsyncIterator[str]:
    """Serve ``app`` with uvicorn on a free local port; yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=2)
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        for _ in range(500):
            if server.started:
                break
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        yield f"http://localhost:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@asynccontextmanager
async def a2a_client(
    base_url: str, card_path: str = "/.well-known/agent-card.json", *, streaming: bool = False
) -> AsyncIterator[tuple[Client, httpx.AsyncClient]]:
    """The official SDK's client for the agent whose card is at ``base_url + card_path``."""
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card(relative_card_path=card_path)
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)
        yield client, http


def user_message(
    text: str, *, task_id: str = "", context_id: str = "", message_id: str = "m"
) -> a2a_pb2.SendMessageRequest:
    """A ``SendMessageRequest`` with one text part."""
    message = a2a_pb2.Message(
        message_id=message_id,
        role=a2a_pb2.ROLE_USER,
        parts=[a2a_pb2.Part(text=text)],
        task_id=task_id,
        context_id=context_id,
    )
    return a2a_pb2.SendMessageRequest(message=message)


async def send(client: Client, request: a2a_pb2.SendMessageRequest) -> list[a2a_pb2.StreamResponse]:
    """Every response of one ``send_message`` call."""
    return [response async for response in client.send_message(request)]


def texts(task: a2a_pb2.Task) -> list[str]:
    """The text of the task's artifacts, in order."""
    return [part.text for artifact in task.artifacts for part in artifact.parts if part.text]


def state_name(state: a2a_pb2.TaskState) -> str:
    """``TASK_STATE_COMPLETED`` -> ``completed``."""
    name: str = a2a_pb2.TaskState.Name(state)
    return name.removeprefix("TASK_STATE_").lower().replace("_", "-")
