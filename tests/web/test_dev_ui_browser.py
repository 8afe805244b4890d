"""The dev web UI in real headless Chromium (Debian's ``chromium``), driven by Playwright.

No browser is downloaded: Playwright drives the system Chromium at /usr/bin/chromium.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

from eventide import LlmAgent, ToolContext, types
from eventide.apps import App
from eventide.server import create_app
from eventide.testing import ScriptedModel, tool_call_response
from tests.server.fixture_agents import FailingAgent
from tests.server.harness import ThreadedServer

IN_CI = os.environ.get("CI", "").lower() == "true"
CHROMIUM = os.environ.get("EVENTIDE_CHROMIUM", "/usr/bin/chromium")
SCREENSHOT = "/tmp/eventide-web.png"
LAUNCH_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

# Records the text of the streaming bubble each time it changes, from the page's first
# script on. Mutation records keep the replaced text nodes, so every update is seen even
# when several chunks arrive in one network read.
WATCH_STREAMING = """
window.__streamed = [];
new MutationObserver((records) => {
  for (const r of records) {
    if (!(r.target instanceof Element) || !r.target.closest('.msg.streaming')) continue;
    for (const n of r.addedNodes) if (n.nodeType === Node.TEXT_NODE && n.data) window.__streamed.push(n.data);
  }
}).observe(document, {subtree: true, childList: true});
"""


def _need_browser() -> None:
    reason = None
    if shutil.which(CHROMIUM) is None:
        reason = f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "the playwright package is not installed (pip install playwright)"
    if reason is not None:
        if IN_CI:
            pytest.fail(f"{reason}; CI=true needs the browser test to run")
        pytest.skip(reason)


async def get_weather(city: str, tool_context: ToolContext) -> dict[str, Any]:
    """The weather in a city."""
    tool_context.state["last_city"] = city
    await tool_context.save_artifact(
        "forecast.txt", types.Part(text=f"{city}: sunny, 24°C, light wind")
    )
    return {"city": city, "forecast": "sunny", "high_c": 24}


@pytest.fixture
def dev_ui_server() -> Iterator[ThreadedServer]:
    model = ScriptedModel(
        responses=[
            tool_call_response(("get_weather", {"city": "Lyon"})),
            "It is sunny in Lyon today, with a high of 24°C and a light wind.",
        ],
        stream_chunk_size=6,
    )
    agent = LlmAgent(
        name="forecaster",
        model=model,
        instruction="You are a friendly forecaster. Use get_weather for any city.",
        tools=[get_weather],
    )
    apps = {
        "weather": App(name="weather", root_agent=agent),
        "failing": App(name="failing", root_agent=FailingAgent(name="failing_agent")),
    }
    api = create_app(apps=apps, web=True)
    with ThreadedServer(api) as server:
        yield server


@pytest.mark.slow
def test_chat_streams_the_answer_and_shows_the_timeline(dev_ui_server: ThreadedServer) -> None:
    """Spec, streaming and event kinds: the answer arrives as partial chunks, then the
    timeline shows each committed event with its author, kind and actions; the state view
    highlights the keys an event changed; the model request of an event is shown; the graph
    tab draws the app's agents and tools."""
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            # Generous: the machine may be busy; the waits end as soon as the UI is there.
            page.set_default_timeout(30_000)
            expect.set_options(timeout=30_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))

            def on_console(msg: Any) -> None:
                # The model-request tab asks for every selected event; events that no model
                # call produced answer 404, which the browser logs. Anything else is a bug.
                expected_404 = "/debug/model_request/" in msg.location.get("url", "")
                if msg.type == "error" and not expected_404:
                    errors.append(f"{msg.text} ({msg.location.get('url')})")

            page.on("console", on_console)
            page.add_init_script(WATCH_STREAMING)

            page.goto(dev_ui_server.url + "/")
            expect(page).to_have_url(dev_ui_server.url + "/dev-ui/")
            expect(page.locator("#app-select option")).to_have_count(2)
            page.goto(dev_ui_server.url + "/dev-ui/?app=weather")
            expect(page.locator("#app-select")).to_have_value("weather")
            expect(page.locator("#session-select option")).to_have_count(1)
            expect(page.locator("#chat-input")).to_be_enabled()

            page.locator("#chat-input").fill("What's the weather in Lyon?")
            page.locator("#chat-input").press("Enter")

            answer = "It is sunny in Lyon today, with a high of 24°C and a light wind."
            expect(page.locator(".msg-agent:not(.streaming) .msg-text")).to_have_text(answer)
            expect(page.locator("#status")).to_have_text("Done")
            streamed: list[str] = page.evaluate("window.__streamed")
            assert streamed, "no partial text was ever shown"
            assert all(answer.startswith(chunk) for chunk in streamed)
            assert streamed[0] != answer

            items = page.locator("#timeline .tl-item")
            expect(items).to_have_count(4)
            rows = [
                (
                    item.locator(".tl-author").inner_text(),
                    item.locator(".kind").inner_text(),
                    item.locator(".tl-actions").all_inner_texts(),
                )
                for item in items.all()
            ]
            assert rows == [
                ("user", "text", []),
                ("forecaster", "function call", []),
                (
                    "forecaster",
                    "function response",
                    ["state: last_city\nartifact: forecast.txt v0"],
                ),
                ("forecaster", "text", []),
            ]
            expect(page.locator(".tool-line.call")).to_have_text('→get_weather(city="Lyon")')

            # The state after the tool's event, with the key it changed highlighted.
            items.nth(2).click()
            page.locator(".tab[data-tab=state]").click()
            expect(page.locator(".j-line.changed")).to_contain_text('"last_city": "Lyon"')

            # The request the model got for the final answer: instruction, tool, history.
            items.nth(3).click()
            page.locator(".tab[data-tab=request]").click()
            expect(page.locator(".inspector pre.instruction")).to_contain_text(
                "You are a friendly forecaster."
            )
            expect(page.locator(".inspector .contents > li")).to_have_count(3)

            page.locator(".tab[data-tab=artifacts]").click()
            page.locator(".artifact-list button", has_text="forecast.txt").click()
            expect(page.locator(".artifact-view pre")).to_have_text("Lyon: sunny, 24°C, light wind")

            # The agent graph, drawn by Graphviz on the server: the agent and its tool.
            page.locator(".tab[data-tab=graph]").click()
            graph = page.locator(".agent-graph svg")
            expect(graph.locator("g.node")).to_have_count(2)
            expect(graph).to_contain_text("forecaster")
            expect(graph).to_contain_text("get_weather")

            page.locator(".tab[data-tab=request]").click()
            expect(page.locator(".inspector .contents > li")).to_have_count(3)
            page.screenshot(path=SCREENSHOT, full_page=True)

            # A failing turn: the committed event, then the error frame, shown as an error.
            page.locator("#app-select").select_option("failing")
            expect(page.locator("#chat-input")).to_be_enabled()
            expect(page.locator("#timeline .tl-item")).to_have_count(0)
            page.locator("#chat-input").fill("go")
            page.locator("#chat-input").press("Enter")
            expect(page.locator(".msg-error")).to_contain_text(
                "RuntimeError: the warehouse API is down"
            )
            expect(page.locator("#status")).to_have_text("The turn failed")
            kinds = page.locator("#timeline .tl-item .kind").all_inner_texts()
            assert kinds == ["text", "text", "error"]
            assert errors == []
        finally:
            browser.close()


@pytest.mark.slow
def test_token_dialog_unlocks_a_server_with_auth() -> None:
    """A server started with an auth token: the UI asks for it once, then works."""
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    from tests.server.fixture_agents import EchoAgent

    api = create_app(
        apps={"echo": App(name="echo", root_agent=EchoAgent(name="echo_agent"))},
        auth_token="let-me-in",
        web=True,
    )
    with ThreadedServer(api) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_FLAGS, headless=True)
        try:
            page = browser.new_page()
            page.set_default_timeout(30_000)
            expect.set_options(timeout=30_000)
            page.goto(server.url + "/dev-ui/")
            expect(page.locator("#token-dialog")).to_be_visible()
            expect(page.locator("#status")).to_have_text("Token needed")
            page.locator("#token-input").fill("let-me-in")
            page.locator("#token-save").click()
            expect(page.locator("#app-select")).to_have_value("echo")
            expect(page.locator("#chat-input")).to_be_enabled()
            page.locator("#chat-input").fill("knock knock")
            page.locator("#chat-input").press("Enter")
            expect(page.locator(".msg-agent .msg-text")).to_have_text("echo: knock knock")
            expect(page.locator("#timeline .tl-item")).to_have_count(2)
        finally:
            browser.close()
