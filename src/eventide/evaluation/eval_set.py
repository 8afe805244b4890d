"""The eval-set format: the JSON files google-adk reads and writes (``*.evalset.json``).

An *eval set* holds *eval cases*. A case is a conversation: a list of *invocations*, each
the user's message (``user_content``) with what the agent is expected to do in answer: the
tool calls it makes (``intermediate_data``) and its final response (``final_response``).
A case may also give the session to start from (``session_input``: user id and state).

Files are snake_case JSON; the HTTP API sends camelCase (:func:`to_camel_json`) and accepts
both (:func:`from_either_case`). Fields this module does not use (rubrics, app details,
conversation scenarios) are kept as they were read, so a file written by google-adk
survives a round trip through Eventide.

Intermediate data comes in two shapes, both accepted: ``{"tool_uses": [...],
"tool_responses": [...], "intermediate_responses": [...]}`` (the older one, handy to write
by hand) and ``{"invocation_events": [{"author": ..., "content": ...}, ...]}`` (what
google-adk records from a session).
"""

from __future__ import annotations

import re
from enum import IntEnum
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from eventide._json import JsonValue
from eventide._model import DATA_FIELDS, EventideModel
from eventide.types import Content, FunctionCall, FunctionResponse

__all__ = [
    "DEFAULT_USER_ID",
    "EvalCase",
    "EvalCaseResult",
    "EvalMetric",
    "EvalMetricResult",
    "EvalMetricResultPerInvocation",
    "EvalSet",
    "EvalSetResult",
    "EvalStatus",
    "IntermediateData",
    "Invocation",
    "InvocationEvent",
    "InvocationEvents",
    "MetricCriterion",
    "SessionInput",
    "check_eval_set_id",
    "from_either_case",
    "to_camel_json",
]

# The user a case runs as when it gives no session_input (google-adk's choice too).
DEFAULT_USER_ID = "test_user_id"
_EVAL_SET_ID = re.compile(r"^[A-Za-z0-9_]+$")
# Keys whose values are user data: never renamed between snake_case and camelCase.
_DATA_FIELDS = DATA_FIELDS | {"final_session_state"}


class EvalStatus(IntEnum):
    """A metric's or a case's verdict (integers on the wire, as google-adk sends them)."""

    PASSED = 1
    FAILED = 2
    NOT_EVALUATED = 3
    INFORMATIONAL = 4


class _Record(EventideModel):
    # Unknown fields are kept (and written back), so files from newer tools round-trip.
    model_config = ConfigDict(extra="allow")


class InvocationEvent(EventideModel):
    """One event of an invocation, as recorded in an eval case: who wrote it and what."""

    model_config = ConfigDict(extra="ignore")

    author: str
    content: Content | None = None


class InvocationEvents(EventideModel):
    """Intermediate data as the events between the user's message and the final response."""

    model_config = ConfigDict(extra="forbid")

    invocation_events: list[InvocationEvent] = Field(default_factory=list)


class IntermediateData(EventideModel):
    """Intermediate data as lists: the tool calls, their responses, other agents' texts."""

    model_config = ConfigDict(extra="forbid")

    tool_uses: list[FunctionCall] = Field(default_factory=list)
    tool_responses: list[FunctionResponse] = Field(default_factory=list)
    intermediate_responses: list[Any] = Field(default_factory=list)


class Invocation(_Record):
    """One user message and what the agent did (or is expected to do) in answer."""

    invocation_id: str = ""
    user_content: Content
    final_response: Content | None = None
    intermediate_data: InvocationEvents | IntermediateData | None = None
    creation_timestamp: float = 0.0

    def tool_calls(self) -> list[FunctionCall]:
        """The tool calls of this invocation, in the order they were made."""
        data = self.intermediate_data
        if data is None:
            return []
        if isinstance(data, IntermediateData):
            return list(data.tool_uses)
        calls: list[FunctionCall] = []
        for event in data.invocation_events:
            if event.content is not None:
                calls.extend(p.function_call for p in event.content.parts or () if p.function_call)
        return calls

    def final_text(self) -> str:
        """The text of the final response ('' when there is none)."""
        if self.final_response is None:
            return ""
        parts = self.final_response.parts or ()
        return "".join(p.text for p in parts if p.text and not p.thought)


