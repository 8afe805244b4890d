"""OAuth2 code exchange and refresh against a local token endpoint (127.0.0.1)."""

from __future__ import annotations

import socket
import time

import pytest

from eventide import InMemorySessionService, LlmAgent
from eventide.auth import AuthCredential, InMemoryCredentialService, load_credential
from eventide.auth.oauth2_exchange import exchange_authorization_code, refresh_access_token
from eventide.contexts import InvocationContext
from eventide.errors import CredentialExchangeError, UsageError
from eventide.plugins.plugin_manager import PluginManager
from eventide.testing import ScriptedModel
from tests.auth.conftest import oauth2_config
from tests.auth.fake_token_server import FakeTokenServer


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def invocation(service: InMemoryCredentialService) -> InvocationContext:
    sessions = InMemorySessionService()
    session = await sessions.create_session(app_name="app", user_id="u")
    return InvocationContext(
        invocation_id="inv-1",
        agent=LlmAgent(name="a", model=ScriptedModel()),
        session=session,
        session_service=sessions,
        plugin_manager=PluginManager(()),
        credential_service=service,
    )


def oauth2(**fields: object) -> AuthCredential:
    return AuthCredential.model_validate({"auth_type": "oauth2", "oauth2": fields})


async def test_exchange_and_refresh(token_server: FakeTokenServer) -> None:
    """A code becomes access and refresh tokens with an expiry; the refresh token gets a new
    access token (and keeps working)."""
    config = oauth2_config(token_server.token_uri)
    token_server.valid_codes.add("c1")
    before = time.time()
    tokens = await exchange_authorization_code(config, oauth2(auth_code="c1"))
    assert tokens.oauth2 is not None and tokens.oauth2.expires_at is not None
    assert (tokens.oauth2.access_token, tokens.oauth2.refresh_token) == ("access-1", "refresh-1")
    assert before + 3600 <= tokens.oauth2.expires_at <= time.time() + 3600
    refreshed = await refresh_access_token(config, tokens)
    assert refreshed.oauth2 is not None and refreshed.oauth2.access_token == "access-2"
    assert [r["grant_type"] for r in token_server.requests] == [
        "authorization_code",
        "refresh_token",
    ]
    assert token_server.requests[1]["refresh_token"] == "refresh-1"


async def test_expired_token_is_refreshed_on_read(token_server: FakeTokenServer) -> None:
    """load_credential refreshes an expired access token and stores the new one; without a
    refresh token the expired credential is forgotten (None: ask the user again)."""
    config = oauth2_config(token_server.token_uri)
    service = InMemoryCredentialService()
    ctx = await invocation(service)
    token_server.valid_refresh_tokens.add("r-old")
    where = {"app_name": "app", "user_id": "u", "credential_key": config.credential_key}
    expired = oauth2(access_token="a-old", refresh_token="r-old", expires_at=time.time() - 1)
    await service.save_credential(**where, credential=expired)
    fresh = await load_credential(ctx, config)
    assert fresh is not None and fresh.oauth2 is not None
    assert fresh.oauth2.access_token == "access-1"
    assert await service.load_credential(**where) == fresh
    # A valid token is returned as is, with no request to the endpoint.
    assert await load_credential(ctx, config) == fresh
    assert len(token_server.requests) == 1

    await service.save_credential(
        **where, credential=oauth2(access_token="a-old", expires_at=time.time() - 1)
    )
    assert await load_credential(ctx, config) is None
    assert await service.load_credential(**where) is None


async def test_exchange_errors_are_clear(token_server: FakeTokenServer) -> None:
    """A refused code, a wrong client secret, an unreachable endpoint and a provider error in
    the redirect URL each give a clear error."""
    config = oauth2_config(token_server.token_uri)
    with pytest.raises(CredentialExchangeError, match="answered 400") as refused:
        await exchange_authorization_code(config, oauth2(auth_code="nope"))
    assert refused.value.status_code == 400 and refused.value.token_uri == token_server.token_uri

    assert config.raw_auth_credential and config.raw_auth_credential.oauth2
    config.raw_auth_credential.oauth2.client_secret = "wrong"
    with pytest.raises(CredentialExchangeError, match="invalid_client"):
        await exchange_authorization_code(config, oauth2(auth_code="c"))

    unreachable = oauth2_config(f"http://127.0.0.1:{free_port()}/token")
    with pytest.raises(CredentialExchangeError, match="Could not reach") as down:
        await exchange_authorization_code(unreachable, oauth2(auth_code="c"))
    assert down.value.status_code is None

    denied = "https://app.example.com/callback?error=access_denied&error_description=no+thanks"
    with pytest.raises(UsageError, match="access_denied"):
        await exchange_authorization_code(config, oauth2(auth_response_uri=denied))
    with pytest.raises(UsageError, match="neither auth_code"):
        await exchange_authorization_code(config, oauth2(state="x"))


async def test_tool_context_records_the_request_under_the_call_id() -> None:
    """Spec function_call_id linking: request_credential records the (secret-free) request
    in actions.requested_auth_configs under the tool's function call id; without a call id
    it is a usage error."""
    from eventide import ToolContext
    from eventide.auth import credential_request
    from eventide.errors import ConfigurationError

    config = oauth2_config("http://127.0.0.1:1/token")
    ctx = await invocation(InMemoryCredentialService())
    tool_context = ToolContext(ctx, function_call_id="call-7")
    tool_context.request_credential(config)
    recorded = tool_context.actions.requested_auth_configs
    assert list(recorded) == ["call-7"]
    assert "s3cret" not in str(recorded)
    expected = credential_request(config)
    for request in (recorded["call-7"], expected):  # the state is random per request
        request["exchanged_auth_credential"]["oauth2"].pop("auth_uri")
        request["exchanged_auth_credential"]["oauth2"].pop("state")
    assert recorded["call-7"] == expected
    assert await tool_context.get_auth_response(config) is None
    with pytest.raises(ConfigurationError, match="requires function_call_id"):
        ToolContext(ctx).request_credential(config)
