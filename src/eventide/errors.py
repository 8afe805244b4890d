"""Every exception Eventide raises, grouped by who has to act.

::

    EventideError
    ├── UsageError (also ValueError)       the developer misused the API: fix the calling code
    │   ├── AgentTreeError                  bad agent name, duplicate name, agent with two parents
    │   ├── AgentNotFoundError (LookupError) a transfer names no agent of the tree
    │   ├── SessionNotFoundError (LookupError) no such session: create it first
    │   ├── InvocationNotFoundError (LookupError) no such invocation in the session's history
    │   ├── EventNotFoundError (LookupError) no such event in the session's history
    │   ├── ResumeError                     an invocation that cannot be resumed (finished, ...)
    │   ├── InvalidStateValueError          a state value that cannot be stored as JSON
    │   ├── InputValidationError            input that fails validation (google-adk's name)
    │   │   └── InvalidArtifactNameError    an empty artifact name, or one escaping its folder
    │   ├── AlreadyExistsError              creating what exists (a session id that is taken)
    │   ├── RunnerClosedError               the Runner was used after close()
    │   ├── ConfigurationError              a missing key, an unknown model name, a missing extra
    │   ├── AppLoadError                    an agent app that cannot be found or imported
    │   ├── AppNotFoundError (LookupError)  the server serves no app by that name
    │   ├── ProtocolInputError              an AG-UI/OpenAI/A2A request its protocol refuses
    │   ├── WorkflowConfigurationError      a workflow node or edge that cannot run as written
    │   │   └── GraphValidationError         a graph with a cycle, a duplicate or unreachable node
    │   ├── WorkflowDataError               a node's input or parameter missing or of a bad type
    │   └── evals: UnknownMetricError, UnknownEvalCaseError / UnknownEvalSetError /
    │       UnknownEvalResultError (LookupError), EvalSetExistsError, InvalidEvalFileError
    ├── ModelBehaviorError                  the model answered something unusable (bad JSON, schema)
    │   └── ToolArgumentsError (ValueError)  a tool call's arguments do not match the tool
    ├── ModelError                          the model provider reported an error or failed
    ├── CredentialExchangeError             an OAuth2 token endpoint refused or failed an exchange
    ├── ToolError                           a tool raised; ``__cause__`` holds the original
    │   └── McpConnectionError              an MCP server could not be started, reached or kept
    ├── BackendError                        a session/artifact/memory store failed or went away
    │   ├── StaleSessionError               compare-and-set append lost to another writer
    │   ├── CorruptRecordError              a stored record that no longer parses
    │   └── SchemaVersionError              the database's schema is newer than this code
    ├── ScriptExhaustedError (AssertionError) a test's scripted model ran out of responses
    ├── NodeInterrupted                     a workflow node waits for the user (a signal the
    │                                        workflow catches; it pauses the run)
    ├── DynamicNodeFailError                a node run with ctx.run_node failed (``error``)
    └── LimitExceededError                  a configured limit was reached
        ├── LlmCallsLimitExceededError      RunConfig.max_llm_calls
        ├── NodeTimeoutError (TimeoutError)  a workflow node ran past its ``timeout``
        └── RecordTooLargeError             an event or state bigger than the store accepts

Messages say what happened, name the bad value and say what to do; the facts are also
attributes (``session_id``, ``key``, ...), so code can act on them without parsing text.
"""

from __future__ import annotations

__all__ = [
    "AgentNotFoundError",
    "AgentTreeError",
    "AlreadyExistsError",
    "AppLoadError",
    "AppNotFoundError",
    "BackendError",
    "ConfigurationError",
    "CorruptRecordError",
    "CredentialExchangeError",
    "EvalSetExistsError",
    "EventNotFoundError",
    "DynamicNodeFailError",
    "EventideError",
    "GraphValidationError",
    "InputValidationError",
    "InvalidArtifactNameError",
    "InvalidEvalFileError",
    "InvalidStateValueError",
    "InvocationFailedError",
    "InvocationNotFoundError",
    "LimitExceededError",
    "LlmCallsLimitExceededError",
    "McpConnectionError",
    "ModelBehaviorError",
    "ModelError",
    "NodeInterrupted",
    "NodeTimeoutError",
    "ProtocolInputError",
    "RecordTooLargeError",
    "ResumeError",
    "RunnerClosedError",
    "SchemaVersionError",
    "ScriptExhaustedError",
    "SessionNotFoundError",
    "StaleSessionError",
    "ToolArgumentsError",
    "ToolError",
    "UnknownEvalCaseError",
    "UnknownEvalResultError",
    "UnknownEvalSetError",
    "UnknownMetricError",
    "UsageError",
    "WorkflowConfigurationError",
    "WorkflowDataError",
]


