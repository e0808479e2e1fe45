"""Every page of the built book, opened from disk with the network cut off.

Each page loads with no console error and no request leaving the machine,
typesets every formula with the MathJax served from the build, shows every
image, and starts every explorer it holds; each chapter is saved as a
screenshot, its first screen at 1280 px wide and the whole page at 400 px. axe-core (from
node_modules, injected into the page, never fetched) checks every page: no
violation of impact "serious" or "critical"; the others are listed as
"accessibility note" warnings in the test output and in test-results/accessibility/.
Every figure has alt text that says what it shows, formulas are not Tab stops,
and at 400 px no cell output, table, figure or explorer is wider than the
article's column (code may scroll sideways there, keeping its lines) and no row
of a printed table wraps, while at
1280 px nothing in the article hides in a sideways scroller. Every part of a
page lies in a landmark, and in the theme's dark mode no text is too faint for
its background.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
BLOCKING_IMPACTS = ("serious", "critical")
ACCESSIBILITY = REPO / "test-results" / "accessibility"


def axe_violations(page, rules: list[str] | None = None) -> list[dict]:
    """axe-core's violations on the open page (of `rules` only, if given): id, impact, help and the elements."""
    if not AXE.is_file():
        pytest.fail(f"axe-core is missing ({AXE}): run `npm ci` (or `make env`)")
    if page.evaluate("typeof window.axe") == "undefined":  # a page that several tests read has it already
        page.add_script_tag(path=str(AXE))
    return page.evaluate("""async (rules) => {
        // preload: false: axe would fetch the stylesheets by XHR, which file:// pages refuse (a console error)
        const options = { resultTypes: ["violations"], preload: false };
        if (rules) options.runOnly = rules;
        const result = await axe.run(document, options);
        return result.violations.map((v) => ({
            id: v.id, impact: v.impact, help: v.help,
            targets: v.nodes.map((node) => node.target.join(" ")),
        }));
    }""", rules)


def figure_alt_texts(page) -> list[dict]:
    """The images of the page's content (figures of code cells and markdown images) with their alt text."""
    return page.evaluate("""() => Array.from(document.querySelectorAll("main img, article img"))
        .filter((img) => !img.closest(".ac-explorer"))
        .map((img) => ({ src: img.getAttribute("src"), alt: img.getAttribute("alt") }))""")


def alt_problem(image: dict) -> str | None:
    """Why an image's alt text does not say what it shows, or None if it does."""
    alt = (image["alt"] or "").strip()
    if not alt:
        return "no alt text"
    src_name = Path(image["src"] or "").name
    if alt in (image["src"], src_name) or alt.lower().endswith((".png", ".svg", ".jpg")) or "_images/" in alt:
        return f"the alt text is a file name ({alt!r})"
    if len(alt.split()) < 4:
        return f"the alt text is too short to say what the figure shows ({alt!r})"
    return None


WIDER_THAN_THE_COLUMN = """() => {
    // Cell outputs (and everything in them), tables, figures and explorers that reach past the
    // article's column, or scroll sideways inside it.
    const article = document.querySelector("article.bd-article");
    if (!article) return [];
    const style = getComputedStyle(article), box = article.getBoundingClientRect();
    const left = box.left + parseFloat(style.paddingLeft) - 1, right = box.right - parseFloat(style.paddingRight) + 1;
    const found = [];
    for (const el of article.querySelectorAll(".cell_output, .cell_output *, table, img, figure, .ac-explorer")) {
        if (el.closest("mjx-container, .ac-sr")) continue;
        const r = el.getBoundingClientRect();
        if (!r.width) continue;
        const scrolls = ["auto", "scroll"].includes(getComputedStyle(el).overflowX) && el.scrollWidth > el.clientWidth + 1;
        if (r.left < left || r.right > right || scrolls)
            found.push(`${el.tagName.toLowerCase()}.${el.className} from ${Math.round(r.left)} to ${Math.round(r.right)} px`
                       + ` (column ${Math.round(left)}-${Math.round(right)}, scroll width ${el.scrollWidth}):`
                       + ` ${(el.innerText || el.getAttribute("alt") || "").slice(0, 60)}`);
    }
    return found;
}"""

