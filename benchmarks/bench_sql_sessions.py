"""SQL session store figures: append latency and throughput, reads, history-length growth.

Usage: python benchmarks/bench_sql_sessions.py [--json] [--quick] [--pg-url URL]

For SQLite (synchronous NORMAL and FULL, a file in a temporary folder) and PostgreSQL (a
private database, dropped afterwards; skipped when the server is unreachable):

- append: per-event latency of sequential appends to one session (each a committed event
  with a state delta), median and p90, and the resulting events per second;
- concurrent: committed events per second with 16 tasks appending to 16 sessions at once;
- get_session on a 10,000-event session, whole and with ``num_recent_events=20``;
- append latency with 10 vs 10,000 events already stored (must not grow);
- a floor: the same machine's cheapest committed SQLite event (stdlib sqlite3, no Python
  around it), to read the figures against when the machine is shared and loaded.

Each append figure has the wall-time median and p90, events per second, and the CPU time of
this process per event.

Prints a table, or one JSON object with ``--json`` (the benchmark suite folds it in).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from eventide.events import Event, EventActions  # noqa: E402
from eventide.sessions.session import GetSessionConfig  # noqa: E402
from eventide.sessions.sql_session_service import SqlSessionService  # noqa: E402

PG_URL = os.environ.get("EVENTIDE_PG_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test")


def _event(i: int) -> Event:
    return Event(
        author="agent",
        invocation_id="inv-bench",
        actions=EventActions(state_delta={"counter": i, "last": f"step {i}"}),
    )


def _us(seconds: float) -> float:
    return round(seconds * 1e6, 1)


_cpu_seconds = [0.0]


async def _append_latencies(service: SqlSessionService, session: Any, n: int) -> list[float]:
    events = [_event(i) for i in range(n)]
    times = []
    clock = time.perf_counter
    cpu = time.process_time()
    for event in events:
        start = clock()
        await service.append_event(session, event)
        times.append(clock() - start)
    _cpu_seconds[0] = time.process_time() - cpu
    return times


def _summary(times: list[float]) -> dict[str, float]:
    cpu = _cpu_seconds[0]
    times = sorted(times)
    return {
        "median_us": _us(statistics.median(times)),
        "p90_us": _us(times[int(len(times) * 0.9)]),
        "events_per_s": round(len(times) / sum(times)),
        # CPU time of this process per event (on a shared machine, less noisy than wall time).
        "cpu_us": _us(cpu / len(times)),
    }


def sqlite_floor(folder: str, n: int) -> dict[str, float]:
    """The cheapest possible committed event on this machine right now: the stdlib sqlite3
    module, a two-table transaction (sequence bump + event insert), no Python around it.
    A reference for reading the SQLite figures on a loaded machine."""
    import sqlite3

    conn = sqlite3.connect(Path(folder) / "floor.db", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("CREATE TABLE s (pk INTEGER PRIMARY KEY, last_seq INTEGER)")
    conn.execute(
        "CREATE TABLE e (pk INTEGER, seq INTEGER, id TEXT, event TEXT, PRIMARY KEY (pk, seq))"
    )
    conn.execute("INSERT INTO s VALUES (1, 0)")
    payload = _event(0).model_dump_json(exclude_none=True)
    times = []
    cpu = time.process_time()
    for i in range(n):
        start = time.perf_counter()
        conn.execute("BEGIN IMMEDIATE")
        seq = conn.execute(
            "UPDATE s SET last_seq = last_seq + 1 WHERE pk = 1 RETURNING last_seq"
        ).fetchall()[0][0]
        conn.execute("INSERT INTO e VALUES (1, ?, ?, ?)", (seq, str(i), payload))
        conn.execute("COMMIT")
        times.append(time.perf_counter() - start)
    _cpu_seconds[0] = time.process_time() - cpu
    conn.close()
    return _summary(times)


async def bench_backend(url: str, *, quick: bool, label: str) -> dict[str, Any]:
    """All figures for one database URL."""
    service = SqlSessionService(url, synchronous="FULL" if "FULL" in label else "NORMAL")
    app = f"bench_{uuid.uuid4().hex[:8]}"
    result: dict[str, Any] = {}
    n = 300 if quick else 2000
    if "FULL" in label or "postgres" in label:
        n //= 4

    session = await service.create_session(app_name=app, user_id="u")
    await _append_latencies(service, session, 50)  # warm up: statements, pools, caches
    result["append"] = _summary(await _append_latencies(service, session, n))

    tasks = 16
    per_task = max(10, n // tasks)
    sessions = [await service.create_session(app_name=app, user_id=f"c{k}") for k in range(tasks)]
    start = time.perf_counter()
    await asyncio.gather(*(_append_latencies(service, s, per_task) for s in sessions))
    elapsed = time.perf_counter() - start
    result["concurrent_16_tasks"] = {"events_per_s": round(tasks * per_task / elapsed)}

    if "FULL" not in label:
        big = await service.create_session(app_name=app, user_id="big")
        small = await service.create_session(app_name=app, user_id="small")
        await _append_latencies(service, small, 10)
        history = 2_000 if quick else 10_000
        if "postgres" in label:
            await _seed_directly(url, app, "big", big.id, history)
            big = await service.get_session(app_name=app, user_id="big", session_id=big.id)
        else:
            await _append_latencies(service, big, history)
        probes = 100 if quick else 300
        result["append_at_10_events"] = _summary(await _append_latencies(service, small, probes))
        result[f"append_at_{history}_events"] = _summary(
            await _append_latencies(service, big, probes)
        )

        async def read(config: GetSessionConfig | None) -> tuple[float, float]:
            start, cpu = time.perf_counter(), time.process_time()
            got = await service.get_session(
                app_name=app, user_id="big", session_id=big.id, config=config
            )
            assert got is not None
            return time.perf_counter() - start, time.process_time() - cpu

        for name, config in (
            (f"get_session_{history + probes}_events_whole", None),
            ("get_session_num_recent_20", GetSessionConfig(num_recent_events=20)),
        ):
            samples = [await read(config) for _ in range(5 if config is None else 50)]
            result[name] = {
                "median_us": _us(statistics.median(w for w, _ in samples)),
                "cpu_us": _us(statistics.median(c for _, c in samples)),
            }
    await service.close()
    return result


async def _seed_directly(url: str, app: str, user: str, session_id: str, n: int) -> None:
    """Write n events straight into PostgreSQL (COPY): building a long history through
    appends that each wait for an fsync would take minutes."""
    import asyncpg
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    conn = await asyncpg.connect(
        host=parsed.host, port=parsed.port or 5432, user=parsed.username, database=parsed.database
    )
    try:
        pk = await conn.fetchval(
            "SELECT pk FROM sessions WHERE app_name = $1 AND user_id = $2 AND id = $3",
            app,
            user,
            session_id,
        )
        now = time.time()
        records = []
        for seq in range(1, n + 1):
            event = _event(seq)
            event.id = f"seed-{seq}"
            event.timestamp = now
            records.append(
                (
                    pk,
                    seq,
                    app,
                    user,
                    session_id,
                    event.id,
                    "seed",
                    now,
                    event.model_dump_json(exclude_none=True),
                )
            )
        await conn.copy_records_to_table(
            "events",
            records=records,
            columns=[
                "session_pk",
                "seq",
                "app_name",
                "user_id",
                "session_id",
                "id",
                "invocation_id",
                "timestamp",
                "event",
            ],
        )
        await conn.execute("UPDATE sessions SET last_seq = $1 WHERE pk = $2", n, pk)
    finally:
        await conn.close()


async def _pg_database(admin_url: str) -> tuple[str, str] | None:
    try:
        import asyncpg
        from sqlalchemy.engine import make_url
    except ImportError:
        return None
    url = make_url(admin_url)
    name = f"eventide_bench_{uuid.uuid4().hex[:8]}"
    try:
        conn = await asyncpg.connect(
            host=url.host,
            port=url.port or 5432,
            user=url.username,
            database=url.database,
            timeout=5,
        )
    except (TimeoutError, OSError):
        return None
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return name, url.set(database=name).render_as_string(hide_password=False)


async def _drop_pg(admin_url: str, name: str) -> None:
    import asyncpg
    from sqlalchemy.engine import make_url

    url = make_url(admin_url)
    conn = await asyncpg.connect(
        host=url.host, port=url.port or 5432, user=url.username, database=url.database
    )
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder:
        results["sqlite_floor_raw_sqlite3"] = {
            "append": sqlite_floor(folder, 300 if args.quick else 2000)
        }
        for mode in ("NORMAL", "FULL"):
            url = f"sqlite:///{Path(folder) / f'bench_{mode}.db'}"
            results[f"sqlite_{mode}"] = await bench_backend(
                url, quick=args.quick, label=f"sqlite {mode}"
            )
    created = await _pg_database(args.pg_url)
    if created is None:
        results["postgres"] = {"skipped": f"PostgreSQL unreachable at {args.pg_url}"}
    else:
        name, url = created
        try:
            results["postgres"] = await bench_backend(url, quick=args.quick, label="postgres")
        finally:
            await _drop_pg(args.pg_url, name)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="fewer events (a smoke run)")
    parser.add_argument("--pg-url", default=PG_URL)
    args = parser.parse_args()
    results = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(results))
        return
    for backend, figures in results.items():
        print(backend)
        for name, values in figures.items():
            print(f"  {name:38} {values}")


if __name__ == "__main__":
    main()
