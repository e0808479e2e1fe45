"""Every page of the built book, opened from disk with the network cut off.

Each page loads with no console error and no request leaving the machine,
typesets every formula with the MathJax served from the build, shows every
image, and starts every explorer it holds; the first screen of each chapter is
saved as a screenshot.
"""

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
def test_page_works_offline(offline, book_html, page_path, screenshots):
    new_page, problems = offline
    page = new_page()
    url = (book_html / page_path).as_uri()
    page.goto(url, wait_until="load")
    if 'http-equiv="Refresh"' in (book_html / page_path).read_text(encoding="utf-8"):
        page.wait_for_url(lambda new: new != url)  # a redirect (index.html): test where it leads
        page.wait_for_load_state("load")
    assert page.title(), f"{page_path} has no title"

    # MathJax typesets after the load event: wait for it, then every formula must be typeset.
    math_nodes = page.locator(".math").count()
    if math_nodes:
        page.wait_for_function("window.MathJax?.startup?.promise !== undefined", timeout=20_000)
        page.evaluate("MathJax.startup.promise")
        assert page.locator("mjx-container").count() >= math_nodes, "a formula was left untypeset"
        assert page.locator("mjx-merror").count() == 0, "MathJax could not typeset a formula"

    broken = page.evaluate("Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
    assert not broken, f"images that did not load: {broken}"

    # Explorers on the page have mounted (their module ran) and none failed to start.
    hosts = page.locator(".ac-explorer-host")
    for i in range(hosts.count()):
        hosts.nth(i).locator(".ac-explorer").wait_for()
    assert "could not start" not in page.locator("body").inner_text()

    if page_path.startswith("book/"):
        page.screenshot(path=screenshots / f"page-{Path(page_path).stem}.png")
    problems.assert_none()
