"""google-adk's own dev UI (the built Angular app inside google-adk 2.13.0, found in its
installed package, never copied here) served in front of Eventide's server, driven in
headless Chromium through Playwright. Each step asserts what the screen shows.

google-adk lives in its own venv (tests/adk_env.py); only its static UI folder is used.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import AsyncGenerator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eventide import LlmAgent, ToolContext, types
from eventide.apps import App
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.server import create_app
from eventide.server.adk_ui import find_adk_ui
from tests.adk_env import adk_python
from tests.server.harness import ThreadedServer
from tests.web.test_dev_ui_browser import CHROMIUM, LAUNCH_FLAGS, _need_browser

SLOW_ANSWER = "Let me think about that for a while, one word at a time, slowly."
# Set when the slow answer's stream is closed: the server cancelled its turn.
SLOW_STREAM_CLOSED = threading.Event()


async def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """The weather in a city."""
    tool_context.state["last_city"] = city
    await tool_context.save_artifact("forecast.txt", types.Part(text=f"{city}: sunny"))
    return {"city": city, "sky": "sunny"}


class WeatherModel(BaseLlm):
    """Answers from the conversation: a city asks for get_weather, a tool result becomes
    the answer, "slowly" streams a long answer word by word, anything else is echoed."""

    model: str = "weather-model"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        parts = last.parts or []
        responses = [p.function_response for p in parts if p.function_response]
        text = " ".join(p.text or "" for p in parts)
        files = [p.inline_data for p in parts if p.inline_data]
        if responses:
            city = (responses[0].response or {}).get("city", "?")
            answer = f"It is sunny in {city} today."
        elif "slowly" in text:
            answer = SLOW_ANSWER
        elif files:
            answer = f"Got your file ({files[0].mime_type}, {len(files[0].data or b'')} bytes)."
        elif (city := next((c for c in ("Lyon", "Paris") if c in text), None)) is not None:
            call = types.FunctionCall(name="get_weather", args={"city": city})
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(function_call=call)])
            )
            return
        else:
            answer = f"You said: {text.strip()}"
        if stream:
            words = answer.split(" ")
            for index, word in enumerate(words):
                if answer == SLOW_ANSWER and index == 3:
                    # The rest never comes on its own: the test reloads the page here, and
                    # the server must cancel the turn (closing this stream) when it leaves.
                    try:
                        await asyncio.sleep(3600)
                    finally:
                        SLOW_STREAM_CLOSED.set()
                await asyncio.sleep(0.02)
                final = index == len(words) - 1
                yield LlmResponse(
                    content=types.Content(
                        role="model", parts=[types.Part(text=word if final else f"{word} ")]
                    ),
                    partial=True,
                )
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=answer)]))


@pytest.fixture(scope="module")
def adk_ui() -> Path:
    return find_adk_ui(adk_python())


@pytest.fixture
def adk_ui_server(adk_ui: Path) -> Iterator[ThreadedServer]:
    agent = LlmAgent(
        name="forecaster",
        model=WeatherModel(),
        instruction="You are a friendly forecaster. Use get_weather for any city.",
        tools=[get_weather],
    )
    api = create_app(apps={"weather": App(name="weather", root_agent=agent)}, adk_ui=adk_ui)
    with ThreadedServer(api) as server:
        yield server


def _sessions(url: str) -> list[dict[str, Any]]:
    """The sessions ADK's UI made (its default user is "user"), oldest first."""
    listed = httpx.get(f"{url}/apps/weather/users/user/sessions").json()
    assert isinstance(listed, list)
    return sorted(listed, key=lambda s: s["lastUpdateTime"])


def _side_tab(page: Any, icon: str) -> Any:
    """A tab of the event panel's vertical bar, by its Material icon name."""
    return page.locator(f'.vertical-tabs-sidebar button:has(mat-icon:text-is("{icon}"))')


