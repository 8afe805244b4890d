"""The three stores, driven by the same random operations, must answer identically.

The state machine is :func:`eventide.testing.session_differential.check_stores_agree` (the
entry point a third-party store's tests call too): random sequences of create / get / list /
append / delete against an in-memory, a SQLite and a PostgreSQL session service at once. The
budget is fixed (``max_examples`` x ``stateful_step_count``); the seed is fixed in CI and
random otherwise, printed on failure, and a failure is replayed with
``EVENTIDE_DIFF_SEED=<seed>``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.sql_session_service import SqlSessionService
from eventide.testing.session_differential import check_stores_agree
from tests.sessions.conftest import IN_CI

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

_EXAMPLES = int(os.environ.get("EVENTIDE_DIFF_EXAMPLES", "25"))
_STEPS = 30


def test_memory_sqlite_and_postgres_answer_identically(postgres_sessions_url: str) -> None:
    """Contract (one contract, three stores): random sequences of create / get / list /
    append / delete -- stale copies, duplicate event ids, compare-and-set,
    num_recent_events, after_timestamp, scoped and temp: deltas -- give identical results on
    the in-memory, SQLite and PostgreSQL stores."""
    chosen = os.environ.get("EVENTIDE_DIFF_SEED")
    run_seed = int(chosen) if chosen else (0 if IN_CI else None)
    with tempfile.TemporaryDirectory(prefix="eventide-diff-") as folder:
        check_stores_agree(
            {
                "sqlite": SqlSessionService(f"sqlite:///{Path(folder) / 'sessions.db'}"),
                "postgres": SqlSessionService(postgres_sessions_url),
            },
            seed=run_seed,
            examples=_EXAMPLES,
            steps=_STEPS,
            shrink=not os.environ.get("EVENTIDE_DIFF_NO_SHRINK"),
        )


def test_a_service_named_memory_is_refused() -> None:
    """The reference is named ``memory``: a service under that name would be compared with
    itself, so it is refused."""
    with pytest.raises(ValueError, match="memory"):
        check_stores_agree({"memory": InMemorySessionService()})
