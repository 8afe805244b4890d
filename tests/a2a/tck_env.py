"""The A2A TCK (``shared/third_party/a2a-tck``), run from a temporary copy in a venv of its own.

The TCK is not part of this repository: it is read from ``EVENTIDE_A2A_TCK`` or the shared
folder beside the repository, copied to a temporary folder (it writes reports and a pytest
cache where it runs) and run with an interpreter from a venv made once per machine under
``~/.cache/eventide/a2a-tck-venv-<key>`` (its requirements plus what its imports need; about a
minute, then reused). Without the TCK or the venv the tests skip, and fail under ``CI=true``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import IN_CI

REPO = Path(__file__).resolve().parents[2]
# What the TCK imports beyond its requirements.txt (measured: see shared/third_party/README).
_EXTRA = ["python-dotenv", "grpcio-status", "proto-plus", "pyOpenSSL", "aiohttp"]


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason}; CI=true needs the A2A TCK tests to run")
    pytest.skip(reason)


def tck_source() -> Path:
    """The TCK's folder (skips, or fails in CI, when it is not there)."""
    named = os.environ.get("EVENTIDE_A2A_TCK")
    candidates = [Path(named)] if named else []
    for parent in REPO.parents:
        candidates.append(parent / "shared" / "third_party" / "a2a-tck")
    for candidate in candidates:
        if (candidate / "run_tck.py").is_file():
            return candidate
    _missing("the A2A TCK is not there (set EVENTIDE_A2A_TCK to its folder)")
    raise AssertionError("unreachable")


def tck_python(source: Path) -> Path:
    """A Python with the TCK's requirements, made once per machine and reused."""
    requirements = (source / "requirements.txt").read_text()
    key = hashlib.sha256((requirements + " ".join(_EXTRA)).encode()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "eventide"
    venv = cache / f"a2a-tck-venv-{key}"
    python = venv / "bin" / "python"
    stamp = venv / ".complete"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"a2a-tck-venv-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not stamp.exists():
            try:
                shutil.rmtree(venv, ignore_errors=True)
                subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
                subprocess.run(
                    [str(python), "-m", "pip", "install", "-q", "-r", "/dev/stdin", *_EXTRA],
                    input=requirements,
                    text=True,
                    check=True,
                    timeout=1200,
                )
                stamp.write_text("ok")
            except (OSError, subprocess.SubprocessError) as exc:
                _missing(f"could not make the A2A TCK's venv in {venv}: {exc}")
    return python


def tck_copy(source: Path) -> Path:
    """A fresh copy of the TCK in a temporary folder (it writes where it runs)."""
    target = Path(tempfile.mkdtemp(prefix="eventide-a2a-tck-")) / "a2a-tck"
    shutil.copytree(
        source,
        target,
        ignore=shutil.ignore_patterns("reports", ".pytest_cache", "__pycache__", "*.pyc"),
    )
    return target
