"""Artifact services: versioned files saved by agents and tools."""

from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.in_memory_artifact_service import InMemoryArtifactService

__all__ = ["BaseArtifactService", "InMemoryArtifactService"]
