"""google-adk names on Eventide whose checks need Eventide itself: errors at construction
where a feature needs a cloud service or another provider, google-genai objects accepted
and compared by value, the built-in tools on the wire of the Gemini connector, credential
helpers, and the LangChain / CrewAI wrappers."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest
from google.genai import types as genai

from eventide import (
    BuiltInCodeExecutor,
    CrewaiTool,
    InMemoryRunner,
    LangchainTool,
    LlmAgent,
    LlmResponse,
    VertexAiSearchTool,
    google_search,
    types,
    url_context,
)
from eventide.auth import ApiKeyScheme, AuthConfig, AuthCredential
from eventide.errors import ConfigurationError, UsageError
from eventide.models.gemini_llm import GeminiLlm
from eventide.testing import ScriptedModel, tool_call_response
from tests.conftest import IN_CI
from tests.models.fake_provider_servers import FakeProviderServer, Reply

# google-genai's aiohttp transport warns about itself on import.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)


@pytest.fixture
def server() -> Iterator[FakeProviderServer]:
    fake = FakeProviderServer().start()
    try:
        yield fake
    finally:
        fake.stop()


def test_builtin_tools_on_a_non_gemini_model_fail_at_construction() -> None:
    """Issue 14: Gemini built-in tools on another provider fail when the agent is built,
    naming the tool and what to use instead (google-adk fails at the first model call)."""
    with pytest.raises(UsageError, match=r"google_search is a Gemini built-in tool.*gpt-4o"):
        LlmAgent(name="a", model="gpt-4o", tools=[google_search])
    with pytest.raises(UsageError, match="BuiltInCodeExecutor.*Gemini model"):
        LlmAgent(name="a", model="claude-sonnet-4-5", code_executor=BuiltInCodeExecutor())
    # A Gemini model, a Vertex AI resource name, or no model of its own (inherited) is fine.
    LlmAgent(name="a", model="gemini-2.5-flash", tools=[google_search, url_context])
    LlmAgent(name="a", model="projects/p/locations/l/models/gemini-2.5-pro", tools=[url_context])
    LlmAgent(name="a", tools=[google_search])


def test_vertex_ai_search_needs_vertex_ai(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14 (bad input): VertexAiSearchTool without Vertex AI fails at construction,
    naming what is missing and what to use instead; without a data store it names that."""
    monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    with pytest.raises(UsageError, match="exactly one of data_store_id"):
        VertexAiSearchTool()
    store = "projects/p/locations/global/collections/default_collection/dataStores/d"
    with pytest.raises(UsageError) as caught:
        VertexAiSearchTool(data_store_id=store)
    message = str(caught.value)
    assert "GOOGLE_GENAI_USE_VERTEXAI=true and GOOGLE_CLOUD_PROJECT is not set" in message
    assert "FunctionTool" in message and "google_search" in message


async def test_builtin_tools_reach_gemini_on_the_wire(server: FakeProviderServer) -> None:
    """Issue 14: on the Gemini connector google_search, url_context and BuiltInCodeExecutor
    become the provider's built-in tools in the generateContent body, and the answer's
    grounding metadata reaches the event as a typed object."""
    model = GeminiLlm(model="gemini-test", api_key="k", base_url=server.url, retry_base_delay=0.001)
    grounding = {
        "webSearchQueries": ["q"],
        "groundingChunks": [{"web": {"uri": "https://a.invalid"}}],
    }
    server.add(
        Reply(
            body={
                "candidates": [
                    {
                        "content": {"role": "model", "parts": [{"text": "Found."}]},
                        "finishReason": "STOP",
                        "groundingMetadata": grounding,
                    }
                ]
            }
        )
    )
    agent = LlmAgent(
        name="a",
        model=model,
        tools=[google_search, url_context],
        code_executor=BuiltInCodeExecutor(),
    )
    runner = InMemoryRunner(agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="q")
    ]
    tools = server.bodies[0]["tools"]
    assert sorted(key for tool in tools for key in tool) == [
        "codeExecution",
        "googleSearch",
        "urlContext",
    ]
    metadata = events[-1].grounding_metadata
    assert metadata is not None and metadata.grounding_chunks is not None
    assert metadata.grounding_chunks[0].web is not None
    assert metadata.grounding_chunks[0].web.uri == "https://a.invalid"
    await runner.close()


