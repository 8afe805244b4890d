"""Fixtures of the workflow tests: the private PostgreSQL database of the session tests."""

from __future__ import annotations

from tests.sessions.conftest import postgres_sessions_url as postgres_sessions_url
