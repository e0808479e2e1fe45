"""Tests for attention_course/book.py: an exercise notebook's link to its chapter, from any folder."""

from pathlib import Path

import nbformat
import pytest

from attention_course import book
from attention_course.grading.checks.exercises import EXERCISES
from attention_course.grading.checks.exercises.sections import plain

ROOT = Path(__file__).resolve().parents[1]


def test_every_exercise_chapter_has_its_books_title():
    for chapter, title in book.CHAPTER_TITLES.items():
        heading = nbformat.read(ROOT / "book" / f"{chapter}.ipynb", as_version=4).cells[0].source.splitlines()[0]
        assert plain(heading.lstrip("# ")) == title, chapter
    assert {e.chapter for e in EXERCISES} <= set(book.CHAPTER_TITLES)


def test_the_page_is_found_beside_the_checkout_or_the_student_is_told_how_to_build_it(tmp_path, monkeypatch):
    monkeypatch.delenv(book.BOOK_VARIABLE, raising=False)
    monkeypatch.setattr(book, "RENDERED", tmp_path)
    missing = book.chapter_page("masks")
    assert missing.path is None and "make book" in str(missing) and "book/masks.html" in missing._repr_html_()
    (tmp_path / "masks.html").write_text("<html></html>")
    page = book.chapter_page("masks")
    assert page.path == tmp_path / "masks.html"
    assert page.path.as_uri() in page._repr_html_() and "Masks: who may attend to whom" in str(page)
    opened = []
    monkeypatch.setattr(book.webbrowser, "open", opened.append)
    assert book.open_chapter("masks") == page and opened == [page.path.as_uri()]


def test_an_installed_package_is_pointed_at_a_hosted_book_or_a_built_copy(tmp_path, monkeypatch):
    monkeypatch.setattr(book, "RENDERED", tmp_path / "no-checkout")  # installed from a wheel: nothing beside it
    monkeypatch.setenv(book.BOOK_VARIABLE, "https://course.example.org/attention/")
    page = book.chapter_page("masks")
    assert page.path is None and page.url == "https://course.example.org/attention/book/masks.html"
    assert page.url in str(page) and f'href="{page.url}"' in page._repr_html_()
    copy = tmp_path / "html"
    (copy / "book").mkdir(parents=True)
    (copy / "book" / "masks.html").write_text("<html></html>")
    monkeypatch.setenv(book.BOOK_VARIABLE, str(copy))
    assert book.chapter_page("masks").url == (copy / "book" / "masks.html").as_uri()
    assert book.chapter_page("cost").url is None and book.BOOK_VARIABLE in str(book.chapter_page("cost"))
    monkeypatch.setenv(book.BOOK_VARIABLE, str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="ATTENTION_COURSE_BOOK is .*nowhere.*neither"):
        book.chapter_page("masks")


def test_an_unknown_chapter_is_named_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown chapter 'mask'.*masks"):
        book.chapter_page("mask")
