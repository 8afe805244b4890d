"""Tool authentication: configs, credentials, where they are kept, and the request round trip.

A tool that needs a credential calls ``tool_context.request_credential(auth_config)``; the
invocation pauses with an ``eventide_request_credential`` function call; the client's answer
is stored by :func:`store_auth_response`; the tool, run again, reads the credential with
``await tool_context.get_auth_response(auth_config)``. See :mod:`eventide.auth.auth_handler`.
"""

from eventide.auth.auth_config import (
    ApiKeyScheme,
    AuthConfig,
    AuthCredential,
    AuthScheme,
    HttpBearerScheme,
    OAuth2Auth,
    OAuth2Scheme,
)
from eventide.auth.auth_handler import (
    auth_headers,
    credential_request,
    credential_service_for,
    forget_credential,
    load_credential,
    save_credential,
    store_auth_response,
)
from eventide.auth.credential_service import BaseCredentialService, InMemoryCredentialService
from eventide.protocol import REQUEST_CREDENTIAL_FUNCTION

__all__ = [
    "REQUEST_CREDENTIAL_FUNCTION",
    "ApiKeyScheme",
    "AuthConfig",
    "AuthCredential",
    "AuthScheme",
    "BaseCredentialService",
    "HttpBearerScheme",
    "InMemoryCredentialService",
    "OAuth2Auth",
    "OAuth2Scheme",
    "auth_headers",
    "credential_request",
    "credential_service_for",
    "forget_credential",
    "load_credential",
    "save_credential",
    "store_auth_response",
]
