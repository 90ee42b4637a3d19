"""The system's Chromium for the dashboard's browser tests (skipped with how to get it, failed
in CI), a page that records every request it made and every error it raised, and screenshots
taken only when asked.

Screenshots: `BENCH_SCREENSHOTS=docs pytest tests/dashboard` writes the pages' pictures into
docs/ (any folder works); without the variable the suite writes nothing into the tree.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

WAIT_MS = 15_000
SCREENSHOTS_ENV = "BENCH_SCREENSHOTS"


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        why = "the dashboard's browser tests need Debian's chromium: apt-get install chromium"
        if os.environ.get("CI") == "true":
            pytest.fail(why + " (.ci/run installs it)")
        pytest.skip(why)
    return found


HOSTED = "bench.test"  # resolved to 127.0.0.1 by the browser: a name that is not loopback


class Watched:
    """A page with every request it made, every response it got, and every console error or
    uncaught exception."""

    def __init__(self, browser, width: int = 1280, height: int = 900) -> None:
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.responses: list = []
        self.errors: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("response", lambda r: self.responses.append(r))
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def bodies(self, since: int = 0) -> list[tuple[str, str]]:
        """(URL, body as text) of every response from the *since*-th on, but redirects, in the
        order they came. Read them before the page navigates: the browser lets go of a
        document's bodies then. (Not for a page holding an event stream open.)"""
        return [(r.url, r.text()) for r in self.responses[since:] if not 300 <= r.status < 400]

    def only_from(self, origin: str) -> None:
        strays = [u for u in self.requests if not u.startswith(origin + "/")]
        assert strays == [], strays
        assert self.errors == []


def screenshot(page, name: str) -> Path | None:
    """The whole page as *name* in the folder `BENCH_SCREENSHOTS` names; None (nothing
    written) when it names none."""
    folder = os.environ.get(SCREENSHOTS_ENV)
    if not folder:
        return None
    path = Path(folder) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), full_page=True)
    return path
