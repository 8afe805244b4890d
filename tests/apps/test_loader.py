"""The app convention: discovering app folders without importing them, and loading apps."""

from __future__ import annotations

import itertools
import os
import textwrap
from pathlib import Path

import pytest

from eventide.agents import LlmAgent
from eventide.apps import App
from eventide.apps.loader import discover_apps, load_app, resolve_app
from eventide.errors import AppLoadError, UsageError

_counter = itertools.count()

AGENT = """
from eventide.agents import LlmAgent

root_agent = LlmAgent(name="{agent}", model="gemini-2.5-flash", instruction="Be brief.")
"""


def unique(prefix: str = "app") -> str:
    """A module name no other test (or earlier run in this process) has imported."""
    return f"{prefix}_{os.getpid()}_{next(_counter)}"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def make_folder_app(parent: Path, name: str, *, init: bool = True, agent: str = "helper") -> Path:
    folder = parent / name
    write(folder / "agent.py", AGENT.format(agent=agent))
    if init:
        write(folder / "__init__.py", "from . import agent\n")
    return folder


def test_folder_app_with_init_is_named_after_its_folder(tmp_path: Path) -> None:
    name = unique()
    app = load_app(make_folder_app(tmp_path, name))
    assert isinstance(app, App)
    assert app.name == name
    assert isinstance(app.root_agent, LlmAgent)
    assert app.root_agent.name == "helper"


def test_folder_app_without_init_loads_agent_module(tmp_path: Path) -> None:
    name = unique()
    app = load_app(make_folder_app(tmp_path, name, init=False))
    assert (app.name, app.root_agent.name) == (name, "helper")


def test_app_object_in_init_wins_and_keeps_its_name_and_plugins(tmp_path: Path) -> None:
    name = unique()
    folder = make_folder_app(tmp_path, name)
    write(
        folder / "__init__.py",
        """
        from eventide import BasePlugin
        from eventide.apps import App
        from .agent import root_agent

        app = App(name="custom_name", root_agent=root_agent, plugins=[BasePlugin("p")])
        """,
    )
    app = load_app(folder)
    assert app.name == "custom_name"
    assert [p.name for p in app.plugins] == ["p"]


def test_agent_py_path_and_folder_name_in_cwd_load_the_folder_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = unique()
    folder = make_folder_app(tmp_path, name)
    assert load_app(folder / "agent.py").name == name
    monkeypatch.chdir(tmp_path)
    assert load_app(name).name == name
    assert resolve_app(name).folder == folder.resolve()


def test_single_file_app_is_named_after_the_file(tmp_path: Path) -> None:
    name = unique("single")
    file = write(tmp_path / f"{name}.py", AGENT.format(agent="solo"))
    app = load_app(str(file))
    assert (app.name, app.root_agent.name) == (name, "solo")
    assert resolve_app(file).folder == tmp_path.resolve()


def test_import_path_with_and_without_attribute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = unique("pkg")
    write(tmp_path / package / "__init__.py", "")
    write(
        tmp_path / package / "agents.py",
        """
        from eventide.agents import LlmAgent

        root_agent = LlmAgent(name="first", model="gemini-2.5-flash")
        other = LlmAgent(name="second", model="gemini-2.5-flash")
        """,
    )
    monkeypatch.chdir(tmp_path)
    assert load_app(f"{package}.agents").root_agent.name == "first"
    app = load_app(f"{package}.agents:other")
    assert (app.name, app.root_agent.name) == ("agents", "second")


def test_missing_root_agent_says_what_to_define(tmp_path: Path) -> None:
    folder = tmp_path / unique()
    write(folder / "agent.py", "x = 1\n")
    with pytest.raises(AppLoadError, match="defines neither `root_agent` nor `app`"):
        load_app(folder)


