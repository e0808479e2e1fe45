"""Tests for attention_course/grading/classroom/batch.py and judge.py: whole notebooks, graded in sandboxes, in parallel.

Every solution scores full marks, every untouched exercise scores zero without
crashing, and the hostile corpus is graded correctly in one batch.
"""

import hashlib
import json
import shutil
from pathlib import Path

import nbformat
import pytest

from attention_course.grading.checks.engine import results
from attention_course.grading.checks.exercises import EXERCISES
from attention_course.grading.classroom.batch import grade_submissions
from attention_course.grading.classroom.intake import collect
from attention_course.grading.classroom.score import notebooks_text
from attention_course.grading.run.sandbox import bubblewrap
from attention_course.grading.run.sandbox.runner import Limits
from attention_course.grading.run.status import Status

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "grading_corpus" / "hostile"
FAST = Limits(cell_seconds=3, call_seconds=3, grace_seconds=1, notebook_seconds=60, memory_bytes=1 << 30)
SANDBOX = bubblewrap.available() is not None  # CI has bubblewrap; elsewhere these notebooks are safe without it


@pytest.fixture(scope="module")
def released():
    grades = grade_submissions(collect([ROOT / "solutions", ROOT / "exercises"]), FAST, progress=False, sandbox=SANDBOX)
    return {(Path(g.submission.path).parent.name, Path(g.submission.path).stem): g for g in grades}


def test_every_solution_scores_full_marks(released):
    solutions = {stem: g for (folder, stem), g in released.items() if folder == "solutions"}
    assert len(solutions) == len(EXERCISES)
    for stem, grade in solutions.items():
        nb = grade.notebooks[0]
        assert nb.exercise == stem and grade.status == "ok", (stem, nb.incidents)
        assert nb.score == nb.max_score > 0, [str(c) for c in nb.checks if not c.passed]


def test_every_untouched_exercise_scores_zero_without_crashing(released):
    exercises = {stem: g for (folder, stem), g in released.items() if folder == "exercises"}
    assert len(exercises) == len(EXERCISES)
    for stem, grade in exercises.items():
        nb = grade.notebooks[0]
        assert grade.status == "not attempted" and nb.incidents == [], (stem, nb.incidents)
        assert nb.score == 0 and all(c.status == results.CheckStatus.NOT_ATTEMPTED for c in nb.checks)


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        h.update(str(path.relative_to(folder)).encode())
        if path.is_file():
            h.update(path.read_bytes())
    return h.hexdigest()


def test_hostile_submissions_are_graded_correctly_in_one_batch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a notebook that escaped its folder would write here
    expected = json.loads((HOSTILE / "expected.json").read_text())
    before = _digest(HOSTILE)
    grades = grade_submissions(collect([HOSTILE]), FAST, jobs=2, progress=False, sandbox=SANDBOX)
    assert _digest(HOSTILE) == before and list(tmp_path.iterdir()) == []
    by_name = {Path(g.submission.path).name: g for g in grades}
    assert set(by_name) == set(expected), "every submission gets a row"
    for name, want in expected.items():
        grade = by_name[name]
        nb = grade.notebooks[0]
        assert nb.status.split(", ") == want["status"], (name, nb.status, nb.incidents)
        scores = {c.check: c for c in nb.checks}
        assert set(scores) == set(want["checks"]), name
        for check, verdict in want["checks"].items():
            result = scores[check]
            if verdict == "full":
                assert result.score == result.max_score, (name, str(result))
            elif verdict == "zero":
                assert result.score == 0, (name, str(result))
            else:
                assert 0 <= result.score < result.max_score, (name, str(result))
        for check, mistake in want.get("mistakes", {}).items():
            assert scores[check].mistake == mistake, (name, str(scores[check]))
        if "column" in want:
            assert nb.exercise == want["column"]


def test_collect_rules(tmp_path):
    (tmp_path / "alice").mkdir()
    shutil.copy(ROOT / "solutions" / "03_softmax.ipynb", tmp_path / "alice")
    (tmp_path / "alice" / ".ipynb_checkpoints").mkdir()
    shutil.copy(ROOT / "solutions" / "03_softmax.ipynb", tmp_path / "alice" / ".ipynb_checkpoints" / "x.ipynb")
    shutil.copy(ROOT / "solutions" / "04_attention.ipynb", tmp_path / "bob_04.ipynb")
    (tmp_path / "notes.txt").write_text("not a notebook")
    (tmp_path / "empty").mkdir()
    subs = collect([tmp_path])
    assert [(s.name, len(s.notebooks), s.is_folder) for s in subs] == [
        ("alice", 1, True), ("bob_04", 1, False), ("empty", 0, True)]
    with pytest.raises(FileNotFoundError):
        collect([tmp_path / "nobody"])


def test_a_student_folder_is_one_submission(tmp_path):
    student = tmp_path / "carol"
    student.mkdir()
    shutil.copy(ROOT / "solutions" / "01_dot_scores.ipynb", student)
    shutil.copy(ROOT / "exercises" / "03_softmax.ipynb", student)
    (grade,) = grade_submissions(collect([tmp_path]), FAST, progress=False, sandbox=SANDBOX)
    assert grade.submission.name == "carol" and len(grade.notebooks) == 2
    assert grade.status is Status.NOT_ATTEMPTED and notebooks_text(grade.notebooks) == "03_softmax: not attempted"
    assert set(grade.by_exercise()) == {"01_dot_scores", "03_softmax"}


