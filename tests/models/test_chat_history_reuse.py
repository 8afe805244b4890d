"""Chat Completions messages of earlier turns are reused, not translated again every call
(kept in the conversation's ``translations``, which the flow's conversation cache renews
whenever the conversation is not just extended), and only for a request whose contents are
the conversation as the flow built it: whatever else changed the contents is translated
afresh."""

from __future__ import annotations

from typing import Any

from eventide import LlmAgent, Runner, types
from eventide.contexts import CallbackContext
from eventide.models._openai_chat_format import chat_messages, chat_request
from eventide.models.llm_request import Conversation, LlmRequest
from eventide.planners import PlanReActPlanner
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.testing import FunctionModel
from tests.models.fake_provider_servers import FakeProviderServer, Reply
from tests.models.test_openai_llm import completion, llm


def _user(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def _model(text: str) -> types.Content:
    return types.Content(role="model", parts=[types.Part(text=text)])


def _call(name: str, call_id: str | None = None) -> types.Content:
    call = types.FunctionCall(id=call_id, name=name, args={"city": "Paris"})
    return types.Content(role="model", parts=[types.Part(function_call=call)])


def _answer(name: str, call_id: str | None = None) -> types.Content:
    response = types.FunctionResponse(id=call_id, name=name, response={"temp": 20})
    return types.Content(role="user", parts=[types.Part(function_response=response)])


def _request(
    contents: list[types.Content], translations: dict[str, Any] | None = None
) -> LlmRequest:
    """A request as the flow makes it: the conversation (with ``translations``, the cache's
    dict for it) marked unchanged; a plain list of the contents without ``translations``."""
    request = LlmRequest(
        model="m",
        config=types.GenerateContentConfig(system_instruction="Be brief."),
        history_unchanged=True,
    )
    # Assigned, as the flow does: the constructor would validate it into a plain list.
    request.contents = (
        list(contents) if translations is None else Conversation(contents, translations)
    )
    return request


def test_a_growing_conversation_translates_as_it_would_whole() -> None:
    """Turn after turn (calls without ids included: their numbering goes on from the reused
    part), the messages are those of a translation from scratch, and each call translated
    only what was new."""
    translations: dict[str, Any] = {}
    turns = [
        [_user("weather?"), _call("weather"), _answer("weather")],
        [_model("20 degrees."), _user("and tomorrow?")],
        [_call("weather"), _call("forecast", "f1"), _answer("forecast", "f1")],
        [_answer("weather"), _model("Sunny."), _user("thanks")],
    ]
    contents: list[types.Content] = []
    for added in turns:
        contents.extend(added)
        reused = chat_messages(_request(contents, translations), reuse_history=True)
        assert reused == chat_messages(_request(contents))
        assert translations["chat_completions"].count == len(contents)
    ids = [m["tool_call_id"] for m in reused if m["role"] == "tool"]
    assert ids == ["call_1", "f1", "call_2"]


def test_a_new_translations_dict_is_translated_whole() -> None:
    """The cache renews the dict when the conversation was rewritten: nothing is reused."""
    translations: dict[str, Any] = {}
    first = [_user("hi"), _model("hello"), _user("how are you?")]
    chat_messages(_request(first, translations), reuse_history=True)
    rewritten = [first[0], _model("HELLO"), first[2], _model("fine"), _user("good")]
    got = chat_messages(_request(rewritten, {}), reuse_history=True)
    assert got[2] == {"role": "assistant", "content": "HELLO"}
    assert got == chat_messages(_request(rewritten))


def test_a_request_not_marked_unchanged_ignores_the_translations() -> None:
    """Without ``history_unchanged`` (a hook may have changed a content in place), the
    contents are translated as they are now."""
    translations: dict[str, Any] = {}
    contents = [_user("my card is 4111"), _model("noted")]
    chat_request(_request(contents, translations), model="m", reuse_history=True)
    assert contents[0].parts is not None
    contents[0].parts[0].text = "my card is [redacted]"
    changed = _request(contents, translations)
    changed.history_unchanged = False
    body = chat_request(changed, model="m", reuse_history=True)
    assert body["messages"][1] == {"role": "user", "content": "my card is [redacted]"}


def test_only_a_caller_that_asks_reuses_the_translations() -> None:
    """The LiteLLM connector shares the format but not the reuse (litellm may change the
    messages it is given): without ``reuse_history`` nothing is read or kept."""
    translations: dict[str, Any] = {}
    contents = [_user("hi"), _model("hello")]
    chat_request(_request(contents, translations), model="m")
    assert translations == {}


async def _flags(agent: LlmAgent, turns: int = 2) -> list[bool]:
    runner = Runner(app_name="app", agent=agent, session_service=InMemorySessionService())
    await runner.session_service.create_session(app_name="app", user_id="u", session_id="s")
    for turn in range(turns):
        async for _ in runner.run_async(user_id="u", session_id="s", new_message=f"m{turn}"):
            pass
    await runner.close()
    model = agent.model
    assert isinstance(model, FunctionModel)
    return [request.history_unchanged for request in model.requests]


def _agent(**kwargs: Any) -> LlmAgent:
    return LlmAgent(name="agent", model=FunctionModel(function=lambda request: "ok"), **kwargs)


async def test_the_flow_marks_only_requests_nothing_could_change() -> None:
    def hook(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        del callback_context, llm_request

    assert await _flags(_agent()) == [True, True]
    assert await _flags(_agent(instruction="Be brief, {name?}.")) == [True, True]
    assert await _flags(_agent(before_model_callback=hook)) == [False, False]
    assert await _flags(_agent(include_contents="none")) == [False, False]
    assert await _flags(_agent(planner=PlanReActPlanner())) == [False, False]
    # The turn's instructions are inserted into the conversation after a static one.
    assert await _flags(_agent(static_instruction="Static.", instruction="Now.")) == [
        False,
        False,
    ]


async def test_a_hook_that_redacts_older_turns_in_place_reaches_the_server(
    server: FakeProviderServer,
) -> None:
    """End to end on the OpenAI connector: the server gets every turn's conversation, and a
    before-model hook's in-place change to an earlier turn is sent, not an old translation."""

    def redact(callback_context: CallbackContext, llm_request: LlmRequest) -> None:
        del callback_context
        for content in llm_request.contents:
            for part in content.parts or ():
                if part.text and "secret" in part.text and len(llm_request.contents) > 2:
                    part.text = part.text.replace("secret", "[redacted]")

    for hook in (None, redact):
        before = len(server.bodies)
        for _ in range(3):
            server.add(Reply(body=completion({"role": "assistant", "content": "ok"})))
        agent = LlmAgent(name="agent", model=llm(server), before_model_callback=hook)
        runner = Runner(app_name="app", agent=agent, session_service=InMemorySessionService())
        await runner.session_service.create_session(app_name="app", user_id="u", session_id="s")
        for text in ("my secret is 42", "and?", "bye"):
            async for _ in runner.run_async(user_id="u", session_id="s", new_message=text):
                pass
        await runner.close()
        sent = [[m["content"] for m in body["messages"]] for body in server.bodies[before:]]
        first = "my [redacted] is 42" if hook else "my secret is 42"
        assert sent == [
            ["my secret is 42"],
            [first, "ok", "and?"],
            [first, "ok", "and?", "ok", "bye"],
        ]


async def test_a_rewound_turn_is_not_sent_again(server: FakeProviderServer) -> None:
    for _ in range(3):
        server.add(Reply(body=completion({"role": "assistant", "content": "ok"})))
    agent = LlmAgent(name="agent", model=llm(server))
    runner = Runner(app_name="app", agent=agent, session_service=InMemorySessionService())
    await runner.session_service.create_session(app_name="app", user_id="u", session_id="s")
    invocations: list[str] = []
    for text in ("first", "second", "third"):
        if text == "third":
            await runner.rewind_async(
                user_id="u", session_id="s", rewind_before_invocation_id=invocations[1]
            )
        async for event in runner.run_async(user_id="u", session_id="s", new_message=text):
            invocations.append(event.invocation_id)
    await runner.close()
    sent = [[m["content"] for m in body["messages"]] for body in server.bodies]
    assert sent == [["first"], ["first", "ok", "second"], ["first", "ok", "third"]]