async def test_vertex_ai_search_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14: with Vertex AI configured, VertexAiSearchTool puts
    Tool(retrieval={"vertex_ai_search": {...}}) in the request (google-genai sends it to
    Vertex AI only; its Gemini API mode refuses it)."""
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "p")
    store = "projects/p/locations/global/collections/default_collection/dataStores/d"
    model = ScriptedModel(model="gemini-2.5-flash", responses=["ok"])
    search = VertexAiSearchTool(data_store_id=store, max_results=3, filter="lang: en")
    runner = InMemoryRunner(LlmAgent(name="a", model=model, tools=[search]), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message="q"):
        pass
    [tool] = model.requests[0].config.tools or []
    assert tool.retrieval == {
        "vertex_ai_search": {"datastore": store, "filter": "lang: en", "max_results": 3}
    }
    await runner.close()


def test_eventide_types_equal_genai_types() -> None:
    """Issue 14: eventide.types objects compare equal to the same google.genai.types objects
    (by value), and differ when a value differs."""
    ours = types.Content(role="user", parts=[types.Part(text="hi")])
    theirs = genai.Content(role="user", parts=[genai.Part(text="hi")])
    assert ours == theirs
    assert ours != genai.Content(role="user", parts=[genai.Part(text="bye")])
    call = types.FunctionCall(name="f", args={"x": 1})
    assert call == genai.FunctionCall(name="f", args={"x": 1})
    assert types.Part(function_call=call) == genai.Part(
        function_call=genai.FunctionCall(name="f", args={"x": 1})
    )
    assert ours != "hi" and ours == types.Content(role="user", parts=[types.Part(text="hi")])


async def test_content_taking_apis_accept_genai_objects() -> None:
    """Issue 14: every API that takes content accepts google.genai.types instances: the
    Runner's new_message, LlmResponse content and grounding metadata, the agent's
    generate_content_config (thinking_config included) and static_instruction."""
    reply = LlmResponse(
        content=genai.Content(role="model", parts=[genai.Part(text="pong")]),
        grounding_metadata=genai.GroundingMetadata(web_search_queries=["q"]),
    )
    model = ScriptedModel(responses=[reply])
    agent = LlmAgent(
        name="a",
        model=model,
        static_instruction=genai.Content(parts=[genai.Part(text="Static.")]),
        generate_content_config=genai.GenerateContentConfig(
            temperature=0.5, thinking_config=genai.ThinkingConfig(thinking_budget=64)
        ),
    )
    runner = InMemoryRunner(agent, app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    message = genai.Content(role="user", parts=[genai.Part(text="ping")])
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message=message)
    ]
    assert events[-1].text == "pong"
    assert events[-1].grounding_metadata is not None
    assert events[-1].grounding_metadata.web_search_queries == ["q"]
    [request] = model.requests
    assert request.config.temperature == 0.5 and request.config.thinking_budget == 64
    assert str(request.config.system_instruction).startswith("Static.")
    assert request.contents[-1] == message
    tool = types.Tool.model_validate(genai.Tool(google_search=genai.GoogleSearch()))
    assert tool.google_search == {}
    await runner.close()


async def test_save_and_load_credential_from_a_tool() -> None:
    """Issue 14: ToolContext.save_credential / load_credential store and read a credential
    by the auth config's key (google-adk's context helpers)."""
    config = AuthConfig(
        auth_scheme=ApiKeyScheme(name="X-Key"),
        exchanged_auth_credential=AuthCredential(auth_type="api_key", api_key="secret-1"),
    )
    read: list[Any] = []

    async def keep(tool_context: Any) -> dict[str, Any]:
        """Keep the key."""
        await tool_context.save_credential(config)
        read.append(await tool_context.load_credential(config))
        return {}

    model = ScriptedModel(responses=[tool_call_response(("keep", {})), "kept"])
    runner = InMemoryRunner(LlmAgent(name="a", model=model, tools=[keep]), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    async for _ in runner.run_async(user_id="u", session_id=session.id, new_message="x"):
        pass
    assert read and read[0].api_key == "secret-1"
    await runner.close()


langchain_missing = importlib.util.find_spec("langchain_core") is None


@pytest.mark.skipif(langchain_missing and not IN_CI, reason="langchain-core is not installed")
async def test_langchain_tool_wraps_a_langchain_tool() -> None:
    """Issue 14: LangchainTool(tool) declares the LangChain tool's name, description and
    argument schema, and a call runs it."""
    from langchain_core.tools import tool as langchain_tool

    @langchain_tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        return a * b

    wrapped = LangchainTool(multiply)
    declaration = wrapped.get_declaration()
    assert declaration.name == "multiply"
    assert declaration.description == "Multiply two integers."
    assert declaration.parameters_json_schema is not None
    assert set(declaration.parameters_json_schema["properties"]) == {"a", "b"}
    model = ScriptedModel(responses=[tool_call_response(("multiply", {"a": 6, "b": 7})), "42"])
    runner = InMemoryRunner(LlmAgent(name="a", model=model, tools=[wrapped]), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="6*7")
    ]
    [response] = [r for e in events for r in e.get_function_responses()]
    assert response.response == {"result": 42}
    with pytest.raises(UsageError, match="langchain_core.tools.BaseTool"):
        LangchainTool(object())
    await runner.close()


async def test_crewai_tool_wraps_a_crewai_style_tool() -> None:
    """Issue 14: CrewaiTool(tool, name=, description=) declares the tool's args_schema and
    runs tool.run(**args). crewai itself is not installed here (too heavy for the test
    environment): the tool is an object with CrewAI's tool interface."""
    import pydantic

    class SearchArgs(pydantic.BaseModel):
        query: str

    class CrewStyleTool:
        name = "Web Search"
        description = "Search the web."
        args_schema = SearchArgs

        def run(self, **kwargs: Any) -> str:
            return f"results for {kwargs['query']}"

    wrapped = CrewaiTool(CrewStyleTool(), name="web_search", description="Search it.")
    declaration = wrapped.get_declaration()
    assert (declaration.name, declaration.description) == ("web_search", "Search it.")
    assert declaration.parameters_json_schema is not None
    assert declaration.parameters_json_schema["required"] == ["query"]
    model = ScriptedModel(responses=[tool_call_response(("web_search", {"query": "adk"})), "ok"])
    runner = InMemoryRunner(LlmAgent(name="a", model=model, tools=[wrapped]), app_name="app")
    session = await runner.session_service.create_session(app_name="app", user_id="u")
    events = [
        e async for e in runner.run_async(user_id="u", session_id=session.id, new_message="q")
    ]
    [response] = [r for e in events for r in e.get_function_responses()]
    assert response.response == {"result": "results for adk"}
    await runner.close()


