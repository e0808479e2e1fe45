"""Everything an instructor hands on, written from one report into one folder.

    gradebook.csv, gradebook.json   the gradebook and its report (gradebook.py)
    canvas.csv                      Canvas's gradebook import (lms.py)
    moodle.csv                      Moodle's grading worksheet (lms.py)
    feedback/<student>.html, .txt   one feedback file per student (feedback.py)
    summary.html                    the class summary (summary.py)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import feedback, lms, summary
from .gradebook import _write_atomically


@dataclass
class Exported:
    """What `write_exports` wrote, and who is missing from each LMS file."""

    canvas: Path
    moodle: Path
    summary: Path
    feedback: list[Path]
    not_in_canvas: list[str] = field(default_factory=list)
    """Students with no Canvas or SIS id in the roster (left out of canvas.csv)."""
    not_in_moodle: list[str] = field(default_factory=list)
    """Students with no Moodle participant id nor email in the roster (left out of moodle.csv)."""


def write_exports(report: dict, folder: Path | str) -> Exported:
    """Write the LMS files, the feedback files and the summary page of a report into `folder`."""
    folder = Path(folder)
    canvas_text, not_in_canvas = lms.canvas_csv(report)
    moodle_text, not_in_moodle = lms.moodle_csv(report)
    _write_atomically(folder / "canvas.csv", canvas_text)
    _write_atomically(folder / "moodle.csv", moodle_text)
    _write_atomically(folder / "summary.html", summary.page(report))
    pages = feedback.write_all(report, folder / "feedback")
    return Exported(folder / "canvas.csv", folder / "moodle.csv", folder / "summary.html", pages,
                    not_in_canvas, not_in_moodle)