class SessionInput(_Record):
    """The session an eval case starts from."""

    app_name: str = ""
    user_id: str = DEFAULT_USER_ID
    state: dict[str, Any] = Field(default_factory=dict)


class EvalCase(_Record):
    """A conversation to replay and the behaviour expected at each of its turns."""

    eval_id: str = Field(min_length=1)
    conversation: list[Invocation] | None = None
    session_input: SessionInput | None = None
    creation_timestamp: float = 0.0
    final_session_state: dict[str, Any] | None = None


class EvalSet(_Record):
    """A named list of eval cases, stored as ``<eval_set_id>.evalset.json`` in the app folder."""

    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[EvalCase] = Field(default_factory=list)
    creation_timestamp: float = 0.0

    @field_validator("eval_set_id")
    @classmethod
    def _valid_id(cls, value: str) -> str:
        check_eval_set_id(value)
        return value

    def case(self, eval_id: str) -> EvalCase | None:
        """The case ``eval_id``, or None."""
        return next((c for c in self.eval_cases if c.eval_id == eval_id), None)


class MetricCriterion(_Record):
    """How a metric judges: the threshold and, for the tool trajectory, the match type."""

    threshold: float
    match_type: str | None = None
    include_intermediate_responses_in_final: bool | None = None


class EvalMetric(_Record):
    """A metric to score, with its threshold (given directly or in ``criterion``)."""

    metric_name: str
    threshold: float | None = None
    criterion: MetricCriterion | None = None
    custom_function_path: str | None = None

    def effective_threshold(self) -> float | None:
        """The threshold to pass: the criterion's when given, else ``threshold``."""
        return self.criterion.threshold if self.criterion is not None else self.threshold


class EvalMetricResult(EvalMetric):
    """A metric's score and verdict (for one invocation, or over the whole case)."""

    score: float | None = None
    eval_status: EvalStatus
    details: dict[str, Any] = Field(default_factory=dict)


class EvalMetricResultPerInvocation(_Record):
    """The actual invocation next to the expected one, with each metric's result."""

    actual_invocation: Invocation
    expected_invocation: Invocation | None = None
    eval_metric_results: list[EvalMetricResult] = Field(default_factory=list)


class EvalCaseResult(_Record):
    """The outcome of one eval case in a run."""

    eval_set_file: str | None = None
    eval_set_id: str = ""
    eval_id: str = ""
    final_eval_status: EvalStatus
    eval_metric_results: list[Any] | None = None
    overall_eval_metric_results: list[EvalMetricResult] = Field(default_factory=list)
    eval_metric_result_per_invocation: list[EvalMetricResultPerInvocation] = Field(
        default_factory=list
    )
    session_id: str
    session_details: dict[str, Any] | None = None
    user_id: str | None = None
    error_message: str | None = None


class EvalSetResult(_Record):
    """The stored outcome of one run of an eval set."""

    eval_set_result_id: str
    eval_set_result_name: str | None = None
    eval_set_id: str
    eval_case_results: list[EvalCaseResult] = Field(default_factory=list)
    creation_timestamp: float = 0.0


def check_eval_set_id(eval_set_id: str) -> None:
    """Raise ValueError unless ``eval_set_id`` is letters, digits and underscores.

    The id names a file in the app folder, so nothing else is allowed in it.
    """
    if not _EVAL_SET_ID.match(eval_set_id):
        raise ValueError(
            f"invalid eval set id {eval_set_id!r}: use only letters, digits and underscores "
            "(it names the file <id>.evalset.json)"
        )


def _snake(name: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), name)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def from_either_case(data: JsonValue) -> Any:
    """JSON written in camelCase or snake_case, as snake_case (user data left as it is)."""
    if isinstance(data, list):
        return [from_either_case(item) for item in data]
    if not isinstance(data, dict):
        return data
    converted: dict[str, JsonValue] = {}
    for key, value in data.items():
        name = _snake(key)
        converted[name] = value if name in _DATA_FIELDS else from_either_case(value)
    return converted


def to_camel_json(data: JsonValue) -> Any:
    """snake_case JSON data as camelCase, the way google-adk's HTTP API sends it."""
    if isinstance(data, list):
        return [to_camel_json(item) for item in data]
    if not isinstance(data, dict):
        return data
    return {
        _camel(key): value if key in _DATA_FIELDS else to_camel_json(value)
        for key, value in data.items()
    }
