"""`attention-course book [CHAPTER]`: open the rendered book, or one chapter of it, in a browser.

The book it opens is the one the exercise notebooks link to (`book.chapter_page`):
a hosted copy named by ATTENTION_COURSE_BOOK, the checkout's `_build/html`, or
the copy the students' wheel carries. The pages work offline, from disk.
"""

from __future__ import annotations

import argparse
import sys
import webbrowser

from . import book


def register(subparsers) -> None:
    """Add the `book` subcommand to the `attention-course` command line."""
    parser = subparsers.add_parser(
        "book",
        help="open the rendered book (or one chapter) in your browser; it works offline",
        description=(
            "Open the course's rendered book in the default browser: the front page, or the page of "
            f"CHAPTER (for example masks). The book is looked for where ${book.BOOK_VARIABLE} says "
            "(a hosted book's address or a built copy's folder), then beside a checkout "
            "(_build/html, from `make book`), then in the installed package (the students' wheel "
            "carries it). Prints the address it opens."
        ),
    )
    parser.add_argument("chapter", nargs="?", metavar="CHAPTER",
                        help="a page of the book, e.g. masks or worked_example (default: the front page)")
    parser.add_argument("--print", dest="print_only", action="store_true",
                        help="print the address without opening a browser")
    parser.set_defaults(run=run)


def address(chapter: str | None) -> str:
    """The address of the front page or of `chapter`'s page. LookupError if there is no such page or no book."""
    hosted = book.hosted_book()
    if hosted is not None:
        if chapter is not None and chapter not in book.CHAPTER_TITLES:
            raise LookupError(f"unknown chapter {chapter!r}; the chapters with exercises are "
                              f"{', '.join(book.CHAPTER_TITLES)}")
        return f"{hosted}/book/{chapter}.html" if chapter else f"{hosted}/index.html"
    folder = book.book_folder()
    if folder is None:
        raise LookupError("no rendered book here: install the course's wheel, which carries it, or run "
                          f"`make book` in the course's folder, or set {book.BOOK_VARIABLE} to the book's address")
    if chapter is None:
        return (folder / "index.html").as_uri()
    page = folder / "book" / f"{chapter}.html"
    if not page.is_file():
        pages = sorted(p.stem for p in (folder / "book").glob("*.html"))
        raise LookupError(f"the book at {folder} has no page {chapter!r}; its pages are {', '.join(pages)}")
    return page.as_uri()


def run(args: argparse.Namespace) -> int:
    """Print the page's address and open it; 1 with a message if there is no such page."""
    try:
        url = address(args.chapter)
    except (LookupError, ValueError) as err:
        print(f"attention-course book: {err}", file=sys.stderr)
        return 1
    print(url)
    if not args.print_only and not webbrowser.open(url):
        print("no browser could be started here: open the address above in one", file=sys.stderr)
    return 0