class EventideError(Exception):
    """Base of every Eventide exception."""


class UsageError(EventideError, ValueError):
    """The API was called in a way it does not support; the message says how to fix it."""


class AgentTreeError(UsageError):
    """The agent tree is malformed: a bad or duplicate name, or an agent with two parents."""


class AgentNotFoundError(UsageError, LookupError):
    """No agent with the given name exists in the tree."""

    def __init__(self, message: str, *, agent_name: str) -> None:
        super().__init__(message)
        self.agent_name = agent_name


class SessionNotFoundError(UsageError, LookupError):
    """The session does not exist."""

    def __init__(self, *, app_name: str, user_id: str, session_id: str) -> None:
        super().__init__(
            f"Session {session_id!r} not found for app {app_name!r} and user {user_id!r}. "
            "Create it first with session_service.create_session(...), or construct the "
            "Runner with auto_create_session=True."
        )
        self.app_name = app_name
        self.user_id = user_id
        self.session_id = session_id


class InvocationNotFoundError(UsageError, LookupError):
    """The session has no such invocation to rewind to or resume (it is unknown, of another
    session, or was already rewound)."""

    def __init__(self, message: str, *, invocation_id: str, session_id: str = "") -> None:
        super().__init__(message)
        self.invocation_id = invocation_id
        self.session_id = session_id