WRAPPED_TABLE_ROWS = r"""() => {
    // Lines of printed tables (columns lined up by runs of spaces) too long for their output box at
    // the smallest font course.css allows: the box wraps them, and a wrapped table is unreadable.
    const found = [];
    for (const pre of document.querySelectorAll("article.bd-article .cell_output pre")) {
        if (pre.closest(".ac-explorer, .ac-sr") || !pre.getBoundingClientRect().width) continue;
        const style = getComputedStyle(pre);
        const room = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        const lines = pre.textContent.split("\n");
        const probe = document.createElement("span");  // one line, unwrapped, in the box's own font
        probe.style.cssText = "position: absolute; visibility: hidden; white-space: pre; font: inherit;";
        pre.append(probe);
        for (const line of lines) {
            if (!/\S {2,}\S/.test(line) || line.includes("#")) continue;  // a table's row, not code
            probe.textContent = line;
            const width = probe.getBoundingClientRect().width;
            if (width > room + 0.5)
                found.push(`${Math.round(width)} px in ${Math.round(room)} px (${line.length} characters): ${line.trim()}`);
        }
        probe.remove();
    }
    return found;
}"""

HIDDEN_IN_A_SCROLLER = """() => Array.from(document.querySelectorAll("article.bd-article *"))
    .filter((el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX))
    .filter((el) => el.getBoundingClientRect().width > 0 && el.scrollWidth > el.clientWidth + 1)
    .map((el) => `${el.tagName.toLowerCase()}.${el.className}: ${el.scrollWidth} px of content in ${el.clientWidth} px:`
                 + ` ${(el.innerText || "").slice(0, 60)}`)"""


def book_pages() -> list[str]:
    """The HTML pages of the built book, relative to its folder (collected when the tests are)."""
    folder = Path(os.environ.get("ATTENTION_COURSE_BOOK_HTML", REPO / "_build" / "html"))
    pages = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.html")
                   if "_static" not in p.parts and "_sources" not in p.parts)
    return pages or ["index.html"]  # no build: one test that fails and says to run `make book`


@dataclass(frozen=True)
class OpenedPage:
    path: str  # relative to the book's folder
    page: object  # Playwright's Page
    problems: object  # conftest.PageProblems


@pytest.fixture(scope="module", params=book_pages())
def opened_page(request, browser, book_html, offline_contexts):
    """One page of the book opened from disk at 1280 px with the network cut off, as a reader opens it, and settled
    (every formula typeset, every explorer started): the tests at that width read it in turn (the 400 px test opens
    the page at its own width, as a phone does)."""
    page_path = request.param
    with offline_contexts(browser) as (new_page, problems):
        page = new_page()
        open_settled(page, book_html, page_path)
        yield OpenedPage(page_path, page, problems)


def open_settled(page, book_html: Path, page_path: str) -> None:
    """Open a page of the book (where a redirect such as index.html leads) and wait until MathJax, which typesets
    after the load event, has typeset it and every explorer on it has started."""
    url = (book_html / page_path).as_uri()
    page.goto(url, wait_until="load")
    if 'http-equiv="Refresh"' in (book_html / page_path).read_text(encoding="utf-8"):
        page.wait_for_url(lambda new: new != url)  # a redirect (index.html): test where it leads
        page.wait_for_load_state("load")
    if page.locator(".math").count():
        page.wait_for_function("window.MathJax?.startup?.promise !== undefined", timeout=20_000)
        page.evaluate("MathJax.startup.promise")
    hosts = page.locator(".ac-explorer-host")
    for i in range(hosts.count()):
        hosts.nth(i).locator(".ac-explorer").wait_for()


