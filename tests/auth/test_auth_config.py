"""AuthConfig, credential keys, the request sent to the client, and credential services."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from eventide.auth import (
    REQUEST_CREDENTIAL_FUNCTION,
    ApiKeyScheme,
    AuthConfig,
    AuthCredential,
    HttpBearerScheme,
    InMemoryCredentialService,
    auth_headers,
    credential_request,
)
from eventide.errors import ConfigurationError
from tests.auth.conftest import oauth2_config


def test_credential_key_is_stable_and_distinguishes_configs() -> None:
    """Equal configs (in any process) share a key; another scheme or client gets another."""
    api = AuthConfig(auth_scheme=ApiKeyScheme(name="X-Api-Key"))
    assert (
        api.credential_key == AuthConfig(auth_scheme=ApiKeyScheme(name="X-Api-Key")).credential_key
    )
    assert api.credential_key.startswith("apiKey-") and len(api.credential_key) == 31
    keys = {
        api.credential_key,
        AuthConfig(auth_scheme=ApiKeyScheme(name="X-Other")).credential_key,
        AuthConfig(auth_scheme=HttpBearerScheme()).credential_key,
        oauth2_config("http://127.0.0.1:1/token").credential_key,
    }
    other_client = oauth2_config("http://127.0.0.1:1/token")
    assert other_client.raw_auth_credential and other_client.raw_auth_credential.oauth2
    other_client.raw_auth_credential.oauth2.client_id = "client-2"
    keys.add(
        AuthConfig.model_validate(
            other_client.model_dump(exclude={"credential_key"})
        ).credential_key
    )
    assert len(keys) == 5
    explicit = AuthConfig(auth_scheme=HttpBearerScheme(), credential_key="github")
    assert explicit.credential_key == "github"
    assert REQUEST_CREDENTIAL_FUNCTION == "eventide_request_credential"


def test_config_round_trips_through_json() -> None:
    """A config survives the trip to the client and back (the session stores it as JSON)."""
    config = oauth2_config("http://127.0.0.1:1/token")
    assert AuthConfig.model_validate_json(config.model_dump_json()) == config


def test_request_hides_the_client_secret_and_carries_the_authorization_url() -> None:
    """The request sent to the client has no client secret; for OAuth2 it carries the URL to
    send the user to, with client id, redirect URI, scopes and a state."""
    config = oauth2_config("http://127.0.0.1:1/token")
    request = credential_request(config)
    assert "s3cret" not in str(request)
    assert request["credential_key"] == config.credential_key
    oauth2 = request["exchanged_auth_credential"]["oauth2"]
    url = urlsplit(oauth2["auth_uri"])
    assert (url.scheme, url.netloc, url.path) == ("https", "accounts.example.com", "/authorize")
    assert parse_qs(url.query) == {
        "response_type": ["code"],
        "client_id": ["client-1"],
        "redirect_uri": ["https://app.example.com/callback"],
        "scope": ["calendar.read calendar.write"],
        "state": [oauth2["state"]],
    }
    # The developer's config keeps its secret.
    assert config.raw_auth_credential and config.raw_auth_credential.oauth2
    assert config.raw_auth_credential.oauth2.client_secret == "s3cret"
    api = AuthConfig(auth_scheme=ApiKeyScheme(name="X-Api-Key"))
    assert credential_request(api) == api.model_dump(mode="json")


def test_auth_headers_per_scheme() -> None:
    """API keys go in their header; bearer tokens and OAuth2 access tokens in Authorization."""
    api = AuthConfig(auth_scheme=ApiKeyScheme(name="X-Api-Key"))
    bearer = AuthConfig(auth_scheme=HttpBearerScheme())
    oauth = oauth2_config("http://127.0.0.1:1/token")
    assert auth_headers(api, AuthCredential(auth_type="api_key", api_key="k")) == {"X-Api-Key": "k"}
    assert auth_headers(bearer, AuthCredential(auth_type="http_bearer", token="t")) == {
        "Authorization": "Bearer t"
    }
    token = AuthCredential.model_validate({"auth_type": "oauth2", "oauth2": {"access_token": "a"}})
    assert auth_headers(oauth, token) == {"Authorization": "Bearer a"}
    query = AuthConfig(auth_scheme=ApiKeyScheme(name="key", location="query"))
    with pytest.raises(ConfigurationError, match="query string"):
        auth_headers(query, AuthCredential(auth_type="api_key", api_key="k"))


async def test_in_memory_service_keys_by_app_user_and_credential_key() -> None:
    """Credentials are kept per (app, user, credential key); loads return copies."""
    service = InMemoryCredentialService()
    cred = AuthCredential(auth_type="api_key", api_key="k1")
    await service.save_credential(app_name="a", user_id="u", credential_key="c", credential=cred)
    cred.api_key = "changed after saving"
    loaded = await service.load_credential(app_name="a", user_id="u", credential_key="c")
    assert loaded == AuthCredential(auth_type="api_key", api_key="k1")
    assert loaded is not None
    loaded.api_key = "changed after loading"
    for app, user, key in [("b", "u", "c"), ("a", "v", "c"), ("a", "u", "d")]:
        assert await service.load_credential(app_name=app, user_id=user, credential_key=key) is None
    again = await service.load_credential(app_name="a", user_id="u", credential_key="c")
    assert again is not None and again.api_key == "k1"
    await service.delete_credential(app_name="a", user_id="u", credential_key="c")
    await service.delete_credential(app_name="a", user_id="u", credential_key="c")
    assert await service.load_credential(app_name="a", user_id="u", credential_key="c") is None
