"""Checks on the built book (`_build/html`) and on the committed notebooks.

The book must be built first: `make test` does it (`make book`); otherwise build
with `jupyter-book build .` or point ATTENTION_COURSE_BOOK_HTML at a built
site's `html/` folder. Checked here:

- every chapter listed in `_toc.yml` was rendered, from its current source, with
  the outputs of its executed cells;
- no page loads anything from outside the machine: every script, style sheet,
  image, font, frame and CSS `url(...)` is local (links to the web are fine);
- math is typeset by the MathJax copied into the build, with its licence;
- (the pages in headless Chromium are checked by tests/browser/test_book_pages.py);
- notebooks in book/, exercises/ and solutions/ are committed without outputs
  and without execution counts (the project's rule: the build and nbval run
  them), with the python3 kernel.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[1]
BOOK_HTML = Path(os.environ.get("ATTENTION_COURSE_BOOK_HTML", ROOT / "_build" / "html")).resolve()
NOTEBOOK_FOLDERS = ("book", "exercises", "solutions")
MATHJAX = "_static/mathjax/tex-svg-full.js"


# -- what the book should contain ------------------------------------------------------


def toc_files(toc_path: Path = ROOT / "_toc.yml") -> list[str]:
    """Every file named in the table of contents, root first, without suffix."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf8"))
    files = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                files.append(entry["file"])
            walk(entry.get("sections"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return [str(Path(f).with_suffix("")) for f in files]


def source_of(docname: str) -> Path:
    """The source file of a TOC entry: a notebook or a MyST page."""
    for suffix in (".ipynb", ".md"):
        path = ROOT / f"{docname}{suffix}"
        if path.exists():
            return path
    raise AssertionError(f"{docname} is in _toc.yml but neither {docname}.ipynb nor {docname}.md exists")


def all_notebooks() -> list[Path]:
    return sorted(
        path
        for folder in NOTEBOOK_FOLDERS
        for path in (ROOT / folder).rglob("*.ipynb")
        if ".ipynb_checkpoints" not in path.parts and "_build" not in path.parts
    )


CHAPTERS = toc_files()


@pytest.fixture(scope="module")
def html_dir() -> Path:
    if not (BOOK_HTML / "index.html").exists():
        pytest.fail(
            f"No built book at {BOOK_HTML}. Build it first: `make book` "
            "(or `.venv/bin/jupyter-book build .`), or set ATTENTION_COURSE_BOOK_HTML "
            "to the html/ folder of a build."
        )
    return BOOK_HTML


def page_of(html_dir: Path, docname: str) -> Path:
    return html_dir / f"{docname}.html"


def site_pages(html_dir: Path) -> list[Path]:
    """Every HTML page of the site (not the theme's template fragments in _static/)."""
    return sorted(
        page for page in html_dir.rglob("*.html")
        if not {"_static", "_sources"} & set(page.relative_to(html_dir).parts)
    )


# -- every chapter rendered ----------------------------------------------------------------


def test_the_toc_lists_the_book_and_its_files_exist():
    assert CHAPTERS[0] == "book/introduction"
    assert len(CHAPTERS) == len(set(CHAPTERS)), "a chapter is listed twice in _toc.yml"
    for docname in CHAPTERS:
        source_of(docname)  # raises with the missing name


@pytest.mark.parametrize("docname", CHAPTERS)
def test_every_chapter_was_rendered_from_its_current_source(html_dir, docname):
    page = page_of(html_dir, docname)
    assert page.exists(), f"{docname} is in _toc.yml but {page} was not built"
    source = source_of(docname)
    assert page.stat().st_mtime >= source.stat().st_mtime, (
        f"{page} is older than {source}: rebuild the book (make book)"
    )
    if source.suffix == ".ipynb":
        notebook = json.loads(source.read_text(encoding="utf8"))
        shown = [
            cell for cell in notebook["cells"]
            if cell["cell_type"] == "code"
            and not {"remove-cell", "remove-output"} & set(cell.get("metadata", {}).get("tags", []))
        ]
        if shown:
            html = page.read_text(encoding="utf8")
            assert 'class="cell_output' in html, f"{page} shows no cell output: was {source} executed?"


def test_the_index_page_leads_to_the_root_chapter(html_dir):
    targets = [url for where, url in loaded_urls((html_dir / "index.html").read_text(encoding="utf8"))
               if where == "<meta refresh>"]
    assert targets == [f"{CHAPTERS[0]}.html"], f"index.html redirects to {targets}, not to the root chapter"
    assert (html_dir / targets[0]).exists()


# -- nothing loaded from outside the machine -------------------------------------------------


#: (tag, attribute) pairs whose URL the browser fetches by itself.
LOADING_ATTRIBUTES = {
    ("script", "src"), ("link", "href"), ("img", "src"), ("img", "srcset"), ("iframe", "src"),
    ("frame", "src"), ("source", "src"), ("source", "srcset"), ("video", "src"), ("video", "poster"),
    ("audio", "src"), ("track", "src"), ("embed", "src"), ("object", "data"), ("input", "src"),
    ("image", "href"), ("image", "xlink:href"), ("use", "href"), ("use", "xlink:href"),
    ("body", "background"),
}
CSS_URL = re.compile(r"""url\(\s*(['"]?)([^'")]+)\1\s*\)|@import\s+(['"])([^'"]+)\3""")
MODULE_IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])((?:https?:)?//[^'"]+)\1""")


def is_external(url: str) -> bool:
    """True for a URL that leaves the machine (http, https, protocol-relative, ws...)."""
    url = url.strip()
    if url.startswith("//"):
        return True
    scheme = urlsplit(url).scheme.lower()
    return scheme not in ("", "file", "data", "blob", "about", "javascript", "mailto")


def _srcset_urls(value: str) -> list[str]:
    return [candidate.split()[0] for candidate in value.split(",") if candidate.strip()]


def css_urls(css: str) -> list[str]:
    return [m.group(2) or m.group(4) for m in CSS_URL.finditer(css)]


class LoadedURLs(HTMLParser):
    """Collects every URL an HTML page makes the browser fetch, with where it came from."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, str]] = []  # (where, url)
        self._in: str | None = None
        self._script_type = ""

    def handle_starttag(self, tag, attrs):
        attrs = {name: value or "" for name, value in attrs}
        for name, value in attrs.items():
            if (tag, name) in LOADING_ATTRIBUTES:
                urls = _srcset_urls(value) if name == "srcset" else [value]
                self.found += [(f"<{tag} {name}>", url) for url in urls]
            if name == "style":
                self.found += [(f"<{tag} style>", url) for url in css_urls(value)]
        if tag == "meta" and attrs.get("http-equiv", "").lower() == "refresh":
            target = attrs.get("content", "").partition("url=")[2]
            if target:
                self.found.append(("<meta refresh>", target))
        if tag in ("style", "script"):
            self._in = tag
            self._script_type = attrs.get("type", "")

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None

    def handle_data(self, data):
        if self._in == "style":
            self.found += [("<style>", url) for url in css_urls(data)]
        elif self._in == "script":
            # Inline modules (the explorers) must not import from the web either.
            self.found += [("<script> import", m.group(2)) for m in MODULE_IMPORT.finditer(data)]


def loaded_urls(html: str) -> list[tuple[str, str]]:
    parser = LoadedURLs()
    parser.feed(html)
    parser.close()
    return parser.found


def test_the_url_scanner_finds_what_a_browser_would_fetch():
    page = """
    <html><head>
    <link rel="stylesheet" href="https://cdn.example.org/a.css">
    <script src="//unpkg.com/thebe/lib/index.js"></script>
    <script type="module">import { x } from "https://esm.sh/anywidget"; await import('http://e.x/y.js');</script>
    <style>@font-face { src: url("https://fonts.gstatic.com/f.woff2") } @import 'http://e.x/s.css';</style>
    </head><body>
    <img srcset="local.png 1x, https://img.example.org/b.png 2x" src="data:image/png;base64,AAAA">
    <iframe src="https://www.youtube.com/embed/x"></iframe>
    <div style="background: url(http://e.x/bg.png)"></div>
    <a href="https://pytorch.org/docs">a link is fine</a>
    <script>const text = "https://not-a-load.example.org";</script>
    <img src="../_images/figure.png"><script src="../_static/mathjax/tex-svg-full.js"></script>
    </body></html>
    """
    external = sorted(url for _, url in loaded_urls(page) if is_external(url))
    assert external == sorted([
        "https://cdn.example.org/a.css", "//unpkg.com/thebe/lib/index.js", "https://esm.sh/anywidget",
        "http://e.x/y.js", "https://fonts.gstatic.com/f.woff2", "http://e.x/s.css",
        "https://img.example.org/b.png", "https://www.youtube.com/embed/x", "http://e.x/bg.png",
    ])


def _local_target(page: Path, url: str, html_dir: Path) -> Path | None:
    path = urlsplit(url).path
    if not path or is_external(url) or url.startswith(("data:", "blob:", "about:", "javascript:", "#")):
        return None
    return (page.parent / path).resolve() if not path.startswith("/") else None


def test_no_page_loads_anything_from_outside_the_machine(html_dir):
    pages = site_pages(html_dir)
    assert len(pages) >= len(CHAPTERS)
    offending, missing, styles = [], [], set()
    for page in pages:
        for where, url in loaded_urls(page.read_text(encoding="utf8")):
            rel = page.relative_to(html_dir)
            if is_external(url):
                offending.append(f"{rel}: {where} {url}")
                continue
            target = _local_target(page, url, html_dir)
            if target is not None and where != "<meta refresh>":
                if not target.exists():
                    missing.append(f"{rel}: {where} {url}")
                elif target.suffix == ".css":
                    styles.add(target)
    # Style sheets load fonts and images in turn (and @import other sheets).
    seen: set[Path] = set()
    while styles:
        sheet = styles.pop()
        seen.add(sheet)
        for url in css_urls(sheet.read_text(encoding="utf8", errors="replace")):
            if is_external(url):
                offending.append(f"{sheet.relative_to(html_dir)}: url() {url}")
            elif (target := _local_target(sheet, url, html_dir)) is not None:
                if target.suffix == ".css" and target.exists() and target not in seen:
                    styles.add(target)
    assert not offending, "pages load from outside the machine:\n" + "\n".join(offending)
    assert not missing, "pages refer to local files that were not built:\n" + "\n".join(missing)


# -- math served locally -----------------------------------------------------------------------


def test_math_is_typeset_by_the_mathjax_copied_into_the_build(html_dir):
    mathjax = html_dir / MATHJAX
    assert mathjax.stat().st_size > 1_000_000, f"{mathjax} is missing or truncated"
    licence = (mathjax.parent / "LICENSE").read_text(encoding="utf8")
    assert "Apache License" in licence
    pages_with_math = 0
    for page in site_pages(html_dir):
        html = page.read_text(encoding="utf8")
        scripts = [url for where, url in loaded_urls(html) if where == "<script src>" and "mathjax" in url.lower()]
        has_math = 'class="math' in html
        if has_math:
            pages_with_math += 1
            assert scripts, f"{page.relative_to(html_dir)} has math but loads no MathJax"
        for url in scripts:
            assert (page.parent / urlsplit(url).path).resolve() == mathjax.resolve(), (
                f"{page.relative_to(html_dir)} loads MathJax from {url}, not from the build's copy"
            )
    assert pages_with_math >= 3, "expected the chapters' equations to be on the pages"


def test_no_page_carries_the_unused_thebe_configuration(html_dir):
    for page in site_pages(html_dir):
        html = page.read_text(encoding="utf8")
        assert "THEBE_JS_URL" not in html and "x-thebe-config" not in html, page


def test_no_page_embeds_widget_state_that_nothing_reads(html_dir):
    pages_with_explorers = 0
    for page in site_pages(html_dir):
        html = page.read_text(encoding="utf8")
        pages_with_explorers += "ac-explorer-host" in html
        assert "application/vnd.jupyter.widget-state+json" not in html, page
    assert pages_with_explorers >= 4, "the chapters with explorers should have been checked"


# -- notebooks are committed without outputs ------------------------------------------------


NOTEBOOKS = all_notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_notebook_is_committed_without_outputs(path):
    notebook = json.loads(path.read_text(encoding="utf8"))
    rel = path.relative_to(ROOT)
    with_outputs = [i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code" and c.get("outputs")]
    counted = [i for i, c in enumerate(notebook["cells"]) if c["cell_type"] == "code" and c.get("execution_count")]
    fix = f"clear them: .venv/bin/jupyter nbconvert --clear-output --inplace {rel}"
    assert not with_outputs, f"{rel}: cells {with_outputs} have outputs; {fix}"
    assert not counted, f"{rel}: cells {counted} have execution counts; {fix}"
    assert "widgets" not in notebook.get("metadata", {}), f"{rel} stores widget state; {fix}"
    assert notebook.get("metadata", {}).get("kernelspec", {}).get("name") == "python3", (
        f"{rel}: the kernel must be python3 (the build and nbval start that kernel)"
    )


def test_the_notebook_rule_is_enforced_on_something():
    folders = {path.relative_to(ROOT).parts[0] for path in NOTEBOOKS}
    assert "book" in folders and len(NOTEBOOKS) >= 4


# -- which models and options the package runs: a chapter prints the package's lists ---------------

SUPPORTED_LISTS = {"book/decoding.ipynb": ("MODEL_TYPES", "ROPE_TYPES"), "book/todays_models.ipynb": ("MODEL_TYPES",)}
"""The chapters that say which model families (`decoder.config_json.MODEL_TYPES`) and RoPE rules
(`core.rope_scaling.ROPE_TYPES`) the decoder runs, and the lists each prints from the package."""

_SUPPORT = re.compile(r"\b(runs?|reads?|loads?|supports?|implements?)\b")
_WHAT = re.compile(r"checkpoint|model_type|famil|architecture")


def typed_support_lists(text: str) -> list[str]:
    """The sentences of `text` (a chapter's prose) that type a list the package keeps: three or more of
    its model types or RoPE rules by their config.json names, or three or more model families named
    in a sentence about what the package runs."""
    from attention_course.core.rope_scaling import ROPE_TYPES
    from attention_course.decoder.config_json import MODEL_TYPES

    families = {re.match(r"[a-z]+", t).group() for t in MODEL_TYPES}  # llama, qwen, gemma, gpt, deepseek, ...
    found = []
    for sentence in re.split(r"(?<=[.:;!?])\s+", text):
        model_types = {t for t in MODEL_TYPES if re.search(rf"(?<![\w.-]){re.escape(t)}(?![\w-])", sentence)}
        rules = {t for t in ROPE_TYPES if t != "default" and re.search(rf"(?<![\w.-]){re.escape(t)}(?![\w-])", sentence)}
        named = {f for f in families if re.search(rf"\b{f}", sentence, re.IGNORECASE)}
        about_support = _SUPPORT.search(sentence) and _WHAT.search(sentence)
        if len(model_types) >= 3 or len(rules) >= 3 or (about_support and len(named) >= 3):
            found.append(sentence)
    return found


def prose_of(path: Path) -> str:
    """The markdown of a chapter: its markdown cells, or the file itself."""
    if path.suffix == ".md":
        return path.read_text(encoding="utf8")
    cells = json.loads(path.read_text(encoding="utf8"))["cells"]
    return "\n\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def test_the_typed_list_check_catches_a_typed_list():
    stale = ("The decoder also reads Hugging Face checkpoints of the Llama architecture (Llama, Mistral and "
             "Qwen2 and their options).")
    assert typed_support_lists(stale) == [stale]
    assert typed_support_lists("Change the rule to yarn, linear and dynamic.")
    assert not typed_support_lists("Qwen3 and Gemma 3 pass each head's query and key through an RMSNorm.")


@pytest.mark.parametrize("docname", CHAPTERS)
def test_no_chapter_types_a_list_of_the_models_or_options_the_package_runs(docname):
    typed = typed_support_lists(prose_of(source_of(docname)))
    assert not typed, f"{docname} types a list the package keeps; print it from the package instead: {typed}"


@pytest.mark.parametrize("chapter", sorted(SUPPORTED_LISTS))
def test_a_chapters_list_of_supported_models_and_options_is_printed_from_the_package(chapter):
    cells = json.loads((ROOT / chapter).read_text(encoding="utf8"))["cells"]
    visible = "\n".join("".join(c["source"]) for c in cells
                        if c["cell_type"] == "code" and "remove-cell" not in c["metadata"].get("tags", []))
    for constant in SUPPORTED_LISTS[chapter]:
        assert re.search(rf"^from attention_course\.[\w.]+ import .*\b{constant}\b", visible, re.MULTILINE), (
            f"{chapter} must import {constant} from the package in a visible cell")
        assert re.search(rf"\.join\({constant}\)", visible), f"{chapter} must print {constant} (\", \".join({constant}))"


# -- the test command runs the notebooks -----------------------------------------------------


def test_pytest_collects_every_chapter_and_solution_and_nothing_else():
    """`pytest` with the defaults of pyproject.toml runs every chapter and solution: check which notebooks they
    collect (`make test` leaves book/ out: the book's build has just run every chapter and fails on any error).

    The Python test modules are left out of this collection (--ignore-glob) only
    to keep it fast; the folders walked, the nbval option and the ignore rules
    are the defaults.
    """
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "--ignore-glob=*.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    collected = {line.split("::")[0] for line in result.stdout.splitlines() if "::" in line}
    notebooks = {path for path in collected if path.endswith(".ipynb")}
    chapters = {f"{name}.ipynb" for name in CHAPTERS if source_of(name).suffix == ".ipynb"}
    solutions = {str(p.relative_to(ROOT)) for p in (ROOT / "solutions").glob("*.ipynb")}
    assert chapters <= notebooks, f"chapters nbval does not run: {sorted(chapters - notebooks)}"
    assert solutions <= notebooks, f"solutions nbval does not run: {sorted(solutions - notebooks)}"
    stray = sorted(p for p in notebooks if not p.startswith(("book/", "solutions/")))
    assert not stray, f"nbval must not run these: {stray}"


def test_the_chapters_run_ahead_of_the_build_are_the_notebooks_it_executes():
    """`make book` runs the chapters side by side into the build's cache first (book/_ext/execute_chapters.py): every
    notebook of the table of contents, in its order, and nothing else."""
    import importlib.util

    import yaml

    spec = importlib.util.spec_from_file_location("execute_chapters", ROOT / "book" / "_ext" / "execute_chapters.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    assert module.chapters(toc) == [ROOT / f"{c}.ipynb" for c in CHAPTERS if source_of(c).suffix == ".ipynb"]
