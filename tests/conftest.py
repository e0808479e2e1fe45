"""Shared pytest configuration and the fixtures of every browser test.

Browser tests open the built book from disk (file://), as a reader would with
the network off, in Debian's Chromium driven by Playwright (never a browser that
Playwright downloads). Every request that would leave the machine is blocked
and recorded, every console error, page error and failed local request is
recorded too, and a test fails if either list is not empty at its end.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

# Notebooks under tests/ are test data (for example hostile submissions for the
# grader), never tests: keep nbval (--nbval-lax in pyproject.toml) away from them.
collect_ignore_glob = ["*.ipynb"]

REPO = Path(__file__).resolve().parents[1]
SCREENSHOTS = REPO / "test-results" / "screenshots"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")


def chromium_path() -> str:
    """The Chromium to drive: $ATTENTION_COURSE_CHROMIUM, else `chromium` on PATH."""
    path = os.environ.get("ATTENTION_COURSE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(
            f"Chromium not found at {path}: the browser tests need it "
            "(Debian/Ubuntu: sudo apt-get install chromium, or set ATTENTION_COURSE_CHROMIUM)"
        )
    return path


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright's launch arguments, pointed at the system Chromium."""
    return {**browser_type_launch_args, "executable_path": chromium_path(), "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def book_html() -> Path:
    """The built book's HTML folder: $ATTENTION_COURSE_BOOK_HTML or _build/html."""
    folder = Path(os.environ.get("ATTENTION_COURSE_BOOK_HTML", REPO / "_build" / "html")).resolve()
    if not (folder / "index.html").is_file():
        pytest.fail(
            f"the built book is missing ({folder / 'index.html'}): run `make book` first "
            "(or point ATTENTION_COURSE_BOOK_HTML at a build's _build/html)"
        )
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


@contextlib.contextmanager
def offline_context(browser):
    """A fresh context with the network cut off, closed at the end; gives (new_page, problems)."""
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

    def on_console(msg):
        if msg.type == "error":
            problems.console_errors.append(f"{msg.text} ({msg.location.get('url', '')})")

    def on_failed(request):
        if request.url.startswith("file:"):
            problems.console_errors.append(f"failed to load {request.url}: {request.failure}")

    def new_page():
        page = context.new_page()
        page.on("console", on_console)
        page.on("pageerror", lambda error: problems.console_errors.append(f"uncaught: {error}"))
        page.on("requestfailed", on_failed)
        return page

    try:
        yield new_page, problems
    finally:
        context.close()


@pytest.fixture(scope="session")
def offline_contexts():
    """`offline_context`, for a fixture wider than one test (a page that several tests read in turn)."""
    return offline_context


@pytest.fixture
def offline(browser):
    """A fresh context with the network cut off; yields (new_page, problems), checks the problems at the end."""
    with offline_context(browser) as (new_page, problems):
        yield new_page, problems
    problems.assert_none()


@pytest.fixture(scope="session")
def screenshots() -> Path:
    """Where the tests save their screenshots (test-results/screenshots/)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
