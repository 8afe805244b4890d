"""The credential round trip between a tool, the flow and the client.

1. A tool calls ``tool_context.request_credential(auth_config)``: the request (see
   :func:`credential_request`) is recorded in ``actions.requested_auth_configs`` under the
   tool's function call id, and the flow pauses the invocation with an
   ``eventide_request_credential`` function call carrying it.
2. The client answers with a function response of that call's id whose ``response`` is the
   auth config with ``exchanged_auth_credential`` filled in. The Runner hands it to
   :func:`store_auth_response`, which stores the credential per app, user and
   ``credential_key``; the flow then re-runs the tool call.
3. The tool reads it with ``await tool_context.get_auth_response(auth_config)``
   (:func:`load_credential`): OAuth2 codes are exchanged for tokens on first read (with the
   developer's ``auth_config``, which holds the client secret), expired tokens refreshed.

Where credentials are stored: ``Runner(credential_service=...)``. When the Runner has none,
an :class:`InMemoryCredentialService` is used, one per session service object, so
credentials last as long as that service (in-memory, lost on restart).

The client's answer arrives as a user message. The Runner stores the credential before it
commits that message, and commits the answer with the secret replaced by a note: neither
the session's event log nor the model ever sees an API key, token or code.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

import pydantic

from eventide.auth.auth_config import (
    ApiKeyScheme,
    AuthConfig,
    AuthCredential,
    HttpBearerScheme,
    OAuth2Auth,
    OAuth2Scheme,
)
from eventide.auth.credential_service import BaseCredentialService, InMemoryCredentialService
from eventide.errors import ConfigurationError, UsageError
from eventide.types import snake_case_keys

if TYPE_CHECKING:
    from eventide.contexts import InvocationContext

__all__ = [
    "auth_headers",
    "credential_request",
    "credential_service_for",
    "forget_credential",
    "load_credential",
    "save_credential",
    "store_auth_response",
]

_fallback_services: weakref.WeakKeyDictionary[Any, InMemoryCredentialService] = (
    weakref.WeakKeyDictionary()
)
_process_service = InMemoryCredentialService()


def credential_service_for(invocation_context: InvocationContext) -> BaseCredentialService:
    """The Runner's credential service, or the in-memory one of its session service."""
    service = invocation_context.credential_service
    if service is not None:
        if not isinstance(service, BaseCredentialService):
            raise ConfigurationError(
                "Runner(credential_service=...) must be a BaseCredentialService (e.g. "
                f"InMemoryCredentialService()); got {type(service).__name__}."
            )
        return service
    owner = invocation_context.session_service
    try:
        fallback = _fallback_services.get(owner)
        if fallback is None:
            fallback = _fallback_services[owner] = InMemoryCredentialService()
    except TypeError:
        # A session service that cannot be weakly referenced or hashed: one store for the
        # process (still keyed by app and user).
        return _process_service
    return fallback


def credential_request(auth_config: AuthConfig) -> dict[str, Any]:
    """The auth config as sent to the client: JSON, without the client secret, and for
    OAuth2 with the URL to send the user to (``exchanged_auth_credential.oauth2.auth_uri``)."""
    request = auth_config.model_copy(deep=True)
    raw = request.raw_auth_credential
    if raw is not None and raw.oauth2 is not None:
        raw.oauth2.client_secret = None
    if isinstance(request.auth_scheme, OAuth2Scheme) and request.exchanged_auth_credential is None:
        from eventide.auth.oauth2_exchange import authorization_url

        url, state = authorization_url(auth_config)
        oauth2 = raw.oauth2 if raw is not None and raw.oauth2 is not None else OAuth2Auth()
        request.exchanged_auth_credential = AuthCredential(
            auth_type="oauth2",
            oauth2=OAuth2Auth(
                client_id=oauth2.client_id,
                redirect_uri=oauth2.redirect_uri,
                auth_uri=url,
                state=state,
            ),
        )
    return request.model_dump(mode="json")


def _check_answer(config: AuthConfig) -> AuthCredential:
    credential = config.exchanged_auth_credential
    scheme = config.auth_scheme
    if credential is None:
        raise UsageError(
            f"The credential answer for {config.credential_key!r} has no "
            "exchanged_auth_credential: send back the auth config with "
            "exchanged_auth_credential filled in (api_key, token, or oauth2.auth_response_uri)."
        )
    if isinstance(scheme, ApiKeyScheme) and not credential.api_key:
        missing = "exchanged_auth_credential.api_key"
    elif isinstance(scheme, HttpBearerScheme) and not credential.token:
        missing = "exchanged_auth_credential.token"
    elif isinstance(scheme, OAuth2Scheme) and not (
        credential.oauth2
        and (
            credential.oauth2.auth_response_uri
            or credential.oauth2.auth_code
            or credential.oauth2.access_token
        )
    ):
        missing = "exchanged_auth_credential.oauth2.auth_response_uri (or auth_code)"
    else:
        return credential
    raise UsageError(f"The credential answer for {config.credential_key!r} lacks {missing}.")


