"""``AppRegistry``: the apps a server serves, and one ``Runner`` per app, built once.

Apps come from an apps folder (discovered without importing, loaded on first use, so one
broken app does not keep the others from being served) and/or are given as ``App`` objects.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Protocol

from eventide.apps.app import App
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.errors import AppLoadError, AppNotFoundError, EventideError
from eventide.memory.base_memory_service import BaseMemoryService
from eventide.plugins.base_plugin import BasePlugin
from eventide.runner import Runner
from eventide.sessions.base_session_service import BaseSessionService

__all__ = ["AppRegistry", "ServicesLike"]


class ServicesLike(Protocol):
    """What the server needs from ``eventide.apps.services.Services``."""

    @property
    def session_service(self) -> BaseSessionService: ...

    @property
    def artifact_service(self) -> BaseArtifactService | None: ...

    @property
    def memory_service(self) -> BaseMemoryService | None: ...


class AppRegistry:
    """Resolves app names to their ``Runner``.

    Args:
        services: the session, artifact and memory services every app's Runner uses.
        apps_dir: a folder of app folders, discovered on each listing.
        apps: apps given directly, by name; they win over folders of the same name.
        plugins: plugins added after each app's own plugins (e.g. the model request recorder).
    """

    def __init__(
        self,
        *,
        services: ServicesLike,
        apps_dir: Path | None = None,
        apps: dict[str, App] | None = None,
        plugins: list[BasePlugin] | None = None,
    ) -> None:
        self.services = services
        self.apps_dir = apps_dir
        self._apps = dict(apps or {})
        self._plugins = list(plugins or [])
        self._runners: dict[str, Runner] = {}
        self._loaded: dict[str, App] = {}
        self._lock = asyncio.Lock()

    def _folders(self) -> dict[str, Path]:
        if self.apps_dir is None:
            return {}
        from eventide.apps.loader import discover_apps

        return discover_apps(self.apps_dir)

    @property
    def server_plugins(self) -> list[BasePlugin]:
        """The plugins the server adds after each app's own (request recorder, traces)."""
        return list(self._plugins)

    def names(self) -> list[str]:
        """The names of the apps served, sorted."""
        return sorted({*self._apps, *self._folders()})

    async def runner(self, app_name: str) -> Runner:
        """The Runner of ``app_name``, loading the app on first use.

        Raises:
            AppNotFoundError: no such app.
            AppLoadError: the app's code could not be loaded.
        """
        runner = self._runners.get(app_name)
        if runner is not None:
            return runner
        async with self._lock:
            runner = self._runners.get(app_name)
            if runner is None:
                app = self._load(app_name)
                runner = self._build(app_name, app)
                self._loaded[app_name] = app
                self._runners[app_name] = runner
        return runner

    async def app(self, app_name: str) -> App:
        """The ``App`` served as ``app_name`` (loaded on first use, as for :meth:`runner`).

        Raises:
            AppNotFoundError: no such app.
            AppLoadError: the app's code could not be loaded.
        """
        await self.runner(app_name)
        return self._loaded[app_name]

    def folder(self, app_name: str) -> Path | None:
        """The folder in ``apps_dir`` named ``app_name`` (None when there is none, e.g. for an
        app given only as an object)."""
        return self._folders().get(app_name)

    def check_known(self, app_name: str) -> None:
        """Raise :class:`AppNotFoundError` unless ``app_name`` is served."""
        if app_name in self._runners or app_name in self._apps:
            return
        if app_name not in self._folders():
            raise AppNotFoundError(app_name, self.names())

    def _load(self, app_name: str) -> App:
        app = self._apps.get(app_name)
        if app is not None:
            return app
        folder = self._folders().get(app_name)
        if folder is None:
            raise AppNotFoundError(app_name, self.names())
        from eventide.apps.loader import load_app

        try:
            return load_app(folder)
        except EventideError as exc:
            raise AppLoadError(f"App {app_name!r} could not be loaded: {exc}") from exc

    def _build(self, app_name: str, app: App) -> Runner:
        services = self.services
        # The URL's app name scopes sessions, so the Runner uses it too (it is the folder's
        # name for folder apps, the dict key for apps given directly).
        return Runner(
            app_name=app_name,
            agent=app.root_agent,
            session_service=services.session_service,
            artifact_service=services.artifact_service,
            memory_service=services.memory_service,
            plugins=[*app.plugins, *self._plugins],
            add_sessions_to_memory=app.add_sessions_to_memory
            and services.memory_service is not None,
            events_compaction_config=app.events_compaction_config,
        )

    async def close(self) -> None:
        """Close every Runner built (their toolsets close with them)."""
        runners = list(self._runners.values())
        self._runners.clear()
        for runner in runners:
            await runner.close()
