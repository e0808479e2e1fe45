"""The class as the instructor's own files give it: the roster, in the forms an LMS writes it, and submission times.

A roster is one of (told apart by its header):

- the course's roster CSV (comma-, semicolon- or tab-separated, column names
  in any case): `student_id,name` and optionally `email`, `submission` (the
  folder or LMS name their work arrives under), `canvas_id`, `sis_user_id`,
  `sis_login_id`, `section`, `moodle_id`;
- Canvas's gradebook export (Grades > Export): `Student`, `ID`, `SIS User ID`,
  `SIS Login ID` (and `Integration ID`, `Root Account` where Canvas adds
  them), `Section`, then the assignments; its "Points Possible" row and its
  "Muted" or "Manual Posting" row are skipped. A student is named as Canvas
  shows them ("Last, First"); their id is the SIS User ID, else Canvas's ID;
- Moodle's grading worksheet (the assignment's "Download grading
  worksheet"): `Identifier` ("Participant 123"), `Full name`, the identity
  fields the site shows (`Email address`, `ID number`, ...), then the grading
  columns. A student's id is their `ID number`, else their e-mail, else
  "participant <id>"; the worksheet's `Last modified (grade)` is kept, so
  that the worksheet written back lets Moodle refuse to overwrite a grade
  changed since it was downloaded, and its `Last modified (submission)`
  (`moodle_submitted`), which says when each student submitted.

Canvas's Test Student (the student Canvas adds for its student view, named
"Student, Test" in its export) is no one's: every form leaves it out of the
students and names it in `Roster.left_out`.

Every form gives the same entries (`ROSTER_COLUMNS`, with `moodle_modified`
for the worksheet's time), so the rest of the classroom never asks which it was.

Submission times (optional, for a download that carries none, such as
Canvas's, whose file names only say "late"): a CSV with `submitted` (ISO 8601
with a time zone, as Canvas's API gives `submitted_at`) and one column that
names the student: `student_id`, `canvas_id`, `sis_user_id`, `sis_login_id`,
`moodle_id`, `email` or `name`.
"""

from __future__ import annotations

import csv
import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from .people import is_test_student

ROSTER_COLUMNS = ("student_id", "name", "email", "submission", "canvas_id", "sis_user_id", "sis_login_id",
                  "section", "moodle_id")
"""The course roster's columns; student_id and name are required."""
CANVAS_EXPORT = {"ID": "canvas_id", "SIS User ID": "sis_user_id", "SIS Login ID": "sis_login_id", "Section": "section"}
"""Canvas's gradebook export: its identity columns and the roster's names for them (`Student` is the name)."""
MOODLE_WORKSHEET = ("Identifier", "Full name")
"""The columns by which Moodle's grading worksheet is recognised (with `Grade`)."""
MOODLE_MODIFIED = "Last modified (grade)"
"""The worksheet's column that Moodle's import compares with the grade it holds."""
MOODLE_SUBMITTED = "Last modified (submission)"
"""The worksheet's column that says when each student last changed their submission ("-" for none)."""
MOODLE_TIME_FORMATS = ("%A, %d %B %Y, %I:%M %p", "%A, %d %B %Y, %H:%M", "%d %B %Y, %I:%M %p", "%d %B %Y, %H:%M",
                       "%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M")
"""How Moodle's worksheet writes a time (in the site's time zone, which it does not say)."""
TIME_KEYS = ("student_id", "canvas_id", "sis_user_id", "sis_login_id", "moodle_id", "email", "name")
"""The columns that may name a student in a submission-times file."""
PARTICIPANT = re.compile(r"^\D*?(\d+)\s*$")
"""Moodle's Identifier: "Participant 123"."""


class IntakeError(ValueError):
    """A roster, a times file or a zip that cannot be used; the message says which file and why."""


@dataclass
class Roster:
    """The students of a class, from whichever form the roster came in."""

    students: list[dict[str, str]]
    """One entry per student: every column of ROSTER_COLUMNS (missing ones empty), and `moodle_modified` and
    `moodle_submitted` from Moodle's worksheet."""
    form: str
    """"roster", "Canvas gradebook export" or "Moodle grading worksheet"."""
    left_out: list[dict[str, str]] = field(default_factory=list)
    """Entries that are no student of the class: Canvas's Test Student."""