async def store_auth_response(
    invocation_context: InvocationContext, *, response: dict[str, Any]
) -> None:
    """Store the credential in the client's answer to an ``eventide_request_credential`` call.

    ``response`` is the requested auth config with ``exchanged_auth_credential`` filled in.
    The credential is stored as given; OAuth2 codes are exchanged when the tool reads it.

    Raises:
        UsageError: the answer is not an auth config, or lacks the credential.
    """
    try:
        config = AuthConfig.model_validate(snake_case_keys(response))
    except pydantic.ValidationError as exc:
        raise UsageError(
            "The answer to eventide_request_credential is not an auth config: "
            f"{exc.errors(include_url=False)}. Send back the requested auth_config with "
            "exchanged_auth_credential filled in."
        ) from exc
    credential = _check_answer(config)
    if credential.oauth2 is not None:
        # Whatever the client sent about the OAuth2 client is not trusted; only the user's
        # results (code, redirect URL, tokens) are kept.
        credential.oauth2.client_id = None
        credential.oauth2.client_secret = None
        credential.oauth2.auth_uri = None
    await credential_service_for(invocation_context).save_credential(
        app_name=invocation_context.app_name,
        user_id=invocation_context.user_id,
        credential_key=config.credential_key,
        credential=credential,
    )


async def load_credential(
    invocation_context: InvocationContext, auth_config: AuthConfig
) -> AuthCredential | None:
    """The user's credential for ``auth_config``, ready to use; None when there is none.

    An OAuth2 code is exchanged for tokens (and the tokens stored in its place); an expired
    access token is refreshed when a refresh token exists, or forgotten (None: ask again).

    Raises:
        CredentialExchangeError: the token endpoint refused the code; the code is forgotten,
            so the next call asks the user again.
    """
    service = credential_service_for(invocation_context)
    where = {
        "app_name": invocation_context.app_name,
        "user_id": invocation_context.user_id,
        "credential_key": auth_config.credential_key,
    }
    credential = await service.load_credential(**where)
    if credential is None or not isinstance(auth_config.auth_scheme, OAuth2Scheme):
        return credential
    from eventide.auth.oauth2_exchange import (
        exchange_authorization_code,
        is_expired,
        refresh_access_token,
    )
    from eventide.errors import CredentialExchangeError

    oauth2 = credential.oauth2 or OAuth2Auth()
    try:
        if not oauth2.access_token:
            credential = await exchange_authorization_code(auth_config, credential)
        elif is_expired(credential):
            if not oauth2.refresh_token:
                await service.delete_credential(**where)
                return None
            credential = await refresh_access_token(auth_config, credential)
        else:
            return credential
    except (CredentialExchangeError, UsageError):
        await service.delete_credential(**where)
        raise
    await service.save_credential(**where, credential=credential)
    return credential


async def save_credential(invocation_context: InvocationContext, auth_config: AuthConfig) -> None:
    """Store ``auth_config.exchanged_auth_credential`` (a credential the app obtained
    itself) under ``auth_config.credential_key``.

    Raises:
        UsageError: ``exchanged_auth_credential`` is not set.
    """
    credential = auth_config.exchanged_auth_credential
    if credential is None:
        raise UsageError(
            "save_credential stores auth_config.exchanged_auth_credential, which is not set; "
            "put the credential there first."
        )
    await credential_service_for(invocation_context).save_credential(
        app_name=invocation_context.app_name,
        user_id=invocation_context.user_id,
        credential_key=auth_config.credential_key,
        credential=credential,
    )


async def forget_credential(invocation_context: InvocationContext, auth_config: AuthConfig) -> None:
    """Delete the user's stored credential for ``auth_config`` (e.g. one a server refused)."""
    await credential_service_for(invocation_context).delete_credential(
        app_name=invocation_context.app_name,
        user_id=invocation_context.user_id,
        credential_key=auth_config.credential_key,
    )


def auth_headers(auth_config: AuthConfig, credential: AuthCredential) -> dict[str, str]:
    """The HTTP headers that carry ``credential`` as ``auth_config`` says.

    Raises:
        ConfigurationError: the scheme does not travel in a header (an API key in the query).
    """
    scheme = auth_config.auth_scheme
    if isinstance(scheme, ApiKeyScheme):
        if scheme.location != "header":
            raise ConfigurationError(
                f"API key {scheme.name!r} goes in the query string, which this transport cannot "
                "set; use ApiKeyScheme(location='header')."
            )
        return {scheme.name: credential.api_key or ""}
    if isinstance(scheme, HttpBearerScheme):
        return {"Authorization": f"Bearer {credential.token or ''}"}
    token = credential.oauth2.access_token if credential.oauth2 is not None else None
    return {"Authorization": f"Bearer {token or ''}"}
