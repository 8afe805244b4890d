"""The dev UI's rough edges (issue 33) in real headless Chromium, in an 800 px wide window:
a failing turn shows its error and keeps the message, the Evals tab prints no "null", the
agent graph zooms, the Traces tab shows each turn's spans, and a session can be exported,
renamed, imported and deleted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from eventide import LlmAgent
from eventide.apps import App
from eventide.server import create_app
from eventide.testing import ScriptedModel
from tests.server.fixture_agents import EchoAgent
from tests.server.harness import ThreadedServer
from tests.web.test_dev_ui_browser import CHROMIUM, LAUNCH_FLAGS, _need_browser

USER = "user"  # the dev UI's default user


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ThreadedServer]:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "agent.py").write_text("root_agent = undefined_name\n")
    apps = {
        "echo": App(name="echo", root_agent=EchoAgent(name="echo_agent")),
        "helper": App(
            name="helper",
            root_agent=LlmAgent(
                name="helper",
                model=ScriptedModel(responses=[f"Answer {i}." for i in range(20)]),
                instruction="Help.",
            ),
        ),
    }
    with ThreadedServer(create_app(apps_dir=tmp_path, apps=apps, web=True)) as running:
        yield running


@pytest.fixture
def page(server: ThreadedServer) -> Iterator[Any]:
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_FLAGS, headless=True)
        try:
            context = browser.new_context(
                viewport={"width": 800, "height": 900}, accept_downloads=True
            )
            opened = context.new_page()
            opened.set_default_timeout(30_000)
            expect.set_options(timeout=30_000)
            errors: list[str] = []
            opened.on("pageerror", lambda exc: errors.append(str(exc)))
            yield opened
            assert errors == []
        finally:
            browser.close()


def _chat(page: Any, text: str) -> None:
    from playwright.sync_api import expect

    expect(page.locator("#chat-input")).to_be_enabled()
    page.locator("#chat-input").fill(text)
    page.locator("#chat-input").press("Enter")


@pytest.mark.slow
def test_a_failing_turn_shows_its_error_and_keeps_the_message(
    server: ThreadedServer, page: Any
) -> None:
    """/run_sse answering 500 (the app fails to load) was a green "Done" and the message
    vanished."""
    from playwright.sync_api import expect

    page.goto(server.url + "/dev-ui/?app=broken")
    _chat(page, "hello there")
    error = page.locator("#chat-log .msg-error")
    expect(error).to_contain_text("HTTP 500")
    expect(error).to_contain_text("App 'broken' failed to load")
    expect(error).to_contain_text("NameError: name 'undefined_name' is not defined")
    expect(page.locator("#chat-log .msg-user.failed")).to_have_text("hello there")
    expect(page.locator("#status")).to_contain_text("The turn failed (500")
    expect(page.locator("#chat-input")).to_have_value("hello there")


@pytest.mark.slow
def test_an_800_px_window_keeps_the_chat_usable(server: ThreadedServer, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(server.url + "/dev-ui/?app=echo")
    _chat(page, "narrow")
    expect(page.locator(".msg-agent .msg-text")).to_contain_text("narrow")
    chat = page.locator(".chat-panel").bounding_box()
    assert chat["width"] >= 700 and chat["height"] >= 400, chat
    form = page.locator("#chat-form").bounding_box()
    assert form["width"] >= 700, form
    assert page.evaluate("document.documentElement.scrollWidth") <= 800


@pytest.mark.slow
def test_the_evals_tab_prints_no_null(server: ThreadedServer, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(server.url + "/dev-ui/?app=echo")
    _chat(page, "hi")
    expect(page.locator(".msg-agent .msg-text")).to_contain_text("hi")
    page.locator(".tab[data-tab=evals]").click()
    expect(page.locator("#eval-new-id")).to_be_visible()
    assert "null" not in page.locator("#inspector").inner_text()
    page.locator(".tab[data-tab=event]").click()
    assert "null" not in page.locator("#inspector .insp-head").inner_text()


@pytest.mark.slow
def test_the_agent_graph_is_readable_and_zooms(server: ThreadedServer, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(server.url + "/dev-ui/?app=helper")
    page.locator(".tab[data-tab=graph]").click()
    label = page.locator("#graph-viewport svg text").first
    expect(label).to_be_visible()
    before = label.bounding_box()["height"]
    assert before >= 9, before  # drawn at its natural size, not shrunk to the panel
    page.locator("#graph-zoom-in").click()
    expect(page.locator("#graph-scale")).to_have_text("125%")
    assert label.bounding_box()["height"] == pytest.approx(before * 1.25, rel=0.05)
    # A turn re-renders the inspector: the graph stays as the user zoomed it.
    _chat(page, "hello")
    expect(page.locator(".msg-agent .msg-text").last).to_contain_text("Answer")
    expect(page.locator("#graph-scale")).to_have_text("125%")
    zoomed = page.locator("#graph-viewport svg text").first
    assert zoomed.bounding_box()["height"] == pytest.approx(before * 1.25, rel=0.05)
    page.locator("#graph-viewport").hover()
    page.mouse.wheel(0, 200)  # wheel down zooms out
    expect(page.locator("#graph-scale")).not_to_have_text("125%")
    page.locator("#graph-reset").click()
    expect(page.locator("#graph-scale")).to_have_text("100%")


@pytest.mark.slow
def test_the_traces_tab_shows_each_turns_spans(server: ThreadedServer, page: Any) -> None:
    from playwright.sync_api import expect

    page.goto(server.url + "/dev-ui/?app=helper")
    _chat(page, "first")
    expect(page.locator("#status")).to_have_text("Done")
    _chat(page, "second")
    expect(page.locator(".msg-agent .msg-text")).to_have_count(2)
    expect(page.locator("#status")).to_have_text("Done")
    page.locator(".tab[data-tab=traces]").click()
    turns = page.locator("#traces .trace-turn")
    expect(turns).to_have_count(2)
    expect(turns.first.locator("summary")).to_contain_text("Turn 1")
    expect(turns.first.locator(".span-row").first).to_be_visible()
    assert turns.first.locator(".span-row").count() >= 2
    expect(turns.first.locator(".span-ms").first).to_contain_text("ms")


@pytest.mark.slow
def test_a_session_is_exported_renamed_imported_and_deleted(
    server: ThreadedServer, page: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    page.goto(server.url + "/dev-ui/?app=echo")
    _chat(page, "keep me")
    expect(page.locator(".msg-agent .msg-text")).to_contain_text("keep me")
    original = page.locator("#session-select").input_value()
    base = f"{server.url}/apps/echo/users/{USER}/sessions"

    with page.expect_download() as download:
        page.locator("#session-export").click()
    saved = tmp_path / "export.json"
    download.value.save_as(saved)
    exported = json.loads(saved.read_text())
    assert exported["id"] == original and len(exported["events"]) == 2

    page.once("dialog", lambda dialog: dialog.accept("renamed-session"))
    page.locator("#session-rename").click()
    expect(page.locator("#session-select")).to_have_value("renamed-session")
    expect(page.locator(".msg-user .msg-text")).to_have_text("keep me")
    assert httpx.get(f"{base}/{original}").status_code == 404
    renamed = httpx.get(f"{base}/renamed-session").json()
    texts = [e["content"]["parts"][0]["text"] for e in renamed["events"]]
    assert texts == ["keep me", "echo: keep me"]

    page.locator("#session-file").set_input_files(str(saved))
    expect(page.locator("#status")).to_contain_text("Imported 2 events into")
    imported = page.locator("#session-select").input_value()
    assert imported not in (original, "renamed-session")
    assert len(httpx.get(f"{base}/{imported}").json()["events"]) == 2

    page.once("dialog", lambda dialog: dialog.accept())
    page.locator("#session-delete").click()
    expect(page.locator("#status")).to_contain_text(f"Deleted session {imported}")
    assert httpx.get(f"{base}/{imported}").status_code == 404
    assert [s["id"] for s in httpx.get(base).json()] == ["renamed-session"]
