"""The A2A TCK (shared/third_party/a2a-tck) against ``eventide api-server --a2a``.

The server serves ``tests/a2a/apps`` (the reference app, which behaves as the TCK's reference
agent does: tasks stay working for a while) on a fresh in-memory database, and the TCK runs
from a temporary copy in its own venv (:mod:`tests.a2a.tck_env`), as
``shared/third_party/README.md`` describes.

Gates:

- mandatory JSON-RPC tests: every test passes but the ones that fail on every server,
  a2a-sdk 1.3.0's own included (measured there: 71 passed, 5 failed). Of those five, three
  (ListTasks reading ``pageSize`` differently from a2a-sdk) pass here; the two left are
  listed in :data:`FAIL_ON_EVERY_SERVER` with their reason;
- the capability tests of what the card declares (streaming): all pass or skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.a2a.tck_env import (
    MANDATORY_MARKERS,
    REPO,
    api_server,
    run_tck,
    tck_copy,
    tck_python,
    tck_source,
)

pytestmark = pytest.mark.slow

FAIL_ON_EVERY_SERVER = {
    # The TCK's own bug: a TypeError inside the test, whatever the server answers.
    "test_push_notification_not_supported_error_32003_enhanced": "TypeError in the TCK's test",
    # An unknown status filter must be -32602, but a2a-sdk's dispatcher parses params with
    # ignore_unknown_fields, which turns an unknown enum value into 0 (no filter) before
    # any handler sees it; every a2a-sdk based server answers the list.
    "test_invalid_status_error": "a2a-sdk maps an unknown status to no filter",
}
A2A_SDK_PASSED = 71  # a2a-sdk 1.3.0's own server, same TCK and setting


@pytest.fixture
def reference_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    monkeypatch.setenv("EVENTIDE_TCK_WORK_SECONDS", "10")
    apps = REPO / "tests" / "a2a" / "apps"
    with api_server(apps, tmp_path / "server.log", "--a2a-send-wait", "0.1") as url:
        yield url + "/a2a/reference_agent"


def test_the_tck_passes_against_the_api_server(reference_server: str) -> None:
    source = tck_source()
    python = tck_python(source)
    tck = tck_copy(source)

    mandatory = run_tck(python, tck, reference_server, "tests/mandatory", *MANDATORY_MARKERS)
    failed = {name for name, outcome in mandatory.items() if outcome == "failed"}
    passed = [name for name, outcome in mandatory.items() if outcome == "passed"]
    assert failed <= set(FAIL_ON_EVERY_SERVER), sorted(failed - set(FAIL_ON_EVERY_SERVER))
    assert len(passed) >= A2A_SDK_PASSED, (len(passed), sorted(failed))

    # The card declares streaming: its capability tests must pass (or skip on their own
    # preconditions), never fail.
    streaming = run_tck(
        python, tck, reference_server, "tests/optional/capabilities/test_streaming_methods.py"
    )
    assert "failed" not in streaming.values(), streaming
    assert streaming.get("test_message_stream_basic") == "passed"
    assert streaming.get("test_tasks_subscribe_nonexistent") == "passed"
