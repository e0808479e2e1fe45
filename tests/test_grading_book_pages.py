"""The book's pages for students and instructors say what the grading code does.

Their samples and numbers are checked against the package, so the pages
cannot drift from the code.
"""

import re
from pathlib import Path

import nbformat
import numpy as np

from attention_course.grading import check_softmax
from attention_course.grading.checks.exercises import EXERCISES
from attention_course.grading.run.judge import FLOOD_BYTES
from attention_course.grading.run.status import ROW_STATUSES, WORST_FIRST
from attention_course.grading.classroom.write.gradebook import FIXED_COLUMNS, TAIL_COLUMNS
from attention_course.grading.run.sandbox.runner import Limits

ROOT = Path(__file__).resolve().parents[1]
STUDENTS = (ROOT / "book" / "for_students.md").read_text()
INSTRUCTORS = (ROOT / "book" / "for_instructors.md").read_text()


def fenced_after(text: str, marker: str) -> str:
    """The body of the first fenced block after `marker`."""
    rest = text[text.index(marker):]
    body = rest.split("\n", 1)[1]
    return body[: body.index("```")].rstrip("\n")


def test_the_sample_check_output_is_what_the_check_prints():
    def softmax(x, axis=-1):  # the page's example: no max subtraction
        e = np.exp(x)
        return e / np.sum(e, axis=axis, keepdims=True)

    assert fenced_after(STUDENTS, ":name: student-check-sample") == str(check_softmax(softmax))


def test_the_sample_stub_is_the_exercise_cell():
    nb = nbformat.read(ROOT / "exercises" / "03_softmax.ipynb", as_version=4)
    cell = next(c.source for c in nb.cells if c.source.startswith("def softmax"))
    assert fenced_after(STUDENTS, "```python") == cell


def test_every_exercise_and_function_is_listed_for_students():
    for ex in EXERCISES:
        assert f"`{ex.id}.ipynb`" in STUDENTS, ex.id
        for function in ex.functions:  # an exercise worked by hand fills in a dict, not a function
            assert (f"`{function} = {{" if ex.drawn else f"`{function}(") in STUDENTS, function


def test_instructors_read_the_real_defaults_columns_and_statuses():
    d = Limits()
    assert f"(`--cell-timeout`, {d.cell_seconds:g} s by default)" in INSTRUCTORS
    assert f"(`--check-timeout`, {d.call_seconds:g} s)" in INSTRUCTORS
    assert f"(`--memory-limit`, {d.memory_bytes >> 30}G)" in INSTRUCTORS
    assert f"(`--follow-up-timeout`, {d.follow_seconds:g} s by default)" in " ".join(INSTRUCTORS.split())
    assert FLOOD_BYTES == 1_000_000 and "more than a megabyte" in INSTRUCTORS
    columns = ", ".join(f"`{c}`" for c in FIXED_COLUMNS) + ", one column per exercise (points), " + ", ".join(
        f"`{c}`" for c in TAIL_COLUMNS)
    assert columns in INSTRUCTORS
    documented = set(re.findall(r"^\| `([^`]+)` \|", INSTRUCTORS, flags=re.MULTILINE))
    assert documented == set(WORST_FIRST) - {"grader error"} | {"ok", "not attempted", "not in the assignment"} | set(ROW_STATUSES)


def test_instructors_read_the_real_process_limit():
    assert f"more processes than the limit ({Limits().processes}) at once" in INSTRUCTORS


def test_instructors_read_the_real_zip_limits_and_lms_columns():
    from attention_course.grading.classroom.intake import ZipLimits
    from attention_course.grading.classroom.roster import ROSTER_COLUMNS
    from attention_course.grading.classroom.write.lms import CANVAS_ID_COLUMNS, MOODLE_COLUMNS

    z = ZipLimits()
    entries = f"{z.entries:,}".replace(",", " ")
    assert f"{entries} entries or {z.total_bytes >> 30} GiB in\nall" in INSTRUCTORS
    assert f"A file over {z.file_bytes >> 20} MiB is not unpacked" in INSTRUCTORS
    assert ",".join(ROSTER_COLUMNS) in INSTRUCTORS
    assert ", ".join(f"`{c}`" for c in CANVAS_ID_COLUMNS) in INSTRUCTORS
    assert ", ".join(f"`{c}`" for c in MOODLE_COLUMNS) in INSTRUCTORS


def test_both_pages_give_the_wheel_route_first():
    assert STUDENTS.index("attention-course exercises") < STUDENTS.index("## Open an exercise")
    assert INSTRUCTORS.index("make dist") < INSTRUCTORS.index("## What is where")
