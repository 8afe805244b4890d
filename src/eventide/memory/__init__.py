"""Memory services: search over a user's past conversations."""

from eventide.memory.base_memory_service import (
    BaseMemoryService,
    MemoryEntry,
    SearchMemoryResponse,
)
from eventide.memory.in_memory_memory_service import InMemoryMemoryService

__all__ = ["BaseMemoryService", "InMemoryMemoryService", "MemoryEntry", "SearchMemoryResponse"]
