"""The google-adk-style example apps in ``examples/adk_*``: rewritten by ``eventide migrate``
(nothing left unmapped), loaded like ``eventide run`` loads them, and run offline on the demo
model; events and state must match ``golden/<app>.json``, the conversation google-adk
produces from the same model output (checked by ``run_on_adk.py``)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from eventide.apps.demo_model import prepare_models
from eventide.apps.loader import load_app
from eventide.cli.migrate import migrate_path
from tests.adk_compat.example_apps import TURNS, model_outputs, play
from tests.adk_compat.frameworks import eventide_framework

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("name", sorted(TURNS))
async def test_adk_example_migrates_and_runs_offline(name: str, tmp_path: Path) -> None:
    """Issue 14: an app written the google-adk way runs on Eventide once `eventide migrate`
    rewrote its imports, with the events and state google-adk gives for the same model
    output."""
    folder = tmp_path / name
    shutil.copytree(ROOT / "examples" / name, folder)
    reports = migrate_path(folder, write=True)
    assert all(not r.unmapped and r.error is None for r in reports)
    source = (folder / "agent.py").read_text()
    assert "google.adk" not in source and "from eventide import" in source

    app = load_app(folder)
    setup = prepare_models(app.root_agent, env={})
    assert setup.uses_demo_model
    result = await play(eventide_framework(), app.root_agent, TURNS[name])
    setup.restore()
    result["model_outputs"] = model_outputs(result["turns"])

    path = GOLDEN / f"{name}.json"
    text = json.dumps(result, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if os.environ.get("EVENTIDE_UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
    assert path.exists(), f"golden file {path} missing; run with EVENTIDE_UPDATE_GOLDEN=1"
    assert json.loads(text) == json.loads(path.read_text())
