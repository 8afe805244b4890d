"""Issue 31 (one replay reader): an invocation's committed events read once into a
``ReplayIndex`` answer both questions a resume asks: where an agent stopped (by author and
branch) and what a workflow's node runs left (by node path)."""

from __future__ import annotations

from eventide import (
    BaseAgent,
    Event,
    EventActions,
    InMemorySessionService,
    InvocationContext,
    types,
)
from eventide.node_context import Context
from eventide.runtime.replay import ResumeScope
from eventide.runtime.replay_index import DONE_KEY, ReplayIndex
from eventide.sessions.session import Session
from eventide.workflow.node_runner import NodeRunner
from eventide.workflow.replay import read_index, read_run


def _text(author: str, text: str, **fields: object) -> Event:
    return Event(author=author, content=types.Content(parts=[types.Part(text=text)]), **fields)


def _log() -> list[Event]:
    return [
        _text("user", "go"),
        Event(author="seq", actions=EventActions(agent_state={"current_sub_agent": "a"})),
        _text("a", "a1"),
        _text("a", "a-branch", branch="fan.a"),
        Event(author="seq", actions=EventActions(agent_state={"current_sub_agent": "b"})),
        _text("b", "b1", actions=EventActions(transfer_to_agent="c")),
        _text("b", "b2"),
        Event(author="wf", node_path="wf@1/one@1", output=1, node_info={"output_for": None}),
        Event(author="wf", node_path="wf@1/two@1", custom_metadata={DONE_KEY: True}),
        Event(author="wf", node_path="wf@1/three@1", route="left"),
        Event(author="wf", node_path="other@1/one@1", output=9),
    ]


def test_progress_reads_an_agent_by_author_and_branch_from_a_position() -> None:
    index = ReplayIndex(_log())
    seq = index.progress("seq", None)
    assert [p for p, _ in seq.events] == [1, 4]
    assert seq.state == {"current_sub_agent": "b"} and seq.state_position == 4
    assert [p for p, _ in index.progress("a", None).events] == [2]
    assert [p for p, _ in index.progress("a", "fan.a").events] == [3]
    # From a position on: the events before it are not the agent's part.
    assert index.progress("seq", None, since=2).state_position == 4
    assert not index.progress("a", None, since=3).started
    # Up to and including the first transfer.
    assert [p for p, _ in index.progress("b", None).events] == [5]


def test_a_resume_scope_is_a_view_on_one_index() -> None:
    scope = ResumeScope.of(_log())
    child = scope.at(4)
    assert child.index is scope.index
    assert child.events is scope.events
    assert [p for p, _ in child.progress("seq", None).events] == [4]
    assert not child.progress("a", None).started


def test_records_by_node_path_from_the_same_index() -> None:
    index = ReplayIndex(_log())
    records = index.records("wf@1")
    assert set(records) == {"wf@1", "wf@1/one@1", "wf@1/two@1", "wf@1/three@1"}
    assert records["wf@1/one@1"].has_output and records["wf@1/one@1"].output == 1
    assert records["wf@1/two@1"].done and not records["wf@1/two@1"].has_output
    assert records["wf@1/three@1"].route == "left"
    assert not index.finished("wf@1")
    assert index.records("other@1")["other@1/one@1"].output == 9


def test_read_run_on_a_session_tail_and_read_index_on_an_invocation_agree() -> None:
    events = [_text("user", "earlier"), *_log()]
    from_session = read_run(events, "wf@1")
    from_invocation = read_index(ReplayIndex(_log()), "wf@1")
    assert from_session.start is not None and from_session.start.parts
    assert from_session.start.parts[0].text == "go"
    assert from_session.records == from_invocation.records
    assert from_session.start == from_invocation.start


def test_a_node_runs_committed_events_are_a_lookup_through_the_node_runtime() -> None:
    """``AgentNode`` asks the ``NodeRuntime`` protocol for its path's committed events (it
    no longer reaches into the runner's log): events of that path in that invocation."""

    events = [
        _text("user", "go", invocation_id="i1"),
        _text("writer", "draft", invocation_id="i1", node_path="wf@1/writer@1"),
        _text("writer", "sub", invocation_id="i1", node_path="wf@1/writer@1/tool@1"),
        _text("writer", "elsewhere", invocation_id="i0", node_path="wf@1/writer@1"),
    ]

    async def emit(event: Event) -> None:
        raise AssertionError("nothing is emitted")

    runner = NodeRunner(emit, read_run(events, "wf@1"), resumable=True)
    invocation = _invocation("i1")
    ctx = Context(invocation, node_path="wf@1/writer@1", runtime=runner)
    assert [e.text for e in runner.committed(ctx)] == ["draft"]
    fresh = Context(invocation, node_path="wf@1/reader@1", runtime=runner)
    assert runner.committed(fresh) == []


def _invocation(invocation_id: str) -> InvocationContext:
    class Idle(BaseAgent):
        pass

    return InvocationContext(
        invocation_id=invocation_id,
        agent=Idle(name="idle"),
        session=Session(id="s", app_name="a", user_id="u"),
        session_service=InMemorySessionService(),
    )