@pytest.mark.slow
def test_adk_dev_ui_against_eventide(adk_ui_server: ThreadedServer, tmp_path: Path) -> None:
    """ADK's UI unchanged against Eventide: a turn with a tool call, every tab of the event
    panel (info, graph, model request and response from Eventide's traces, raw event), the
    trace view, state, artifacts and their versions, the session list (new, switch,
    rename — a state update through PATCH —, export, import, delete), the update-state
    dialog, uploading a file, streaming, a page reload in the middle of a stream (the turn
    is cancelled, nothing half-done is stored, the reloaded page works), and the evals tab
    (an eval set made from a session, run, its result shown)."""
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    url = adk_ui_server.url
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900}, accept_downloads=True)
            page.set_default_timeout(30_000)
            expect.set_options(timeout=30_000)
            failed: list[str] = []
            # ADK's UI also asks for its agent builder (/dev/.../builder, not served: the
            # builder edits agent code) and a stylesheet it does not ship; any other failed
            # request to Eventide is a bug.
            tolerated = re.compile(r"/dev/apps/[^/]+/builder|/dev-ui/prism-dark\.css")
            page.on(
                "response",
                lambda r: (
                    failed.append(f"{r.status} {r.request.method} {r.url}")
                    if r.status >= 400 and r.url.startswith(url) and not tolerated.search(r.url)
                    else None
                ),
            )
            page.on("pageerror", lambda exc: failed.append(f"page error: {exc}"))
            page.on("dialog", lambda alert: failed.append(f"alert: {alert.message}"))

            # --- a turn with a tool call ---
            page.goto(url + "/dev-ui/?app=weather")
            page.get_by_text("No Thanks").click()  # ADK's own usage-data prompt
            box = page.get_by_placeholder("Type a message...")
            box.fill("Weather in Lyon?")
            box.press("Enter")
            expect(page.get_by_text('get_weather("Lyon")')).to_be_visible()
            expect(page.get_by_text("It is sunny in Lyon today.")).to_be_visible()
            expect(page.get_by_text("State: last_city")).to_be_visible()
            expect(page.get_by_text("Artifact: forecast.txt")).to_be_visible()

            # --- each tab of the event panel, on the function-call event ---
            page.get_by_text('get_weather("Lyon")').click()
            details = page.locator(".event-details-content")
            _side_tab(page, "info").click()
            expect(details).to_contain_text("Function Calls")
            expect(details).to_contain_text("forecaster")
            _side_tab(page, "account_tree").click()  # the agent graph, the event lit up
            expect(details.locator("svg")).to_contain_text("forecaster")
            expect(details.locator("svg")).to_contain_text("get_weather")
            _side_tab(page, "input").click()  # the model request, from Eventide's trace
            expect(details).to_contain_text("You are a friendly forecaster.")
            _side_tab(page, "output").click()  # the model response
            expect(details).to_contain_text("functionCall")
            expect(details).to_contain_text('"Lyon"')
            _side_tab(page, "data_object").click()  # the raw event
            expect(details).to_contain_text("invocationId")

            # --- traces ---
            page.get_by_text("Traces", exact=True).click()
            expect(page.get_by_text("INVOCATION ID", exact=False)).to_be_visible()
            expect(page.get_by_text("chat weather-model").first).to_be_visible()
            expect(page.get_by_text("get_weather", exact=True).first).to_be_visible()
            page.get_by_text("Events", exact=True).click()

            # --- state ---
            page.locator(".tab-label", has_text="State").click()
            expect(page.locator(".segment-key", has_text="last_city")).to_be_visible()
            expect(page.get_by_text('"Lyon"').first).to_be_visible()

            # --- artifacts: a second turn saves version 1; open both versions ---
            box.fill("And in Paris?")
            box.press("Enter")
            expect(page.get_by_text("It is sunny in Paris today.")).to_be_visible()
            page.locator(".tab-label", has_text="Artifacts").click()
            expect(page.get_by_text("forecast.txt").first).to_be_visible()
            expect(page.locator("pre.preview-text")).to_have_text("Paris: sunny")

            # Both versions are listed; opening version 0 shows the first forecast.
            page.locator(".version-selector mat-select").click()
            expect(page.locator("mat-option")).to_have_count(2)
            page.locator("mat-option", has_text="0").click()
            expect(page.locator("pre.preview-text")).to_have_text("Lyon: sunny")

            # --- sessions: new, list, switch back, rename, export, import, delete ---
            first = _sessions(url)[0]["id"]
            page.get_by_role("button", name="New Session").click()
            expect(page.get_by_text("It is sunny in Paris today.")).to_have_count(0)
            box.fill("Hello there")
            box.press("Enter")
            expect(page.get_by_text("You said: Hello there")).to_be_visible()
            assert len(_sessions(url)) == 2
            page.locator('[mattooltip="Select a session"]').click()
            drawer = page.locator("mat-drawer.selector-drawer")
            expect(drawer.get_by_text(first)).to_be_visible()
            drawer.get_by_text(first).click()
            expect(page.get_by_text("It is sunny in Paris today.")).to_be_visible()
            expect(page.get_by_text("You said: Hello there")).to_have_count(0)

            # Rename: ADK's UI keeps the name in the session's state (a PATCH).
            selector = page.locator('[mattooltip="Select a session"]')
            selector.click()
            current = drawer.locator(".session-selector-current-id")
            current.get_by_role("button", name="Edit").click()
            name = current.locator("input.inline-edit-input")
            name.fill("Lyon trip")
            name.press("Enter")
            expect(selector).to_contain_text("Lyon trip")
            stored = httpx.get(f"{url}/apps/weather/users/user/sessions/{first}").json()
            assert stored["state"]["__session_metadata__"]["displayName"] == "Lyon trip"

            # Export, then import the file again: a third session with the same events.
            with page.expect_download() as download:
                drawer.get_by_role("button", name="Export").click()
            exported_file = tmp_path / "exported.json"
            download.value.save_as(exported_file)
            exported = json.loads(exported_file.read_text())
            # Two turns of four events, then the rename's state change.
            assert (exported["id"], len(exported["events"])) == (first, 9)
            assert "__session_metadata__" in exported["events"][-1]["actions"]["stateDelta"]
            with page.expect_file_chooser() as chooser:
                drawer.get_by_role("button", name="Import").click()
            chooser.value.set_files(str(exported_file))
            expect(page.get_by_text("Session imported successfully")).to_be_visible()
            sessions = _sessions(url)
            assert len(sessions) == 3
            imported = httpx.get(
                f"{url}/apps/weather/users/user/sessions/{sessions[-1]['id']}"
            ).json()
            assert [e.get("content") for e in imported["events"]] == [
                e.get("content") for e in exported["events"]
            ]
            expect(page.get_by_text("It is sunny in Paris today.")).to_be_visible()

            # An export holds no artifact bytes (nor does ADK's), so the copy's artifact
            # links answer 404, as they do against `adk web`.
            copy_artifacts = f"/sessions/{imported['id']}/artifacts/"
            assert all(f.startswith("404 GET") for f in failed if copy_artifacts in f)
            failed[:] = [f for f in failed if copy_artifacts not in f]

            # Delete the imported session.
            selector.click()
            drawer.get_by_role("button", name="Delete").first.click()
            page.locator("mat-dialog-container").get_by_role("button", name="Delete").click()
            expect(drawer.get_by_text(imported["id"])).to_have_count(0)
            assert [s["id"] for s in _sessions(url)] == [s["id"] for s in sessions[:2]]

            # --- the state after those changes, on the State tab ---
            page.locator(".tab-label", has_text="State").click()
            expect(page.locator(".segment-key", has_text="displayName")).to_be_visible()
            for snack in page.locator("mat-snack-bar-container button").all():
                snack.click()
            expect(page.locator("mat-snack-bar-container")).to_have_count(0)

            # --- update state: edit the session's state as JSON in ADK's dialog; the UI
            # sends it with the next message (stateDelta), Eventide commits it with that turn ---
            page.locator("button.input-prefix-menu-btn").click()
            page.get_by_role("menuitem").filter(has_text="Update state").click()
            dialog = page.locator("mat-dialog-container")
            expect(dialog.get_by_role("heading", name="Update state")).to_be_visible()
            expect(dialog).to_contain_text('"displayName": "Lyon trip"')  # the current state
            editor = dialog.locator(".cm-content")
            editor.click()
            page.keyboard.press("Control+A")
            page.keyboard.insert_text(json.dumps({**stored["state"], "units": "celsius"}))
            # ADK's JSON editor (svelte-jsoneditor) takes typed text in when it loses focus
            # (or after a pause); Save reads what it has taken in.
            editor.blur()
            dialog.get_by_role("button", name="Save").click()
            # The UI takes the edited state once the dialog has closed (its animation done).
            expect(dialog).to_have_count(0)
            expect(page.get_by_text("Updated session state")).to_be_visible()
            box.fill("Hello again")
            box.press("Enter")
            expect(page.get_by_text("You said: Hello again")).to_be_visible()
            expect(page.get_by_text("Updated session state")).to_have_count(0)
            updated = httpx.get(f"{url}/apps/weather/users/user/sessions/{first}").json()
            assert updated["state"].get("units") == "celsius", failed
            assert updated["state"]["__session_metadata__"]["displayName"] == "Lyon trip"
            turn = [e for e in updated["events"] if e["author"] == "user"][-1]
            assert turn["content"]["parts"] == [{"text": "Hello again"}]
            assert turn["actions"]["stateDelta"]["units"] == "celsius"
            page.locator(".tab-label", has_text="State").click()
            expect(page.locator(".segment-key", has_text="units")).to_be_visible()
            expect(page.get_by_text('"celsius"').first).to_be_visible()

            # --- upload a file with a message ---
            upload = tmp_path / "notes.txt"
            upload.write_text("pack an umbrella")
            page.locator("button.input-prefix-menu-btn").click()
            with page.expect_file_chooser() as chooser:
                page.get_by_role("menuitem").filter(has_text=re.compile("file", re.I)).click()
            chooser.value.set_files(str(upload))
            expect(page.get_by_text("notes.txt").first).to_be_visible()
            box.fill("Here is my file")
            box.press("Enter")
            expect(page.get_by_text("Got your file (text/plain, 16 bytes).")).to_be_visible()
            events = httpx.get(f"{url}/apps/weather/users/user/sessions/{first}").json()["events"]
            sent = [p for p in events[-2]["content"]["parts"] if "inlineData" in p]
            assert sent[0]["inlineData"]["mimeType"] == "text/plain"

            # --- streaming, and a page reload in the middle of a stream ---
            page.get_by_label("More options").click()
            page.get_by_role("menuitem").filter(has_text="Streaming").click()
            page.keyboard.press("Escape")
            SLOW_STREAM_CLOSED.clear()
            box.fill("Answer slowly please")
            box.press("Enter")
            # The first words are on screen while the rest is still being generated.
            expect(page.get_by_text(re.compile(r"^Let me think"))).to_be_visible()
            page.reload()
            expect(page.get_by_text("Answer slowly please")).to_be_visible()
            expect(page.get_by_text("Here is my file")).to_be_visible()
            # The turn was cancelled when the page left: its stream was closed, its answer
            # was never committed, and google-adk's INVOCATION_ABORTED marker seals it.
            assert SLOW_STREAM_CLOSED.wait(30)
            expect(page.get_by_text(re.compile(r"^Let me think"))).to_have_count(0)
            # (the marker is committed right after the stream closes: wait for it)
            for _ in range(100):
                events = httpx.get(f"{url}/apps/weather/users/user/sessions/{first}").json()
                events = events["events"]
                if events[-1].get("errorCode"):
                    break
                time.sleep(0.1)
            assert events[-2]["content"]["parts"][0]["text"] == "Answer slowly please"
            assert events[-1]["errorCode"] == "INVOCATION_ABORTED"
            assert "content" not in events[-1]
            # The reloaded page works: a streamed turn with a tool call.
            box.fill("Weather in Lyon?")
            box.press("Enter")
            expect(page.get_by_text("It is sunny in Lyon today.").last).to_be_visible()

            # --- evals: a new session becomes the case of a new eval set, run in the UI ---
            page.get_by_role("button", name="New Session").click()
            box.fill("Weather in Lyon?")
            box.press("Enter")
            expect(page.get_by_text("It is sunny in Lyon today.")).to_be_visible()
            # The UI reloads its eval sets when the session changes: let that finish first, or
            # its (empty) answer may land after the one that follows the creation below.
            page.wait_for_load_state("networkidle")
            page.locator(".tab-label", has_text="Evals").click()
            evals = page.locator("app-eval-tab")
            evals.get_by_text("Create Evaluation Set").click()
            dialog = page.locator("mat-dialog-container")
            dialog.locator("input").fill("trip_checks")
            with page.expect_response(
                lambda r: r.request.method == "POST" and r.url.endswith("/eval-sets")
            ) as posted:
                dialog.get_by_role("button", name="Create").click()
            response = posted.value
            assert response.ok, f"creating the eval set: HTTP {response.status} {response.text()}"
            evals.get_by_text("trip_checks").click()
            evals.get_by_text("From Current Session").click()
            dialog.locator("input").fill("lyon_case")
            dialog.get_by_role("button", name="Create").click()
            expect(evals.get_by_text("lyon_case")).to_be_visible()
            evals.get_by_text("Run All").click()
            expect(dialog.get_by_text("Tool Trajectory")).to_be_visible()  # Eventide's metrics
            expect(dialog.get_by_text("Response Match")).to_be_visible()
            dialog.get_by_role("button", name="Run").click()
            # The run's summary, then the case's result with the replayed conversation.
            expect(evals.get_by_text("1 PASS")).to_be_visible()
            expect(evals.get_by_text("lyon_case")).to_be_visible()
            expect(
                page.get_by_text(re.compile(r"EVAL RESULT: .* > LYON_CASE", re.I))
            ).to_be_visible()
            expect(page.get_by_text("It is sunny in Lyon today.")).to_be_visible()
            expect(page.get_by_text("PASS", exact=True)).to_have_count(3)
            results = httpx.get(f"{url}/dev/apps/weather/eval_results").json()
            (result,) = [
                httpx.get(f"{url}/dev/apps/weather/eval_results/{r}").json() for r in results
            ]
            (case,) = result["evalCaseResults"]
            assert (case["evalId"], case["finalEvalStatus"]) == ("lyon_case", 1)
            assert {m["metricName"]: m["score"] for m in case["overallEvalMetricResults"]} == {
                "tool_trajectory_avg_score": 1.0,
                "response_match_score": 1.0,
            }

            assert failed == []
        finally:
            browser.close()
