"""A generated class for the instructor's-kit tests: a roster, notebooks per student, Canvas and Moodle downloads.

Each student is given a kind of work (`KINDS`, in turn):

- "full" (the solutions), "wrong" (a softmax without the max subtraction),
  "stub" (the untouched exercises), "one" (only the first exercise), "error"
  (the solutions, with a cell that raises after the functions), "none"
  (nothing submitted);
- "late" (the solutions, handed in late), "extended" (late too, but with an
  extension in the assignment file), "adjusted" (wrong, with a manual
  adjustment), "resubmitted" (a wrong softmax, then a right one in the same
  download: `03_softmax.ipynb` and `03_softmax-1.ipynb`), "zipped" (the
  solutions in a zip the student made), "renamed" (the solutions under other
  names), "wrong exercise" (exercise 4 instead of exercise 3), "corrupt" (a
  softmax notebook cut short), "py" (the softmax as a `.py` file);
- "hostile:<attack>" (the solutions with one cell of an attack from
  tests/grading_corpus/attacks, or `FORK_BOMB`, inserted before the functions).

Notebooks come from the repository's solutions/ and exercises/, so the grades
follow the real checks. The roster mixes the ids a class has: Canvas user
ids, SIS ids (one student has no Canvas id), Moodle participant ids (one
student is known to the roster by e-mail only), accented names and a name
with a comma. `build` writes everything a test needs into a folder: the
roster, the Canvas and Moodle zips (with a submission from someone not on
the roster), Canvas's gradebook export and Moodle's grading worksheet (the
rosters an LMS gives), the assignment file and the adjustments file.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ATTACKS = ROOT / "tests" / "grading_corpus" / "attacks"
EXERCISES = ("01_dot_scores", "03_softmax")
KINDS = ("full", "wrong", "stub", "one", "error", "none", "late", "resubmitted", "zipped", "renamed",
         "wrong exercise", "corrupt", "py", "hostile:signal_parent", "hostile:network", "hostile:read_outside",
         "hostile:fork_bomb", "extended", "adjusted", "full", "wrong", "full", "stub", "full", "none", "one", "full",
         "wrong", "full", "full")
"""The work of each student, in turn (a class of 30 has each once, the common ones more often)."""
FIRST = ("Ada", "Ben", "Chloé", "Dev", "Ewa", "Femi", "Gus", "Hana", "Ivo", "Jun", "Zoë", "José", "Łucja", "Mía",
         "Noé")
LAST = ("Lovelace", "Okafor", "Martin", "Patel", "Nowak", "Adeyemi", "Berg", "Sato", "Horvat", "Li", "Ørsted",
        "Núñez", "Wójcik", "Søndergaard", "Lefèvre", "Dubois")
COMMA_NAME = "García, Jr., Luis"
"""A name with commas in it, as some rosters hold it."""
OFF_ROSTER = "Quentin Stray"
"""Someone whose work is in the downloads but who is not on the roster."""

ASSIGNMENT = """\
title = "Attention, week 1"
exercises = ["01_dot_scores", "03_softmax"]
canvas_assignment_id = 4711
deadline = 2026-03-01T23:59:00Z

[hidden]
enabled = true
seed = 20260301

[late]
penalty_per_day = 0.1

[exercise.01_dot_scores]
points = 10

[exercise.03_softmax.check.softmax]
points = 20
"""
MAX_TOTAL = 30
POINTS = {"01_dot_scores": 10, "03_softmax": 20}

FORK_BOMB = """\
# Start processes that each start more, as fast as they can.
import os

for _ in range(200):
    try:
        os.fork()
    except OSError:
        pass
"""
"""A cell that tries to fill the machine with processes (no attack of the corpus does it this way)."""


@dataclass
class Student:
    student_id: str
    name: str
    email: str
    canvas_id: str
    sis_user_id: str
    moodle_id: str
    kind: str
    in_roster_canvas: bool = True
    """The roster holds the Canvas user id (else only the SIS id)."""
    in_roster_moodle: bool = True
    """The roster holds the Moodle participant id (else only the e-mail)."""
    extension: str = ""
    """The student's own deadline in the assignment file (ISO 8601), if any."""
    adjustment: tuple[str, float, str] | None = None
    """(exercise, points, reason) in the adjustments file, if any."""
    attachments: list[str] = field(default_factory=list)
    """Canvas attachment ids of the files in the Canvas download (filled by `canvas_zip`)."""

    @property
    def late(self) -> bool:
        """Canvas marks the submission late."""
        return self.kind in ("late", "extended")

    @property
    def attack(self) -> str:
        return self.kind.split(":", 1)[1] if self.kind.startswith("hostile:") else ""

    @property
    def sortable(self) -> str:
        """Canvas's "Last, First"."""
        if "," in self.name:
            return self.name
        words = self.name.split()
        return f"{words[-1]}, {' '.join(words[:-1])}"

    @property
    def slug(self) -> str:
        """Canvas's name in file names: its sortable name, lower case, without what is not a letter or a digit."""
        return "".join(ch for ch in self.sortable.lower() if ch.isalnum())

    @property
    def moodle_name(self) -> str:
        """Moodle's name in file names: the full name, underscores made spaces."""
        return self.name.replace("_", " ")