class EventNotFoundError(UsageError, LookupError):
    """The event is not in the session's history."""

    def __init__(self, message: str, *, session_id: str, event_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.event_id = event_id


class InvalidStateValueError(UsageError, TypeError):
    """A state value that is not JSON data (dict, list, str, int, float, bool, None)."""

    def __init__(self, *, key: str, path: str, value_type: str) -> None:
        super().__init__(
            f"State key {key!r} holds a {value_type} at {path}, which cannot be stored: state "
            "values must be JSON data (dict, list, str, int, float, bool or None). Convert it "
            "first, e.g. with model.model_dump(mode='json') or str(value)."
        )
        self.key = key
        self.path = path
        self.value_type = value_type


class ResumeError(UsageError):
    """An invocation cannot be resumed (finished, paused for the user, not resumable, or
    the agent tree no longer matches its events); the message says what to do instead."""

    def __init__(self, message: str, *, invocation_id: str) -> None:
        super().__init__(message)
        self.invocation_id = invocation_id


class InputValidationError(UsageError):
    """Input that fails validation: a bad name, id or value given to an API.

    google-adk's class of the same name (also a ``ValueError``), so code that catches it
    works on Eventide; ``message`` holds the text, as on google-adk.
    """

    def __init__(self, message: str = "Invalid input.") -> None:
        super().__init__(message)
        self.message = message


class AlreadyExistsError(UsageError):
    """Creating something that already exists, e.g. a session whose id is taken.

    google-adk's class of the same name; ``message`` holds the text, as on google-adk.
    """

    def __init__(self, message: str = "The resource already exists.") -> None:
        super().__init__(message)
        self.message = message


class InvalidArtifactNameError(InputValidationError):
    """An artifact file name that is empty, absolute, or escapes its folder."""

    def __init__(self, filename: str, reason: str) -> None:
        super().__init__(f"Invalid artifact file name {filename!r}: {reason}.")
        self.filename = filename


class RunnerClosedError(UsageError, RuntimeError):
    """The Runner was used after ``close()``."""


class ConfigurationError(UsageError):
    """Something the feature needs is not configured: a key, a model name, an extra."""


class AppLoadError(UsageError):
    """An agent app could not be found or loaded: no such folder or module, its code raised
    while importing (the message holds its traceback), or it defines no ``root_agent``."""


class AppNotFoundError(UsageError, LookupError):
    """The server serves no app by that name; ``known`` lists the apps it serves."""

    def __init__(self, app_name: str, known: list[str]) -> None:
        listed = ", ".join(repr(name) for name in known) if known else "none"
        super().__init__(f"App {app_name!r} not found. Known apps: {listed}.")
        self.app_name = app_name
        self.known = known


class ProtocolInputError(UsageError):
    """A request to a protocol adapter (AG-UI, the OpenAI-compatible endpoints, A2A) that its
    protocol refuses; the adapter answers it in the protocol's own error shape.

    Attributes:
        code: the protocol's machine-readable code (``model_not_found``, ``PENDING_INTERRUPTS``).
        status: the HTTP status, where the protocol answers with one.
        param: the request field at fault, when one is.
        kind: the error's type in the protocol (the OpenAI APIs' ``invalid_request_error``).
    """

    def __init__(
        self,
        message: str,
        *,
        code: str | None = None,
        status: int = 400,
        param: str | None = None,
        kind: str = "invalid_request_error",
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.status = status
        self.param = param
        self.kind = kind


class UnknownMetricError(UsageError):
    """An eval metric Eventide does not score (or a bad criterion); the message lists the
    known metrics."""


class UnknownEvalCaseError(UsageError, LookupError):
    """Asked to run eval cases the eval set does not have; the message names them."""


class UnknownEvalSetError(UsageError, LookupError):
    """No eval set by that id."""


class UnknownEvalResultError(UsageError, LookupError):
    """No eval result by that id."""


class EvalSetExistsError(UsageError):
    """An eval set by that id already exists."""


class InvalidEvalFileError(UsageError):
    """A stored eval file is not valid JSON of its format; the message says which and why."""


class ModelBehaviorError(EventideError):
    """The model produced output Eventide cannot use (malformed JSON, schema mismatch)."""


class ToolArgumentsError(ModelBehaviorError, ValueError):
    """The model's arguments do not match a tool's parameters. The flow answers the call
    with this message so the model can correct itself; it reaches the caller only when a
    tool is called directly (``FunctionTool.validate_args``)."""


class ModelError(EventideError):
    """A model provider reported an error or the connection to it failed.

    Attributes:
        error_code: the provider's code (``rate_limit_exceeded``), an HTTP status
            (``"503"``) or Eventide's (``TIMEOUT``, ``CONNECTION_ERROR``, ``MALFORMED_STREAM``,
            ``EMPTY_STREAM``).
        retryable: whether the same request can succeed later (429, 408, a transient 5xx,
            a connection error); a request the provider refused as invalid never is.
        retry_after: seconds the provider asked to wait (``Retry-After``), if it said.
        status_code: the HTTP status, when the failure was one.
    """

    def __init__(
        self,
        message: str,
        *,
        error_code: str | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.retryable = retryable
        self.retry_after = retry_after
        self.status_code = status_code


class CredentialExchangeError(EventideError):
    """An OAuth2 token endpoint refused or failed to exchange a code (or refresh a token).

    Attributes:
        token_uri: the token endpoint.
        status_code: its HTTP status (None when it could not be reached).
    """

    def __init__(self, message: str, *, token_uri: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.token_uri = token_uri
        self.status_code = status_code


class ToolError(EventideError):
    """A tool raised an exception; ``__cause__`` is the original exception."""

    def __init__(self, message: str, *, tool_name: str, call_id: str | None = None) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.call_id = call_id


class McpConnectionError(ToolError):
    """An MCP server could not be started or reached, or its connection broke mid-call.

    Attributes:
        server: the server, as configured (its command line or URL).
        tool_name: the MCP tool being called, or ``""`` when listing the server's tools.
    """

    def __init__(self, message: str, *, server: str, tool_name: str = "") -> None:
        super().__init__(message, tool_name=tool_name)
        self.server = server


class BackendError(EventideError):
    """A session, artifact or memory store failed; what was committed before is intact."""


class InvocationFailedError(BackendError):
    """An invocation run on DBOS workers ended in error or was cancelled (see the message)."""


class StaleSessionError(BackendError):
    """A compare-and-set append found events newer than the caller's copy of the session."""

    def __init__(self, *, session_id: str, expected: int, actual: int) -> None:
        super().__init__(
            f"Session {session_id!r} has {actual} events but the caller's copy has {expected}: "
            "another writer appended first. Re-read the session and retry."
        )
        self.session_id = session_id
        self.expected = expected
        self.actual = actual


class CorruptRecordError(BackendError):
    """A stored record could not be parsed back (edited by hand or written by a newer version)."""


class SchemaVersionError(BackendError):
    """The database was written by a newer Eventide: its schema version is unknown here."""

    def __init__(
        self, *, database: str, found: int, supported: int, component: str = "sessions"
    ) -> None:
        kind = "session" if component == "sessions" else component
        super().__init__(
            f"Database {database!r} has {kind} schema version {found}, but this Eventide "
            f"supports versions up to {supported}. It was upgraded by a newer Eventide; "
            "upgrade Eventide to open it (downgrading a schema is never done automatically)."
        )
        self.database = database
        self.found = found
        self.supported = supported
        self.component = component


class ScriptExhaustedError(EventideError, AssertionError):
    """A test's scripted model (``eventide.testing``) was called more times than it has
    responses: the agent made more model calls than the test expected."""


class LimitExceededError(EventideError):
    """A configured limit was reached."""


class LlmCallsLimitExceededError(LimitExceededError):
    """The invocation made more model calls than ``RunConfig.max_llm_calls`` allows."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"The invocation exceeded max_llm_calls={limit} model calls. If the agent really "
            "needs more, raise RunConfig(max_llm_calls=...); otherwise look for a tool loop."
        )
        self.limit = limit


class RecordTooLargeError(LimitExceededError):
    """An event (or a session's initial state) is bigger than the store's configured limit."""

    def __init__(self, *, what: str, session_id: str, size: int, limit: int) -> None:
        super().__init__(
            f"{what} for session {session_id!r} is {size} bytes as JSON, over the limit of "
            f"{limit} bytes; nothing was stored. Keep large data in an artifact "
            "(context.save_artifact) and put its name in state, or raise max_event_bytes."
        )
        self.what = what
        self.session_id = session_id
        self.size = size
        self.limit = limit


class WorkflowConfigurationError(UsageError):
    """A workflow node or edge that cannot run as written (google-adk's name)."""


class GraphValidationError(WorkflowConfigurationError):
    """A workflow graph that is not valid: an unconditional cycle, two nodes with one name,
    a node unreachable from ``START``, a routed edge from ``START``."""


class WorkflowDataError(UsageError):
    """A node's input or one of its parameters is missing or fails its schema."""


class NodeTimeoutError(LimitExceededError, TimeoutError):
    """A workflow node ran longer than its ``timeout`` (it was cancelled).

    Attributes:
        node_name: the node.
        timeout: its limit in seconds.
    """

    def __init__(self, node_name: str, timeout: float) -> None:
        super().__init__(
            f"Node {node_name!r} did not finish within its timeout of {timeout}s and was "
            "cancelled. Raise the node's timeout= or give it a retry_config= to try again."
        )
        self.node_name = node_name
        self.timeout = timeout


class NodeInterrupted(EventideError):  # noqa: N818 - a signal, not a failure
    """A workflow node (or a child it awaited with ``ctx.run_node``) waits for the user's
    answer: the node stops where it is and the workflow pauses. Caught by the workflow;
    code inside a node should let it pass.

    Attributes:
        interrupt_ids: the function call ids of the requests waiting for an answer.
    """

    def __init__(self, interrupt_ids: list[str]) -> None:
        super().__init__(
            f"Waiting for the user's answer to {interrupt_ids}: let this exception pass, "
            "the workflow continues once the user answers."
        )
        self.interrupt_ids = interrupt_ids


class DynamicNodeFailError(EventideError):
    """A node run with ``ctx.run_node`` failed (after its retries); google-adk's name.

    The calling node may catch it and go on; uncaught, the caller fails with ``error``.

    Attributes:
        error: the child's exception.
        error_node_path: the path of the node run that failed.
    """

    def __init__(self, *, message: str, error: Exception, error_node_path: str) -> None:
        super().__init__(message)
        self.error = error
        self.error_node_path = error_node_path
