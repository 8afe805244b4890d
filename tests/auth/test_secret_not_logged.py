"""Credentials given by the user never reach the session's event log."""

from __future__ import annotations

from eventide.testing import ScriptedModel, tool_call_response
from tests.agents.llm_helpers import start, stored_events, turn
from tests.auth.test_auth_flow import answer_to, weather_agent


async def test_api_key_answer_is_stored_but_redacted_in_the_log() -> None:
    """Issue 6 tool auth: the Runner stores the credential in the credential service and
    commits the user's answer without the secret; the tool still gets the key."""
    model = ScriptedModel(
        responses=[tool_call_response(("get_weather", {"city": "Oslo"})), "Cold in Oslo."]
    )
    seen: list[str] = []
    runner, sid = await start(weather_agent(model, seen))
    first = await turn(runner, sid, "Weather in Oslo?")
    await turn(
        runner, sid, answer_to(first[-1], {"auth_type": "api_key", "api_key": "sk-SECRET-1"})
    )
    assert seen == ["sk-SECRET-1"]
    log = "".join(e.model_dump_json() for e in await stored_events(runner, sid))
    assert "sk-SECRET-1" not in log
    assert "credential stored" in log
    history = "".join(r.model_dump_json() for r in model.requests)
    assert "sk-SECRET-1" not in history
