"""Apps written for google-adk, loaded as they are: their imports mapped to Eventide's in
memory, by the same rewrite ``eventide migrate`` writes to disk.

An app folder (or file) whose code mentions ``google.adk`` is imported through a finder
scoped to the app's own modules: each of them is read, rewritten by
:func:`eventide.cli.migrate.migrate_source` and compiled from the rewritten text (under its
own file name, so tracebacks point at the file; nothing is written, not even bytecode).
Other modules, google-adk's included when it is installed, are imported as usual. Whether
google-adk is installed makes no difference: the app runs on Eventide either way.

An app the rewrite cannot map wholly (a google-adk name Eventide lacks) is not loaded: the
error is one line naming the first such use, and ``eventide migrate`` lists them all.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, ModuleType

from eventide.apps.app import App
from eventide.apps.loader import AppSource, load_app, resolve_app
from eventide.errors import AppLoadError

__all__ = ["LoadedApp", "load_any_app"]

_MARK = b"google.adk"


@dataclass(frozen=True, slots=True)
class LoadedApp:
    """An app, and whether it was written for google-adk (its imports mapped in memory)."""

    app: App
    written_for_adk: bool


def load_any_app(path_or_name: str | Path) -> LoadedApp:
    """:func:`eventide.apps.loader.load_app`, for Eventide apps and google-adk apps alike.

    Raises:
        AppLoadError: as ``load_app``; and for a google-adk app, a use the rewrite cannot
            map (one line, the first such use).
    """
    source = resolve_app(path_or_name)
    files = _app_files(source)
    if not any(_MARK in data for data in files.values()):
        return LoadedApp(load_app(path_or_name), written_for_adk=False)
    rewritten = _rewrite(source, files)
    _install(_MigratingFinder(source, rewritten))
    return LoadedApp(load_app(path_or_name), written_for_adk=True)


def _app_files(source: AppSource) -> dict[Path, bytes]:
    """The app's own Python files (a folder's, or the one file), by path: none for an app
    named by an import path, which is loaded as it is."""
    if source.sys_path is None:
        return {}
    from eventide.cli.migrate import python_files

    root = source.sys_path / source.module
    target = root if root.is_dir() else root.with_suffix(".py")
    if not target.exists():
        return {}
    return {file.resolve(): file.read_bytes() for file in python_files(target)}


def _rewrite(source: AppSource, files: dict[Path, bytes]) -> dict[Path, str]:
    """Each file that mentions google-adk, rewritten; the first use the rewrite cannot map
    is an :class:`AppLoadError`."""
    try:
        from eventide.cli.migrate import migrate_source
    except ImportError as exc:  # libcst: the cli extra
        raise AppLoadError(
            f"App {source.name!r} is written for google-adk; mapping its imports to "
            f"Eventide's needs libcst ({exc.name} is missing): pip install 'eventide[cli]', "
            "or convert it with `eventide migrate`."
        ) from exc
    rewritten: dict[Path, str] = {}
    for path, data in files.items():
        if _MARK not in data:
            continue
        report = migrate_source(importlib.util.decode_source(data), path)
        if report.error is not None:
            continue  # not valid Python: importing it reports the error where it is
        if report.unmapped:
            first = report.unmapped[0]
            more = len(report.unmapped) - 1
            also = f" (and {more} more: `eventide migrate --check` lists them)" if more else ""
            raise AppLoadError(
                f"App {source.name!r} is written for google-adk and uses what Eventide "
                f"lacks: {path.name} line {first.line}, {first.code}: {first.reason}{also}."
            )
        if report.new_source is not None:
            rewritten[path] = report.new_source
    return rewritten


class _MigratingLoader(importlib.machinery.SourceFileLoader):
    """Loads one module of the app from its rewritten source (no bytecode cache: the cached
    code of the file as written must never be the rewritten one, nor the other way)."""

    def __init__(self, fullname: str, path: str, source: str) -> None:
        super().__init__(fullname, path)
        self._rewritten = source

    def get_code(self, fullname: str) -> CodeType:
        return compile(self._rewritten, self.path, "exec", dont_inherit=True)


class _MigratingFinder(importlib.abc.MetaPathFinder):
    """Finds the app's own modules that the rewrite changed; leaves every other module to
    the finders after it."""

    def __init__(self, source: AppSource, rewritten: dict[Path, str]) -> None:
        self.module = source.module
        self.rewritten = rewritten

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.module and not fullname.startswith(self.module + "."):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None:
            return None
        source = self.rewritten.get(Path(spec.origin).resolve())
        if source is None:
            return None
        loader = _MigratingLoader(fullname, spec.origin, source)
        return importlib.util.spec_from_file_location(
            fullname,
            spec.origin,
            loader=loader,
            submodule_search_locations=spec.submodule_search_locations,
        )


def _install(finder: _MigratingFinder) -> None:
    """Put ``finder`` first on ``sys.meta_path``, replacing one for the same module (a
    reload)."""
    sys.meta_path[:] = [
        f
        for f in sys.meta_path
        if not (isinstance(f, _MigratingFinder) and f.module == finder.module)
    ]
    sys.meta_path.insert(0, finder)
