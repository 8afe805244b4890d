"""Finding and loading agent apps: the convention the CLI and the HTTP server share.

What is an app
--------------
An *app* is Python code that defines, at module level, either

- ``root_agent``: the agent that answers each turn (any ``BaseAgent``, e.g. an ``LlmAgent``),
  or
- ``app = App(name=..., root_agent=..., plugins=[...])``: the agent plus plugins and settings.

``app`` wins when both are defined. The code lives in one of these places:

- **a folder** ``my_app/`` holding ``agent.py`` (and usually ``__init__.py`` with
  ``from . import agent``), or an ``__init__.py`` that defines the names itself. The folder
  is imported as the package ``my_app`` with its parent folder on ``sys.path``, so modules of
  the app may import each other (``from . import tools`` or ``from my_app import tools``).
  The folder's name is the app's name unless ``App(name=...)`` says otherwise, so it must be
  a Python identifier (``my_app``, not ``my-app``).
- **a single file** ``weather.py``: the app is named after the file.
- **an import path** ``package.module`` or ``package.module:attribute``: the attribute (or
  ``app`` / ``root_agent`` in the module) is the app; the current directory is importable.

An *apps folder* (what ``eventide api-server APPS_DIR`` serves) is a folder whose sub-folders
are apps; :func:`discover_apps` finds them without importing them.
"""

from __future__ import annotations

import ast
import importlib
import os
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from eventide.agents.base_agent import BaseAgent
from eventide.apps.app import App
from eventide.errors import AppLoadError

__all__ = ["AppSource", "discover_apps", "load_app", "resolve_app"]

_APP_NAMES = ("app", "root_agent")
_ENTRY_FILES = ("agent.py", "__init__.py")
# Module names this loader imported from app folders, with the folder each came from: an
# app of the same name loaded later from another folder replaces them (dev reloads, tests),
# while a clash with an unrelated installed module is reported instead.
_loaded_from: dict[str, Path] = {}


@dataclass(frozen=True, slots=True, kw_only=True)
class AppSource:
    """Where an app's code lives, found without importing it.

    Attributes:
        name: the app's name by convention (folder, file or module name); ``App(name=...)``
            may override it when the code is loaded.
        folder: the folder of the app's code: its sessions are stored under
            ``folder/.eventide/`` by default. The current directory for import paths.
        module: the module to import.
        attribute: the attribute to take from the module, or None for ``app``/``root_agent``.
        sys_path: the folder that must be on ``sys.path`` to import ``module``.
    """

    name: str
    folder: Path
    module: str
    attribute: str | None = None
    sys_path: Path | None = None


def discover_apps(apps_dir: str | Path) -> dict[str, Path]:
    """The apps in ``apps_dir``: app name -> folder, sorted by name.

    A sub-folder is an app when its ``agent.py`` or ``__init__.py`` binds ``root_agent`` or
    ``app`` at module level (an assignment, a definition or an import). Files are parsed, not
    imported, so discovery never runs an app's code. Hidden folders and ones starting with
    ``_`` are skipped.

    Raises:
        AppLoadError: ``apps_dir`` is not a folder.
    """
    root = Path(apps_dir).expanduser()
    if not root.is_dir():
        raise AppLoadError(
            f"Apps folder {str(apps_dir)!r} does not exist or is not a folder. Pass the folder "
            "that contains your app folders (each with an agent.py defining root_agent)."
        )
    found: dict[str, Path] = {}
    for child in sorted(root.iterdir()):
        if child.name.startswith((".", "_")) or not child.is_dir():
            continue
        if any(_binds_app_name(child / entry) for entry in _ENTRY_FILES):
            found[child.name] = child.resolve()
    return found


