"""An interactive ``eventide run`` session driven through a real terminal (pexpect)."""

from __future__ import annotations

import io
import signal
import textwrap
from pathlib import Path
from typing import Any

import pexpect  # type: ignore[import-untyped]  # no stubs published with it
import pytest

from tests.cli.conftest import eventide_command


def spawn(args: list[str], cwd: Path, env: dict[str, str]) -> Any:
    command = eventide_command()
    # A terminal without styling, so the text can be matched as it is printed; the fault
    # handler on, so a child that hangs can be made to show where (expect_or_dump).
    env = {**env, "TERM": "dumb", "PYTHONFAULTHANDLER": "1"}
    child = pexpect.spawn(
        command[0],
        [*command[1:], *args],
        cwd=str(cwd),
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
        preexec_fn=_foreground_signals,
    )
    return child


def _foreground_signals() -> None:
    """Ctrl-C's signal as a terminal's foreground program gets it. A test run started in
    the background (``cmd &`` in a script) ignores SIGINT, and an ignored signal stays
    ignored across exec: the CLI would never see the Ctrl-C this test sends (seen: the
    turn hung until the timeout)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def expect_or_dump(child: Any, text: str) -> None:
    """Expect ``text``; if it does not come, stop the child with SIGABRT (its fault handler
    prints every thread's stack) and fail with what it printed, so a hang says where."""
    try:
        child.expect_exact(text)
    except pexpect.TIMEOUT:
        child.kill(signal.SIGABRT)
        child.expect(pexpect.EOF, timeout=10)
        pytest.fail(f"{text!r} did not come; the child's stacks when stopped:\n{child.before}")


@pytest.mark.slow
def test_interactive_chat_streams_answers_and_shows_tools_state_and_transfers(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """Two turns in a terminal: a transfer to a sub-agent that calls its tool (with a state
    change), then a turn answered by the agent that kept the conversation; `exit` quits 0."""
    folder = tmp_path / "desk"
    folder.mkdir()
    (folder / "agent.py").write_text(
        textwrap.dedent(
            """
            from eventide import ToolContext
            from eventide.agents import LlmAgent


            def issue_refund(order_id: str, tool_context: ToolContext) -> str:
                \"\"\"Refund an order.

                Args:
                    order_id: the order to refund.
                \"\"\"
                tool_context.state["refunded"] = order_id
                return f"refund of {order_id} sent"


            billing = LlmAgent(
                name="billing",
                description="Handles invoices, payments and refunds.",
                tools=[issue_refund],
            )
            root_agent = LlmAgent(
                name="desk", instruction="Route requests.", sub_agents=[billing]
            )
            """
        ),
        encoding="utf-8",
    )
    child = spawn(["run", "desk"], tmp_path, cli_env)
    try:
        child.expect("Using the offline demo model")
        child.expect(r"session (\S+) \(new session\)")
        child.expect_exact("you › ")

        child.sendline('please refund order "B-42"')
        child.expect_exact("⇢ transfer to billing")
        child.expect_exact('→ issue_refund(order_id="B-42")')
        child.expect_exact("← issue_refund: refund of B-42 sent")
        child.expect_exact("· state refunded = B-42")
        child.expect_exact("billing › issue_refund returned: refund of B-42 sent")
        child.expect_exact("you › ")

        child.sendline("refund order 'C-7' too")
        child.expect_exact('→ issue_refund(order_id="C-7")')
        child.expect_exact("billing › issue_refund returned: refund of C-7 sent")
        child.expect_exact("you › ")

        child.sendline("exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    assert (folder / ".eventide" / "sessions.db").is_file()


def test_ctrl_d_at_the_prompt_exits_0(tmp_path: Path, cli_env: dict[str, str]) -> None:
    folder = tmp_path / "echo_app"
    folder.mkdir()
    (folder / "agent.py").write_text(
        "from eventide.agents import LlmAgent\n\nroot_agent = LlmAgent(name='echo')\n",
        encoding="utf-8",
    )
    child = spawn(["run", "echo_app", "--session-db", "memory:"], tmp_path, cli_env)
    try:
        child.expect_exact("you › ")
        child.sendline("hello")
        child.expect_exact(
            'echo › [demo model] I am echo, running offline, and I received "hello".'
        )
        child.expect_exact("you › ")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


@pytest.mark.slow
def test_ctrl_c_interrupts_a_turn_then_the_chat_goes_on(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """Ctrl-C during a turn cancels that turn (the tool is cancelled) and returns to the
    prompt; the next turn runs; Ctrl-C at the prompt exits with 130."""
    folder = tmp_path / "slow_app"
    folder.mkdir()
    (folder / "agent.py").write_text(
        textwrap.dedent(
            """
            import asyncio

            from eventide.agents import LlmAgent


            async def wait_forever(topic: str) -> str:
                \"\"\"Wait for news about a topic (never arrives).\"\"\"
                print("waiting started", flush=True)
                await asyncio.Event().wait()
                return "never"


            def ping(target: str) -> str:
                \"\"\"Ping a target host.\"\"\"
                return f"pong from {target}"


            root_agent = LlmAgent(name="slow", tools=[wait_forever, ping])
            """
        ),
        encoding="utf-8",
    )
    child = spawn(["run", "slow_app"], tmp_path, cli_env)
    try:
        child.expect_exact("you › ")
        child.sendline("wait for news about Mars")
        child.expect_exact("waiting started")
        child.sendintr()
        expect_or_dump(child, "(turn interrupted)")
        child.expect_exact("you › ")
        child.sendline("ping Earth")
        child.expect_exact("slow › ping returned: pong from Earth")
        child.expect_exact("you › ")
        child.sendintr()
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 130


@pytest.mark.slow
def test_streamed_text_reaches_the_terminal_before_the_answer_is_complete(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    """Streaming with partial: the first chunk is on screen while the model is still
    generating (it waits for a file the test creates only after seeing the chunk)."""
    gate = tmp_path / "gate"
    folder = tmp_path / "streamer"
    folder.mkdir()
    (folder / "agent.py").write_text(
        textwrap.dedent(
            f"""
            import asyncio
            from pathlib import Path

            from eventide import LlmResponse, types
            from eventide.agents import LlmAgent
            from eventide.models.base_llm import BaseLlm


            def chunk(text, partial):
                content = types.Content(role="model", parts=[types.Part(text=text)])
                return LlmResponse(content=content, partial=partial)


            class GatedModel(BaseLlm):
                async def generate_content_async(self, llm_request, stream=False):
                    assert stream, "the CLI asks for streaming"
                    yield chunk("first half, ", True)
                    while not Path({str(gate)!r}).exists():
                        await asyncio.sleep(0.01)
                    yield chunk("second half.", True)
                    yield chunk("first half, second half.", None)


            root_agent = LlmAgent(name="streamer", model=GatedModel(model="gated"))
            """
        ),
        encoding="utf-8",
    )
    child = spawn(["run", "streamer", "--session-db", "memory:"], tmp_path, cli_env)
    transcript = io.StringIO()
    child.logfile_read = transcript
    try:
        child.expect_exact("you › ")
        child.sendline("go")
        child.expect_exact("streamer › first half, ")
        gate.write_text("open")
        child.expect_exact("second half.\r\n")
        child.expect_exact("you › ")
        child.sendline("exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    # The complete event ends the streamed line; it does not print the answer again.
    assert transcript.getvalue().count("first half, second half.") == 1
