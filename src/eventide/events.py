"""``Event`` and ``EventActions``: the message between the Runner and the execution logic.

An event carries what happened (``content``: text, a function call, a function response,
...) and the side effects it requests (``actions``: ``state_delta``, ``artifact_delta``,
control signals). The Runner commits a non-partial event's actions before the producer
resumes; partial (streaming) events are forwarded and never committed.
"""

from __future__ import annotations

import time
from typing import Any, TypeAlias

from pydantic import Field

from eventide import types
from eventide._fastpath import fields_of, init_skipped_by_validation
from eventide._ids import new_id
from eventide._model import EventideModel, foreign_to_dict
from eventide.models.llm_response import LlmResponse

__all__ = [
    "Event",
    "EventActions",
    "EventCompaction",
    "NodeInfo",
    "RouteValue",
    "ToolConfirmation",
    "UiWidget",
]

RouteValue: TypeAlias = bool | int | str
"""A value a workflow node emits to choose which of its outgoing edges to follow."""


class ToolConfirmation(EventideModel):
    """A request for (or the user's answer to) a confirmation before a tool runs."""

    hint: str = ""
    confirmed: bool = False
    payload: Any | None = None


class UiWidget(EventideModel):
    """A widget for the UI to render with an event (google-adk 2.x's ``UiWidget``).

    Attributes:
        id: the widget's id, unique among the widgets of one event.
        provider: which renderer the UI uses (``"mcp"``: an MCP App iframe).
        payload: what that renderer needs (for ``"mcp"``: ``resource_uri``, ``tool``,
            ``tool_args``).
    """

    id: str
    provider: str
    payload: dict[str, Any] = Field(default_factory=dict)


class EventCompaction(EventideModel):
    """A summary that stands in for the events committed between two timestamps.

    The events it covers stay in the session's log; the contents sent to the model use
    ``compacted_content`` instead of them (see :mod:`eventide.history.compaction`).
    """

    start_timestamp: float
    end_timestamp: float
    compacted_content: types.Content


class EventActions(EventideModel):
    """The side effects and control signals an event asks the Runner to apply.

    Attributes:
        state_delta: state keys to set. ``temp:`` keys are visible during the invocation and
            never stored; ``app:`` and ``user:`` keys go to the app's and user's shared state.
        artifact_delta: file name -> the version saved while producing the event.
        transfer_to_agent: hand control to the named agent.
        escalate: end the enclosing loop (``LoopAgent``) or return control upward.
        skip_summarization: show a tool's result to the user instead of summarizing it.
        requested_auth_configs: function call id -> the credential a tool asked for.
        requested_tool_confirmations: function call id -> a confirmation a tool asked for.
        end_of_agent: the agent that authored the event has finished.
        agent_state: an agent's resumable state.
        rewind_before_invocation_id: this event rewinds the session to before that
            invocation (its state and artifact deltas restore what they were then); the
            rewound invocations stay in the log but no longer reach the model.
        compaction: this event summarises older events for the model (they stay in the log).
        route: the route(s) a workflow node chose: its outgoing edges tagged with one of
            them are followed (see :mod:`eventide.workflow`).
        render_ui_widgets: widgets the UI renders with the event (see
            ``Context.render_ui_widget``).
    """

    skip_summarization: bool | None = None
    state_delta: dict[str, Any] = Field(default_factory=dict)
    artifact_delta: dict[str, int] = Field(default_factory=dict)
    transfer_to_agent: str | None = None
    escalate: bool | None = None
    requested_auth_configs: dict[str, Any] = Field(default_factory=dict)
    requested_tool_confirmations: dict[str, ToolConfirmation] = Field(default_factory=dict)
    end_of_agent: bool | None = None
    agent_state: dict[str, Any] | None = None
    rewind_before_invocation_id: str | None = None
    compaction: EventCompaction | None = None
    route: RouteValue | list[RouteValue] | None = None
    render_ui_widgets: list[UiWidget] | None = None

    def merge(self, other: EventActions) -> None:
        """Fold ``other`` into this object (later values win), e.g. from parallel tool calls."""
        self.state_delta.update(other.state_delta)
        self.artifact_delta.update(other.artifact_delta)
        self.requested_auth_configs.update(other.requested_auth_configs)
        self.requested_tool_confirmations.update(other.requested_tool_confirmations)
        if other.skip_summarization:
            self.skip_summarization = True
        if other.escalate:
            self.escalate = True
        if other.transfer_to_agent:
            self.transfer_to_agent = other.transfer_to_agent
        if other.end_of_agent:
            self.end_of_agent = True
        if other.agent_state is not None:
            self.agent_state = other.agent_state
        if other.route is not None:
            self.route = other.route
        if other.render_ui_widgets:
            self.render_ui_widgets = [*(self.render_ui_widgets or ()), *other.render_ui_widgets]

    def is_empty(self) -> bool:
        """True when the actions request nothing."""
        return not (
            self.state_delta
            or self.artifact_delta
            or self.transfer_to_agent
            or self.escalate
            or self.skip_summarization
            or self.requested_auth_configs
            or self.requested_tool_confirmations
            or self.end_of_agent
            or self.agent_state is not None
            or self.rewind_before_invocation_id is not None
            or self.compaction is not None
            or self.route is not None
            or bool(self.render_ui_widgets)
        )


