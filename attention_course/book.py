"""Where an exercise notebook's chapter is: its title and its rendered page, wherever the notebook was copied.

An exercise notebook may be copied anywhere (a student's own folder), so it
cannot link to the book with a relative path. Its first code cell calls
`chapter_page("masks")` instead: the package knows the chapter's title and
finds the rendered page (`_build/html/book/masks.html`, written by
`make book`) beside its own checkout, so the link works from any folder in
the course's environment. `open_chapter("masks")` opens it in a browser.
"""

from __future__ import annotations

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


@dataclass(frozen=True)
class ChapterPage:
    """A chapter of the book: its title and, once the book is built, its rendered page."""

    chapter: str
    """The chapter's name, the stem of book/<chapter>.ipynb, e.g. "masks"."""
    title: str
    """Its title, e.g. "Masks: who may attend to whom"."""
    path: Path | None
    """The rendered page, or None if the book has not been built here."""

    def __str__(self) -> str:
        if self.path is None:
            return (f"Read first: the chapter \"{self.title}\" (book/{self.chapter}.html of the rendered book; "
                    f"build it with `make book` in the course's folder)")
        return f"Read first: the chapter \"{self.title}\": {self.path.as_uri()}"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        import html

        title = html.escape(self.title)
        if self.path is None:
            return (f"<p>Read first: the chapter <em>{title}</em> (<code>book/{self.chapter}.html</code> of the "
                    "rendered book; build it with <code>make book</code> in the course's folder).</p>")
        return (f'<p>Read first: the chapter <a href="{html.escape(self.path.as_uri())}" target="_blank">{title}</a> '
                f"(or run <code>open_chapter(\"{self.chapter}\")</code> to open it in your browser).</p>")


def chapter_page(chapter: str) -> ChapterPage:
    """The chapter `chapter` ("masks", ...): its title and rendered page. ValueError for an unknown chapter."""
    if chapter not in CHAPTER_TITLES:
        raise ValueError(f"unknown chapter {chapter!r}; the chapters are {', '.join(CHAPTER_TITLES)}")
    page = RENDERED / f"{chapter}.html"
    return ChapterPage(chapter, CHAPTER_TITLES[chapter], page if page.is_file() else None)


def open_chapter(chapter: str) -> ChapterPage:
    """Open the chapter's rendered page in the default browser (if the book is built); returns the page."""
    page = chapter_page(chapter)
    if page.path is not None:
        webbrowser.open(page.path.as_uri())
    return page
