"""``ReadonlyContext`` reads the user and app from its invocation context, as google-adk's
does (issue 34: google-adk's tests hand it a stand-in invocation context)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from eventide import InvocationContext, ReadonlyContext


def test_user_and_app_come_from_the_invocation_context() -> None:
    session = SimpleNamespace(user_id="session-user", app_name="session-app", state={})
    stand_in: Any = SimpleNamespace(session=session, user_id="u1", app_name="app1")
    context = ReadonlyContext(cast("InvocationContext", stand_in))
    assert (context.user_id, context.app_name) == ("u1", "app1")
