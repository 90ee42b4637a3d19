"""The dashboard's browser (the system's Chromium through Playwright) and a watched page."""

from __future__ import annotations

import pytest

from tests.helpers.browser import HOSTED, Watched, chromium_path


@pytest.fixture(scope="module")
def browser():
    path = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(
            executable_path=path, args=[f"--host-resolver-rules=MAP {HOSTED} 127.0.0.1"]
        )
        yield launched
        launched.close()


@pytest.fixture
def watched(browser, make_gateway):
    """Depends on make_gateway so the page closes (ending its event stream) before gateways
    stop."""
    seen = Watched(browser)
    yield seen
    seen.context.close()


@pytest.fixture
def watch(browser, make_gateway):
    """Open watched pages of a chosen viewport: `watch(width=1400)`."""
    opened: list[Watched] = []

    def open_page(width: int = 1280, height: int = 900) -> Watched:
        seen = Watched(browser, width, height)
        opened.append(seen)
        return seen

    yield open_page
    for seen in opened:
        seen.context.close()