SETTLED = """async () => {
    // The theme eases its colours from one mode to the other: wait until no transition runs, so that what is read
    // is what a reader sees once the page has settled, not a colour half-way.
    const frames = () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
    for (let round = 0; round < 20; round++) {
        await frames();
        const running = document.getAnimations().filter((a) => a instanceof CSSTransition && a.playState !== "finished");
        if (!running.length) return;
        await Promise.all(running.map((a) => a.finished.catch(() => null)));  // a cancelled one rejects
    }
    throw new Error("the page's transitions never settled");
}"""


def choose_mode(page, mode: str) -> None:
    """Put the page in the theme's colour mode `mode` with its colour-mode button, as a reader does (each press goes
    on to the next mode)."""
    button = page.locator(".theme-switch-button:visible").first
    for _ in range(4):
        if page.evaluate("document.documentElement.dataset.mode") == mode:
            # then moves on to read, leaving the button: its tooltip ("Color mode"), which the theme shows half a
            # second after the pointer arrives, is not shown, or fades out and is removed (one fading reads as faint)
            size = page.viewport_size
            page.mouse.move(size["width"] / 2, size["height"] / 2)
            page.evaluate("document.activeElement?.blur()")
            page.wait_for_function("!document.querySelector('.tooltip')")
            page.evaluate(SETTLED)
            return
        button.click()
    raise AssertionError(f"the colour-mode button never reached {mode!r}")


def test_page_works_offline(opened_page, screenshots):
    page, page_path, problems = opened_page.page, opened_page.path, opened_page.problems
    choose_mode(page, "light")
    assert page.title(), f"{page_path} has no title"

    # every formula typeset (the fixture waited for MathJax)
    math_nodes = page.locator(".math").count()
    if math_nodes:
        assert page.locator("mjx-container").count() >= math_nodes, "a formula was left untypeset"
        assert page.locator("mjx-merror").count() == 0, "MathJax could not typeset a formula"

    broken = page.evaluate("Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0).map(i => i.src)")
    assert not broken, f"images that did not load: {broken}"

    # Explorers on the page have mounted (their module ran: the fixture waited for each) and none failed to start.
    assert "could not start" not in page.locator("body").inner_text()

    if page_path.startswith("book/"):
        page.screenshot(path=screenshots / f"page-{Path(page_path).stem}.png")
    hidden = page.evaluate(HIDDEN_IN_A_SCROLLER)
    assert not hidden, f"{page_path}: at 1280 px, content hidden in sideways scrollers: {hidden}"

    bad_alt = {image["src"]: alt_problem(image) for image in figure_alt_texts(page) if alt_problem(image)}
    assert not bad_alt, f"{page_path}: figures without alt text that says what they show: {bad_alt}"
    # Formulas are no Tab stops, except one too wide for the column, which must be scrollable by keyboard.
    focusable_math = page.evaluate("""() => Array.from(document.querySelectorAll("mjx-container"))
        .filter((el) => el.getAttribute("tabindex") !== null && el.tabIndex >= 0)
        .filter((el) => el.scrollWidth <= el.clientWidth + 1).length""")
    assert focusable_math == 0, f"{page_path}: {focusable_math} formulas that fit their column are Tab stops"

    violations = axe_violations(page)
    ACCESSIBILITY.mkdir(parents=True, exist_ok=True)
    report = ACCESSIBILITY / (page_path.replace("/", "_").removesuffix(".html") + ".json")
    report.write_text(json.dumps(violations, indent=1), encoding="utf-8")
    # Every part of the page lies in a landmark (course.js makes the sidebar's book title one), so that
    # a screen reader moving by landmarks reaches all of it.
    outside = [v["targets"] for v in violations if v["id"] == "region"]
    assert not outside, f"{page_path}: content outside every landmark: {outside}"
    blocking = [v for v in violations if v["impact"] in BLOCKING_IMPACTS]
    for v in violations:
        if v not in blocking:
            # a plain UserWarning: pytest-xdist's workers can only send warnings of importable classes,
            # and a test module under tests/browser/ is not importable by name
            warnings.warn(
                f"accessibility note: {page_path}: {v['impact']} {v['id']} on {len(v['targets'])} element(s): "
                f"{v['help']} (first: {v['targets'][0]})", UserWarning, stacklevel=1)
    assert not blocking, f"{page_path}: axe-core violations of impact serious or critical: " + "; ".join(
        f"{v['impact']} {v['id']} ({v['help']}) on {v['targets'][:5]}" for v in blocking)
    problems.assert_none()