def resolve_app(path_or_name: str | Path) -> AppSource:
    """Work out where the app named by ``path_or_name`` lives, without importing it.

    ``path_or_name`` is a folder, a ``.py`` file, an app folder's name in the current
    directory, or an import path ``package.module[:attribute]``.

    Raises:
        AppLoadError: nothing matches.
    """
    text = str(path_or_name)
    path = Path(text).expanduser()
    if path.is_dir():
        return _folder_source(path.resolve())
    if path.suffix == ".py":
        if not path.is_file():
            raise AppLoadError(f"App file {text!r} does not exist.")
        path = path.resolve()
        if path.name in _ENTRY_FILES:
            return _folder_source(path.parent)
        return AppSource(name=path.stem, folder=path.parent, module=path.stem, sys_path=path.parent)
    if isinstance(path_or_name, Path) or os.sep in text or "/" in text:
        raise AppLoadError(
            f"App folder {text!r} does not exist. Create one with `eventide new NAME`, or pass "
            "the path of an existing app folder."
        )
    module, _, attribute = text.partition(":")
    parts = module.split(".")
    if not module or not all(part.isidentifier() for part in parts):
        raise AppLoadError(
            f"{text!r} is neither an app folder, a .py file nor an import path like "
            "'package.module' or 'package.module:root_agent'."
        )
    if attribute and not attribute.isidentifier():
        raise AppLoadError(f"In {text!r}, {attribute!r} is not a valid attribute name.")
    name = parts[-2] if len(parts) > 1 and parts[-1] == "agent" else parts[-1]
    return AppSource(
        name=name, folder=Path.cwd(), module=module, attribute=attribute or None, sys_path=None
    )


def load_app(path_or_name: str | Path) -> App:
    """Import an app and return it as an :class:`App`.

    ``path_or_name`` is an app folder, a ``.py`` file, the name of an app folder in the
    current directory, or an import path ``package.module`` / ``package.module:attribute``.
    A module that defines only ``root_agent`` is wrapped in ``App(name=<app name>,
    root_agent=root_agent)``. See the module docstring for the convention.

    Raises:
        AppLoadError: the app cannot be found, its code raised while importing (the message
            holds the app's traceback), it defines neither ``app`` nor ``root_agent``, or
            what it defines is not an ``App`` or an agent.
    """
    source = resolve_app(path_or_name)
    module = _import(source)
    return _app_from_module(source, module)


# --- helpers ---
def _folder_source(folder: Path) -> AppSource:
    if not any((folder / entry).is_file() for entry in _ENTRY_FILES):
        raise AppLoadError(
            f"Folder {str(folder)!r} is not an app: it has neither agent.py nor __init__.py. "
            "An app folder holds agent.py defining `root_agent = LlmAgent(...)` (or "
            "`app = App(...)`); `eventide new NAME` creates one."
        )
    if not folder.name.isidentifier():
        raise AppLoadError(
            f"App folder name {folder.name!r} is not a Python identifier, so it cannot be "
            f"imported. Rename it, e.g. to {_as_identifier(folder.name)!r}."
        )
    return AppSource(name=folder.name, folder=folder, module=folder.name, sys_path=folder.parent)


def _as_identifier(name: str) -> str:
    cleaned = "".join(c if c.isalnum() else "_" for c in name)
    return cleaned if cleaned.isidentifier() else f"app_{cleaned}"


def _binds_app_name(file: Path) -> bool:
    try:
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except (OSError, SyntaxError, ValueError):
        # Not readable or not valid Python: not discoverable. Loading it by name reports the
        # real error with its location.
        return False
    for node in tree.body:
        names: list[str] = []
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [(a.asname or a.name).split(".")[0] for a in node.names]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [node.name]
        if any(name in _APP_NAMES for name in names):
            return True
    return False


