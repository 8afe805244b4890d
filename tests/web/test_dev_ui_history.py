"""Rewind and fork in the dev web UI, in real headless Chromium."""

from __future__ import annotations

import pytest

from eventide import App, LlmAgent
from eventide.server import create_app
from eventide.testing import FunctionModel
from tests.history.helpers import answer, remember
from tests.server.harness import ThreadedServer
from tests.web.test_dev_ui_browser import CHROMIUM, LAUNCH_FLAGS, _need_browser


@pytest.mark.slow
def test_rewind_then_fork_from_the_event_inspector() -> None:
    """Rule: "Rewind to before this turn" appends the rewind event, dims the rewound events
    in the timeline and the next answer ignores them; "Fork up to this event" opens a new
    session holding the events up to the selected one."""
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    agent = LlmAgent(name="keeper", model=FunctionModel(function=answer), tools=[remember])
    api = create_app(apps={"keeper": App(name="keeper", root_agent=agent)}, web=True)
    with ThreadedServer(api) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_default_timeout(30_000)
            expect.set_options(timeout=30_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(server.url + "/dev-ui/?app=keeper")
            expect(page.locator("#chat-input")).to_be_enabled()
            for text in ("one", "two"):
                page.locator("#chat-input").fill(text)
                page.locator("#chat-input").press("Enter")
                expect(page.locator("#status")).to_have_text("Done")
            items = page.locator("#timeline .tl-item")
            expect(items).to_have_count(8)

            items.nth(4).click()  # the user's "two"
            page.locator(".tab[data-tab=event]").click()
            page.locator("#rewind-button").click()

            expect(page.locator("#status")).to_have_text("Rewound")
            expect(items).to_have_count(9)
            expect(page.locator("#timeline .tl-item.rewound")).to_have_count(5)
            page.locator("#chat-input").fill("three")
            page.locator("#chat-input").press("Enter")
            expect(page.locator("#status")).to_have_text("Done")
            expect(page.locator(".msg-agent .msg-text").last).to_have_text("ok three")
            items.last.click()
            page.locator(".tab[data-tab=request]").click()
            # "one", its call and answer, "ok one", "three", its call, its answer.
            expect(page.locator(".inspector .contents > li")).to_have_count(7)

            first_session = page.locator("#session-select").input_value()
            items.nth(3).click()  # "ok one"
            page.locator(".tab[data-tab=event]").click()
            page.locator("#fork-button").click()
            expect(page.locator("#status")).to_have_text("Forked into a new session")
            expect(page.locator("#session-select option")).to_have_count(2)
            assert page.locator("#session-select").input_value() != first_session
            expect(items).to_have_count(4)
            assert errors == []
        finally:
            browser.close()
