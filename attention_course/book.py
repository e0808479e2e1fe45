"""Where an exercise notebook's chapter is: its title and its rendered page, wherever the notebook was copied.

An exercise notebook may be copied anywhere (a student's own folder), so it
cannot link to the book with a relative path. Its first code cell calls
`chapter_page("masks")` instead: the package knows the chapter's title and
finds the rendered page (`_build/html/book/masks.html`, written by
`make book`) beside its own checkout, so the link works from any folder in
the course's environment. Where the package was installed from a wheel (no
checkout), an instructor points it at the course's book with the environment
variable ATTENTION_COURSE_BOOK: the address of the hosted book
(`https://.../`) or the folder of a built copy (`.../_build/html`).
`open_chapter("masks")` opens the page in a browser.
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
}
"""The title of each chapter an exercise practises (book/<chapter>.ipynb's heading, in plain text)."""

RENDERED = Path(__file__).resolve().parents[1] / "_build" / "html" / "book"
"""Where `make book` writes the chapters' pages, in the checkout the package is installed from."""

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
    """The rendered page on this machine, or None if the book has not been built here."""
    address: str | None = None
    """The page's address in a hosted book (from ATTENTION_COURSE_BOOK), if that is where it is."""

    @property
    def url(self) -> str | None:
        """What to open: the hosted page, the rendered file, or None if neither is known."""
        return self.address or (self.path.as_uri() if self.path is not None else None)

    def __str__(self) -> str:
        if self.url is None:
            return (f"Read first: the chapter \"{self.title}\" (book/{self.chapter}.html of the rendered book: "
                    f"build it with `make book` in the course's folder, or set {BOOK_VARIABLE} to the book's "
                    "address your instructor gives)")
        return f"Read first: the chapter \"{self.title}\": {self.url}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        title = html.escape(self.title)
        if self.url is None:
            return (f"<p>Read first: the chapter <em>{title}</em> (<code>book/{self.chapter}.html</code> of the "
                    "rendered book: build it with <code>make book</code> in the course's folder, or set "
                    f"<code>{BOOK_VARIABLE}</code> to the book's address your instructor gives).</p>")
        return (f'<p>Read first: the chapter <a href="{html.escape(self.url)}" target="_blank">{title}</a> '
                f"(or run <code>open_chapter(\"{self.chapter}\")</code> to open it in your browser).</p>")


def chapter_page(chapter: str) -> ChapterPage:
    """The chapter `chapter` ("masks", ...): its title and rendered page. ValueError for an unknown chapter."""
    if chapter not in CHAPTER_TITLES:
        raise ValueError(f"unknown chapter {chapter!r}; the chapters are {', '.join(CHAPTER_TITLES)}")
    title = CHAPTER_TITLES[chapter]
    where = os.environ.get(BOOK_VARIABLE, "").strip()
    if where.startswith(("http://", "https://")):
        return ChapterPage(chapter, title, None, f"{where.rstrip('/')}/book/{chapter}.html")
    if where:
        folder = Path(where).expanduser()
        if not folder.is_dir():
            raise ValueError(f"{BOOK_VARIABLE} is {where!r}: neither an http(s) address nor a folder")
        page = folder / "book" / f"{chapter}.html"
        return ChapterPage(chapter, title, page if page.is_file() else None)
    page = RENDERED / f"{chapter}.html"
    return ChapterPage(chapter, title, page if page.is_file() else None)


def open_chapter(chapter: str) -> ChapterPage:
    """Open the chapter's rendered page in the default browser (if the book is built); returns the page."""
    page = chapter_page(chapter)
    if page.url is not None:
        webbrowser.open(page.url)
    return page
