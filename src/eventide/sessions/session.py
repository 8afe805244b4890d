"""``Session``: one conversation's state and event history."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator

from eventide._fastpath import write_fields
from eventide._model import EventideModel
from eventide.errors import UsageError
from eventide.events import Event

__all__ = ["GetSessionConfig", "ListSessionsResponse", "Session", "check_session_config"]


class Session(EventideModel):
    """A conversation between a user and an app.

    Attributes:
        id: the session's id, unique within (app_name, user_id).
        app_name: the app the session belongs to.
        user_id: the user the session belongs to.
        state: the committed state: this session's keys merged with the app's (``app:``) and
            the user's (``user:``) shared keys.
        events: the event history in commit order (possibly only the recent part, when the
            session was read with ``GetSessionConfig``).
        last_update_time: when the last event was committed (seconds since the epoch).
    """

    id: str
    app_name: str
    user_id: str
    state: dict[str, Any] = Field(default_factory=dict)
    events: list[Event] = Field(default_factory=list)
    last_update_time: float = 0.0
    # How many events of the stored log this copy reflects; a backend compares it with the
    # log's length to fold in events that other writers appended since this copy was read.
    log_position: int = Field(default=0, exclude=True, repr=False)

    def record_commit(self, event: Event, log_position: int) -> None:
        """For session services: append a committed event to this copy.

        The two fields are written through ``eventide._fastpath.write_fields``: services call
        this once per committed event, and two pydantic assignments cost more than the rest
        of it (see ``benchmarks/PROFILE.md``, "The runtime hot path back within 5%").
        """
        self.events.append(event)
        write_fields(self, {"last_update_time": event.timestamp, "log_position": log_position})

    def set_log_position(self, log_position: int) -> None:
        """For session services: this copy now reflects the first ``log_position`` events."""
        self.log_position = log_position


class GetSessionConfig(EventideModel):
    """What part of the history ``get_session`` returns.

    Attributes:
        num_recent_events: only the last N events (0 for none).
        after_timestamp: only events committed at or after this time.
    """

    num_recent_events: int | None = None
    after_timestamp: float | None = None

    @field_validator("num_recent_events")
    @classmethod
    def _not_negative(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ValueError(_NEGATIVE_RECENT.format(value))
        return value


_NEGATIVE_RECENT = "num_recent_events must be >= 0 (0 returns no events, None all of them), got {}."


def check_session_config(config: GetSessionConfig) -> None:
    """Refuse a config built without validation (``model_construct``) that asks for a
    negative number of events, the same way on every backend."""
    n = config.num_recent_events
    if n is not None and n < 0:
        raise UsageError(_NEGATIVE_RECENT.format(n))


class ListSessionsResponse(EventideModel):
    """A page of sessions (without their events) and the token of the next page."""

    sessions: list[Session] = Field(default_factory=list)
    next_page_token: str | None = None
