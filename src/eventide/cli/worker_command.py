"""``eventide worker``: run the apps of a folder as a DBOS worker (the ``dbos`` extra)."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import threading
from pathlib import Path

from eventide.apps.app import ResumabilityConfig
from eventide.errors import UsageError
from eventide.runner import Runner

__all__ = ["run_worker"]


def run_worker(
    *,
    apps_dir: Path,
    database: str,
    session_db: str | None,
    executor_id: str,
    concurrency: int | None,
    worker_concurrency: int | None,
) -> None:
    """Dequeue and run invocations of the apps in ``apps_dir`` until SIGTERM or Ctrl-C.

    Every app runs resumably (a recovered invocation continues from its committed events).
    Sessions live in ``session_db`` (default: ``database``): the servers that enqueue and
    stream must use the same session database.
    """
    try:
        from eventide.durable.dbos_workers import DbosWorker
    except ImportError as exc:
        raise UsageError(
            "eventide worker needs the dbos extra: pip install 'eventide[dbos]'."
        ) from exc
    from eventide.apps.demo_model import prepare_models
    from eventide.apps.loader import discover_apps, load_app
    from eventide.apps.services import build_services

    folders = discover_apps(apps_dir)
    if not folders:
        raise UsageError(f"No apps in {apps_dir.resolve()}: nothing for this worker to run.")

    def runner_for(app_name: str) -> Runner:
        folder = folders.get(app_name)
        if folder is None:
            raise UsageError(
                f"This worker has no app {app_name!r} (it serves {', '.join(folders)}); run "
                "every worker with the same apps folder as the servers."
            )
        app = load_app(folder)
        prepare_models(app.root_agent)  # the offline demo model where none is configured
        app = dataclasses.replace(app, resumability_config=ResumabilityConfig(is_resumable=True))
        services = build_services(
            session_db=session_db or database, artifact_root=None, base_dir=apps_dir
        )
        return Runner(
            app=app,
            session_service=services.session_service,
            artifact_service=services.artifact_service,
            memory_service=services.memory_service,
        )

    worker = DbosWorker(
        runner_factory=runner_for,
        system_database_url=database,
        executor_id=executor_id,
        concurrency=concurrency,
        worker_concurrency=worker_concurrency,
    )
    stop = threading.Event()

    def on_sigterm(signum: int, frame: object) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_sigterm)
    worker.start()
    print(f"Worker {executor_id} is running the apps {', '.join(folders)}", flush=True)
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        abandoned = worker.stop()
    if abandoned:
        print(
            f"Worker {executor_id} stopped with {abandoned} invocation(s) still running; "
            "another worker resumes them from their committed events.",
            flush=True,
        )
        sys.stderr.flush()
        os._exit(0)  # their threads cannot be stopped: do not wait for them
