"""camelCase JSON for front ends written for ADK, which send and read camelCase keys.

Eventide's JSON is snake_case. A ``/run`` or ``/run_sse`` request written in camelCase gets
its events back in camelCase; keys that are data rather than field names (tool arguments
and results, state and artifact deltas, metadata, schemas) keep their spelling.
"""

from __future__ import annotations

from typing import Any

__all__ = ["camel_case_keys"]

# Field names whose values are user data: their keys are never renamed.
_DATA_FIELDS = frozenset(
    {
        "args",
        "response",
        "state_delta",
        "state",
        "artifact_delta",
        "custom_metadata",
        "parameters_json_schema",
        "response_json_schema",
        "requested_auth_configs",
        "agent_state",
        "payload",
        "grounding_metadata",
    }
)


def _to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word[:1].upper() + word[1:] for word in rest)


def camel_case_keys(data: Any) -> Any:
    """Recursively rename snake_case field names to camelCase (``function_call`` ->
    ``functionCall``), leaving the keys inside data fields as they are."""
    if isinstance(data, list):
        return [camel_case_keys(item) for item in data]
    if not isinstance(data, dict):
        return data
    return {
        _to_camel(key): (value if key in _DATA_FIELDS else camel_case_keys(value))
        for key, value in data.items()
    }
