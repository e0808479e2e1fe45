"""Every page of the built book loads from disk with no console error and no request leaving the machine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def book_pages() -> list[str]:
    """The HTML pages of the built book, relative to its folder (collected when the tests are)."""
    folder = Path(os.environ.get("ATTENTION_COURSE_BOOK_HTML", REPO / "_build" / "html"))
    pages = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.html")
                   if "_static" not in p.parts and "_sources" not in p.parts)
    return pages or ["index.html"]  # no build: one test that fails and says to run `make book`


@pytest.mark.parametrize("page_path", book_pages())
def test_page_loads_offline_without_errors(offline, book_html, page_path, screenshots):
    new_page, problems = offline
    page = new_page()
    url = (book_html / page_path).as_uri()
    page.goto(url, wait_until="load")
    if 'http-equiv="Refresh"' in (book_html / page_path).read_text(encoding="utf-8"):
        page.wait_for_url(lambda new: new != url)  # a redirect (index.html): test where it leads
        page.wait_for_load_state("load")
    # MathJax typesets after the load event and may fetch more of itself: wait until it is done.
    page.evaluate("() => window.MathJax?.startup?.promise?.then(() => true) ?? null")
    assert page.title(), f"{page_path} has no title"
    # Explorers on the page have mounted (their module ran) and none failed to start.
    hosts = page.locator(".ac-explorer-host")
    for i in range(hosts.count()):
        hosts.nth(i).locator(".ac-explorer").wait_for()
    assert "could not start" not in page.locator("body").inner_text()
    if page_path.startswith("book/"):
        page.screenshot(path=screenshots / f"page-{Path(page_path).stem}.png", full_page=False)
    problems.assert_none()
