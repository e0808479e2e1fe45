"""Shared pytest configuration."""

import os
import shutil
from pathlib import Path

import pytest

# Notebooks under tests/ are test data (for example hostile submissions for the
# grader), never tests: keep nbval (--nbval-lax in pyproject.toml) away from them.
collect_ignore_glob = ["*.ipynb"]

#: Debian's Chromium; Playwright drives it (never `playwright install`).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str:
    """The Chromium to drive: $ATTENTION_COURSE_CHROMIUM, else `chromium` on PATH."""
    path = os.environ.get("ATTENTION_COURSE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        pytest.fail(
            f"Chromium not found at {path}: the browser tests need it "
            "(sudo apt-get install chromium, or set ATTENTION_COURSE_CHROMIUM)"
        )
    return path


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright's launch arguments, pointed at the system Chromium."""
    return {**browser_type_launch_args, "executable_path": chromium_path(), "args": CHROMIUM_ARGS}
