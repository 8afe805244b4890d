"""What went wrong in a call to a remote A2A agent, said so that the user can act on it.

:func:`describe_failure` turns any exception of a remote call (the SDK's client errors, httpx
errors, a JSON-RPC error the remote answered, a malformed answer) into an error code and a
message; :func:`can_retry` says whether sending again can succeed: only failures that happened
before the remote could have started anything (it could not be reached, or answered 502, 503
or 504). A timeout or a broken stream is never retried: the remote may be working on the
message already, and sending it again would start the work twice.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx
from a2a.client.errors import A2AClientError, A2AClientTimeoutError
from a2a.utils.errors import A2AError
from google.protobuf import json_format

__all__ = ["RemoteFailure", "can_retry", "describe_failure"]

_RETRY_STATUSES = frozenset({502, 503, 504})


@dataclass(slots=True, frozen=True)
class RemoteFailure:
    """An error code (``A2A_...``) and a message that says what to do."""

    code: str
    message: str


def _causes(exc: BaseException) -> list[BaseException]:
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _status(exc: BaseException) -> int | None:
    for cause in _causes(exc):
        if isinstance(cause, httpx.HTTPStatusError):
            return cause.response.status_code
    return None


def can_retry(exc: BaseException) -> bool:
    """Whether sending again can succeed (see the module docstring)."""
    for cause in _causes(exc):
        if isinstance(cause, httpx.TimeoutException | A2AClientTimeoutError):
            return False
        if isinstance(cause, httpx.ConnectError):
            return True
    status = _status(exc)
    return status in _RETRY_STATUSES


def describe_failure(exc: BaseException, *, agent: str, url: str, timeout: float) -> RemoteFailure:
    """The error code and message of a failed call to the remote agent ``agent`` at ``url``."""
    causes = _causes(exc)
    status = _status(exc)
    if any(isinstance(c, httpx.TimeoutException | A2AClientTimeoutError) for c in causes):
        return RemoteFailure(
            "A2A_TIMEOUT",
            f"The remote agent {agent!r} at {url} did not answer within {timeout:g} s; it may "
            "still be working. Raise RemoteA2aAgent(timeout=...) for slow agents.",
        )
    if status in (401, 403):
        return RemoteFailure(
            "A2A_UNAUTHORIZED",
            f"The remote agent {agent!r} at {url} refused the call (HTTP {status}): give "
            "RemoteA2aAgent an httpx_client that sends its credentials (e.g. headers="
            "{'Authorization': 'Bearer ...'}).",
        )
    if any(isinstance(c, httpx.ConnectError) for c in causes):
        return RemoteFailure(
            "A2A_UNREACHABLE",
            f"Cannot reach the remote agent {agent!r} at {url}: check that it is running and "
            "that the URL in its agent card is right.",
        )
    if status is not None:
        return RemoteFailure(
            "A2A_HTTP_ERROR",
            f"The remote agent {agent!r} at {url} answered HTTP {status}.",
        )
    for cause in causes:
        if isinstance(cause, A2AError) and not isinstance(cause, A2AClientError):
            return RemoteFailure(
                "A2A_REMOTE_ERROR",
                f"The remote agent {agent!r} refused the request: {cause.message or cause}",
            )
    if any(
        isinstance(c, json.JSONDecodeError | json_format.ParseError | ValueError | KeyError)
        for c in causes
    ):
        return RemoteFailure(
            "A2A_BAD_RESPONSE",
            f"The remote agent {agent!r} at {url} sent an answer that is not valid A2A: {exc}",
        )
    return RemoteFailure(
        "A2A_REQUEST_FAILED", f"The call to the remote agent {agent!r} at {url} failed: {exc}"
    )