class NodeInfo(EventideModel):
    """Where in a workflow an event comes from (google-adk 2.x's ``node_info``).

    Attributes:
        path: the node's path of ``name@run`` segments from the outermost workflow down,
            e.g. ``"wf@1/classify@1"`` for the first run of ``classify`` in the first run of
            ``wf``. Empty for events made outside a workflow.
        output_for: the node paths whose output this event's ``output`` is (a terminal
            node's output is also its workflow's output).
        message_as_output: the event's ``content`` is the node's output.
    """

    path: str = ""
    output_for: list[str] | None = None
    message_as_output: bool | None = None

    @property
    def name(self) -> str:
        """The node's name: the last segment of ``path`` without its run id."""
        return self.path.rsplit("/", 1)[-1].split("@", 1)[0]

    @property
    def run_id(self) -> str:
        """The run id of the node (the part after ``@`` of the last segment), or ``""``."""
        last = self.path.rsplit("/", 1)[-1]
        return last.split("@", 1)[1] if "@" in last else ""

    @property
    def parent_run_id(self) -> str | None:
        """The run id of the enclosing node, or None at the top."""
        if "/" not in self.path:
            return None
        parent = self.path.rsplit("/", 1)[0].rsplit("/", 1)[-1]
        return parent.split("@", 1)[1] if "@" in parent else ""


# Keywords google-adk 2.x's Event accepts besides its fields, routed into them.
_SHORTHANDS = frozenset({"message", "state", "route", "node_path"})


class Event(LlmResponse):
    """One occurrence in an invocation: a user message, model output, tool call or result,
    state change, control signal or error.

    The fields of :class:`LlmResponse` (``content``, ``partial``, ``turn_complete``,
    ``error_code``, ...) plus the runtime's own: ``author`` ('user' or an agent's name),
    ``invocation_id``, ``id`` (unique per event), ``timestamp`` (seconds since the epoch),
    ``branch`` (the path of agents in a parallel fan-out), ``actions`` and
    ``long_running_tool_ids``; and google-adk 2.x's workflow fields: ``output`` (a node's
    result, any JSON value) and ``node_info`` (which node made it).

    google-adk 2.x's shorthands are accepted when constructing one: ``message=`` (text,
    a ``Part`` or ``Content``) sets ``content``; ``state=`` sets ``actions.state_delta``;
    ``route=`` sets ``actions.route``; ``node_path=`` sets ``node_info.path``. ``author``
    may be left out inside a workflow, which fills it in, as google-adk does.
    """

    # --- runtime fields ---
    author: str = ""
    invocation_id: str = ""
    id: str = Field(default_factory=new_id)
    timestamp: float = Field(default_factory=time.time)
    branch: str | None = None
    actions: EventActions = Field(default_factory=EventActions)
    long_running_tool_ids: set[str] | None = None
    output: Any | None = None
    node_info: NodeInfo = Field(default_factory=NodeInfo)

    @init_skipped_by_validation
    def __init__(self, /, **data: Any) -> None:
        if not _SHORTHANDS.isdisjoint(data):
            _expand_shorthands(data)
        super().__init__(**data)

    @property
    def message(self) -> types.Content | None:
        """google-adk 2.x's name for ``content`` (set it with text, a part or content)."""
        return self.content

    @message.setter
    def message(self, value: Any) -> None:
        self.content = None if value is None else _message_content(value)

    @property
    def node_name(self) -> str:
        """The name of the workflow node that made the event (``""`` outside one)."""
        return self.node_info.name

    def get_function_calls(self) -> list[types.FunctionCall]:
        """The function calls in this event's content, in order (empty when none)."""
        content = self.content
        if content is None or not content.parts:
            return []
        return [p.function_call for p in content.parts if p.function_call is not None]

    def get_function_responses(self) -> list[types.FunctionResponse]:
        """The function responses in this event's content, in order (empty when none)."""
        content = self.content
        if content is None or not content.parts:
            return []
        return [p.function_response for p in content.parts if p.function_response is not None]

    def has_trailing_code_execution_result(self) -> bool:
        """True when the content's last part is a code-execution result."""
        content = self.content
        if content is None or not content.parts:
            return False
        return content.parts[-1].code_execution_result is not None

    def is_final_response(self) -> bool:
        """Whether this event is the agent's complete, user-facing answer for the turn.

        True when (1) it carries a function response and ``skip_summarization`` is set, or
        (2) it carries a call of a long-running tool (``long_running_tool_ids``), or (3) it
        has no function calls, no function responses, is not a partial chunk and does not end
        with a code-execution result.
        """
        # Asked of every event the flow and the workflow see: the event's fields in one
        # lookup (an attribute read on a model is a generic lookup), the parts in one pass.
        fields = fields_of(self)
        if fields["long_running_tool_ids"]:
            return True
        content = fields["content"]
        parts = content.parts if content is not None else None
        if parts:
            calls = responses = False
            for part in parts:
                if part.function_call is not None:
                    calls = True
                if part.function_response is not None:
                    responses = True
            if responses:
                return bool(fields["actions"].skip_summarization)
            if calls or parts[-1].code_execution_result is not None:
                return False
        return not fields["partial"]

    @property
    def text(self) -> str | None:
        """The event's non-thought text, or None when it has none."""
        return self.content.text if self.content is not None else None

    @staticmethod
    def new_id() -> str:
        """A new unique event id."""
        return new_id()


