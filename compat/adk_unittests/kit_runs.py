"""Runs google-adk's unit tests, one area at a time, on google-adk or on Eventide.

Each area runs in its own pytest process from the kit's folder (read-only: no cache, no
bytecode written), with ``results_plugin`` recording every test. The google-adk side runs in
google-adk 2.13's venv; the Eventide side in Eventide's, with the import map installed and
this worktree's ``src`` first on the path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from adk_unittests.import_map import ADK_MODULE_ROOT_ENV
from adk_unittests.results_plugin import IMPORT_MAP_ENV, RESULTS_FILE_ENV

KIT_NAME = "adk-unittests-v2.1.0"
KIT_ENV = "EVENTIDE_ADK_UNITTESTS"
ADK_PYTHON_ENV = "EVENTIDE_ADK_PYTHON"
COMPAT_DIR = Path(__file__).resolve().parents[1]
REPO = COMPAT_DIR.parent

# Area -> the kit's paths (relative to tests/unittests) that belong to it.
AREAS: dict[str, tuple[str, ...]] = {
    "events": ("events",),
    "sessions": ("sessions",),
    "runners": ("runners", "test_runners.py"),
    "agents": ("agents",),
    "flows": ("flows",),
    "tools": ("tools",),
    "artifacts": ("artifacts",),
    "memory": ("memory",),
    "plugins": ("plugins",),
    "apps": ("apps",),
    "streaming": ("streaming",),
    "workflow": ("workflow",),
}
# SQLAlchemy: google-adk's database session service, which its sessions tests need.
TEST_PACKAGES = ("pytest", "pytest-asyncio", "pytest-mock", "pytest-timeout", "sqlalchemy")


class KitNotFoundError(RuntimeError):
    """The google-adk unit-test kit is not where the runner looked."""


def find_kit() -> Path:
    """The kit's root (the folder holding ``tests/unittests``): ``$EVENTIDE_ADK_UNITTESTS``,
    else ``shared/third_party/<kit>`` beside this repository or a folder above it."""
    named = os.environ.get(KIT_ENV)
    candidates = [Path(named)] if named else []
    for folder in [REPO, *REPO.parents]:
        candidates.append(folder / "shared" / "third_party" / KIT_NAME)
    for candidate in candidates:
        if (candidate / "tests" / "unittests" / "conftest.py").is_file():
            return candidate
    raise KitNotFoundError(
        f"google-adk's unit tests ({KIT_NAME}) were not found: looked in "
        + ", ".join(str(c) for c in candidates[:3])
        + f", ...; set {KIT_ENV} to the folder that holds tests/unittests"
    )


def adk_python() -> Path:
    """google-adk 2.13's interpreter: ``$EVENTIDE_ADK_PYTHON``, else the repository's
    ``.venv-adk`` (the one ``tests/adk_env.py`` makes)."""
    named = os.environ.get(ADK_PYTHON_ENV)
    candidates = [Path(named)] if named else []
    candidates.append(REPO / ".venv-adk" / "bin" / "python")
    for candidate in candidates:
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        f"no google-adk interpreter: set {ADK_PYTHON_ENV} to a python with google-adk==2.13.0"
    )


def ensure_test_packages(python: Path) -> None:
    """Install pytest and the plugins the kit's tests use into ``python``'s venv if absent."""
    probe = "import pytest, pytest_asyncio, pytest_mock, pytest_timeout, sqlalchemy"
    if subprocess.run([str(python), "-c", probe], capture_output=True).returncode == 0:
        return
    subprocess.run([str(python), "-m", "pip", "install", "-q", *TEST_PACKAGES], check=True)


def adk_module_root(python: Path) -> str:
    """Where google-adk's ``google/adk`` package is in ``python``'s venv."""
    code = "import google.adk, os; print(os.path.dirname(google.adk.__file__))"
    done = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def run_area(
    area: str,
    side: str,
    *,
    kit: Path,
    python: Path,
    adk_root: str | None,
    timeout_s: float,
    keyword: str | None = None,
    src: Path = REPO / "src",
) -> dict[str, Any]:
    """Run one area's tests on ``side`` ("adk" or "eventide", whose sources are ``src``);
    the plugin's records."""
    paths = [
        f"tests/unittests/{part}"
        for part in AREAS[area]
        if (kit / "tests" / "unittests" / part).exists()
    ]
    with tempfile.TemporaryDirectory(prefix=f"adk-conformance-{side}-") as scratch:
        results = Path(scratch) / "results.json"
        env = dict(os.environ)
        env.pop("PYTHONPATH", None)
        env.update(
            {
                RESULTS_FILE_ENV: str(results),
                "PYTHONDONTWRITEBYTECODE": "1",
                "TMPDIR": scratch,
            }
        )
        if side == "eventide":
            env["PYTHONPATH"] = os.pathsep.join([str(src), str(COMPAT_DIR)])
            env[IMPORT_MAP_ENV] = "1"
            if adk_root:
                env[ADK_MODULE_ROOT_ENV] = adk_root
        else:
            env["PYTHONPATH"] = str(COMPAT_DIR)
            env.pop(IMPORT_MAP_ENV, None)
        command = [
            str(python),
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "adk_unittests.results_plugin",
            "-o",
            "addopts=",
            "-o",
            "asyncio_mode=auto",
            "-o",
            "asyncio_default_fixture_loop_scope=function",
            f"--timeout={timeout_s:g}",
            "--continue-on-collection-errors",
            "-q",
            "--no-header",
            "-rN",
            *(["-k", keyword] if keyword else []),
            *paths,
        ]
        done = subprocess.run(
            command, cwd=kit, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        if not results.exists():
            tail = done.stdout.decode(errors="replace")[-2000:]
            raise RuntimeError(f"pytest wrote no results for {area} on {side}:\n{tail}")
        data: dict[str, Any] = json.loads(results.read_text())
        return data


def main_python() -> Path:
    """The interpreter running this runner: Eventide's venv."""
    return Path(sys.executable)