def load(path: Path | str) -> Roster:
    """The roster at `path`, in any of the forms of the module docstring; IntakeError naming the line if invalid."""
    path = Path(path)
    text = _text(path, "roster")
    rows = list(csv.reader(text.splitlines(), dialect=_dialect(text)))
    header = [c.strip() for c in rows[0]] if rows else []
    if len(header) > 3 and "Student" in header[0] and header[1] == "ID":  # what Canvas's importer looks for too
        students, form = _canvas_export(path, header, rows[1:]), "Canvas gradebook export"
    elif all(c in header for c in MOODLE_WORKSHEET):
        students, form = _moodle_worksheet(path, header, rows[1:]), "Moodle grading worksheet"
    else:
        students, form = _course_roster(path, [c.lower() for c in header], rows[1:]), "roster"
    left_out = [entry for _, entry in students if is_test_student(entry["name"])]
    students = [(line, entry) for line, entry in students if not is_test_student(entry["name"])]
    if not students:
        raise IntakeError(f"the roster {path} lists no students")
    seen: dict[str, int] = {}
    for line, entry in students:
        if entry["student_id"] in seen:
            raise IntakeError(f"the roster {path}, line {line}: student_id {entry['student_id']!r} is already on line "
                              f"{seen[entry['student_id']]}")
        seen[entry["student_id"]] = line
    return Roster([entry for _, entry in students], form, left_out)


@dataclass(frozen=True)
class ClassRecords:
    """What the class's own files say, read once before any submission is unpacked (`read_class`): the roster, the
    lines of the submission-times file, the times Moodle's worksheet gives."""

    roster: Roster | None = None
    """The class's roster (None: each submission is a row of its own)."""
    stamps: tuple[tuple[str, str, dt.datetime], ...] = ()
    """(column, value, when) for each line of the submission-times file (`read_times`)."""
    times_name: str = ""
    """The submission-times file's name, for messages ("" without one)."""
    worksheet_times: Mapping[str, dt.datetime | None] = field(default_factory=dict)
    """Student id -> when they submitted, as Moodle's worksheet says (`MOODLE_SUBMITTED`) read in `zone`; None
    where it is written in no form Moodle writes."""
    zone: dt.tzinfo = dt.timezone.utc
    """The time zone the worksheet's times are read in (the deadline's)."""


def read_class(roster: Path | str | None = None, times: Path | str | None = None,
               zone: dt.tzinfo = dt.timezone.utc) -> ClassRecords:
    """The roster (any form `load` reads) and the submission-times file, each optional; `zone`: the time zone of the
    times a Moodle worksheet gives (the deadline's). IntakeError naming the file and the line if either is wrong."""
    class_list = load(roster) if roster is not None else None
    stamps = tuple(read_times(times)) if times is not None else ()
    worksheet = {s["student_id"]: moodle_time(s["moodle_submitted"], zone)
                 for s in (class_list.students if class_list else []) if s.get("moodle_submitted")}
    return ClassRecords(class_list, stamps, Path(times).name if times is not None else "", worksheet, zone)


def _text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")  # a spreadsheet's byte-order mark is fine
    except FileNotFoundError:
        raise IntakeError(f"no {what} file {path}") from None
    except UnicodeDecodeError:
        raise IntakeError(f"the {what} {path} is not UTF-8 text; save it as CSV UTF-8") from None


def _dialect(text: str):
    """The CSV dialect, as `csv.Sniffer` finds it: commas, or the semicolons or tabs a spreadsheet set to another
    locale writes (plain commas if it cannot tell, say for a single column)."""
    try:
        return csv.Sniffer().sniff(text[:1 << 16], delimiters=",;\t")
    except csv.Error:
        return csv.excel


def _entry(**values: str) -> dict[str, str]:
    return {c: (values.get(c) or "").strip() for c in ROSTER_COLUMNS}


def _course_roster(path: Path, columns: list[str], rows: list[list[str]]) -> list[tuple[int, dict[str, str]]]:
    missing = [c for c in ("student_id", "name") if c not in columns]
    if missing:
        raise IntakeError(f"the roster {path} has no column {missing[0]!r}; its header must name the columns "
                          f"{', '.join(ROSTER_COLUMNS)} (student_id and name required), or be Canvas's gradebook "
                          f"export or Moodle's grading worksheet, got {', '.join(columns) or 'nothing'}")
    unknown = [c for c in columns if c not in ROSTER_COLUMNS]
    if unknown:
        raise IntakeError(f"the roster {path} has an unknown column {unknown[0]!r}; the columns are {', '.join(ROSTER_COLUMNS)}")
    out = []
    for line, raw in enumerate(rows, start=2):
        entry = _entry(**dict(zip(columns, raw)))
        if not any(entry.values()):
            continue
        if not entry["student_id"] or not entry["name"]:
            raise IntakeError(f"the roster {path}, line {line}: student_id and name must not be empty")
        out.append((line, entry))
    return out