def _expand_shorthands(data: dict[str, Any]) -> None:
    """Route google-adk 2.x's constructor shorthands into the fields they stand for."""
    message = data.pop("message", None)
    if message is not None:
        if data.get("content") is not None:
            raise ValueError(
                "'message' and 'content' are mutually exclusive: 'message' is google-adk's "
                "shorthand for 'content', so pass one of them."
            )
        data["content"] = _message_content(message)
    state = data.pop("state", None)
    route = data.pop("route", None)
    if state is not None or route is not None:
        actions = data.get("actions")
        if actions is None:
            actions = EventActions()
        elif isinstance(actions, dict):
            actions = EventActions.model_validate(actions)
        elif isinstance(actions, EventActions):
            actions = actions.model_copy()
        if isinstance(actions, EventActions):  # anything else: pydantic reports it
            if state is not None:
                actions.state_delta = dict(state)
            if route is not None:
                actions.route = route
        data["actions"] = actions
    node_path = data.pop("node_path", None)
    if node_path is not None:
        node_info = data.get("node_info")
        if isinstance(node_info, NodeInfo):
            node_info = node_info.model_copy(update={"path": node_path})
        elif isinstance(node_info, dict):
            given: dict[str, Any] = node_info  # pyright: ignore[reportUnknownVariableType]
            node_info = {**given, "path": node_path}
        else:
            node_info = NodeInfo(path=node_path)
        data["node_info"] = node_info


def _message_content(message: Any) -> types.Content:
    """``Event(message=...)`` as content: text, a ``Part``, a list of them, or ``Content``.

    The role is ``user``, as google-adk gives such content (it is the workflow's own
    message, not a model response)."""
    if isinstance(message, list):
        items: list[Any] = message  # pyright: ignore[reportUnknownVariableType]
        parts = [types.Part(text=item) if isinstance(item, str) else _part(item) for item in items]
        return types.Content(role="user", parts=parts)
    if isinstance(message, types.Part) or _foreign(message, "Part"):
        return types.Content(role="user", parts=[_part(message)])
    return types.to_content(message)


def _foreign(value: Any, name: str) -> bool:
    """Whether ``value`` is google-genai's class ``name`` (accepted wherever Eventide's is)."""
    kind: type = value.__class__
    return kind.__name__ == name and kind.__module__.startswith("google.genai")


def _part(item: Any) -> types.Part:
    if isinstance(item, types.Part):
        return item
    return types.Part.model_validate(foreign_to_dict(item))
