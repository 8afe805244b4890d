"""OAuth2 authorization-code flow: the authorization URL, and code -> token at the token endpoint.

Uses httpx (imported on first exchange). The client authenticates with
``client_secret_post`` (client id and secret in the form body), which every provider accepts.
"""

from __future__ import annotations

import secrets
import time
from typing import Any, cast
from urllib.parse import parse_qs, urlencode, urlsplit

from eventide.auth.auth_config import AuthConfig, AuthCredential, OAuth2Auth, OAuth2Scheme
from eventide.errors import ConfigurationError, CredentialExchangeError, UsageError

__all__ = ["authorization_url", "exchange_authorization_code", "refresh_access_token"]

# Seconds before its expiry at which a token counts as expired (clock skew, request time).
EXPIRY_MARGIN = 30.0


def _oauth2_parts(config: AuthConfig) -> tuple[OAuth2Scheme, OAuth2Auth]:
    scheme = config.auth_scheme
    raw = config.raw_auth_credential
    if not isinstance(scheme, OAuth2Scheme) or raw is None or raw.oauth2 is None:
        raise ConfigurationError(
            "An OAuth2 AuthConfig needs auth_scheme=OAuth2Scheme(auth_uri=..., token_uri=...) "
            "and raw_auth_credential=AuthCredential(auth_type='oauth2', oauth2=OAuth2Auth("
            "client_id=..., client_secret=..., redirect_uri=...))."
        )
    if not raw.oauth2.client_id:
        raise ConfigurationError("The OAuth2 raw_auth_credential has no client_id; set it.")
    return scheme, raw.oauth2


def authorization_url(config: AuthConfig) -> tuple[str, str]:
    """The URL to send the user to, and the ``state`` it carries."""
    scheme, client = _oauth2_parts(config)
    state = secrets.token_urlsafe(16)
    query: dict[str, str] = {
        "response_type": "code",
        "client_id": client.client_id or "",
        "state": state,
    }
    if client.redirect_uri:
        query["redirect_uri"] = client.redirect_uri
    if scheme.scopes:
        query["scope"] = " ".join(scheme.scopes)
    separator = "&" if urlsplit(scheme.auth_uri).query else "?"
    return f"{scheme.auth_uri}{separator}{urlencode(query)}", state


def _code_from(answer: OAuth2Auth) -> str:
    if answer.auth_code:
        return answer.auth_code
    if answer.auth_response_uri:
        query = parse_qs(urlsplit(answer.auth_response_uri).query)
        if "error" in query:
            raise UsageError(
                f"The OAuth2 provider refused the authorization: {query['error'][0]} "
                f"({query.get('error_description', [''])[0]}). Ask the user to sign in again."
            )
        codes = query.get("code")
        if codes:
            return codes[0]
    raise UsageError(
        "The OAuth2 answer has neither auth_code nor an auth_response_uri with a code= "
        "parameter: the client must send back the URL the provider redirected the user to."
    )


async def _post_token(config: AuthConfig, form: dict[str, str]) -> dict[str, Any]:
    import httpx

    scheme, client = _oauth2_parts(config)
    form = {**form, "client_id": client.client_id or ""}
    if client.client_secret:
        form["client_secret"] = client.client_secret
    try:
        async with httpx.AsyncClient(timeout=30.0) as http:
            response = await http.post(
                scheme.token_uri, data=form, headers={"Accept": "application/json"}
            )
    except httpx.HTTPError as exc:
        raise CredentialExchangeError(
            f"Could not reach the OAuth2 token endpoint {scheme.token_uri!r}: {exc!r}. Check "
            "the token_uri and the network.",
            token_uri=scheme.token_uri,
        ) from exc
    try:
        parsed: object = response.json()
    except ValueError:
        parsed = None
    body = cast("dict[str, Any]", parsed) if isinstance(parsed, dict) else {}
    if response.status_code != 200 or "access_token" not in body:
        detail = body.get("error_description") or body.get("error") or ""
        raise CredentialExchangeError(
            f"The OAuth2 token endpoint {scheme.token_uri!r} answered {response.status_code} "
            f"without an access token ({detail or response.text[:200]!r}). The code may be "
            "expired or used already: ask the user to sign in again.",
            token_uri=scheme.token_uri,
            status_code=response.status_code,
        )
    return body


def _credential_from(body: dict[str, Any], previous: OAuth2Auth) -> AuthCredential:
    expires_in = body.get("expires_in")
    return AuthCredential(
        auth_type="oauth2",
        oauth2=OAuth2Auth(
            access_token=str(body["access_token"]),
            refresh_token=body.get("refresh_token") or previous.refresh_token,
            token_type=body.get("token_type"),
            expires_at=time.time() + float(expires_in) if expires_in is not None else None,
        ),
    )


async def exchange_authorization_code(config: AuthConfig, answer: AuthCredential) -> AuthCredential:
    """Exchange the code in the user's ``answer`` for tokens at ``config``'s token endpoint.

    The endpoint, client id and secret come from ``config`` (the developer's), never from
    the answer.

    Raises:
        UsageError: the answer carries no code (or the provider's error).
        CredentialExchangeError: the token endpoint refused the code or was unreachable.
    """
    oauth2 = answer.oauth2 or OAuth2Auth()
    _, client = _oauth2_parts(config)
    form = {"grant_type": "authorization_code", "code": _code_from(oauth2)}
    if client.redirect_uri:
        form["redirect_uri"] = client.redirect_uri
    return _credential_from(await _post_token(config, form), oauth2)


async def refresh_access_token(config: AuthConfig, credential: AuthCredential) -> AuthCredential:
    """A fresh access token for an expired ``credential`` that has a refresh token.

    Raises:
        CredentialExchangeError: the token endpoint refused the refresh token.
    """
    oauth2 = credential.oauth2 or OAuth2Auth()
    form = {"grant_type": "refresh_token", "refresh_token": oauth2.refresh_token or ""}
    return _credential_from(await _post_token(config, form), oauth2)


def is_expired(credential: AuthCredential) -> bool:
    """Whether an OAuth2 credential's access token has expired (or is about to)."""
    oauth2 = credential.oauth2
    if oauth2 is None or oauth2.expires_at is None:
        return False
    return time.time() >= oauth2.expires_at - EXPIRY_MARGIN
