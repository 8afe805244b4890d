"""Fixtures for the auth tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from eventide.auth import AuthConfig, AuthCredential, OAuth2Auth, OAuth2Scheme
from tests.auth.fake_token_server import FakeTokenServer


@pytest.fixture
def token_server() -> Iterator[FakeTokenServer]:
    with FakeTokenServer() as server:
        yield server


def oauth2_config(token_uri: str) -> AuthConfig:
    """An OAuth2 authorization-code config whose token endpoint is ``token_uri``."""
    return AuthConfig(
        auth_scheme=OAuth2Scheme(
            auth_uri="https://accounts.example.com/authorize",
            token_uri=token_uri,
            scopes=["calendar.read", "calendar.write"],
        ),
        raw_auth_credential=AuthCredential(
            auth_type="oauth2",
            oauth2=OAuth2Auth(
                client_id="client-1",
                client_secret="s3cret",
                redirect_uri="https://app.example.com/callback",
            ),
        ),
    )
