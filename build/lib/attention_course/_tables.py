"""Plain-text and HTML tables of the step-by-step traces (the worked example's, the online softmax's)."""

from __future__ import annotations

import html


def text_table(header: tuple[str, ...], rows: list[tuple[str, ...]], *, left_columns: int = 0) -> str:
    """Columns padded to their widest cell: the first `left_columns` aligned left, the rest right."""
    table = [header, *rows]
    widths = [max(len(r[c]) for r in table) for c in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(w) if c < left_columns else cell.rjust(w) for c, (cell, w) in enumerate(zip(r, widths)))
        for r in table
    )


def html_table(header: tuple[str, ...], rows: list[tuple[str, ...]], caption: str, css_class: str) -> str:
    """The same table as HTML, with a caption, every cell escaped."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return (f'<table class="{html.escape(css_class)}"><caption>{html.escape(caption)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