@pytest.mark.parametrize("page_path", book_pages())
def test_page_at_400px_has_no_sideways_scroll_and_legible_figures(offline, book_html, page_path, screenshots):
    """A phone-sized screen: the page does not scroll sideways, no output, table, figure or explorer is
    wider than the column, figures keep their text legible."""
    new_page, problems = offline
    page = new_page()
    page.set_viewport_size({"width": 400, "height": 900})
    open_settled(page, book_html, page_path)
    hosts = page.locator(".ac-explorer-host")
    if page_path.startswith("book/"):
        page.screenshot(path=screenshots / f"page-{Path(page_path).stem}-400px.png", full_page=True)

    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 400, f"{page_path} is {width} px wide at a 400 px screen"
    for i in range(hosts.count()):
        box = hosts.nth(i).locator(".ac-explorer")
        sizes = box.evaluate("el => [el.scrollWidth, el.clientWidth, el.getBoundingClientRect().right]")
        assert sizes[0] <= sizes[1] + 1 and sizes[2] <= 401, f"{page_path}: explorer {i} scrolls sideways: {sizes}"
    # A figure's smallest text is about 8 pt at 100 dpi-equivalent: shown at width w of its natural
    # width W (CSS px at 1x), text of 8 px stays >= 8 * w / W. Figures shrunk below 60 % of their
    # natural width would put 8 px text under 5 px: those need a phone layout (or to be stacked).
    shrunk = page.evaluate("""() => Array.from(document.querySelectorAll("main img, article img"))
        .filter((img) => !img.closest(".ac-explorer") && img.naturalWidth > 0)
        .map((img) => {
            // a "retina" figure is drawn at twice its size and shown at its CSS width (style or attribute)
            const natural = parseFloat(img.style.width) || Number(img.getAttribute("width")) || img.naturalWidth;
            return { src: img.getAttribute("src"), shown: img.getBoundingClientRect().width, natural };
        })
        .filter((f) => f.shown < 0.6 * f.natural)""")
    assert not shrunk, f"{page_path}: figures shrunk too far to read at 400 px: {shrunk}"
    wide = page.evaluate(WIDER_THAN_THE_COLUMN)
    assert not wide, f"{page_path}: at 400 px, wider than the column: {wide[:10]}"
    # course.css wraps an output line too long for the column rather than hide it in a scroller: a
    # printed table must be narrow enough (about 55 characters) that none of its rows wraps.
    wrapped = page.evaluate(WRAPPED_TABLE_ROWS)
    assert not wrapped, f"{page_path}: at 400 px, printed table rows that wrap: {wrapped[:10]}"
    problems.assert_none()