def test_import_error_carries_the_apps_traceback(tmp_path: Path) -> None:
    folder = tmp_path / unique()
    write(folder / "agent.py", "import json\n\n\ndef broken():\n    return 1 / 0\n\n\nbroken()\n")
    with pytest.raises(AppLoadError) as caught:
        load_app(folder)
    message = str(caught.value)
    assert "failed while importing" in message
    assert f'{folder / "agent.py"}", line 5, in broken' in message
    assert "ZeroDivisionError: division by zero" in message
    assert "<frozen" not in message
    assert isinstance(caught.value.__cause__, ZeroDivisionError)


def test_missing_dependency_of_the_app_is_an_import_failure_not_a_missing_app(
    tmp_path: Path,
) -> None:
    folder = tmp_path / unique()
    write(folder / "agent.py", "import no_such_module_for_eventide_tests\n")
    with pytest.raises(AppLoadError, match="No module named 'no_such_module_for_eventide_tests'"):
        load_app(folder)


def test_value_that_is_not_an_app_or_agent_is_rejected(tmp_path: Path) -> None:
    folder = tmp_path / unique()
    write(folder / "agent.py", "root_agent = 'gemini-2.5-flash'\n")
    with pytest.raises(AppLoadError, match=r"is a str, not an App or an agent"):
        load_app(folder)


@pytest.mark.parametrize(
    "target, message",
    [
        ("no/such/folder", "does not exist"),
        ("missing_file.py", "does not exist"),
        ("no_such_app_module_xyz", "Cannot find app 'no_such_app_module_xyz'"),
        ("bad name!", "neither an app folder"),
        ("pkg.mod:not-an-attr", "not a valid attribute name"),
    ],
)
def test_unknown_targets_raise_clear_errors(
    target: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AppLoadError, match=message):
        load_app(target)


def test_errors_are_usage_errors() -> None:
    """The CLI maps UsageError to exit code 2: a broken app is the developer's to fix."""
    assert issubclass(AppLoadError, UsageError)


def test_folder_name_that_is_not_an_identifier_suggests_one(tmp_path: Path) -> None:
    folder = make_folder_app(tmp_path, "my-app")
    with pytest.raises(AppLoadError, match="Rename it, e.g. to 'my_app'"):
        load_app(folder)


def test_folder_named_like_an_imported_module_is_reported(tmp_path: Path) -> None:
    folder = make_folder_app(tmp_path, "json")
    with pytest.raises(AppLoadError, match="clashes with the module 'json'"):
        load_app(folder)


def test_same_app_name_from_another_folder_replaces_the_first(tmp_path: Path) -> None:
    name = unique()
    first = make_folder_app(tmp_path / "one", name, agent="first")
    second = make_folder_app(tmp_path / "two", name, agent="second")
    assert load_app(first).root_agent.name == "first"
    assert load_app(second).root_agent.name == "second"


def test_discover_apps_parses_without_importing(tmp_path: Path) -> None:
    marker = tmp_path / "imported.txt"
    make_folder_app(tmp_path, "weather")
    make_folder_app(tmp_path, "plain_agent_py", init=False)
    write(
        tmp_path / "with_app" / "__init__.py",
        f"""
        from pathlib import Path
        Path({str(marker)!r}).write_text("imported")
        app = object()
        """,
    )
    write(tmp_path / "imports_it" / "__init__.py", "from .agent import root_agent\n")
    write(tmp_path / "imports_it" / "agent.py", AGENT.format(agent="x"))
    write(tmp_path / "not_an_app" / "agent.py", "x = 1\n")
    write(tmp_path / "broken_syntax" / "agent.py", "root_agent = (\n")
    make_folder_app(tmp_path, ".hidden")
    make_folder_app(tmp_path, "_private")
    write(tmp_path / "loose_file.py", AGENT.format(agent="x"))

    found = discover_apps(tmp_path)

    assert list(found) == ["imports_it", "plain_agent_py", "weather", "with_app"]
    assert found["weather"] == (tmp_path / "weather").resolve()
    assert not marker.exists()


def test_discover_apps_needs_a_folder(tmp_path: Path) -> None:
    with pytest.raises(AppLoadError, match="does not exist or is not a folder"):
        discover_apps(tmp_path / "missing")
