"""``eventide run`` with a graph workflow (issue 31, front ends): each node's output is
printed as it happens, and a ``RequestInput`` question is asked at the prompt; the typed
answer continues the workflow."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pexpect  # type: ignore[import-untyped]  # no stubs published with it

from tests.cli.test_cli_interactive import spawn

_APP = """
from eventide import Workflow
from eventide.workflow import RequestInput


def draft(node_input: str) -> str:
    return f"refund for {node_input}"


async def approve(node_input):
    yield RequestInput(message="Send it?", payload=node_input)


def send(node_input) -> str:
    return "sent" if node_input == "yes" else "held"


root_agent = Workflow(name="desk", edges=[("START", draft, approve, send)])
"""


def test_node_progress_and_a_question_answered_at_the_prompt(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    folder = tmp_path / "desk"
    folder.mkdir()
    (folder / "agent.py").write_text(textwrap.dedent(_APP), encoding="utf-8")
    child = spawn(["run", "desk", "--session-db", "memory:"], tmp_path, cli_env)
    try:
        child.expect_exact("you › ")
        child.sendline("order 7")
        child.expect_exact("◆ desk@1/draft@1: refund for order 7")
        child.expect_exact("? Send it?")
        child.expect_exact("Send it? › ")
        child.sendline("yes")
        child.expect_exact("◆ desk@1/send@1: sent")
        child.expect_exact("you › ")
        child.sendline("exit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
