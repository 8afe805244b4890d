"""The dev web UI with a graph workflow (issue 31, front ends), in real headless Chromium:
each node's output shows in the chat, and the timeline marks each event with its node and
the route it chose."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from eventide import Event, Workflow
from eventide.apps import App
from eventide.server import create_app
from tests.server.harness import ThreadedServer
from tests.web.test_dev_ui_browser import CHROMIUM, LAUNCH_FLAGS, _need_browser


def classify(node_input: str) -> Iterator[Event]:
    yield Event(route="long" if len(node_input) > 3 else "short", state={"seen": node_input})


def long_reply(node_input: Any, seen: str) -> str:
    return f"a long one: {seen}"


def short_reply(node_input: Any) -> str:
    return "short"


@pytest.fixture
def server() -> Iterator[ThreadedServer]:
    workflow = Workflow(
        name="triage",
        edges=[("START", classify, {"long": long_reply, "short": short_reply})],
    )
    api = create_app(apps={"triage": App(name="triage", root_agent=workflow)}, web=True)
    with ThreadedServer(api) as running:
        yield running


@pytest.mark.slow
def test_node_outputs_and_routes_in_the_chat_and_timeline(server: ThreadedServer) -> None:
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_default_timeout(30_000)
            expect.set_options(timeout=30_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(server.url + "/dev-ui/?app=triage")
            expect(page.locator("#chat-input")).to_be_enabled()
            page.locator("#chat-input").fill("hello")
            page.locator("#chat-input").press("Enter")
            expect(page.locator("#status")).to_have_text("Done")
            expect(page.locator(".msg-output .msg-text")).to_have_text("a long one: hello")
            expect(page.locator(".msg-output .msg-author")).to_have_text("triage@1/long_reply@1")
            items = page.locator("#timeline .tl-item")
            expect(items).to_have_count(3)
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
                ("triage", "state", ["node triage@1/classify@1\nroute → long\nstate: seen"]),
                ("triage", "output", ["node triage@1/long_reply@1"]),
            ]
            assert errors == []
        finally:
            browser.close()
