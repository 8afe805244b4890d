"""The session contract as reusable pytest tests: run it against your own session store.

Every rule of :class:`~eventide.sessions.session_service.SessionService` (scopes, ``temp:``
removal, JSON validation, idempotent event ids, stale copies folded in, compare-and-set,
partial reads, paging) is a test here, each naming the rule it checks: a rule of the spec
(``spec/003`` "Events", ``spec/004`` "Runtime") or of the contract written in
:mod:`eventide.sessions.session_service`. Eventide runs it on its three stores (in memory,
SQLite, PostgreSQL); a store of your own (see :mod:`eventide.sessions.session_store`) runs it
the same way. In a test module, import the tests and provide a ``session_service`` fixture
that yields a fresh, open service and closes it afterwards::

    import pytest

    from eventide.sessions import SessionService
    from eventide.testing.session_contract import *  # noqa: F403


    @pytest.fixture
    async def session_service():
        service = SessionService(MyRedisStore(...))
        yield service
        await service.close()

Each test works in an app of its own, so a store shared between tests stays correct. The
tests are ``async def``: run them with pytest-asyncio in ``asyncio_mode = "auto"`` (the
``testing`` extra installs pytest, pytest-asyncio and Hypothesis). The randomized check that
a store answers exactly like Eventide's own is :mod:`eventide.testing.session_differential`.
"""

from __future__ import annotations

from eventide.testing._session_contract_reads import *  # noqa: F403
from eventide.testing._session_contract_reads import __all__ as _reads
from eventide.testing._session_contract_writes import *  # noqa: F403
from eventide.testing._session_contract_writes import __all__ as _writes

__all__ = sorted([*_writes, *_reads])  # pyright: ignore[reportUnsupportedDunderAll]
