"""A small chat page built on the official ``@ag-ui/client`` (bundled with esbuild from npm,
outside the repository), in real headless Chromium driven by Playwright, against
``--ag-ui``: a turn that changes the shared state, a frontend tool the page answers, and a
state change the page makes that the agent then sees."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from fastapi.responses import HTMLResponse, Response

from eventide.server import create_app
from tests.ag_ui.agents import ag_ui_apps
from tests.ag_ui.node_packages import node_folder
from tests.server.harness import ThreadedServer
from tests.web.test_dev_ui_browser import CHROMIUM, LAUNCH_FLAGS, _need_browser

PAGE_SCRIPT = Path(__file__).with_name("js") / "chat_page.js"
PAGE = """<!doctype html><html><body>
<ul id="messages"></ul><p id="streaming"></p><pre id="state"></pre><p id="status">loading</p>
<select id="color"><option>red</option><option selected>teal</option></select>
<select id="theme"><option>light</option><option>solarized</option></select>
<input id="input"><button id="send">Send</button>
<script src="/page.js"></script></body></html>"""


def bundle_page() -> bytes:
    folder = node_folder("ag-ui-page", ["@ag-ui/client@1.0.0", "esbuild@0.28.2"])
    (folder / PAGE_SCRIPT.name).write_text(PAGE_SCRIPT.read_text())
    out = folder / "page.bundle.js"
    result = subprocess.run(
        [
            "node_modules/.bin/esbuild",
            PAGE_SCRIPT.name,
            "--bundle",
            "--format=iife",
            f"--outfile={out.name}",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return out.read_bytes()


@pytest.mark.slow
def test_a_page_on_the_ag_ui_client_chats_answers_a_tool_and_shares_state() -> None:
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    script = bundle_page()
    api = create_app(apps=ag_ui_apps(), ag_ui=True)

    async def page() -> HTMLResponse:
        return HTMLResponse(PAGE)

    async def page_js() -> Response:
        return Response(script, media_type="text/javascript")

    api.add_api_route("/page", page)
    api.add_api_route("/page.js", page_js)
    with ThreadedServer(api) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_FLAGS, headless=True)
        try:
            tab = browser.new_page()
            tab.goto(f"{server.url}/page")
            expect(tab.locator("#status")).to_have_text("idle")

            tab.fill("#input", "mood cheerful")
            tab.click("#send")
            expect(tab.locator("#messages li.assistant").last).to_have_text(
                "set_mood said {'mood': 'cheerful'}"
            )
            expect(tab.locator("#state")).to_have_text('{"mood":"cheerful"}')

            tab.fill("#input", "color please")
            tab.click("#send")
            expect(tab.locator("#messages li.assistant").last).to_have_text(
                "pick_color said {'color': 'teal'}"
            )
            expect(tab.locator("#status")).to_have_text("idle")

            tab.select_option("#theme", "solarized")
            tab.fill("#input", "theme?")
            tab.click("#send")
            expect(tab.locator("#messages li.assistant").last).to_have_text(
                "The page's theme is solarized."
            )
            expect(tab.locator("#state")).to_have_text('{"mood":"cheerful","theme":"solarized"}')
        finally:
            browser.close()
