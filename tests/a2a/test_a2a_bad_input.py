"""Bad input to the A2A routes gets the protocol's error, never a server error (JSON-RPC 2.0
section 5.1 codes, A2A 1.0 section 5.4 error codes), through ``eventide api-server --a2a``'s
app (``create_app(a2a=True)``) with a bearer token."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from eventide import App, LlmAgent
from eventide.server import create_app
from eventide.testing import ScriptedModel
from tests.a2a.a2a_harness import serving

TOKEN = "s3cret"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "A2A-Version": "1.0"}


@pytest.fixture
async def base() -> AsyncIterator[str]:
    agent = LlmAgent(name="helper", model=ScriptedModel(responses=["hi"] * 5))
    api = create_app(
        apps={"helper": App(name="helper", root_agent=agent)}, a2a=True, auth_token=TOKEN
    )
    async with serving(api) as url:
        yield url


async def _rpc(
    base: str, body: Any, *, raw: bytes | None = None, headers: dict[str, str] = HEADERS
) -> httpx.Response:
    async with httpx.AsyncClient() as http:
        content = raw if raw is not None else json.dumps(body).encode()
        return await http.post(
            f"{base}/a2a/helper",
            content=content,
            headers={**headers, "Content-Type": "application/json"},
        )


def _error(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code < 500, response.text
    data = response.json()
    assert data["jsonrpc"] == "2.0"
    error: dict[str, Any] = data["error"]
    return error


async def test_malformed_json_is_a_parse_error(base: str) -> None:
    assert _error(await _rpc(base, None, raw=b'{"jsonrpc": "2.0", "method"'))["code"] == -32700


async def test_a_request_that_is_not_json_rpc_is_invalid(base: str) -> None:
    assert (
        _error(await _rpc(base, {"jsonrpc": "1.0", "id": 1, "method": "GetTask"}))["code"] == -32600
    )
    assert _error(await _rpc(base, [1, 2]))["code"] == -32600


async def test_an_unknown_method_is_method_not_found(base: str) -> None:
    error = _error(await _rpc(base, {"jsonrpc": "2.0", "id": 1, "method": "tasks/explode"}))
    assert error["code"] == -32601


async def test_missing_params_are_invalid_params(base: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {}}}
    assert _error(await _rpc(base, body))["code"] == -32602
    empty = {"messageId": "m", "role": "ROLE_USER", "parts": []}
    body = {"jsonrpc": "2.0", "id": 2, "method": "SendMessage", "params": {"message": empty}}
    assert _error(await _rpc(base, body))["code"] == -32602


async def test_an_unknown_task_is_task_not_found(base: str) -> None:
    for task_id in ("nonexistent", "a2a-00:no-such-context"):
        body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task_id}}
        error = _error(await _rpc(base, body))
        assert error["code"] == -32001
        assert "not found" in error["message"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "CancelTask", "params": {"id": "nope"}}
    assert _error(await _rpc(base, body))["code"] == -32001


async def test_push_notifications_are_not_supported(base: str) -> None:
    params = {"taskId": "t", "url": "https://example.com/hook"}
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "CreateTaskPushNotificationConfig",
        "params": params,
    }
    assert _error(await _rpc(base, body))["code"] == -32003


async def test_an_oversized_message_is_refused_before_it_is_read(base: str) -> None:
    text = "x" * (11 * 1024 * 1024)
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    response = await _rpc(base, body)
    assert response.status_code == 413
    assert _error(response)["code"] == -32600


async def test_an_unknown_app_answers_with_a_json_rpc_error(base: str) -> None:
    async with httpx.AsyncClient() as http:
        response = await http.post(f"{base}/a2a/nobody", json={}, headers=HEADERS)
        card = await http.get(f"{base}/a2a/nobody/.well-known/agent-card.json")
    assert response.status_code == 404
    assert "nobody" in response.json()["error"]["message"]
    assert card.status_code == 404


async def test_the_token_is_required_but_the_card_is_public(base: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}
    response = await _rpc(base, body, headers={"A2A-Version": "1.0"})
    assert response.status_code == 401
    async with httpx.AsyncClient() as http:
        card = (await http.get(f"{base}/a2a/helper/.well-known/agent-card.json")).json()
        host_card = (await http.get(f"{base}/.well-known/agent-card.json")).json()
    scheme = card["securitySchemes"]["bearer"]
    assert scheme["httpAuthSecurityScheme"]["scheme"] == "bearer"
    assert (scheme["type"], scheme["scheme"]) == ("http", "bearer")  # the 0.3 form beside it
    assert card["securityRequirements"] == [{"schemes": {"bearer": {}}}]
    assert host_card["supportedInterfaces"] == card["supportedInterfaces"]
    assert card["supportedInterfaces"][0]["url"] == f"{base}/a2a/helper"


async def test_a_stream_refused_at_once_is_an_error_event_in_a_stream(base: str) -> None:
    """A streaming call's error comes as an SSE stream, as errors during a stream do."""
    body = {"jsonrpc": "2.0", "id": 7, "method": "SubscribeToTask", "params": {"id": "missing"}}
    response = await _rpc(base, body)
    assert response.headers["content-type"].startswith("text/event-stream")
    assert "event: error" in response.text
    assert '"code":-32001' in response.text.replace(" ", "")
