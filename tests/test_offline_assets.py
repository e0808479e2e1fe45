"""Tests for the book's Sphinx extension book/_ext/offline_assets.py, on tiny Sphinx projects."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from sphinx.application import Sphinx
from sphinx.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
EXT = ROOT / "book" / "_ext"
MATHJAX_PACKAGE = ROOT / "node_modules" / "mathjax"

needs_mathjax = pytest.mark.skipif(
    not (MATHJAX_PACKAGE / "es5" / "tex-svg-full.js").exists(),
    reason="MathJax is not installed: run `npm ci` (make book does)",
)


def make_project(tmp_path: Path, conf: str, pages: dict[str, str]) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(f"import sys\nsys.path.insert(0, {str(EXT)!r})\n{conf}\n", encoding="utf8")
    for name, text in pages.items():
        (src / name).write_text(text, encoding="utf8")
    return src


def build(src: Path, out: Path) -> str:
    warnings = io.StringIO()
    app = Sphinx(str(src), str(src), str(out), str(out / ".doctrees"), "html",
                 status=None, warning=warnings, freshenv=True)
    app.build()
    return warnings.getvalue()


MATH_PAGE = "Title\n=====\n\nThe scale :math:`1/\\sqrt{d_k}`.\n"
PLAIN_PAGE = "Plain\n=====\n\nNo math here.\n"


@needs_mathjax
def test_mathjax_is_copied_with_its_licence_and_served_locally(tmp_path):
    conf = f"extensions = ['offline_assets']\noffline_mathjax_package = {str(MATHJAX_PACKAGE)!r}"
    src = make_project(tmp_path, conf, {"index.rst": MATH_PAGE + "\n.. toctree::\n\n   plain\n", "plain.rst": PLAIN_PAGE})
    out = tmp_path / "out"
    build(src, out)
    bundle = out / "_static" / "mathjax" / "tex-svg-full.js"
    assert bundle.read_bytes() == (MATHJAX_PACKAGE / "es5" / "tex-svg-full.js").read_bytes()
    assert "Apache License" in (bundle.parent / "LICENSE").read_text(encoding="utf8")
    html = (out / "index.html").read_text(encoding="utf8")
    assert 'src="_static/mathjax/tex-svg-full.js"' in html
    assert "cdn.jsdelivr.net" not in html
    assert "mathjax" not in (out / "plain.html").read_text(encoding="utf8")  # no math, no MathJax
    assert 'href="_static/course.css' in html
    assert 'src="_static/course.js' in html


@needs_mathjax
def test_a_title_with_math_puts_mathjax_on_every_page(tmp_path):
    conf = f"extensions = ['offline_assets']\noffline_mathjax_package = {str(MATHJAX_PACKAGE)!r}"
    titled = "Why :math:`\\sqrt{d_k}`\n======================\n\nText.\n"
    src = make_project(tmp_path, conf, {"index.rst": PLAIN_PAGE + "\n.. toctree::\n\n   titled\n", "titled.rst": titled})
    out = tmp_path / "out"
    build(src, out)
    assert "_static/mathjax/tex-svg-full.js" in (out / "index.html").read_text(encoding="utf8")


@needs_mathjax
def test_the_chtml_bundle_brings_its_fonts_and_extensions(tmp_path):
    conf = (f"extensions = ['offline_assets']\noffline_mathjax_package = {str(MATHJAX_PACKAGE)!r}\n"
            "offline_mathjax_bundle = 'tex-chtml.js'")
    src = make_project(tmp_path, conf, {"index.rst": MATH_PAGE})
    out = tmp_path / "out"
    build(src, out)
    copied = out / "_static" / "mathjax"
    assert (copied / "tex-chtml.js").exists()
    assert (copied / "output" / "chtml" / "fonts" / "woff-v2" / "MathJax_Main-Regular.woff").exists()
    assert (copied / "input" / "tex" / "extensions" / "cancel.js").exists()
    assert not (copied / "tex-svg-full.js").exists()


def test_missing_mathjax_fails_at_once_and_names_npm_ci(tmp_path):
    conf = f"extensions = ['offline_assets']\noffline_mathjax_package = {str(tmp_path / 'nowhere')!r}"
    src = make_project(tmp_path, conf, {"index.rst": MATH_PAGE})
    with pytest.raises(ConfigError, match=r"MathJax is missing .*es5/tex-svg-full\.js.*run `npm ci`"):
        build(src, tmp_path / "out")


def test_an_unknown_bundle_is_refused(tmp_path):
    conf = "extensions = ['offline_assets']\noffline_mathjax_bundle = 'tex-mml-chtml.js'"
    src = make_project(tmp_path, conf, {"index.rst": MATH_PAGE})
    with pytest.raises(ConfigError, match="offline_mathjax_bundle must be one of"):
        build(src, tmp_path / "out")


@needs_mathjax
def test_unused_thebe_is_unhooked(tmp_path):
    pytest.importorskip("sphinx_thebe")
    conf = (f"extensions = ['sphinx_thebe', 'offline_assets']\n"
            f"offline_mathjax_package = {str(MATHJAX_PACKAGE)!r}")
    src = make_project(tmp_path, conf, {"index.rst": PLAIN_PAGE})
    out = tmp_path / "out"
    build(src, out)
    html = (out / "index.html").read_text(encoding="utf8")
    assert "THEBE_JS_URL" not in html and "thebe" not in html.lower()


@needs_mathjax
def test_the_index_redirect_follows_the_root_but_never_replaces_a_page(tmp_path):
    conf = (f"extensions = ['offline_assets']\noffline_mathjax_package = {str(MATHJAX_PACKAGE)!r}\n"
            "root_doc = 'intro'")
    src = make_project(tmp_path, conf, {"intro.rst": PLAIN_PAGE})
    out = tmp_path / "out"
    out.mkdir()
    (out / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=old/root.html" />\n', encoding="utf8")
    build(src, out)
    assert (out / "index.html").read_text(encoding="utf8") == '<meta http-equiv="Refresh" content="0; url=intro.html" />\n'

    (out / "index.html").write_text("<html>a real page</html>", encoding="utf8")
    build(src, out)
    assert (out / "index.html").read_text(encoding="utf8") == "<html>a real page</html>"


def test_the_extension_module_is_importable_from_the_book_folder():
    sys.path.insert(0, str(EXT))
    try:
        import offline_assets
    finally:
        sys.path.remove(str(EXT))
    assert offline_assets.BUNDLE_FILES["tex-svg-full.js"] == ["tex-svg-full.js"]


@needs_mathjax
def test_pages_of_removed_sources_are_deleted(tmp_path):
    src = make_project(tmp_path, "extensions = ['offline_assets']\noffline_mathjax_bundle = 'tex-svg-full.js'\n"
                       f"offline_mathjax_package = {str(MATHJAX_PACKAGE)!r}",
                       {"index.rst": PLAIN_PAGE + "\n.. toctree::\n\n   old\n", "old.rst": "Old\n===\n"})
    out = tmp_path / "out"
    build(src, out)
    assert (out / "old.html").exists()
    (src / "old.rst").unlink()
    (src / "index.rst").write_text(PLAIN_PAGE, encoding="utf8")
    build(src, out)
    assert not (out / "old.html").exists()
    assert {p.name for p in out.glob("*.html")} >= {"index.html", "genindex.html", "search.html"}


@needs_mathjax
def test_figures_no_page_shows_are_deleted(tmp_path):
    conf = ("extensions = ['offline_assets']\n"
            f"offline_mathjax_package = {str(MATHJAX_PACKAGE)!r}")
    src = make_project(tmp_path, conf, {"index.rst": PLAIN_PAGE + "\n.. image:: first.png\n"})
    png = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                        "1f15c4890000000d49444154789c6360000002000100ffff03000006000557bfabd40000000049454e44ae426082")
    (src / "first.png").write_bytes(png)
    (src / "second.png").write_bytes(png)
    out = tmp_path / "out"
    build(src, out)
    assert (out / "_images" / "first.png").is_file()
    (src / "index.rst").write_text(PLAIN_PAGE + "\n.. image:: second.png\n", encoding="utf8")
    build(src, out)
    assert sorted(p.name for p in (out / "_images").iterdir()) == ["second.png"]  # the old figure is gone
