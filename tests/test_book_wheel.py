"""The students' wheel carries the rendered book: `attention-course book` and the exercises' links open it.

Built as `make dist` builds it (a copy of the sources with the rendered book
beside setup.py as book_html/; a small stand-in for the book here, so that the
test needs no build of it), installed with pip alone into a folder of its own,
and asked, from another folder, where the book and a chapter are.
"""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.book

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_carries_the_book_and_its_links_open_it(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "exercise_notebooks", "book_html")
    shutil.copytree(ROOT / "attention_course", src / "attention_course", ignore=ignore)
    shutil.copytree(ROOT / "exercises", src / "exercises")
    rendered = src / "book_html"  # what `make dist` copies from _build/html
    (rendered / "book").mkdir(parents=True)
    (rendered / "index.html").write_text('<meta http-equiv="Refresh" content="0; url=book/introduction.html" />')
    for chapter in ("introduction", "masks"):
        (rendered / "book" / f"{chapter}.html").write_text(f"<html><title>{chapter}</title></html>")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(tmp_path / "dist"), str(src)], check=True, cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("attention_course-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
    assert {"attention_course/book_html/index.html", "attention_course/book_html/book/masks.html"} <= names

    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--target", str(site), str(wheel)], check=True)
    elsewhere = tmp_path / "student"
    elsewhere.mkdir()
    env = {key: value for key, value in os.environ.items() if key != "ATTENTION_COURSE_BOOK"}
    env["PYTHONPATH"] = str(site)
    shipped = site / "attention_course" / "book_html"

    def run(code):
        done = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    shown = run("import sys; from attention_course.cli import main; sys.exit(main(['book', 'masks', '--print']))")
    assert shown == (shipped / "book" / "masks.html").as_uri()
    assert run("from attention_course.book import chapter_page; print(chapter_page('masks').url)") == shown
    front = run("import sys; from attention_course.cli import main; sys.exit(main(['book', '--print']))")
    assert front == (shipped / "index.html").as_uri()


def test_make_dist_ships_the_book_without_what_no_page_loads():
    """The Makefile's recipe: the book is built first and copied without source maps and translations."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile[makefile.index("\ndist:"):]
    assert recipe.startswith("\ndist: book")
    assert '"_build/html"' in recipe and 'ignore_patterns("*.map", ".buildinfo", "locales")' in recipe
    assert "attention_course/book_html/index.html" in recipe  # the wheel is checked for the book
