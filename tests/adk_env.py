"""A separate virtualenv with google-adk, for the tests that run ADK's own client and UI
against Eventide.

google-adk 2.13.0 cannot share Eventide's dev environment: pip would downgrade
google-genai and OpenTelemetry under Eventide's other extras. So it lives in its own
venv, ``.venv-adk`` in the repository (created on first use, the pip cache makes later
runs fast), or the interpreter named by ``EVENTIDE_ADK_PYTHON``.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import IN_CI

ADK_VERSION = "2.13.0"
REPO = Path(__file__).resolve().parents[1]
VENV = REPO / ".venv-adk"


def _has_adk(python: Path) -> bool:
    if not python.exists():
        return False
    probe = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('google-adk'))"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return probe.returncode == 0 and probe.stdout.strip() == ADK_VERSION


def adk_python() -> Path:
    """An interpreter with google-adk==2.13.0; skips (fails under CI=true) when none can be
    made."""
    named = os.environ.get("EVENTIDE_ADK_PYTHON")
    if named:
        python = Path(named)
        if not _has_adk(python):
            _missing(f"EVENTIDE_ADK_PYTHON={named} has no google-adk=={ADK_VERSION}")
        return python
    python = VENV / "bin" / "python"
    with open(REPO / ".venv-adk.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _has_adk(python):
            try:
                subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True, timeout=300)
                subprocess.run(
                    [str(python), "-m", "pip", "install", "-q", f"google-adk=={ADK_VERSION}"],
                    check=True,
                    timeout=1200,
                )
            except (OSError, subprocess.SubprocessError) as exc:
                _missing(f"could not install google-adk=={ADK_VERSION} into {VENV}: {exc}")
    return python


def _missing(reason: str) -> None:
    if IN_CI:
        pytest.fail(f"{reason}; CI=true needs the google-adk tests to run")
    pytest.skip(reason)
