"""``RetryConfig``: how often, and after how long, a failed workflow node runs again."""

from __future__ import annotations

import random
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from eventide.errors import WorkflowConfigurationError

__all__ = ["RetryConfig"]


class RetryConfig(BaseModel):
    """Retry a failed node with exponential backoff.

    Attributes:
        max_attempts: attempts in all, the first included (0 or 1: no retry); 5 when unset.
        initial_delay: seconds before the first retry; 1.0 when unset.
        max_delay: the longest wait between attempts, in seconds; 60.0 when unset.
        backoff_factor: each wait is this many times the previous one; 2.0 when unset.
        jitter: the wait varies by up to this fraction either way; 1.0 when unset, 0.0
            for exact waits.
        exceptions: retry only on these exceptions (classes or class names; subclasses
            count); every exception when unset.
    """

    model_config = ConfigDict(extra="forbid")

    max_attempts: int | None = None
    initial_delay: float | None = None
    max_delay: float | None = None
    backoff_factor: float | None = None
    jitter: float | None = None
    exceptions: list[str | type[BaseException]] | None = None

    @field_validator("exceptions", mode="before")
    @classmethod
    def _exception_names(cls, value: Any) -> list[str | type[BaseException]] | None:
        if value is None:
            return None
        names: list[str | type[BaseException]] = []
        items: list[object] = list(value)
        for item in items:
            if isinstance(item, str):
                names.append(item)
            elif isinstance(item, type) and issubclass(item, BaseException):
                error_class: type[BaseException] = item
                names.append(error_class.__name__)
            else:
                raise WorkflowConfigurationError(
                    f"RetryConfig.exceptions takes exception classes or their names, got {item!r}."
                )
        return names

    def should_retry(self, error: BaseException, attempt: int) -> bool:
        """Whether the node runs again after ``attempt`` (1-based) failed with ``error``."""
        limit = 5 if self.max_attempts is None else self.max_attempts
        if attempt >= limit:
            return False
        if self.exceptions is None:
            return True
        names = {cls.__name__ for cls in type(error).__mro__ if cls is not object}
        wanted = {e if isinstance(e, str) else e.__name__ for e in self.exceptions}
        return not names.isdisjoint(wanted)

    def delay(self, attempt: int) -> float:
        """Seconds to wait after ``attempt`` (1-based) failed."""
        initial = 1.0 if self.initial_delay is None else self.initial_delay
        longest = 60.0 if self.max_delay is None else self.max_delay
        factor = 2.0 if self.backoff_factor is None else self.backoff_factor
        jitter = 1.0 if self.jitter is None else self.jitter
        delay = initial * factor ** max(0, attempt - 1)
        if jitter > 0.0:
            # Capped before the jitter, so the spread survives near max_delay.
            delay = min(delay, longest / (1.0 + jitter))
            delay = max(0.0, delay + random.uniform(-jitter * delay, jitter * delay))  # noqa: S311 - backoff spread, not security
        return min(delay, longest)
