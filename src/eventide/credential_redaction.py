"""Keeping credentials out of the session log.

The user's answer to an ``eventide_request_credential`` call carries a secret (an API key, a
token, an OAuth2 code). The Runner hands it to the credential service before the message is
committed; the event stored in the session keeps only a note that the credential arrived.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from eventide import types
from eventide.protocol import REQUEST_CREDENTIAL_FUNCTION

if TYPE_CHECKING:
    from eventide.contexts import InvocationContext

__all__ = ["answers_credential_request", "store_credentials"]

_STORED_NOTE = {"status": "credential stored; not kept in the session log"}


def answers_credential_request(content: types.Content) -> bool:
    """Whether the user's message answers a credential request (checked for every message,
    so it stays a scan of the parts)."""
    for part in content.parts or ():
        answer = part.function_response
        if answer is not None and answer.name == REQUEST_CREDENTIAL_FUNCTION:
            return True
    return False


async def store_credentials(ctx: InvocationContext, content: types.Content) -> types.Content:
    """Store the credentials ``content`` answers requests with; the content to commit,
    each such answer replaced by a note. Called only for a message that does answer one
    (:func:`answers_credential_request`)."""
    # Imported here: the auth package is loaded by the first credential, not by every app.
    from eventide.auth import store_auth_response

    redacted: list[types.Part] = []
    for part in content.parts or []:
        answer = part.function_response
        if answer is not None and answer.name == REQUEST_CREDENTIAL_FUNCTION:
            await store_auth_response(ctx, response=answer.response or {})
            part = types.Part(
                function_response=types.FunctionResponse(
                    id=answer.id, name=answer.name, response=dict(_STORED_NOTE)
                )
            )
        redacted.append(part)
    return types.Content(role=content.role, parts=redacted)
