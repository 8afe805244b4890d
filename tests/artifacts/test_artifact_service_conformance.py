"""The artifact service contract on every backend: in memory, files, fsspec (memory, local)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from eventide.artifacts import InMemoryArtifactService
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.file_artifact_service import FileArtifactService
from eventide.artifacts.fsspec_artifact_service import FsspecArtifactService
from tests.conformance.artifact_service_contract import ArtifactServiceContract


@pytest.fixture(params=["in_memory", "file", "fsspec_memory", "fsspec_local"])
async def artifact_service(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseArtifactService]:
    service: BaseArtifactService
    if request.param == "in_memory":
        service = InMemoryArtifactService()
    elif request.param == "file":
        service = FileArtifactService(tmp_path / "artifacts")
    elif request.param == "fsspec_memory":
        service = FsspecArtifactService(f"memory://eventide-tests/{uuid.uuid4().hex}")
    else:
        service = FsspecArtifactService((tmp_path / "objects").as_uri())
    yield service
    if isinstance(service, FsspecArtifactService) and request.param == "fsspec_memory":
        # fsspec's memory file system is process-wide: leave nothing behind.
        if service._fs.exists(service._base):
            service._fs.rm(service._base, recursive=True)
    await service.close()


class TestArtifactServiceContract(ArtifactServiceContract):
    """Runs the shared contract against the ``artifact_service`` fixture's backends."""
