"""``eventide run --rewind-to TURN`` and the interactive ``/turns`` and ``/rewind`` commands."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from eventide.sessions.sql_session_service import SqlSessionService

Invoke = Callable[..., Result]

AGENT_PY = """
from eventide import LlmAgent, ToolContext
from eventide.testing import FunctionModel
from eventide.testing.scripted_model import text_response, tool_call_response


def note(value: str, tool_context: ToolContext) -> str:
    tool_context.state["last"] = value
    return value


def answer(request):
    part = request.contents[-1].parts[-1]
    if part.function_response is not None:
        seen = [p.text for c in request.contents for p in c.parts if c.role == "user" and p.text]
        return text_response("I have seen: " + ", ".join(seen))
    return tool_call_response(("note", {"value": part.text}))


root_agent = LlmAgent(name="noter", model=FunctionModel(function=answer), tools=[note])
"""


def make_app(tmp_path: Path) -> Path:
    folder = tmp_path / "noter"
    folder.mkdir()
    (folder / "agent.py").write_text(textwrap.dedent(AGENT_PY), encoding="utf-8")
    return folder


def stored_state(folder: Path) -> dict[str, object]:
    async def read() -> dict[str, object]:
        service = SqlSessionService(f"sqlite:///{folder / '.eventide' / 'sessions.db'}")
        try:
            session = await service.get_session(app_name="noter", user_id="user", session_id="s")
            assert session is not None
            return dict(session.state)
        finally:
            await service.close()

    return asyncio.run(read())


def test_rewind_to_a_turn_number_then_a_new_query(tmp_path: Path, invoke: Invoke) -> None:
    """Rule: ``--rewind-to N`` rewinds --session to before its Nth turn before running; the
    model then sees only the turns before it, and the state is back."""
    folder = make_app(tmp_path)
    for text in ("alpha", "beta", "gamma"):
        result = invoke(["run", "noter", "--session", "s", "-q", text], cwd=tmp_path)
        assert result.exit_code == 0, result.output
    assert stored_state(folder)["last"] == "gamma"

    result = invoke(
        ["run", "noter", "--session", "s", "--rewind-to", "2", "-q", "delta"], cwd=tmp_path
    )

    assert result.exit_code == 0, result.output
    assert "rewound to before turn 2: 'beta'" in result.stdout
    assert "I have seen: alpha, delta" in result.stdout
    assert stored_state(folder)["last"] == "delta"


def test_interactive_turns_and_rewind_commands(tmp_path: Path, invoke: Invoke) -> None:
    """Rule: ``/turns`` lists the turns still in the history; ``/rewind N`` rewinds to
    before turn N; a bad turn is an error message and the chat goes on."""
    make_app(tmp_path)
    script = "one\ntwo\n/turns\n/rewind 9\n/rewind 2\n/turns\nthree\nexit\n"

    result = invoke(["run", "noter", "--session", "s"], cwd=tmp_path, input_text=script)

    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "  1  one\n  2  two\n" in out
    assert "No turn '9' in this session: give a turn number from 1 to 2" in result.stderr
    assert "rewound to before turn 2: 'two'" in out
    assert (out.count("  1  one\n"), out.count("  2  two\n")) == (2, 1)
    assert "I have seen: one, three" in out


def test_rewind_to_needs_a_session(tmp_path: Path, invoke: Invoke) -> None:
    """Rule: ``--rewind-to`` without ``--session`` is a usage error (exit 2)."""
    make_app(tmp_path)
    result = invoke(["run", "noter", "--rewind-to", "1", "-q", "x"], cwd=tmp_path)
    assert result.exit_code == 2
    assert "--rewind-to needs --session" in result.stderr


def test_rewind_to_on_a_missing_session_refuses_before_creating_it(
    tmp_path: Path, invoke: Invoke
) -> None:
    """Rule: ``--rewind-to`` on a session that does not exist is a usage error that names
    it, and no session is created (issue 33: it was created, then refused)."""
    folder = make_app(tmp_path)
    result = invoke(["run", "noter", "--session", "nosuch", "--rewind-to", "2"], cwd=tmp_path)
    assert result.exit_code == 2, result.output
    assert "Session 'nosuch' of user" in result.stderr
    assert "nothing was created" in result.stderr

    async def sessions() -> list[str]:
        service = SqlSessionService(f"sqlite:///{folder / '.eventide' / 'sessions.db'}")
        try:
            listed = await service.list_sessions(app_name="noter", user_id="user")
            return [s.id for s in listed.sessions]
        finally:
            await service.close()

    assert asyncio.run(sessions()) == []


def test_help_lists_the_chat_commands_without_sending_it(tmp_path: Path, invoke: Invoke) -> None:
    """Rule: ``/help`` in the chat lists the commands; it is not sent to the model."""
    make_app(tmp_path)
    result = invoke(["run", "noter", "--session", "h"], cwd=tmp_path, input_text="/help\nexit\n")
    assert result.exit_code == 0, result.output
    assert "/help for commands" in result.stdout
    for command in ("/turns", "/rewind TURN", "exit, /quit"):
        assert command in result.stdout
    assert "I have seen" not in result.stdout
