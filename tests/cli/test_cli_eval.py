"""``eventide eval APP EVALSET``: the report and the exit codes (0 pass, 1 fail, 2 usage)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.cli.conftest import eventide_command
from tests.evaluation.weather_app import turn, write_weather_app

Invoke = Callable[..., Result]


@pytest.fixture
def app_folder(tmp_path: Path) -> Path:
    folder = write_weather_app(tmp_path)
    cases = [
        {
            "eval_id": "paris",
            "conversation": [
                turn(
                    "weather in Paris?",
                    "It is sunny in Paris.",
                    [("get_weather", {"city": "Paris"})],
                )
            ],
        },
        {
            "eval_id": "lyon",
            "conversation": [
                turn(
                    "weather in Lyon?", "It is sunny in Lyon.", [("get_weather", {"city": "Paris"})]
                )
            ],
        },
    ]
    (folder / "weather_set.evalset.json").write_text(
        json.dumps({"eval_set_id": "weather_set", "eval_cases": cases})
    )
    return folder


def test_all_cases_passing_exits_0_and_saves_the_result(app_folder: Path, invoke: Invoke) -> None:
    """Exit code 0 when every case passes; the report names each case and its scores; the
    result is stored where the dev server lists results."""
    result = invoke(["eval", "weather", "weather_set:paris"], cwd=app_folder.parent)
    assert result.exit_code == 0, result.output
    assert "PASS  paris  tool_trajectory_avg_score 1.00 (>= 1.00)" in result.stdout
    assert "response_match_score 1.00 (>= 0.80)" in result.stdout
    assert "1 passed, 0 failed" in result.stdout
    saved = list((app_folder / ".eventide" / "eval_history").glob("*.evalset_result.json"))
    assert len(saved) == 1 and str(saved[0]) in result.stdout.replace("\n", "")


def test_a_failing_case_exits_1_and_shows_expected_against_actual(
    app_folder: Path, invoke: Invoke
) -> None:
    """Exit code 1 when a case fails; its turns show what was expected and what happened."""
    result = invoke(
        ["eval", str(app_folder), str(app_folder / "weather_set.evalset.json")], cwd=app_folder
    )
    assert result.exit_code == 1, result.output
    assert "FAIL  lyon  tool_trajectory_avg_score 0.00" in result.stdout
    assert "expected get_weather(city='Paris'); got get_weather(city='Lyon')" in result.stdout
    assert "1 passed, 1 failed" in result.stdout


def test_thresholds_from_options_and_from_test_config(app_folder: Path, invoke: Invoke) -> None:
    """--metric NAME=THRESHOLD picks metrics; test_config.json beside the set gives criteria."""
    only_response = invoke(
        ["eval", "weather", "weather_set", "--metric", "response_match_score=0.5", "--no-save"],
        cwd=app_folder.parent,
    )
    # --metric adds to (or overrides) the default criteria: the trajectory one still fails.
    assert only_response.exit_code == 1
    assert "response_match_score 1.00 (>= 0.50)" in only_response.stdout
    (app_folder / "test_config.json").write_text(
        json.dumps({"criteria": {"response_match_score": 0.9}})
    )
    from_config = invoke(["eval", "weather", "weather_set", "--no-save"], cwd=app_folder.parent)
    assert from_config.exit_code == 0, from_config.output
    assert "tool_trajectory_avg_score" not in from_config.stdout.split("\n", 2)[1]
    assert not (app_folder / ".eventide" / "eval_history").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["weather", "missing_set"], "Eval set 'missing_set' not found"),
        (["weather", "weather_set", "--metric", "safety_v1=0.5"], "unknown metric 'safety_v1'"),
        (["weather", "weather_set", "--metric", "response_match_score"], "write NAME=THRESHOLD"),
        (["weather", "weather_set:ghost"], "has no case 'ghost'"),
        (["weather", "broken"], "broken.evalset.json is not valid JSON"),
        (["no_such_app", "weather_set"], "no_such_app"),
    ],
)
def test_usage_errors_exit_2_with_a_message(
    app_folder: Path, invoke: Invoke, args: list[str], message: str
) -> None:
    """Unknown eval sets, cases and metrics, malformed files and unknown apps: exit code 2
    and a message saying what is wrong; nothing is run or stored."""
    (app_folder / "broken.evalset.json").write_text("{oops")
    result = invoke(["eval", *args], cwd=app_folder.parent)
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert not (app_folder / ".eventide").exists()


def test_the_installed_command_exits_1_on_failure(
    app_folder: Path, cli_env: dict[str, str]
) -> None:
    """The real console script, in a subprocess, returns the eval's exit code."""
    done = subprocess.run(
        [*eventide_command(), "eval", "weather", "weather_set", "--no-save"],
        cwd=app_folder.parent,
        env=cli_env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert "1 passed, 1 failed" in done.stdout
