"""camelCase JSON for front ends written for ADK, which send and read camelCase keys.

Eventide's JSON is snake_case. A ``/run`` or ``/run_sse`` request written in camelCase gets
its events back in camelCase; keys that are data rather than field names (tool arguments
and results, state and artifact deltas, metadata, schemas) keep their spelling. The
conversion itself lives in :mod:`eventide.types` (``camel_case_keys``, ``snake_case_keys``).
"""

from __future__ import annotations

from eventide.types import camel_case_keys

__all__ = ["camel_case_keys"]