def students(n: int = 30) -> list[Student]:
    out = []
    for i in range(n):
        name = f"{FIRST[i % len(FIRST)]} {LAST[i % len(LAST)]}" + (f" {i // len(FIRST) + 1}" if i >= len(FIRST) else "")
        if i == 9:
            name = COMMA_NAME
        kind = KINDS[i % len(KINDS)]
        s = Student(f"S{1000 + i}", name, f"s{1000 + i}@example.edu", str(50 + i), f"SIS-{1000 + i}",
                    str(880_000 + 17 * i), kind, in_roster_canvas=(i % len(KINDS) != 3),
                    in_roster_moodle=(i % len(KINDS) != 4))
        if kind == "extended":
            s.extension = "2026-03-05T23:59:00Z"
        if kind == "adjusted":
            s.adjustment = ("03_softmax", 4, "the softmax works on the examples asked for in class")
        out.append(s)
    return out


def off_roster() -> Student:
    return Student("X9999", OFF_ROSTER, "quentin@example.org", "4999", "", "889999", "full")


# ---------------------------------------------------------------------------------------------- the work


def notebook_text(exercise: str, kind: str) -> str:
    """A notebook of `exercise` as a student of `kind` writes it."""
    if kind == "stub":
        return (ROOT / "exercises" / f"{exercise}.ipynb").read_text()
    text = (ROOT / "solutions" / f"{exercise}.ipynb").read_text()
    if kind == "error":
        broken = text.replace('"check_', '"raise RuntimeError(\\"a cell that fails\\")\\n", "check_', 1)
        assert broken != text
        return broken
    if kind in ("wrong", "adjusted") and exercise == "03_softmax":
        wrong = text.replace("np.max(x, axis=axis, keepdims=True)", "0")
        assert wrong != text
        return wrong
    if kind.startswith("hostile:") and exercise == "03_softmax":
        return _with_cell(text, _attack_cell(kind.split(":", 1)[1]))
    return text


