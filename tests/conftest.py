"""Shared fixtures."""

from __future__ import annotations

import os

import pytest

from eventide import InMemoryArtifactService, InMemoryMemoryService, InMemorySessionService

IN_CI = os.environ.get("CI", "").lower() == "true"


@pytest.fixture
def session_service() -> InMemorySessionService:
    return InMemorySessionService()


@pytest.fixture
def artifact_service() -> InMemoryArtifactService:
    return InMemoryArtifactService()


@pytest.fixture
def memory_service() -> InMemoryMemoryService:
    return InMemoryMemoryService()
