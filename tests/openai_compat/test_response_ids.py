"""Response ids name their session (``resp_<base64url of [user, session]>_<n>``): no table."""

from __future__ import annotations

import base64
import json

import pytest

from eventide.openai_compat.openai_sessions import decode_response_id, encode_response_id


@pytest.mark.parametrize(
    ("user", "session"), [("u", "s-1"), ("zoë 漢字", 'a "quoted" / session'), ("", "")]
)
def test_an_id_names_its_user_and_session(user: str, session: str) -> None:
    first, second = encode_response_id(user, session), encode_response_id(user, session)
    assert first != second  # each response has an id of its own
    assert decode_response_id(first) == decode_response_id(second) == (user, session)


def test_ids_written_by_earlier_versions_still_name_their_session() -> None:
    """Earlier versions wrote the pair with json.dumps (spaces, ASCII escapes)."""
    token = base64.urlsafe_b64encode(json.dumps(["zoë", "s 1"]).encode()).decode().rstrip("=")
    assert decode_response_id(f"resp_{token}_abc123") == ("zoë", "s 1")


@pytest.mark.parametrize(
    "response_id",
    [
        "resp_bogus",
        "msg_WyJ1IiwicyJd_1",
        "resp_" + base64.urlsafe_b64encode(b'["only one"]').decode() + "_1",
        "resp_" + base64.urlsafe_b64encode(b'{"u": "s"}').decode() + "_1",
        "resp_" + base64.urlsafe_b64encode(b'["u", 2]').decode() + "_1",
    ],
)
def test_ids_this_server_did_not_write_name_nothing(response_id: str) -> None:
    assert decode_response_id(response_id) is None