def _canvas_export(path: Path, header: list[str], rows: list[list[str]]) -> list[tuple[int, dict[str, str]]]:
    out = []
    for line, raw in enumerate(rows, start=2):
        cells = dict(zip(header, (c.strip() for c in raw)))
        name = cells.get(header[0], "")
        if not any(cells.values()) or "Points Possible" in name:
            continue
        if all(re.fullmatch(r"(Muted|Manual Posting.*)?", c, flags=re.IGNORECASE) for c in cells.values()):
            continue  # the row that says which assignments are muted or posted by hand
        values = {ours: cells.get(theirs, "") for theirs, ours in CANVAS_EXPORT.items()}
        if not name or not (values["canvas_id"] or values["sis_user_id"]):
            raise IntakeError(f"the Canvas gradebook export {path}, line {line}: a student needs a name and an ID")
        out.append((line, _entry(name=name, student_id=values["sis_user_id"] or values["canvas_id"], **values)))
    return out


def _moodle_worksheet(path: Path, header: list[str], rows: list[list[str]]) -> list[tuple[int, dict[str, str]]]:
    out = []
    for line, raw in enumerate(rows, start=2):
        cells = dict(zip(header, (c.strip() for c in raw)))
        if not any(cells.values()):
            continue
        found = PARTICIPANT.match(cells.get("Identifier", ""))
        if not found or not cells.get("Full name"):
            raise IntakeError(f"the Moodle grading worksheet {path}, line {line}: expected an Identifier such as "
                              f"'Participant 123' and a full name, got {cells.get('Identifier', '')!r}")
        participant, email = found.group(1), cells.get("Email address", "")
        entry = _entry(name=cells["Full name"], email=email, moodle_id=participant,
                       student_id=cells.get("ID number") or email or f"participant {participant}")
        modified = cells.get(MOODLE_MODIFIED, "")
        entry["moodle_modified"] = "" if modified == "-" else modified
        submitted = cells.get(MOODLE_SUBMITTED, "")
        entry["moodle_submitted"] = "" if submitted == "-" else submitted
        out.append((line, entry))
    return out


def read_times(path: Path | str) -> list[tuple[str, str, dt.datetime]]:
    """(column, value, when) for each line of a submission-times file (see the module docstring)."""
    path = Path(path)
    text = _text(path, "submission times")
    reader = csv.DictReader(text.splitlines(), dialect=_dialect(text))
    columns = [c.strip().lower() for c in reader.fieldnames or []]
    reader.fieldnames = columns
    when = next((c for c in ("submitted", "submitted_at") if c in columns), None)
    key = next((c for c in TIME_KEYS if c in columns), None)
    if when is None or key is None:
        raise IntakeError(f"the submission times {path} need a column 'submitted' and one of {', '.join(TIME_KEYS)}, "
                          f"got {', '.join(columns) or 'nothing'}")
    out = []
    for line, raw in enumerate(reader, start=2):
        value, stamp = (raw.get(key) or "").strip(), (raw.get(when) or "").strip()
        if not value and not stamp:
            continue
        try:
            moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        except ValueError:
            moment = None
        if moment is None or moment.tzinfo is None:
            raise IntakeError(f"the submission times {path}, line {line}: {stamp!r} is not an ISO 8601 date-time with "
                              "a time zone, such as 2026-03-02T10:15:00Z")
        out.append((key, value, moment))
    return out


def moodle_time(text: str, zone: dt.tzinfo) -> dt.datetime | None:
    """A time as Moodle's worksheet writes it ("Sunday, 1 March 2026, 10:00 PM"), read in `zone` (the worksheet
    does not say its time zone); None if it is written in none of `MOODLE_TIME_FORMATS`."""
    for form in MOODLE_TIME_FORMATS:
        try:
            return dt.datetime.strptime(text.strip(), form).replace(tzinfo=zone)
        except ValueError:
            continue
    return None