def test_a_notebook_that_calls_the_package_answer_is_flagged(tmp_path):
    nb = (ROOT / "solutions" / "03_softmax.ipynb").read_text()
    borrowed = nb.replace('"from attention_course.grading import check_softmax\\n",',
                          '"from attention_course.grading import check_softmax\\n", "from attention_course import softmax as reference\\n",')
    assert borrowed != nb
    (tmp_path / "03_softmax.ipynb").write_text(borrowed)
    (grade,) = grade_submissions(collect([tmp_path / "03_softmax.ipynb"]), FAST, progress=False, sandbox=SANDBOX)
    nb_grade = grade.notebooks[0]
    assert nb_grade.score == nb_grade.max_score and grade.status == "used the course's code"
    assert any("attention_course.softmax" in i for i in nb_grade.incidents)


def test_a_function_that_calls_the_course_answer_at_run_time_is_flagged(tmp_path):
    nb = nbformat.read(ROOT / "solutions" / "03_softmax.ipynb", as_version=4)
    cell = next(c for c in nb.cells if c.source.startswith("def softmax"))
    cell.source = ("def softmax(x, axis=-1):\n    import importlib\n"  # found at run time: no import to read
                   "    course = importlib.import_module('attention_' + 'course')\n"
                   "    return getattr(course, 'soft' + 'max')(x, axis)")
    nbformat.write(nb, tmp_path / "03_softmax.ipynb")
    (grade,) = grade_submissions(collect([tmp_path / "03_softmax.ipynb"]), FAST, progress=False, sandbox=SANDBOX)
    nb_grade = grade.notebooks[0]
    assert grade.status == "used the course's code", nb_grade.incidents
    assert any("softmax(), called by the grader," in i and "attention_course.core.softmax.softmax" in i
               for i in nb_grade.incidents), nb_grade.incidents


def test_a_cell_error_is_named_by_its_exception_and_the_line_that_raised_it(tmp_path):
    nb = nbformat.read(ROOT / "solutions" / "03_softmax.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("def stop():\n    raise PermissionError(1, 'Operation not permitted')\n\nstop()"))
    nbformat.write(nb, tmp_path / "03_softmax.ipynb")
    (grade,) = grade_submissions(collect([tmp_path / "03_softmax.ipynb"]), FAST, progress=False, sandbox=SANDBOX)
    (incident,) = grade.notebooks[0].incidents
    assert f"code cell {len([c for c in nb.cells if c.cell_type == 'code'])} raised PermissionError: [Errno 1] " \
           "Operation not permitted (at `raise PermissionError(1, 'Operation not permitted')`)" in incident, incident


AGREEING = ("softmax_global_max", "dot_scores_query_at_keys", "masked_large_negative", "padded_own_mask_broadcast",
            "mha_split_only", "flash_max_starts_at_zero", "padded_scores_with_np_dot", "softmax_exp_in_float32",
            "12_sink_share_overflows", "13_query_heads_cache", "13_step_one_layer")
"""Corpus mistakes graded both ways: recognised by prediction, by an error's own line, by the tiled loop, two
whose hints offer a lead only because the code uses np.dot or float32 (read from the cells in the batch), from
plain numbers and a dtype's name, and by a function that calls another the student wrote."""


def test_the_batch_grader_and_the_notebook_check_give_the_same_marks_and_hints(tmp_path):
    from attention_course.grading.checks.engine.run import check_in_process

    corpus = ROOT / "tests" / "grading_corpus" / "mistakes"
    checks = {c.name: (e, c) for e in EXERCISES for c in e.checks}
    expected = {}
    for name in AGREEING:
        source = (corpus / f"{name}.py").read_text()
        namespace: dict = {}
        exec(compile(source, str(corpus / f"{name}.py"), "exec"), namespace)
        exercise, check = checks[namespace["CHECK"]]
        nb = nbformat.read(ROOT / "solutions" / f"{exercise.id}.ipynb", as_version=4)
        cell = next(c for c in nb.cells if c.cell_type == "code" and f"def {check.function}(" in c.source)
        cell.source = source  # the student's notebook: the solution with this one function done wrong
        nbformat.write(nb, tmp_path / f"{exercise.id}-{name}.ipynb")
        expected[name] = (check.name, check_in_process(check, namespace[check.function], hidden=True))
    grades = grade_submissions(collect([tmp_path]), FAST, progress=False, sandbox=SANDBOX)
    for grade in grades:
        name = grade.submission.name.split("-", 1)[1]
        check_name, in_notebook = expected[name]
        in_batch = next(c for c in grade.notebooks[0].checks if c.check == check_name)
        fields = ("score", "max_score", "status", "mistake", "message", "hint", "smallest")
        assert [getattr(in_batch, f) for f in fields] == [getattr(in_notebook, f) for f in fields], name
        assert [c.hint for c in in_batch.cases] == [c.hint for c in in_notebook.cases], name
        assert in_notebook.mistake == load_mistake(corpus / f"{name}.py"), name
        assert in_batch.score < in_batch.max_score and in_batch.hint, name
    assert len(grades) == len(AGREEING)
    line = "scores = np.where(mask, Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), -np.inf)"
    assert any(line in c.hint for g in grades for c in g.notebooks[0].checks)  # the student's line, seen in the batch too


def load_mistake(path: Path):
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace["MISTAKE"]


def test_a_notebook_that_is_not_run_ends_the_worker_started_for_it(tmp_path):
    from attention_course.grading.run.notebook import grade_notebook
    from attention_course.grading.run.sandbox.process import start_worker

    box = bubblewrap.available() if SANDBOX else None
    broken = tmp_path / "03_softmax.ipynb"
    broken.write_text("{not json")
    started = start_worker(FAST, sandbox=box, notebook=broken)
    grade = grade_notebook(broken, FAST, sandbox=SANDBOX, started=started)
    assert grade.status == "invalid notebook" and started.taken and started.proc.returncode is not None