def test_explorer_is_a_few_tab_presses_away(offline, book_html):
    """From the top of the worked example: "skip to main content", the explorer link, and the explorer's first control."""
    new_page, problems = offline
    page = new_page()
    page.goto((book_html / "book" / "worked_example.html").as_uri(), wait_until="load")
    page.wait_for_function("window.MathJax?.startup?.promise !== undefined", timeout=20_000)
    page.evaluate("MathJax.startup.promise")
    page.locator(".ac-explorer").first.wait_for()
    page.locator("nav.ac-jump a").first.wait_for()
    presses, on_math = 0, 0
    while presses < 40:
        page.keyboard.press("Tab")
        presses += 1
        where = page.evaluate("""() => {
            const el = document.activeElement;
            return { explorer: !!el.closest(".ac-explorer"), math: !!el.closest("mjx-container"),
                     skip: el.matches("a[href='#main-content'], .skip-link"), jump: !!el.closest("nav.ac-jump") };
        }""")
        on_math += where["math"]
        if where["skip"] or where["jump"]:
            page.keyboard.press("Enter")  # as a keyboard reader would: skip the navigation, follow the link
        if where["explorer"]:
            break
    assert on_math == 0, f"{on_math} Tab presses landed on a formula"
    assert page.evaluate("!!document.activeElement.closest('.ac-explorer')"), "40 Tab presses did not reach the explorer"
    # the skip link, the article header's buttons (download, full screen, ...), the explorer link, the control
    assert presses <= 8, f"the explorer is {presses} Tab presses away"
    label = page.evaluate("""() => { const el = document.activeElement;
        return el.labels?.[0]?.innerText || el.getAttribute("aria-label") || ""; }""")
    assert label.strip(), "the first control of the explorer has no label"
    problems.assert_none()


def test_page_in_dark_mode_keeps_its_text_readable(opened_page):
    """The theme's dark mode (its colour-mode button): axe-core finds no text too faint for its background,
    in the prose, in the outputs (which the theme shows as light cards) or in the explorers."""
    page, page_path = opened_page.page, opened_page.path
    choose_mode(page, "dark")  # and leaves it there: the other test of the page chooses its mode itself
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    faint = [v for v in axe_violations(page, ["color-contrast"]) if v["impact"] in BLOCKING_IMPACTS]
    assert not faint, f"{page_path}: in dark mode, text too faint for its background: " + "; ".join(
        f"{v['help']} on {v['targets'][:5]}" for v in faint)
    opened_page.problems.assert_none()


TAB_STOP = """() => {
    // The focused element, numbered the first time the focus reaches it, and whether it shows a focus
    // indicator (an outline or a box shadow).
    const el = document.activeElement;
    if (!el || el === document.body) return null;
    if (!el.dataset.acTabStop) el.dataset.acTabStop = String(window.__acStops = (window.__acStops || 0) + 1);
    const style = getComputedStyle(el);
    const outline = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0;
    return { n: Number(el.dataset.acTabStop), shown: outline || style.boxShadow !== "none",
             name: `${el.tagName.toLowerCase()}.${el.className}: ${(el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 40)}` };
}"""


@pytest.mark.parametrize("page_path", ["book/todays_models.html", "book/explorers.html"])
def test_keyboard_focus_is_visible_and_goes_round_the_page(offline, book_html, page_path):
    """Tab from the top of a page with explorers: every stop shows where the focus is, and the focus goes
    round the whole page back to the first stop (no control keeps it)."""
    new_page, problems = offline
    page = new_page()
    page.goto((book_html / page_path).as_uri(), wait_until="load")
    hosts = page.locator(".ac-explorer-host")
    for i in range(hosts.count()):
        hosts.nth(i).locator(".ac-explorer").wait_for()
    stops, unseen = [], []
    for _ in range(1000):
        page.keyboard.press("Tab")
        stop = page.evaluate(TAB_STOP)
        if stop is None or (stops and stop["n"] == stops[0]["n"]):
            break  # back at the address bar or at the first stop: round the page
        assert not stops or stop["n"] != stops[-1]["n"], f"{page_path}: Tab keeps the focus on {stop['name']}"
        stops.append(stop)
        if not stop["shown"]:
            unseen.append(stop["name"])
    else:
        pytest.fail(f"{page_path}: 1,000 presses of Tab never went round the page")
    assert len(stops) > 20 and any("ac-" in s["name"] or "input" in s["name"] for s in stops)
    assert not unseen, f"{page_path}: Tab stops that show no focus: {unseen}"
    problems.assert_none()
