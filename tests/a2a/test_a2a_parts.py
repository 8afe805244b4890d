"""The pure pieces of the A2A adapter: the agent card, answers to pauses, part conversion,
task ids."""

from __future__ import annotations

import json

import pytest
from a2a.types import a2a_pb2

from eventide import AgentTool, LlmAgent, SequentialAgent, types
from eventide.a2a import build_agent_card
from eventide.a2a.input_answers import answers_for
from eventide.a2a.part_conversion import to_a2a_part, to_eventide_part
from eventide.a2a.task_ids import context_of_task, new_task_id, user_for_context
from eventide.errors import ProtocolInputError
from eventide.protocol import REQUEST_CONFIRMATION_FUNCTION, REQUEST_CREDENTIAL_FUNCTION
from eventide.testing import ScriptedModel


def look_up(order: str) -> str:
    """Look an order up.

    Args:
        order: the order id.
    """
    return order


def test_the_card_lists_skills_from_tools_and_sub_agents() -> None:
    helper = LlmAgent(name="helper", description="Helps.", model=ScriptedModel(), tools=[look_up])
    steps = SequentialAgent(name="steps", description="Runs steps.", sub_agents=[helper])
    writer = LlmAgent(name="writer", model=ScriptedModel())
    root = LlmAgent(
        name="desk",
        description="The front desk.",
        model=ScriptedModel(),
        tools=[AgentTool(writer)],
        sub_agents=[steps],
    )
    card = build_agent_card(root, url="http://localhost:1/a2a/desk", bearer_auth=True)
    skills = {skill.id: (skill.name, list(skill.tags)) for skill in card.skills}
    assert skills == {
        "desk": ("desk", ["llm"]),
        "desk-writer": ("writer", ["tool"]),
        "steps": ("steps", ["sub_agent:steps", "SequentialAgent"]),
        "helper": ("helper", ["sub_agent:steps", "sub_agent:helper", "llm"]),
        "helper-look_up": ("look_up", ["sub_agent:steps", "sub_agent:helper", "tool"]),
    }
    assert card.description == "The front desk."
    assert card.capabilities.streaming and not card.capabilities.push_notifications
    assert [(i.protocol_binding, i.protocol_version) for i in card.supported_interfaces] == [
        ("JSONRPC", "1.0"),
        ("JSONRPC", "0.3"),
    ]
    assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "bearer"


def _call(name: str) -> types.FunctionCall:
    return types.FunctionCall(id=f"id-{name}", name=name, args={})


def _reply(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def test_a_plain_reply_answers_every_pending_call() -> None:
    pending = [_call("ask_manager"), _call(REQUEST_CONFIRMATION_FUNCTION)]
    answered = answers_for(pending, _reply("Yes"))
    responses = [p.function_response for p in answered.parts or []]
    assert [(r.id, r.response) for r in responses if r] == [
        ("id-ask_manager", {"result": "Yes"}),
        (f"id-{REQUEST_CONFIRMATION_FUNCTION}", {"confirmed": True}),
    ]
    declined = answers_for([_call(REQUEST_CONFIRMATION_FUNCTION)], _reply("no thanks"))
    [part] = declined.parts or []
    assert part.function_response is not None
    assert part.function_response.response == {"confirmed": False}


def test_a_json_reply_is_each_calls_response_and_function_responses_pass_through() -> None:
    credential = {"auth_scheme": {"type": "apiKey"}, "exchanged_auth_credential": {"api_key": "k"}}
    answered = answers_for([_call(REQUEST_CREDENTIAL_FUNCTION)], _reply(json.dumps(credential)))
    [part] = answered.parts or []
    assert part.function_response is not None and part.function_response.response == credential
    own = types.Content(
        role="user",
        parts=[types.Part(function_response=types.FunctionResponse(id="x", name="t", response={}))],
    )
    assert answers_for([_call("t")], own) is own


def test_text_cannot_answer_a_credential_request() -> None:
    with pytest.raises(ProtocolInputError, match="auth_config"):
        answers_for([_call(REQUEST_CREDENTIAL_FUNCTION)], _reply("my-api-key"))


@pytest.mark.parametrize(
    "part",
    [
        types.Part(text="hello"),
        types.Part(text="pondering", thought=True),
        types.Part(
            inline_data=types.Blob(data=b"\x00\x01", mime_type="image/png", display_name="a.png")
        ),
        types.Part(
            file_data=types.FileData(file_uri="https://x/y.pdf", mime_type="application/pdf")
        ),
        types.Part(
            function_call=types.FunctionCall(
                id="c1", name="look_up", args={"order": "A-1", "count": 3}
            )
        ),
        types.Part(
            function_response=types.FunctionResponse(id="c1", name="look_up", response={"ok": True})
        ),
    ],
)
def test_parts_survive_the_round_trip(part: types.Part) -> None:
    converted = to_a2a_part(part)
    assert converted is not None
    assert to_eventide_part(converted) == part


def test_generic_json_data_becomes_text_a_model_can_read() -> None:
    from google.protobuf import json_format

    part = a2a_pb2.Part()
    json_format.ParseDict({"city": "Paris", "days": 3}, part.data)
    converted = to_eventide_part(part)
    assert converted is not None and converted.text is not None
    assert json.loads(converted.text) == {"city": "Paris", "days": 3}


def test_a_task_id_names_its_context() -> None:
    task_id = new_task_id("conversation/1 with spaces")
    assert context_of_task(task_id) == "conversation/1 with spaces"
    for foreign in ("", "nonexistent", "a2a-", "a2a-abc", "a2a-:ctx", "task-1:ctx"):
        assert context_of_task(foreign) is None
    assert user_for_context("ctx", None) == "A2A_USER_ctx"
