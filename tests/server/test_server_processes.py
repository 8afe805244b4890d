"""Server processes: graceful shutdown, and two processes serving one PostgreSQL database."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from eventide.sessions.session import Session
from eventide.sessions.sql_session_service import SqlSessionService
from tests.server.harness import ServerProcess, sse_events, wait_until

PG_URL = os.environ.get("EVENTIDE_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")
IN_CI = os.environ.get("CI", "").lower() == "true"


def _message(text: str) -> dict[str, Any]:
    return {"role": "user", "parts": [{"text": text}]}


def _read_session(url: str, app: str, user: str, sid: str) -> Session:
    async def read() -> Session:
        service = SqlSessionService(url)
        try:
            session = await service.get_session(app_name=app, user_id=user, session_id=sid)
        finally:
            await service.close()
        assert session is not None
        return session

    return asyncio.run(read())


def _refuses_connections(url: str) -> bool:
    try:
        httpx.get(f"{url}/health", timeout=2)
    except httpx.TransportError:
        return True
    return False


def _texts(session: Session) -> list[tuple[str, str | None]]:
    return [(e.author, e.content.text if e.content else None) for e in session.events]


@pytest.mark.slow
def test_graceful_shutdown_lets_a_running_stream_finish(tmp_path: Path) -> None:
    """On SIGTERM the server stops accepting connections but the running /run_sse turn goes
    on to its end, every event committed (spec: commit before resume) and sent."""
    db = f"sqlite:///{tmp_path / 'sessions.db'}"
    gate = tmp_path / "gate"
    with ServerProcess(db, env={"EVENTIDE_TEST_GATE": str(gate)}) as server:
        client = httpx.Client(base_url=server.url, timeout=60)
        sid = client.post("/apps/gated/users/ann/sessions").json()["id"]
        body = {"app_name": "gated", "user_id": "ann", "session_id": sid}
        with client.stream("POST", "/run_sse", json=body | {"new_message": _message("go")}) as r:
            frames = sse_events(r)
            first = next(frames)
            assert first["content"]["parts"][0]["text"] == "step 1"
            server.terminate()
            wait_until(lambda: _refuses_connections(server.url), what="listener closed")
            gate.touch()
            rest = list(frames)
        client.close()
        code, err = server.wait()
    assert [f["content"]["parts"][0]["text"] for f in rest] == ["step 2", "done"]
    # uvicorn re-raises the signal once shut down, so the exit status says "SIGTERM".
    assert code in (0, -signal.SIGTERM), err
    assert "Traceback" not in err
    session = _read_session(db, "gated", "ann", sid)
    assert _texts(session) == [
        ("user", "go"),
        ("gated_agent", "step 1"),
        ("gated_agent", "step 2"),
        ("gated_agent", "done"),
    ]
    assert session.state == {"last_step": "done"}


@pytest.mark.slow
def test_shutdown_past_the_grace_period_cancels_cleanly(tmp_path: Path) -> None:
    """A turn still running when the grace period ends is cancelled: what was committed stays
    (each event whole, its state with it), nothing after it is half-written, the process
    exits normally."""
    db = f"sqlite:///{tmp_path / 'sessions.db'}"
    gate = tmp_path / "never-opened"
    with ServerProcess(db, "1", env={"EVENTIDE_TEST_GATE": str(gate)}) as server:
        client = httpx.Client(base_url=server.url, timeout=60)
        sid = client.post("/apps/gated/users/ann/sessions").json()["id"]
        body = {"app_name": "gated", "user_id": "ann", "session_id": sid}
        received: list[dict[str, Any]] = []
        with client.stream("POST", "/run_sse", json=body | {"new_message": _message("go")}) as r:
            frames = sse_events(r)
            received.append(next(frames))
            server.terminate()
            try:
                received.extend(frames)
            except httpx.RemoteProtocolError:
                pass  # the server closed the cancelled stream mid-body: expected
        client.close()
        code, err = server.wait()
    assert [f["content"]["parts"][0]["text"] for f in received] == ["step 1"]
    assert code in (0, -signal.SIGTERM), err
    assert "timeout graceful shutdown exceeded" in err
    session = _read_session(db, "gated", "ann", sid)
    assert _texts(session) == [("user", "go"), ("gated_agent", "step 1")]
    assert session.state == {"last_step": "step 1"}


async def _pg_admin(statement: str) -> None:
    import asyncpg
    from sqlalchemy.engine import make_url

    url = make_url(PG_URL)
    conn = await asyncpg.connect(
        host=url.host, port=url.port or 5432, user=url.username, database=url.database, timeout=5
    )
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@pytest.fixture
def pg_database() -> Iterator[str]:
    """A private PostgreSQL database, dropped afterwards. Skips when the server is absent,
    except in CI, where that fails."""
    from sqlalchemy.engine import make_url

    name = f"eventide_server_{uuid.uuid4().hex[:10]}"
    try:
        asyncio.run(_pg_admin(f'CREATE DATABASE "{name}"'))
    except (OSError, TimeoutError) as exc:
        if IN_CI:
            pytest.fail(f"PostgreSQL unreachable in CI: {exc}")
        pytest.skip(f"PostgreSQL unreachable: {exc}")
    yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
    asyncio.run(_pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.mark.postgres
@pytest.mark.slow
def test_two_processes_serve_one_session_alternately_and_concurrently(pg_database: str) -> None:
    """Scale rule: stateless server processes on one PostgreSQL serve the same session;
    turns alternate between them with state carried over, and concurrent writers to one
    session never lose an event."""
    with ServerProcess(pg_database) as a, ServerProcess(pg_database) as b:
        clients = [httpx.Client(base_url=s.url, timeout=60) for s in (a, b)]
        try:
            sid = clients[0].post("/apps/echo/users/ann/sessions").json()["id"]
            body = {"app_name": "echo", "user_id": "ann", "session_id": sid}
            for turn in range(1, 9):
                client = clients[turn % 2]
                events = client.post("/run", json=body | {"new_message": _message(f"t{turn}")})
                assert events.status_code == 200, events.text
                # Each process sees the state the other one committed.
                assert events.json()[0]["actions"]["stateDelta"] == {"turns": turn}

            def run(index: int) -> int:
                message = _message(f"c{index}")
                return (
                    clients[index % 2]
                    .post("/run", json=body | {"new_message": message})
                    .status_code
                )

            with ThreadPoolExecutor(max_workers=8) as pool:
                codes = list(pool.map(run, range(16)))
            assert codes == [200] * 16

            views = [c.get(f"/apps/echo/users/ann/sessions/{sid}").json() for c in clients]
        finally:
            for client in clients:
                client.close()
    assert views[0]["events"] == views[1]["events"]
    texts = [(e["author"], e["content"]["parts"][0]["text"]) for e in views[0]["events"]]
    assert texts[:16] == [
        pair
        for turn in range(1, 9)
        for pair in (("user", f"t{turn}"), ("echo_agent", f"echo: t{turn}"))
    ]
    concurrent = texts[16:]
    assert sorted(t for a, t in concurrent if a == "user") == sorted(f"c{i}" for i in range(16))
    assert sorted(t for a, t in concurrent if a != "user") == sorted(
        f"echo: c{i}" for i in range(16)
    )
    assert len({e["id"] for e in views[0]["events"]}) == 48
