"""google-adk 2.13's Python with its ``a2a`` extra (a2a-sdk 1.3.0), for the interop tests.

:func:`tests.adk_env.adk_python` gives the interpreter with google-adk; the A2A SDK is added
to that venv on first use (the version Eventide's ``a2a`` extra is tested with), under a lock.
"""

from __future__ import annotations

import fcntl
import subprocess
from pathlib import Path

import pytest

from tests.adk_env import REPO, adk_python
from tests.conftest import IN_CI

A2A_SDK = "a2a-sdk[http-server]==1.3.0"


def _has_a2a(python: Path) -> bool:
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('a2a-sdk'))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return probe.returncode == 0 and probe.stdout.strip() == "1.3.0"


def adk_a2a_python() -> Path:
    """google-adk's interpreter, with a2a-sdk 1.3.0 installed in its venv."""
    python = adk_python()
    with open(REPO / ".venv-adk-a2a.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _has_a2a(python):
            try:
                subprocess.run(
                    [str(python), "-m", "pip", "install", "-q", A2A_SDK], check=True, timeout=600
                )
            except (OSError, subprocess.SubprocessError) as exc:
                reason = f"could not install {A2A_SDK} beside google-adk: {exc}"
                if IN_CI:
                    pytest.fail(f"{reason}; CI=true needs the interop tests to run")
                pytest.skip(reason)
    return python