def _attack_cell(attack: str) -> str:
    """The cell of an attack notebook that attacks (the one before the functions), its placeholders filled."""
    if attack == "fork_bomb":
        return FORK_BOMB
    nb = json.loads((ATTACKS / f"{attack}_05_causal_mask.ipynb").read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    cell = code[1]  # after the imports: the attack
    values = {"@PORT@": "9", "@SLEEP@": "600", "@CANARY@": "/root/.ssh/id_rsa", "@SUBMISSIONS@": "/tmp/submissions",
              "@OUTSIDE@": "/tmp/outside"}
    for key, value in values.items():
        cell = cell.replace(key, value)
    return cell


def _with_cell(text: str, source: str) -> str:
    """The notebook with a code cell of `source` after its first code cell."""
    nb = json.loads(text)
    first = next(i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code")
    nb["cells"].insert(first + 1, {"cell_type": "code", "execution_count": None, "id": "attack", "metadata": {},
                                   "outputs": [], "source": source})
    return json.dumps(nb, indent=1)


def files_of(student: Student, exercises: tuple[str, ...] = EXERCISES) -> dict[str, bytes]:
    """File name -> bytes of what the student hands in (in the order they uploaded it)."""
    kind = student.kind
    if kind == "none":
        return {}
    if kind == "one":
        return {f"{exercises[0]}.ipynb": notebook_text(exercises[0], "full").encode()}
    notebooks = {f"{ex}.ipynb": notebook_text(ex, kind).encode() for ex in exercises}
    if kind == "resubmitted":
        last = exercises[-1]
        notebooks[f"{last}.ipynb"] = notebook_text(last, "wrong").encode()
        notebooks[f"{last}-1.ipynb"] = notebook_text(last, "full").encode()  # Canvas's name for the second upload
    elif kind == "zipped":
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for name, data in notebooks.items():
                z.writestr(f"my work/{name}", data)
            z.writestr("__MACOSX/my work/._01_dot_scores.ipynb", b"\x00")
        notebooks = {"my work.zip": buf.getvalue()}
    elif kind == "renamed":
        notebooks = {f"homework {i + 1}.ipynb": data for i, data in enumerate(notebooks.values())}
    elif kind == "wrong exercise":
        notebooks[f"{exercises[-1]}.ipynb"] = notebook_text("04_attention", "full").encode()
    elif kind == "corrupt":
        last = f"{exercises[-1]}.ipynb"
        notebooks[last] = notebooks[last][: len(notebooks[last]) // 2]
    elif kind == "py":
        last = exercises[-1]
        source = "\n\n".join("".join(c["source"]) for c in json.loads(notebooks.pop(f"{last}.ipynb"))["cells"]
                             if c["cell_type"] == "code")
        notebooks[f"{last}.py"] = source.encode()
    return notebooks


# ---------------------------------------------------------------------------------------------- the class's files


def write_roster(path: Path, people: list[Student]) -> Path:
    """The course's own roster CSV."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "name", "email", "canvas_id", "sis_user_id", "sis_login_id", "moodle_id"])
        for s in people:
            writer.writerow([s.student_id, s.name, s.email, s.canvas_id if s.in_roster_canvas else "", s.sis_user_id,
                             s.email, s.moodle_id if s.in_roster_moodle else ""])
    return path


def write_canvas_export(path: Path, people: list[Student]) -> Path:
    """Canvas's gradebook export (Grades > Export): its header, the points-possible row, one row per student."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section",
                         "Attention, week 1 (4711)", "Current Score", "Final Score"])
        writer.writerow(["    Points Possible", "", "", "", "", "", "30.00", "(read only)", "(read only)"])
        for s in people:
            writer.writerow([s.sortable, s.canvas_id, s.sis_user_id, s.email, "", "Section A", "", "", ""])
    return path


MOODLE_WORKSHEET = ("Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                    "Grade can be changed", "Last modified (submission)", "Last modified (grade)", "Feedback comments")


def write_moodle_worksheet(path: Path, people: list[Student]) -> Path:
    """Moodle's offline grading worksheet (Assignment > View all submissions > Download grading worksheet)."""
    with path.open("w", newline="", encoding="utf-8-sig") as f:
        writer = csv.writer(f)
        writer.writerow(MOODLE_WORKSHEET)
        for s in people:
            writer.writerow([f"Participant {s.moodle_id}", s.name, s.email,
                             "No submission" if s.kind == "none" else "Submitted for grading", "", "30.00", "Yes",
                             "-" if s.kind == "none" else "Sunday, 1 March 2026, 10:00 PM", "-", ""])
    return path


def canvas_name(student: Student, attachment: int, file: str) -> str:
    """A file's name in Canvas's download: slug, LATE if late, user id, attachment id, the uploaded file's name."""
    return "_".join([student.slug, *(["LATE"] if student.late else []), student.canvas_id, str(attachment), file])


def canvas_zip(path: Path, people: list[Student], extra: dict[str, bytes] | None = None,
               exercises: tuple[str, ...] = EXERCISES) -> Path:
    """Canvas's "Download Submissions" zip: <slug>[_LATE]_<user id>_<attachment id>_<file>."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        attachment = 7000
        for s in people:
            s.attachments = []
            for name, data in files_of(s, exercises).items():
                attachment += 1
                s.attachments.append(str(attachment))
                z.writestr(canvas_name(s, attachment, name), data)
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return path


def moodle_zip(path: Path, people: list[Student], folders: bool = True) -> Path:
    """Moodle's "Download all submissions" zip: a folder per submission, or (`folders=False`) prefixed file names."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for s in people:
            prefix = f"{s.moodle_name}_{s.moodle_id}_assignsubmission_file_"
            for name, data in files_of(s).items():
                z.writestr(f"{prefix}/{name}" if folders else f"{prefix}{name}", data)
    return path


def folders(root: Path, people: list[Student]) -> Path:
    """A folder per student, named after the student."""
    for s in people:
        files = files_of(s)
        if files:
            (root / s.name).mkdir(parents=True)
            for name, data in files.items():
                (root / s.name / name).write_bytes(data)
    return root


def assignment_text(people: list[Student]) -> str:
    """The assignment file, with the extensions of the students who have one."""
    extensions = [f'{s.student_id} = {s.extension}' for s in people if s.extension]
    return ASSIGNMENT + ("\n[extensions]\n" + "\n".join(extensions) + "\n" if extensions else "")


def write_adjustments(path: Path, people: list[Student]) -> Path:
    """The manual adjustments: student, exercise, points, reason."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "exercise", "points", "reason"])
        for s in people:
            if s.adjustment:
                writer.writerow([s.student_id, *s.adjustment])
    return path


@dataclass
class Class:
    """Everything `build` wrote."""

    root: Path
    people: list[Student]
    stray: Student
    roster: Path
    canvas: Path
    moodle: Path
    canvas_export: Path
    moodle_worksheet: Path
    assignment: Path
    adjustments: Path

    def by_kind(self, kind: str) -> Student:
        return next(s for s in self.people if s.kind == kind)


def build(root: Path, n: int = 30) -> Class:
    """A class of `n` students and every file an instructor has of it, in `root`."""
    root.mkdir(parents=True, exist_ok=True)
    people, stray = students(n), off_roster()
    assignment = root / "assignment.toml"
    assignment.write_text(assignment_text(people), encoding="utf-8")
    return Class(root, people, stray, write_roster(root / "roster.csv", people),
                 canvas_zip(root / "canvas.zip", [*people, stray]), moodle_zip(root / "moodle.zip", [*people, stray]),
                 write_canvas_export(root / "canvas-gradebook.csv", people),
                 write_moodle_worksheet(root / "moodle-worksheet.csv", people), assignment,
                 write_adjustments(root / "adjustments.csv", people))
