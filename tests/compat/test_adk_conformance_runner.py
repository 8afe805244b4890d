"""The conformance runner for google-adk's unit tests (``compat/adk_unittests``): its import
map, its static classifier, and one small real run of the kit's tests on Eventide. The full
run (``make adk-conformance``, about 20 minutes on 2 cores) is not part of ``make test``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from adk_unittests import conformance_report, kit_runs
from adk_unittests.import_map import eventide_sources, has_counterpart, is_internal_module
from adk_unittests.static_reading import KitReader

from tests.conftest import IN_CI

REPO = Path(__file__).resolve().parents[2]


def _python(code: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO / "compat")])
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_import_map_sends_google_adk_names_to_eventides() -> None:
    done = _python(
        """
        from adk_unittests.import_map import install, NoEventideCounterpartError
        install()
        import eventide
        from google.adk.agents import LlmAgent, llm_agent
        from google.adk.events.event import Event
        from google.adk.tools.tool_context import ToolContext
        from google.adk.tools import MCPToolset
        from google.adk.errors.already_exists_error import AlreadyExistsError
        from google.adk.models.base_llm_connection import BaseLlmConnection
        from google.genai import types
        assert LlmAgent is eventide.LlmAgent and llm_agent.LlmAgent is eventide.LlmAgent
        assert Event is eventide.Event and ToolContext is eventide.ToolContext
        assert MCPToolset is eventide.McpToolset  # google-adk's spelling of a renamed name
        from eventide.errors import AlreadyExistsError as Ours
        assert AlreadyExistsError is Ours
        assert types.__name__ == "google.genai.types"  # never mapped
        try:
            BaseLlmConnection()
        except NoEventideCounterpartError as exc:
            print("missing:", exc.qualified_name)
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "missing: google.adk.models.base_llm_connection.BaseLlmConnection"


def test_internal_modules_and_counterparts() -> None:
    assert is_internal_module("google.adk.flows.llm_flows.functions")
    assert is_internal_module("google.adk.workflow._workflow")
    assert is_internal_module("google.adk.utils.context_utils")
    assert not is_internal_module("google.adk.agents.llm_agent")
    # A public module's names are looked up in Eventide's module of the same path first.
    assert eventide_sources("google.adk.tools.function_tool")[:2] == [
        "eventide.tools.function_tool",
        "eventide.tools",
    ]
    assert eventide_sources("google.adk.flows.llm_flows.functions") == []
    src = REPO / "src"
    assert has_counterpart("google.adk.agents.invocation_context", src)  # by the table
    assert has_counterpart("google.adk.agents.llm_agent", src)  # same path
    assert not has_counterpart("google.adk.tools.computer_use.base_computer", src)


_KIT_TEST = """
from unittest import mock

from google.adk.agents.llm_agent import LlmAgent
from google.adk.agents.live_request_queue import LiveRequestQueue
from google.adk.flows.llm_flows import functions
from google.adk.tools.bash_tool import ExecuteBashTool


def _agent():
    return LlmAgent(name="a")


def test_public():
    assert _agent().name == "a"


def test_uses_an_internal_module():
    functions.handle()


def test_patches_adk():
    with mock.patch("google.adk.agents.llm_agent.LlmAgent.run_async"):
        pass


def test_reads_a_private_attribute():
    assert _agent()._llm_flow


def test_overrides_a_hook_is_still_public():
    assert _agent()._run_async_impl


def test_live(fake_fixture):
    LiveRequestQueue()


def test_absent_feature():
    ExecuteBashTool()


class TestGrouped:
    def test_method_public(self):
        assert _agent()
"""


def test_the_classifier_reads_each_tests_closure(tmp_path: Path) -> None:
    tests = tmp_path / "tests" / "unittests"
    (tests / "agents").mkdir(parents=True)
    (tests / "conftest.py").write_text(
        "import pytest\n\n@pytest.fixture\ndef fake_fixture():\n    return 1\n"
    )
    (tests / "agents" / "test_sample.py").write_text(_KIT_TEST)
    reader = KitReader(tmp_path, eventide_src=REPO / "src")
    kinds = {
        name: reader.read(f"tests/unittests/agents/test_sample.py::{name}").kind
        for name in (
            "test_public",
            "test_uses_an_internal_module",
            "test_patches_adk",
            "test_reads_a_private_attribute",
            "test_overrides_a_hook_is_still_public",
            "test_live",
            "test_absent_feature",
            "TestGrouped::test_method_public",
        )
    }
    assert kinds == {
        "test_public": "public",
        "test_uses_an_internal_module": "internals",
        "test_patches_adk": "internals",
        "test_reads_a_private_attribute": "internals",
        "test_overrides_a_hook_is_still_public": "public",
        "test_live": "live",
        "test_absent_feature": "absent",
        "TestGrouped::test_method_public": "public",
    }


def test_categories_and_the_table() -> None:
    adk = {
        "tests": {
            "t::a": {"outcome": "passed"},
            "t::b": {"outcome": "passed"},
            "t::c": {"outcome": "failed"},
        }
    }
    eventide = {
        "tests": {
            "t::a": {"outcome": "passed", "reason": ""},
            "t::b": {
                "outcome": "failed",
                "reason": "google.adk.x.Y has no Eventide counterpart (import map: ...)",
            },
        },
        "collection_errors": {},
    }

    class Reader:
        def read(self, nodeid: str) -> object:
            from adk_unittests.static_reading import TestReading

            return TestReading("public", "")

    records = conformance_report.classify(
        dict.fromkeys(adk["tests"], "agents"),
        adk,
        eventide,
        Reader(),  # type: ignore[arg-type]
    )
    assert [r["category"] for r in records] == ["pass", "fails-public", "not-target"]
    table = conformance_report.summary(records)
    assert table["all"]["target"] == 2 and table["all"]["public_passed"] == 1
    assert conformance_report.top_blockers(records) == [("missing google.adk.x.Y", 1)]
    assert "agents" in conformance_report.format_table(table, ["agents"])


@pytest.mark.slow
def test_a_real_run_of_one_kit_file_on_eventide(tmp_path: Path) -> None:
    """google-adk's in-memory memory service tests, run on Eventide through the map."""
    try:
        kit = kit_runs.find_kit()
    except kit_runs.KitNotFoundError as exc:
        if IN_CI:
            pytest.fail(f"{exc}; CI has shared/ beside the repository")
        pytest.skip(str(exc))
    run = kit_runs.run_area(
        "memory",
        "eventide",
        kit=kit,
        python=Path(sys.executable),
        adk_root=None,
        timeout_s=60,
        keyword="test_in_memory_memory_service",
    )
    outcomes = {nodeid.rpartition("::")[2]: r for nodeid, r in run["tests"].items()}
    assert len(outcomes) >= 10, json.dumps(run)[:2000]
    assert outcomes["test_search_memory_simple_match"]["outcome"] == "passed"
    # A kit test that reads a private attribute of the service fails, with its reason kept.
    failed = outcomes["test_add_session_to_memory"]
    assert failed["outcome"] == "failed" and "_session_events" in failed["reason"]
    assert not (kit / "tests" / "unittests" / "memory" / "__pycache__").exists()
