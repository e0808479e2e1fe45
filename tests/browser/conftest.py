"""Fixtures for the browser tests: Debian's Chromium, offline pages, collected errors.

The tests open the built book from disk (file://), as a reader would with the
network off. Every request that would leave the machine is blocked and
recorded; every console error, page error and failed local request is
recorded too; a test fails if either list is not empty at its end.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-results" / "screenshots"
CHROMIUM = os.environ.get("ATTENTION_COURSE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Use the system's Chromium (never a downloaded one) with flags for a headless container."""
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.fail(f"Chromium is needed for the browser tests and was not found at {CHROMIUM}; "
                    "install it (Debian/Ubuntu: sudo apt-get install chromium) or set ATTENTION_COURSE_CHROMIUM")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_FLAGS}


@pytest.fixture(scope="session")
def book_html() -> Path:
    """The built book's HTML folder: $ATTENTION_COURSE_BOOK_HTML or _build/html."""
    folder = Path(os.environ.get("ATTENTION_COURSE_BOOK_HTML", REPO / "_build" / "html")).resolve()
    if not (folder / "index.html").is_file():
        pytest.fail(f"the built book is missing ({folder / 'index.html'}): run `make book` first "
                    "(or point ATTENTION_COURSE_BOOK_HTML at a build's _build/html)")
    return folder


@dataclass
class PageProblems:
    """What went wrong while a page was open."""

    external_requests: list[str] = field(default_factory=list)
    """URLs the page tried to load from outside the machine (all blocked)."""
    console_errors: list[str] = field(default_factory=list)
    """console.error messages, uncaught exceptions and local files that failed to load."""

    def assert_none(self) -> None:
        assert not self.external_requests, f"requests leaving the machine: {self.external_requests}"
        assert not self.console_errors, f"console errors: {self.console_errors}"


@pytest.fixture
def offline(browser):
    """A fresh context with the network cut off; yields (new_page, problems), checks the problems at the end."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    problems = PageProblems()

    def route(route):
        url = route.request.url
        if url.startswith(LOCAL_SCHEMES):
            route.continue_()
        else:
            problems.external_requests.append(url)
            route.abort()

    context.route("**/*", route)

    def new_page():
        page = context.new_page()
        page.on("console", lambda msg: msg.type == "error" and problems.console_errors.append(f"{msg.text} ({msg.location.get('url', '')})"))
        page.on("pageerror", lambda error: problems.console_errors.append(f"uncaught: {error}"))
        page.on("requestfailed", lambda request: request.url.startswith("file:")
                and problems.console_errors.append(f"failed to load {request.url}: {request.failure}"))
        return page

    yield new_page, problems
    context.close()
    problems.assert_none()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the tests save their screenshots (test-results/screenshots/)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
