"""Gradebooks an LMS imports: Canvas's gradebook CSV and Moodle's grading worksheet.

Both are rendered from a report (`score.build_report`) whose rows carry
the roster's ids.

Canvas (Grades > Import): the columns `Student`, `ID` (the Canvas user id),
`SIS User ID`, `SIS Login ID`, `Section`, then one column per assignment
named `<title> (<Canvas assignment id>)` when the assignment file gives the
id, else `<title>` (Canvas then offers to create the assignment). Canvas
matches a row by any of its id columns, so a student needs at least one of
canvas_id, sis_user_id or sis_login_id in the roster.

Moodle (the assignment's "Upload grading worksheet", or the gradebook's CSV
import mapped by email address): `Identifier` (`Participant <id>`), `Full
name`, `Email address`, `Status`, `Grade`, `Maximum Grade` and `Feedback
comments`. A student needs a moodle_id or an email in the roster.

Students who cannot be matched by the LMS (no id in the roster, or not on
the roster at all) are left out of its file and returned, so the caller can
say so; a student with no submission gets 0.
"""

from __future__ import annotations

import csv
import io

CANVAS_ID_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_COLUMNS = ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade", "Feedback comments")


def _sortable(name: str) -> str:
    """Canvas shows "Last, First"."""
    words = name.split()
    return f"{words[-1]}, {' '.join(words[:-1])}" if len(words) > 1 and "," not in name else name


def canvas_csv(report: dict) -> tuple[str, list[str]]:
    """The Canvas gradebook import file, and the names of the students left out (no Canvas or SIS id)."""
    title = report["assignment"]["title"]
    assignment_id = report["assignment"].get("canvas_assignment_id")
    column = f"{title} ({assignment_id})" if assignment_id else title
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([*CANVAS_ID_COLUMNS, column])
    left_out = []
    for row in report["submissions"]:
        s = row["student"]
        if not (s.get("canvas_id") or s.get("sis_user_id") or s.get("sis_login_id")):
            left_out.append(row["name"])
            continue
        writer.writerow([_sortable(row["name"]), s.get("canvas_id", ""), s.get("sis_user_id", ""),
                         s.get("sis_login_id", ""), s.get("section", ""), row["total"]])
    return buf.getvalue(), left_out


def moodle_csv(report: dict) -> tuple[str, list[str]]:
    """The Moodle grading worksheet, and the names of the students left out (no participant id nor email)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(MOODLE_COLUMNS)
    left_out = []
    for row in report["submissions"]:
        s = row["student"]
        if not (s.get("moodle_id") or s.get("email")):
            left_out.append(row["name"])
            continue
        writer.writerow([f"Participant {s['moodle_id']}" if s.get("moodle_id") else "", row["name"], s.get("email", ""),
                         row["status"], row["total"], row["max_total"], row["feedback"]])
    return buf.getvalue(), left_out
