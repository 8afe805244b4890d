"""npm packages for the tests, installed once into a cache folder outside the repository.

``NODE_PATH`` does not reach ES module imports, so a script that imports a package is copied
next to the installed ``node_modules`` and run from there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "eventide-test-node"


def node_folder(name: str, packages: list[str]) -> Path:
    """A folder whose ``node_modules`` holds ``packages`` (``name@version``), installed with
    npm on first use. Skips locally, fails in CI, when node or npm is missing."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        if os.environ.get("CI"):
            pytest.fail("node and npm are needed for the AG-UI JavaScript client tests")
        pytest.skip("node/npm not installed")
    folder = CACHE / name
    stamp = folder / ".installed"
    wanted = "\n".join(packages)
    if stamp.exists() and stamp.read_text() == wanted:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text(
        '{"name": "eventide-test", "private": true, "type": "module"}'
    )
    result = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", *packages],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if result.returncode != 0:
        pytest.fail(f"npm install {' '.join(packages)} failed:\n{result.stderr}")
    stamp.write_text(wanted)
    return folder


def run_node_script(folder: Path, script: Path, *args: str, timeout: float = 60) -> str:
    """Run ``script`` (copied into ``folder``) with node; its stdout."""
    target = folder / script.name
    shutil.copyfile(script, target)
    result = subprocess.run(
        ["node", str(target), *args], cwd=folder, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"{script.name} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout
