"""What an LMS takes back: Canvas's gradebook CSV, Moodle's grading worksheet, and the feedback pages in bulk.

Everything is rendered from a report (`score.build_report`), whose rows carry
the roster's ids and what the download said of each submission (`lms`).
Each file follows what its LMS's import code reads:

Canvas (Grades > Import): a header whose first cells are `Student` and `ID`,
then `SIS User ID`, `SIS Login ID` and `Section` (`CANVAS_ID_COLUMNS`), then
one column per assignment named `<title> (<Canvas assignment id>)` when the
assignment file gives the id, else `<title>` (Canvas then offers to create
the assignment). Canvas finds a student by ID, else by SIS User ID or SIS
Login ID, so a student needs one of them. A student missing from the file is
left as Canvas has them.

Moodle (the assignment's Grading action > Upload grading worksheet): Moodle
reads `Identifier` (`Participant <id>`), `Grade`, `Last modified (grade)` and
the feedback columns (`Feedback comments`), and refuses a worksheet without
the first three; it skips a row whose grade is empty, and a row whose grade
Moodle changed after the worksheet's `Last modified (grade)` unless told to
ignore it. The worksheet has the columns of the one Moodle exports
(`MOODLE_COLUMNS`); its `Last modified (grade)` is the one of the worksheet
given as the roster, else the time the report was made. A student needs a
Moodle participant id: the roster's, else the download's.

The feedback pages in bulk, one zip per LMS:

- Canvas (Assignments > the assignment > Re-Upload Submissions): Canvas
  reads, in each file name, the first two numbers between underscores as the
  student's user id and the id of one of their submission's files, as its own
  download names them, and adds the file as a comment on that submission
  (under that file's name: Canvas shows the page under the name of the
  notebook it is attached to). The zip holds
  `<name>_<user id>_<attachment id>_feedback.html` for every student whose
  work was in a Canvas download;
- Moodle (View all submissions > Grading action > Upload multiple feedback
  files in a zip, with feedback files enabled in the assignment): Moodle reads
  the participant id from each folder named
  `<Full Name>_<participant id>_assignsubmission_file_` and adds the files in
  it as feedback files.

Rows left out of a file are returned with why, so the caller can say so: no
id the LMS matches, not on the roster, and marks held for review (no file
for an LMS carries them until the instructor approves them).
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from dataclasses import dataclass

from ...run.status import Status
from ..report import Report, Row

CANVAS_ID_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                  "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments")
FEEDBACK_FILE = "feedback.html"
"""The name each student's page has in the LMS feedback zips."""
ZIP_TIME = (2026, 1, 1, 0, 0, 0)
"""The time stamped on the entries of the feedback zips: a fixed one, so that the same report gives the same zip."""

Left = list[tuple[str, str]]
"""(name, why) of each row a file leaves out."""


def _sortable(name: str) -> str:
    """Canvas shows "Last, First"."""
    words = name.split()
    return f"{words[-1]}, {' '.join(words[:-1])}" if len(words) > 1 and "," not in name else name


@dataclass(frozen=True)
class _Ids:
    """The ids an LMS finds a student by."""

    canvas: str
    moodle: str
    sis_user: str
    sis_login: str


def _ids(row: Row) -> _Ids:
    """The LMS ids of a row: the roster's, else what the download said of the student's work."""
    student, lms = row.student, row.lms
    return _Ids(student.get("canvas_id") or lms.get("canvas_id", ""), student.get("moodle_id") or lms.get("moodle_id", ""),
                student.get("sis_user_id", ""), student.get("sis_login_id", ""))


def _why_not(row: Row) -> str:
    """Why no file for an LMS may carry this row, or ""."""
    if Status.HELD in row.statuses:
        return "held for review"
    if Status.NOT_ON_ROSTER in row.statuses:
        return "not on the roster"
    return ""


_FORMULA = ("=", "+", "-", "@", "\t", "\r")
"""How a spreadsheet's formula may start (`=HYPERLINK(...)`, `@SUM(...)`, ...)."""


