"""Where an exercise notebook's chapter is: its title and its rendered page, wherever the notebook was copied.

An exercise notebook may be copied anywhere (a student's own folder), so it
cannot link to the book with a relative path. Its first code cell calls
`chapter_page("masks")` instead: the package knows the chapter's title and
finds the rendered page, in this order:

1. where the environment variable ATTENTION_COURSE_BOOK says: the address of
   a hosted book (`https://.../`) or the folder of a built copy
   (`.../_build/html`), for an instructor who hosts the book;
2. beside the checkout the package runs from (`_build/html/book/masks.html`,
   written by `make book`);
3. in the package itself: the students' wheel (`make dist`) carries the
   rendered book (`attention_course/book_html/`), so a student who installed
   only the wheel reads it offline.

`open_chapter("masks")` opens the page in a browser, and so does the command
`attention-course book masks` (attention_course/book_cli.py).
"""

from __future__ import annotations

import os
import webbrowser
from dataclasses import dataclass
from pathlib import Path

CHAPTER_TITLES = {
    "worked_example": 'The worked example: "my card was blocked"',
    "scaling": "Why scale by √d_k",
    "stable_softmax": "A softmax that does not overflow",
    "masks": "Masks: who may attend to whom",
    "learned_projections": "Where W_q, W_k and W_v come from",
    "cost": "What attention costs",
    "positions": "Where position enters the scores",
    "decoding": "Generating text: one query at a time",
    "backward": "How attention learns: the backward pass",
    "generating_cost": "What generating costs",
    "todays_models": "Attention in today's models",
    "without_all_scores": "Attention without all the scores",
}
"""The title of each chapter an exercise practises (book/<chapter>.ipynb's heading, in plain text)."""

CHECKOUT_BOOK = Path(__file__).resolve().parents[1] / "_build" / "html"
"""Where `make book` writes the book (its chapters in book/), in the checkout the package is installed from."""

SHIPPED = Path(__file__).resolve().parent / "book_html"
"""The rendered book the students' wheel carries (the whole `_build/html` folder); absent in a checkout."""

BOOK_VARIABLE = "ATTENTION_COURSE_BOOK"
"""The environment variable that says where the book is: a hosted book's address or a built book's folder."""


@dataclass(frozen=True)
class ChapterPage:
    """A chapter of the book: its title and, once the book is built, its rendered page."""

    chapter: str
    """The chapter's name, the stem of book/<chapter>.ipynb, e.g. "masks"."""
    title: str
    """Its title, e.g. "Masks: who may attend to whom"."""
    path: Path | None
    """The rendered page on this machine, or None if no built book was found here."""
    address: str | None = None
    """The page's address in a hosted book (from ATTENTION_COURSE_BOOK), if that is where it is."""

    @property
    def url(self) -> str | None:
        """What to open: the hosted page, the rendered file, or None if neither is known."""
        return self.address or (self.path.as_uri() if self.path is not None else None)

    def __str__(self) -> str:
        if self.url is None:
            return (f"Read first: the chapter \"{self.title}\" (book/{self.chapter}.html of the rendered book, "
                    "which the course's wheel carries: install the wheel your instructor gives, or build it with "
                    f"`make book` in the course's folder, or set {BOOK_VARIABLE} to the book's address)")
        return f"Read first: the chapter \"{self.title}\": {self.url}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        title = html.escape(self.title)
        if self.url is None:
            return (f"<p>Read first: the chapter <em>{title}</em> (<code>book/{self.chapter}.html</code> of the "
                    "rendered book, which the course's wheel carries: install the wheel your instructor gives, "
                    "or build it with <code>make book</code> in the course's folder, or set "
                    f"<code>{BOOK_VARIABLE}</code> to the book's address).</p>")
        return (f'<p>Read first: the chapter <a href="{html.escape(self.url)}" target="_blank">{title}</a> '
                f"(or run <code>open_chapter(\"{self.chapter}\")</code> to open it in your browser).</p>")


def hosted_book() -> str | None:
    """The hosted book's address (ATTENTION_COURSE_BOOK when it is http(s)), without a trailing slash."""
    where = os.environ.get(BOOK_VARIABLE, "").strip()
    return where.rstrip("/") if where.startswith(("http://", "https://")) else None


def book_folder() -> Path | None:
    """The folder of the rendered book on this machine (the one holding index.html and book/), or None.

    ATTENTION_COURSE_BOOK's folder if it names one, else the checkout's
    `_build/html`, else the copy the wheel carries. ValueError if the
    variable names neither an address nor an existing folder.
    """
    where = os.environ.get(BOOK_VARIABLE, "").strip()
    if where and not where.startswith(("http://", "https://")):
        folder = Path(where).expanduser()
        if not folder.is_dir():
            raise ValueError(f"{BOOK_VARIABLE} is {where!r}: neither an http(s) address nor a folder")
        return folder
    for folder in (CHECKOUT_BOOK, SHIPPED):
        if (folder / "book").is_dir():
            return folder
    return None


def chapter_page(chapter: str) -> ChapterPage:
    """The chapter `chapter` ("masks", ...): its title and rendered page. ValueError for an unknown chapter."""
    if chapter not in CHAPTER_TITLES:
        raise ValueError(f"unknown chapter {chapter!r}; the chapters are {', '.join(CHAPTER_TITLES)}")
    title = CHAPTER_TITLES[chapter]
    address = hosted_book()
    if address is not None:
        return ChapterPage(chapter, title, None, f"{address}/book/{chapter}.html")
    folder = book_folder()
    page = folder / "book" / f"{chapter}.html" if folder is not None else None
    return ChapterPage(chapter, title, page if page is not None and page.is_file() else None)


def open_chapter(chapter: str) -> ChapterPage:
    """Open the chapter's rendered page in the default browser (if the book is found); returns the page."""
    page = chapter_page(chapter)
    if page.url is not None:
        webbrowser.open(page.url)
    return page
