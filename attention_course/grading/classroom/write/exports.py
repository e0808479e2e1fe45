"""Everything an instructor hands on, written from one report into one folder.

    gradebook.csv, gradebook.json   the gradebook and its report (gradebook.py)
    canvas.csv                      Canvas's gradebook import (lms.py)
    moodle.csv                      Moodle's grading worksheet (lms.py)
    feedback/<student>.html, .txt   one feedback file per student (feedback.py)
    feedback-canvas.zip             the feedback pages for Canvas's Re-Upload Submissions (lms.py)
    feedback-moodle.zip             the feedback pages for Moodle's "Upload multiple feedback files in a zip" (lms.py)
    summary.html                    the class summary (summary.py)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..report import Report
from . import feedback, lms, summary
from .gradebook import _write_atomically

CANVAS_FEEDBACK = "feedback-canvas.zip"
MOODLE_FEEDBACK = "feedback-moodle.zip"


@dataclass
class Exported:
    """What `write_exports` wrote, and who each LMS file leaves out and why."""

    canvas: Path
    moodle: Path
    summary: Path
    feedback: list[Path]
    canvas_feedback: Path
    moodle_feedback: Path
    left_out: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """File name -> (student, why) for each row it leaves out (no id the LMS matches, held for review, ...)."""


def write_exports(report: Report, folder: Path | str) -> Exported:
    """Write the LMS files, the feedback files and their zips, and the summary page of a report into `folder`."""
    folder = Path(folder)
    canvas_text, canvas_left = lms.canvas_csv(report)
    moodle_text, moodle_left = lms.moodle_csv(report)
    _write_atomically(folder / "canvas.csv", canvas_text)
    _write_atomically(folder / "moodle.csv", moodle_text)
    _write_atomically(folder / "summary.html", summary.page(report))
    pages = feedback.write_all(report, folder / "feedback")
    html = {key: path.read_text(encoding="utf-8") for key, path in pages.items()}
    canvas_zip, canvas_zip_left = lms.canvas_feedback_zip(report, html)
    moodle_zip, moodle_zip_left = lms.moodle_feedback_zip(report, html)
    for name, data in ((CANVAS_FEEDBACK, canvas_zip), (MOODLE_FEEDBACK, moodle_zip)):
        tmp = folder / f".{name}.tmp"
        tmp.write_bytes(data)
        tmp.replace(folder / name)
    left = {"canvas.csv": canvas_left, "moodle.csv": moodle_left, CANVAS_FEEDBACK: canvas_zip_left,
            MOODLE_FEEDBACK: moodle_zip_left}
    return Exported(folder / "canvas.csv", folder / "moodle.csv", folder / "summary.html", list(pages.values()),
                    folder / CANVAS_FEEDBACK, folder / MOODLE_FEEDBACK, left)
