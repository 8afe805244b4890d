"""The google-adk compatibility scenarios (``scenarios.py``), run on Eventide.

Each scenario's docstring names the google-adk behaviour it checks; the same code runs on
google-adk with ``python -m tests.adk_compat.run_on_adk`` (see that module).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adk_compat import (
    parity_scenarios,  # noqa: F401 - registers its scenarios
    phase2_scenarios,  # noqa: F401 - registers its scenarios
)
from tests.adk_compat.frameworks import Framework, eventide_framework
from tests.adk_compat.scenarios import SCENARIOS, Scenario


@pytest.fixture(scope="module")
def fw() -> Framework:
    return eventide_framework()


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
async def test_adk_behaviour(scenario: Scenario, fw: Framework, tmp_path: Path) -> None:
    """Runs one google-adk behaviour scenario on Eventide (see the scenario's docstring)."""
    await scenario(fw, tmp_path)