@pytest.mark.skipif(
    importlib.util.find_spec("crewai") is not None, reason="crewai is installed here"
)
def test_crewai_tool_without_crewai_names_the_extra() -> None:
    """Issue 14 (bad input): CrewaiTool on something that is not a CrewAI tool, with crewai
    not installed, says which extra to install."""
    with pytest.raises(ConfigurationError, match=r"eventide\[crewai\]"):
        CrewaiTool(object())


async def test_callbacks_services_and_events_accept_genai_objects() -> None:
    """Issue 14: google.genai.types objects are accepted by Event(content=...), artifact
    services and ToolContext.save_artifact, session_service.append_event, and as what
    before_agent / before_model callbacks return."""
    from eventide import Event, InMemoryArtifactService

    event = Event(author="a", content=genai.Content(role="model", parts=[genai.Part(text="x")]))
    assert event.text == "x"
    artifacts = InMemoryArtifactService()
    where = {"app_name": "app", "user_id": "u", "session_id": "s", "filename": "f.txt"}
    assert await artifacts.save_artifact(**where, artifact=genai.Part(text="hello")) == 0
    loaded = await artifacts.load_artifact(**where)
    assert loaded is not None and loaded.text == "hello"

    def before_agent(callback_context: Any) -> Any:
        return genai.Content(role="model", parts=[genai.Part(text="from the agent callback")])

    def before_model(callback_context: Any, llm_request: Any) -> Any:
        return LlmResponse(content=genai.Content(role="model", parts=[genai.Part(text="cb")]))

    async def keep(tool_context: Any) -> dict[str, Any]:
        """Keep a file."""
        await tool_context.save_artifact("k.txt", genai.Part(text="kept"))
        return {}

    for agent, expected in [
        (
            LlmAgent(
                name="a", model=ScriptedModel(responses=["x"]), before_agent_callback=before_agent
            ),
            "from the agent callback",
        ),
        (
            LlmAgent(
                name="a", model=ScriptedModel(responses=["x"]), before_model_callback=before_model
            ),
            "cb",
        ),
        (
            LlmAgent(
                name="a",
                model=ScriptedModel(responses=[tool_call_response(("keep", {})), "kept it"]),
                tools=[keep],
            ),
            "kept it",
        ),
    ]:
        runner = InMemoryRunner(agent, app_name="app")
        session = await runner.session_service.create_session(app_name="app", user_id="u")
        texts = [
            e.text
            async for e in runner.run_async(user_id="u", session_id=session.id, new_message="hi")
        ]
        assert texts[-1] == expected
        await runner.session_service.append_event(
            session,
            Event(
                author="user", content=genai.Content(role="user", parts=[genai.Part(text="more")])
            ),
        )
        stored = await runner.session_service.get_session(
            app_name="app", user_id="u", session_id=session.id
        )
        assert stored is not None and stored.events[-1].text == "more"
        await runner.close()
    assert runner.artifact_service is not None
    kept = await runner.artifact_service.load_artifact(
        app_name="app", user_id="u", session_id=session.id, filename="k.txt"
    )
    assert kept is not None and kept.text == "kept"
