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


def fake_book(folder, *chapters):
    """A rendered book's folder: index.html and book/<chapter>.html."""
    (folder / "book").mkdir(parents=True)
    (folder / "index.html").write_text("<html></html>")
    for chapter in chapters:
        (folder / "book" / f"{chapter}.html").write_text("<html></html>")
    return folder


def test_the_page_is_found_beside_the_checkout_or_the_student_is_told_where_the_book_is(tmp_path, monkeypatch):
    monkeypatch.delenv(book.BOOK_VARIABLE, raising=False)
    monkeypatch.setattr(book, "CHECKOUT_BOOK", tmp_path / "html")
    monkeypatch.setattr(book, "SHIPPED", tmp_path / "not-installed")
    missing = book.chapter_page("masks")
    assert missing.path is None and "make book" in str(missing) and "wheel" in str(missing)
    assert "book/masks.html" in missing._repr_html_()
    fake_book(tmp_path / "html", "masks")
    page = book.chapter_page("masks")
    assert page.path == tmp_path / "html" / "book" / "masks.html"
    assert page.path.as_uri() in page._repr_html_() and "Masks: who may attend to whom" in str(page)
    opened = []
    monkeypatch.setattr(book.webbrowser, "open", opened.append)
    assert book.open_chapter("masks") == page and opened == [page.path.as_uri()]


def test_a_package_installed_from_the_wheel_finds_the_book_it_carries(tmp_path, monkeypatch):
    monkeypatch.delenv(book.BOOK_VARIABLE, raising=False)
    monkeypatch.setattr(book, "CHECKOUT_BOOK", tmp_path / "no-checkout" / "_build" / "html")
    monkeypatch.setattr(book, "SHIPPED", fake_book(tmp_path / "site" / "attention_course" / "book_html", "masks"))
    assert book.book_folder() == book.SHIPPED
    assert book.chapter_page("masks").path == book.SHIPPED / "book" / "masks.html"
    fake_book(tmp_path / "no-checkout" / "_build" / "html", "masks")  # a checkout's own build comes first
    assert book.chapter_page("masks").path == book.CHECKOUT_BOOK / "book" / "masks.html"


def test_an_installed_package_is_pointed_at_a_hosted_book_or_a_built_copy(tmp_path, monkeypatch):
    monkeypatch.setattr(book, "CHECKOUT_BOOK", tmp_path / "no-checkout")
    monkeypatch.setattr(book, "SHIPPED", fake_book(tmp_path / "shipped", "masks", "cost"))
    monkeypatch.setenv(book.BOOK_VARIABLE, "https://course.example.org/attention/")
    page = book.chapter_page("masks")
    assert page.path is None and page.url == "https://course.example.org/attention/book/masks.html"
    assert page.url in str(page) and f'href="{page.url}"' in page._repr_html_()
    copy = fake_book(tmp_path / "html", "masks")
    monkeypatch.setenv(book.BOOK_VARIABLE, str(copy))  # the variable wins over the copy the wheel carries
    assert book.chapter_page("masks").url == (copy / "book" / "masks.html").as_uri()
    assert book.chapter_page("cost").url is None and book.BOOK_VARIABLE in str(book.chapter_page("cost"))
    monkeypatch.setenv(book.BOOK_VARIABLE, str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="ATTENTION_COURSE_BOOK is .*nowhere.*neither"):
        book.chapter_page("masks")


def test_the_book_command_prints_and_opens_the_page(tmp_path, monkeypatch, capsys):
    from attention_course.cli import main

    monkeypatch.delenv(book.BOOK_VARIABLE, raising=False)
    monkeypatch.setattr(book, "CHECKOUT_BOOK", tmp_path / "no-checkout")
    monkeypatch.setattr(book, "SHIPPED", fake_book(tmp_path / "shipped", "masks"))
    opened = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    assert main(["book", "masks"]) == 0
    assert capsys.readouterr().out.strip() == opened[0] == (book.SHIPPED / "book" / "masks.html").as_uri()
    assert main(["book", "--print"]) == 0 and len(opened) == 1  # --print opens nothing
    assert capsys.readouterr().out.strip() == (book.SHIPPED / "index.html").as_uri()
    assert main(["book", "mask", "--print"]) == 1
    assert "has no page 'mask'; its pages are masks" in capsys.readouterr().err
    monkeypatch.setenv(book.BOOK_VARIABLE, "https://course.example.org/attention")
    assert main(["book", "cost", "--print"]) == 0
    assert capsys.readouterr().out.strip() == "https://course.example.org/attention/book/cost.html"
    monkeypatch.delenv(book.BOOK_VARIABLE)
    monkeypatch.setattr(book, "SHIPPED", tmp_path / "not-installed")
    assert main(["book"]) == 1 and "no rendered book here" in capsys.readouterr().err


def test_an_unknown_chapter_is_named_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown chapter 'mask'.*masks"):
        book.chapter_page("mask")
