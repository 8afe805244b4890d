"""What a tool needs to authenticate (``AuthConfig``) and what the user gives (``AuthCredential``).

Three schemes: an API key, an HTTP bearer token, and OAuth2's authorization-code flow. A
config has a stable ``credential_key`` under which the user's credential is stored, so a
credential given once is reused by every later call of every tool with the same config.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from eventide._model import EventideModel

__all__ = [
    "ApiKeyScheme",
    "AuthConfig",
    "AuthCredential",
    "AuthScheme",
    "HttpBearerScheme",
    "OAuth2Auth",
    "OAuth2Scheme",
]


class ApiKeyScheme(EventideModel):
    """An API key sent in a header (or a query parameter) named ``name``."""

    type: Literal["apiKey"] = "apiKey"
    name: str
    location: Literal["header", "query"] = "header"


class HttpBearerScheme(EventideModel):
    """A token sent as ``Authorization: Bearer <token>``."""

    type: Literal["http"] = "http"
    scheme: Literal["bearer"] = "bearer"
    bearer_format: str | None = None


class OAuth2Scheme(EventideModel):
    """OAuth2's authorization-code flow.

    Attributes:
        auth_uri: the provider's authorization endpoint (where the user signs in).
        token_uri: the token endpoint that turns the code into an access token.
        scopes: the scopes to ask for.
    """

    type: Literal["oauth2"] = "oauth2"
    auth_uri: str
    token_uri: str
    scopes: list[str] = Field(default_factory=list)


AuthScheme = Annotated[ApiKeyScheme | HttpBearerScheme | OAuth2Scheme, Field(discriminator="type")]


class OAuth2Auth(EventideModel):
    """The OAuth2 side of a credential: the client's registration and the flow's results.

    The developer sets ``client_id``, ``client_secret`` and ``redirect_uri`` in the config's
    ``raw_auth_credential``. The request sent to the client carries ``auth_uri`` (the full
    URL to send the user to) and ``state``; the client answers with ``auth_response_uri``
    (the URL the provider redirected to) or ``auth_code``; Eventide exchanges the code for
    ``access_token`` (and ``refresh_token``, ``expires_at``).
    """

    client_id: str | None = None
    client_secret: str | None = None
    redirect_uri: str | None = None
    auth_uri: str | None = None
    state: str | None = None
    auth_response_uri: str | None = None
    auth_code: str | None = None
    access_token: str | None = None
    refresh_token: str | None = None
    token_type: str | None = None
    expires_at: float | None = None


class AuthCredential(EventideModel):
    """A credential: an API key, a bearer token, or OAuth2 data.

    Attributes:
        auth_type: which of the fields below is set.
        api_key: the key, for ``apiKey`` schemes.
        token: the token, for HTTP bearer schemes.
        oauth2: the OAuth2 data, for OAuth2 schemes.
    """

    auth_type: Literal["api_key", "http_bearer", "oauth2"]
    api_key: str | None = None
    token: str | None = None
    oauth2: OAuth2Auth | None = None


class AuthConfig(EventideModel):
    """What a tool needs to authenticate, and (in the user's answer) the credential.

    Example:
        >>> config = AuthConfig(auth_scheme=ApiKeyScheme(name="X-Api-Key"))
        >>> config.credential_key.startswith("apiKey-")
        True

    Attributes:
        auth_scheme: how the credential is used.
        raw_auth_credential: what the developer configures (OAuth2: client id, secret and
            redirect URI). Its secret never leaves the process: it is left out of the
            request sent to the client.
        exchanged_auth_credential: the user's credential; the client fills it in its answer.
        credential_key: the key the user's credential is stored under; by default derived
            from the scheme and the OAuth2 client id, so it is stable across processes.
    """

    auth_scheme: AuthScheme
    raw_auth_credential: AuthCredential | None = None
    exchanged_auth_credential: AuthCredential | None = None
    credential_key: str = ""

    @model_validator(mode="after")
    def _default_credential_key(self) -> AuthConfig:
        if not self.credential_key:
            self.credential_key = _derive_key(self)
        return self


def _derive_key(config: AuthConfig) -> str:
    identity: dict[str, Any] = {"scheme": config.auth_scheme.model_dump(mode="json")}
    raw = config.raw_auth_credential
    if raw is not None and raw.oauth2 is not None:
        identity["client_id"] = raw.oauth2.client_id
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return f"{config.auth_scheme.type}-{digest[:24]}"
