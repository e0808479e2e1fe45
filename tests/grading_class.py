"""A generated class for the instructor's-kit tests: a roster, notebooks per student, Canvas and Moodle zips.

Each student gets a kind of work: "full" (the solutions), "wrong" (a softmax
without the max subtraction), "stub" (the untouched exercises), "one" (only
the first exercise), "error" (the solutions, with a cell that raises after
the functions), or "none" (nothing submitted). Notebooks come from the
repository's solutions/ and exercises/, so the grades follow the real checks.
"""

from __future__ import annotations

import csv
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXERCISES = ("01_dot_scores", "03_softmax")
KINDS = ("full", "wrong", "stub", "one", "full", "none", "wrong", "error")
FIRST = ("Ada", "Ben", "Chloé", "Dev", "Ewa", "Femi", "Gus", "Hana", "Ivo", "Jun")
LAST = ("Lovelace", "Okafor", "Martin", "Patel", "Nowak", "Adeyemi", "Berg", "Sato", "Horvat", "Li")

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


@dataclass
class Student:
    student_id: str
    name: str
    email: str
    canvas_id: str
    moodle_id: str
    kind: str
    late: bool = False

    @property
    def slug(self) -> str:
        """Canvas's name in file names: last name then first, lower case, letters only."""
        last, first = self.name.split()[-1], self.name.split()[0]
        return "".join(ch for ch in (last + first).lower() if ch.isalnum() and ch.isascii())


def students(n: int = 8) -> list[Student]:
    out = []
    for i in range(n):
        name = f"{FIRST[i % len(FIRST)]} {LAST[i % len(LAST)]}" + (f"{i // len(FIRST)}" if i >= len(FIRST) else "")
        out.append(Student(f"S{1000 + i}", name, f"s{1000 + i}@example.edu", str(50 + i), str(900 + i),
                           KINDS[i % len(KINDS)], late=(i % len(KINDS) == 4)))
    return out


def notebook_text(exercise: str, kind: str) -> str:
    if kind == "stub":
        return (ROOT / "exercises" / f"{exercise}.ipynb").read_text()
    text = (ROOT / "solutions" / f"{exercise}.ipynb").read_text()
    if kind == "error":
        broken = text.replace('"check_', '"raise RuntimeError(\\"a cell that fails\\")\\n", "check_', 1)
        assert broken != text
        return broken
    if kind == "wrong" and exercise == "03_softmax":
        wrong = text.replace("np.max(x, axis=axis, keepdims=True)", "0")
        assert wrong != text
        return wrong
    return text


def files_of(student: Student, exercises: tuple[str, ...] = EXERCISES) -> dict[str, str]:
    """File name -> notebook text of what the student hands in."""
    if student.kind == "none":
        return {}
    exercises = exercises[:1] if student.kind == "one" else exercises
    return {f"{ex}.ipynb": notebook_text(ex, student.kind) for ex in exercises}


def write_roster(path: Path, people: list[Student]) -> Path:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student_id", "name", "email", "canvas_id", "sis_login_id", "moodle_id"])
        for s in people:
            writer.writerow([s.student_id, s.name, s.email, s.canvas_id, s.email, s.moodle_id])
    return path


def canvas_zip(path: Path, people: list[Student], extra: dict[str, bytes] | None = None,
               exercises: tuple[str, ...] = EXERCISES) -> Path:
    """Canvas's "Download Submissions" zip: <slug>_[late_]<user id>_<attachment id>_<file>."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        attachment = 7000
        for s in people:
            for name, text in files_of(s, exercises).items():
                attachment += 1
                z.writestr(f"{s.slug}_{'late_' if s.late else ''}{s.canvas_id}_{attachment}_{name}", text)
        for name, data in (extra or {}).items():
            z.writestr(name, data)
    return path


def moodle_zip(path: Path, people: list[Student]) -> Path:
    """Moodle's "Download all submissions" zip, one folder per submission."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for s in people:
            for name, text in files_of(s).items():
                z.writestr(f"{s.name}_{s.moodle_id}_assignsubmission_file_/{name}", text)
    return path


def folders(root: Path, people: list[Student]) -> Path:
    """A folder per student, named after the student."""
    for s in people:
        files = files_of(s)
        if files:
            (root / s.name).mkdir(parents=True)
            for name, text in files.items():
                (root / s.name / name).write_text(text)
    return root
