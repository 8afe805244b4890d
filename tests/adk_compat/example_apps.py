"""The three google-adk-style example apps (``examples/adk_*``), played on either framework.

On Eventide (``test_examples.py``) each app is first rewritten by ``eventide migrate`` and
runs offline on the demo model; its events and final state are compared with
``golden/<app>.json``, which also records what the demo model answered. The opt-in job
(``run_on_adk.py``) runs the original, unmigrated app on google-adk with a model that replays
those answers, and compares the events and state with the same golden file: the two
frameworks produce the same conversation from the same model output.
"""

from __future__ import annotations

from typing import Any

from tests.adk_compat.frameworks import Framework

APP_NAME = "example"
USER_ID = "user-1"

# Each turn: a text message, or {"answer_long_running": response} (a function response to
# the latest long-running call, as the client would send it once the work is done).
TURNS: dict[str, list[Any]] = {
    "adk_weather_bot": ["weather in Paris please", "weather in Atlantis please"],
    "adk_refund_desk": [
        'refund approval for order "abc", amount 40',
        {"answer_long_running": {"status": "approved", "approved_by": "manager"}},
    ],
    "adk_review_loop": ["draft about tides", "approve the draft about tides"],
}


def summarize(event: Any) -> dict[str, Any]:
    """What an event says, without framework-specific details (ids, timestamps)."""
    parts = []
    for part in (event.content.parts or []) if event.content is not None else []:
        if part.function_call is not None:
            parts.append({"call": part.function_call.name, "args": part.function_call.args or {}})
        elif part.function_response is not None:
            parts.append(
                {"response": part.function_response.name, "value": part.function_response.response}
            )
        elif part.text is not None:
            parts.append({"text": part.text, "thought": bool(part.thought)})
    summary: dict[str, Any] = {"author": event.author, "parts": parts}
    actions = event.actions
    if actions.state_delta:
        summary["state_delta"] = dict(actions.state_delta)
    if actions.escalate:
        summary["escalate"] = True
    if actions.transfer_to_agent:
        summary["transfer_to_agent"] = actions.transfer_to_agent
    if event.long_running_tool_ids:
        summary["long_running"] = True
    return summary


def model_outputs(turns: list[list[dict[str, Any]]]) -> dict[str, list[list[dict[str, Any]]]]:
    """Each agent's model answers, in order, read from the events (a model event has parts
    and no function responses)."""
    outputs: dict[str, list[list[dict[str, Any]]]] = {}
    for events in turns:
        for event in events:
            parts = event["parts"]
            if event["author"] == "user" or not parts or any("response" in p for p in parts):
                continue
            outputs.setdefault(event["author"], []).append(parts)
    return outputs


def replay_model(fw: Framework, answers: list[list[dict[str, Any]]]) -> Any:
    """A model of ``fw`` that gives ``answers`` (from :func:`model_outputs`) in order."""
    types = fw.types
    queue = list(answers)

    def to_part(part: dict[str, Any]) -> Any:
        if "call" in part:
            return types.Part(
                function_call=types.FunctionCall(name=part["call"], args=part["args"])
            )
        return types.Part(text=part["text"], thought=part["thought"] or None)

    class Replay(fw.BaseLlm):  # type: ignore[misc, name-defined]
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            if not queue:
                raise AssertionError("the replayed model was called more often than recorded")
            parts = [to_part(p) for p in queue.pop(0)]
            yield fw.LlmResponse(content=types.Content(role="model", parts=parts))

    return Replay(model="gemini-2.5-flash")


async def play(fw: Framework, root_agent: Any, turns: list[Any]) -> dict[str, Any]:
    """Run ``turns`` in one session; the summarized events of each turn and the final state."""
    runner = fw.Runner(
        app_name=APP_NAME, agent=root_agent, session_service=fw.InMemorySessionService()
    )
    session = await runner.session_service.create_session(app_name=APP_NAME, user_id=USER_ID)
    played: list[list[dict[str, Any]]] = []
    types = fw.types
    for turn in turns:
        if isinstance(turn, str):
            message = types.Content(role="user", parts=[types.Part(text=turn)])
        else:
            current = await runner.session_service.get_session(
                app_name=APP_NAME, user_id=USER_ID, session_id=session.id
            )
            call = next(
                p.function_call
                for e in reversed(current.events)
                if e.long_running_tool_ids
                for p in e.content.parts
                if p.function_call is not None and p.function_call.id in e.long_running_tool_ids
            )
            message = types.Content(
                role="user",
                parts=[
                    types.Part(
                        function_response=types.FunctionResponse(
                            id=call.id, name=call.name, response=turn["answer_long_running"]
                        )
                    )
                ],
            )
        events = [
            event
            async for event in runner.run_async(
                user_id=USER_ID, session_id=session.id, new_message=message
            )
        ]
        played.append([summarize(e) for e in events])
    final = await runner.session_service.get_session(
        app_name=APP_NAME, user_id=USER_ID, session_id=session.id
    )
    await runner.close()
    return {"turns": played, "state": dict(final.state)}
