"""The dev UI's Evals tab in real headless Chromium: a chat becomes an eval case, the set
runs, and the result is shown and stored."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from eventide.server import create_app
from tests.evaluation.weather_app import write_weather_app
from tests.server.harness import ThreadedServer
from tests.web.test_dev_ui_browser import CHROMIUM, LAUNCH_FLAGS, _need_browser


@pytest.fixture
def app_folder(tmp_path: Path) -> Iterator[Path]:
    saved = list(sys.path)
    try:
        yield write_weather_app(tmp_path / "apps")
    finally:
        sys.path[:] = saved


@pytest.mark.slow
def test_evals_tab_creates_a_set_from_the_session_and_runs_it(app_folder: Path) -> None:
    """Chat once, create an eval set, add the session as a case, run it: the tab shows the
    case passing with both scores, lists the stored result, and the set's file is written."""
    _need_browser()
    from playwright.sync_api import expect, sync_playwright

    api = create_app(apps_dir=app_folder.parent, web=True)
    with ThreadedServer(api) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.set_default_timeout(30_000)
            expect.set_options(timeout=30_000)
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(server.url + "/dev-ui/?app=weather")
            expect(page.locator("#chat-input")).to_be_enabled()
            page.locator("#chat-input").fill("what is the weather in Paris?")
            page.locator("#chat-input").press("Enter")
            expect(page.locator(".msg-agent:not(.streaming) .msg-text")).to_have_text(
                "It is sunny in Paris."
            )
            expect(page.locator("#status")).to_have_text("Done")

            page.locator(".tab[data-tab=evals]").click()
            page.locator("#eval-new-id").fill("ui_set")
            page.locator("#eval-create").click()
            expect(page.locator("#eval-set-select")).to_have_value("ui_set")
            page.locator("#eval-case-id").fill("paris_case")
            page.locator("#eval-add-session").click()
            expect(page.locator("#eval-cases")).to_contain_text("Cases (1): paris_case")

            page.locator("#eval-run").click()
            row = page.locator(".eval-row[data-eval-id=paris_case]")
            expect(row.locator(".badge")).to_have_text("PASS")
            expect(row).to_contain_text("tool_trajectory_avg_score: 1.00")
            expect(row).to_contain_text("response_match_score: 1.00")
            expect(page.locator("#eval-summary")).to_have_text("1 of 1 passed")
            expect(page.locator("#eval-history li")).to_have_count(1)
            assert errors == []
        finally:
            browser.close()
    stored = json.loads((app_folder / "ui_set.evalset.json").read_text())
    assert [c["eval_id"] for c in stored["eval_cases"]] == ["paris_case"]