def _import(source: AppSource) -> ModuleType:
    search = source.sys_path if source.sys_path is not None else Path.cwd()
    if str(search) not in sys.path:
        sys.path.insert(0, str(search))
    top = source.module.split(".")[0]
    if source.sys_path is not None:
        _forget_stale(top, source.sys_path / top)
    try:
        module = importlib.import_module(source.module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and source.module.startswith(exc.name):
            raise AppLoadError(
                f"Cannot find app {source.module!r}: no such folder, file or module (looked in "
                f"{str(search)!r} and on sys.path). Check the name or pass the app's path."
            ) from exc
        raise _import_failed(source, exc) from exc
    except Exception as exc:
        raise _import_failed(source, exc) from exc
    if source.sys_path is not None:
        _check_origin(source, module, top)
    return module


def _forget_stale(top: str, location: Path) -> None:
    """Drop modules of an earlier app with the same name that came from another folder."""
    previous = _loaded_from.get(top)
    if previous is None or previous == location:
        return
    for name in [m for m in sys.modules if m == top or m.startswith(f"{top}.")]:
        del sys.modules[name]
    importlib.invalidate_caches()


def _check_origin(source: AppSource, module: ModuleType, top: str) -> None:
    expected = source.sys_path / top if source.sys_path is not None else None
    if expected is None:
        return
    file = getattr(module, "__file__", None)
    # A folder without __init__.py imports as a namespace package: no __file__, a __path__.
    locations = [file] if file is not None else list(getattr(module, "__path__", []))
    origins = [Path(location).resolve() for location in locations]
    inside = any(
        origin in (expected, expected.with_suffix(".py")) or expected in origin.parents
        for origin in origins
    )
    if not inside:
        origin = origins[0] if origins else "an unknown place"
        raise AppLoadError(
            f"App {source.name!r} clashes with the module {top!r} already imported from "
            f"{str(origin)!r}. Rename the app folder or file to a name no installed module "
            "uses."
        )
    _loaded_from[top] = expected


def _written_for_adk(source: AppSource, what: str) -> str:
    return (
        f"App {source.name!r} is written for google-adk ({what}): convert its folder "
        f"{source.folder.name!r} with `eventide migrate` (it rewrites the imports to "
        "Eventide's), then run it."
    )


def _import_failed(source: AppSource, exc: BaseException) -> AppLoadError:
    # Keep only the app's own frames: importlib's machinery says nothing useful to the
    # person whose agent.py has a typo.
    frames = [
        frame
        for frame in traceback.extract_tb(exc.__traceback__)
        if not frame.filename.startswith("<frozen") and "importlib" not in frame.filename
    ]
    if (
        isinstance(exc, ModuleNotFoundError)
        and (exc.name or "").split(".")[0] == "google"
        and frames
        and "google.adk" in (frames[-1].line or "")
    ):
        # One line, no traceback: nothing in the app is broken, it targets another library.
        return AppLoadError(_written_for_adk(source, "it imports google.adk"))
    lines = traceback.format_list(frames) + traceback.format_exception_only(exc)
    return AppLoadError(
        f"App {source.name!r} failed while importing {source.module!r}:\n"
        + "Traceback (most recent call last):\n"
        + "".join(lines).rstrip()
    )


def _app_from_module(source: AppSource, module: ModuleType) -> App:
    where = f"{source.module}:{source.attribute}" if source.attribute else source.module
    if source.attribute is not None:
        if not hasattr(module, source.attribute):
            raise AppLoadError(f"Module {source.module!r} has no attribute {source.attribute!r}.")
        return _as_app(source, getattr(module, source.attribute), where)
    for attribute in _APP_NAMES:
        if hasattr(module, attribute):
            return _as_app(source, getattr(module, attribute), f"{where}:{attribute}")
    # A package whose __init__ does not import its agent module: look there too.
    if not source.module.endswith(".agent") and hasattr(module, "__path__"):
        try:
            agent_module = importlib.import_module(f"{source.module}.agent")
        except ModuleNotFoundError as exc:
            if exc.name != f"{source.module}.agent":
                raise _import_failed(source, exc) from exc
        except Exception as exc:
            raise _import_failed(source, exc) from exc
        else:
            for attribute in _APP_NAMES:
                if hasattr(agent_module, attribute):
                    found = getattr(agent_module, attribute)
                    return _as_app(source, found, f"{source.module}.agent:{attribute}")
    raise AppLoadError(
        f"App {source.name!r} ({where}) defines neither `root_agent` nor `app`. Add "
        "`root_agent = LlmAgent(name=..., model=..., instruction=...)` at module level, or "
        "`app = App(name=..., root_agent=...)`."
    )


def _as_app(source: AppSource, value: object, where: str) -> App:
    if isinstance(value, App):
        return value
    if isinstance(value, BaseAgent):
        name = source.name if source.name.isidentifier() else _as_identifier(source.name)
        return App(name=name, root_agent=value)
    if type(value).__module__.startswith("google.adk"):
        raise AppLoadError(
            _written_for_adk(source, f"{where} is google-adk's {type(value).__name__}")
        )
    raise AppLoadError(
        f"{where} is a {type(value).__name__}, not an App or an agent. Set it to an agent "
        "(e.g. LlmAgent(...)) or to App(name=..., root_agent=...)."
    )
