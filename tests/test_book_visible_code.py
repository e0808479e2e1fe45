"""The code a reader sees runs on its own: each chapter's visible cells, in order, in a fresh kernel.

A chapter asserts its numbers in hidden cells (tag `remove-cell`), and a cell
tagged `remove-input` shows its output but not its code. A reader who copies
the visible code of a page into a notebook gets neither, so no visible cell may
use a name that only a hidden cell defines (a NameError for the reader), nor
need anything else a hidden cell did. This test runs exactly what a page
shows, from book/ as the build does, and names the first cell that fails.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from test_book import CHAPTERS, ROOT, source_of

pytestmark = pytest.mark.book

HIDDEN_CODE = {"remove-cell", "remove-input"}
"""Tags whose code the page does not show."""

NOTEBOOK_CHAPTERS = [name for name in CHAPTERS if source_of(name).suffix == ".ipynb"]


def visible_code(path: Path) -> list[str]:
    """The sources of the code cells a reader sees on the page, in order."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(cell["source"]) for cell in notebook["cells"]
            if cell["cell_type"] == "code" and not HIDDEN_CODE & set(cell.get("metadata", {}).get("tags", []))]


def test_visible_code_is_what_the_page_shows():
    cells = visible_code(ROOT / "book" / "masks.ipynb")
    assert cells[0].startswith("import matplotlib.pyplot as plt")
    assert not any("assert (weights[~mask] == 0.0).all()" in cell for cell in cells)  # a hidden check


@pytest.mark.parametrize("chapter", NOTEBOOK_CHAPTERS)
def test_the_visible_code_of_each_chapter_runs_on_its_own(chapter):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    path = ROOT / f"{chapter}.ipynb"
    cells = visible_code(path)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()
        return
    except CellExecutionError as error:
        ename, evalue = error.ename, error.evalue
    failed = next((i for i, cell in enumerate(notebook.cells)
                   if any(out.get("output_type") == "error" for out in cell.get("outputs", []))), None)
    where = f"visible code cell {failed + 1} of {len(cells)}" if failed is not None else "a visible cell"
    hint = " (a name that only a hidden cell defines: define it in the visible code)" if ename == "NameError" else ""
    shown = cells[failed] if failed is not None else ""
    pytest.fail(f"{chapter}: {where} fails when the visible code runs alone: {ename}: {evalue}{hint}\n"
                f"--- the cell ---\n{shown}", pytrace=False)