def spreadsheet_text(value):
    """A CSV cell that a spreadsheet shows and never runs: text that starts like a formula (a name a student chose,
    taken from a download) gets a leading apostrophe; numbers, and text that starts otherwise, are kept as they are."""
    if not isinstance(value, str) or len(value) < 2 or not value.startswith(_FORMULA):  # "-" is Moodle's "no date"
        return value
    try:
        float(value)
        return value
    except ValueError:
        return "'" + value


def canvas_csv(report: Report) -> tuple[str, Left]:
    """The Canvas gradebook import file, and the rows left out."""
    title = report.title
    assignment_id = report.canvas_assignment_id
    column = f"{title} ({assignment_id})" if assignment_id else title
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*CANVAS_ID_COLUMNS, column])
    left: Left = []
    for row in report.rows:
        ids = _ids(row)
        why = _why_not(row) or ("" if ids.canvas or ids.sis_user or ids.sis_login else "no Canvas or SIS id")
        if why:
            left.append((row.name, why))
            continue
        writer.writerow(map(spreadsheet_text, [_sortable(row.name), ids.canvas, ids.sis_user, ids.sis_login,
                                               row.student.get("section", ""), row.total]))
    return buf.getvalue(), left


def moodle_csv(report: Report) -> tuple[str, Left]:
    """The Moodle grading worksheet, and the rows left out."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(MOODLE_COLUMNS)
    left: Left = []
    for row in report.rows:
        participant = _ids(row).moodle
        why = _why_not(row) or ("" if participant else "no Moodle participant id")
        if why:
            left.append((row.name, why))
            continue
        modified = row.student.get("moodle_modified") or report.generated
        writer.writerow(map(spreadsheet_text, [f"Participant {participant}", row.name, row.email, row.status,
                                               row.total, row.max_total, "Yes", row.submitted or "-", modified,
                                               row.feedback]))
    return buf.getvalue(), left


def canvas_feedback_zip(report: Report, pages: dict[str, str]) -> tuple[bytes, Left]:
    """The zip of feedback pages for Canvas's Re-Upload Submissions (`pages`: row key -> HTML), and the rows left
    out."""
    entries, left = {}, []
    for row in report.rows:
        lms, user = row.lms, _ids(row).canvas
        why = _why_not(row)
        if not why and Status.NO_SUBMISSION in row.statuses:
            why = "no submission"
        elif not why and not (user and lms.get("canvas_attachment")):
            why = "no file of theirs in a Canvas download" if not lms.get("anonymous_id") else "anonymous"
        if why:
            left.append((row.name, why))
            continue
        name = _letters(lms.get("canvas_name") or row.name) or "student"
        entries[f"{name}_{user}_{lms['canvas_attachment']}_{FEEDBACK_FILE}"] = pages[row.key]
    return _zip(entries), left


def moodle_feedback_zip(report: Report, pages: dict[str, str]) -> tuple[bytes, Left]:
    """The zip of feedback pages for Moodle's "Upload multiple feedback files in a zip" (`pages`: row key -> HTML),
    and the rows left out."""
    entries, left = {}, []
    for row in report.rows:
        participant = _ids(row).moodle
        why = _why_not(row) or ("" if participant else "no Moodle participant id")
        if why:
            left.append((row.name, why))
            continue
        name = re.sub(r"[_/\\\x00-\x1f]+", " ", row.lms.get("moodle_name") or row.name).strip() or "Student"
        entries[f"{name}_{participant}_assignsubmission_file_/{FEEDBACK_FILE}"] = pages[row.key]
    return _zip(entries), left


def _letters(name: str) -> str:
    """A name as Canvas writes it in file names: letters and digits only (never all digits: Canvas would read a
    number there as an id)."""
    kept = "".join(c for c in name.lower() if c.isalnum())
    return kept if not kept.isdigit() else f"s{kept}"


def _zip(entries: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in entries.items():
            info = zipfile.ZipInfo(name, ZIP_TIME)
            info.flag_bits |= 0x800  # the name is UTF-8
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, text.encode("utf-8"))
    return buf.getvalue()
