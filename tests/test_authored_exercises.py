"""An instructor's own exercise (examples/own_exercises/cross_attention.ipynb): released, checked and graded by the
course's engine; and each exercise that cannot work refused with the notebook, the cell and the problem."""

from __future__ import annotations

import csv
import json
import math
import shutil
from pathlib import Path

import nbformat
import numpy as np
import pytest

from attention_course import softmax
from attention_course.cli import main
from attention_course.grading.authored import SourceError, read, release_folder
from attention_course.grading.checks.exercises import BY_ID, from_check_file, identify
from attention_course.grading.checks.exercises.authored import check_exercise
from support.audit import audit

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "examples" / "own_exercises"
EXAMPLE = SOURCE / "cross_attention.ipynb"
FAST = ["--cell-timeout", "5", "--check-timeout", "5", "--no-progress"]


def right(Q, K, V, key_padding):  # another way of writing it: loops over the queries
    out = np.zeros((Q.shape[0], V.shape[1]), dtype=Q.dtype)
    for i, q in enumerate(Q):
        s = np.where(key_padding, K @ q / np.sqrt(Q.shape[1]).astype(Q.dtype), -np.inf)  # (n_k,)
        w = np.exp(s - s.max())
        out[i] = (w / w.sum()) @ V  # (n_k,) x (n_k, d_v) -> (d_v,)
    return out


def padding_ignored(Q, K, V, key_padding):
    return softmax(Q @ K.T / math.sqrt(Q.shape[-1]), axis=-1) @ V


def scaled_by_d_v(Q, K, V, key_padding):
    scores = np.where(key_padding, Q @ K.T / math.sqrt(V.shape[-1]), -np.inf)
    return softmax(scores, axis=-1) @ V


def mask_after_softmax(Q, K, V, key_padding):
    return (softmax(Q @ K.T / math.sqrt(Q.shape[-1]), axis=-1) * key_padding) @ V


def divided_by_n_k(Q, K, V, key_padding):  # a mistake no hint of the exercise knows
    scores = np.where(key_padding, Q @ K.T / K.shape[0], -np.inf)
    return softmax(scores, axis=-1) @ V


def transposed(Q, K, V, key_padding):  # another: the output's axes swapped
    scores = np.where(key_padding, Q @ K.T / math.sqrt(Q.shape[-1]), -np.inf)
    return (softmax(scores, axis=-1) @ V).T


@pytest.fixture(scope="module", autouse=True)
def the_registry_as_it_was():
    """An instructor's exercise, once loaded, is known by its id for the rest of the process (`exercises.add`): the
    other tests of this worker find the course's exercises alone."""
    before = dict(BY_ID)
    yield
    BY_ID.clear()
    BY_ID.update(before)


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("released")
    report = release_folder(SOURCE, out)
    assert sorted(p.name for p in report.written) == ["cross_attention.check.json", "cross_attention.ipynb"]
    return out


@pytest.fixture(scope="module")
def check(released):
    return from_check_file(released / "cross_attention.check.json").checks[0]


def test_the_released_notebook_has_the_stub_and_the_check_cell_but_no_solution(released):
    nb = nbformat.read(released / "cross_attention.ipynb", as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "raise NotImplementedError()" in text and '"""Decoder queries attending' in text
    assert 'check_exercise(cross_attention, "cross_attention")' in text and 'chapter_page("masks")' in text
    for secret in ("np.where(key_padding[None, :]", "def hidden", "mistakes =", "BEGIN SOLUTION"):
        assert secret not in text
    source = nbformat.read(SOURCE / "cross_attention.ipynb", as_version=4)
    notes = [c.source for c in source.cells if "instructor" in c.metadata.get("tags", [])]
    assert notes and not any(note in text for note in notes)  # a cell tagged instructor stays in the source
    assert len(nb.cells) == len(source.cells) - len(notes) + 1  # + the chapter's link
    assert nb.metadata["attention_course"] == {"exercise": "cross_attention", "check_file": "cross_attention.check.json"}
    data = (released / "cross_attention.check.json").read_text()
    assert "longer encoder" not in data and "np.where" not in data  # no hidden input, no code of the solution
    assert json.loads(data)["mistakes"][0]["id"] == "padding_ignored"


def test_a_second_release_writes_the_same_files(released, tmp_path):
    release_folder(SOURCE, tmp_path)
    for name in ("cross_attention.ipynb", "cross_attention.check.json"):
        assert (tmp_path / name).read_bytes() == (released / name).read_bytes()


def test_a_right_solution_passes_from_the_check_file_alone(released):
    result = check_exercise(right, "cross_attention", folder=released)
    assert result.passed and result.score == result.max_score == 3 and not result.hint


@pytest.mark.parametrize("fn, mistake", [(padding_ignored, "padding_ignored"), (scaled_by_d_v, "scaled_by_d_v"),
                                         (mask_after_softmax, "mask_after_softmax")])
def test_each_known_mistake_is_named_with_its_hint(released, check, fn, mistake):
    result = check_exercise(fn, "cross_attention", folder=released)
    hint = next(m.hint for m in check.mistakes if m.id == mistake)
    assert not result.passed and result.mistake == mistake and result.hint == hint
    assert audit(check, fn) == [] and audit(read(EXAMPLE).check, fn) == []  # the student's check and the grader's


def test_an_unknown_mistake_gets_the_engine_s_observations_on_the_smallest_input(released, check):
    result = check_exercise(divided_by_n_k, "cross_attention", folder=released)
    assert not result.passed and result.mistake not in {m.id for m in check.mistakes}
    assert result.smallest is not None  # cut down from the check file's precomputed smaller inputs
    small = result.smallest_input
    assert small.args[0].size < check.cases[0].args[0].size or small.args[1].size < check.cases[0].args[1].size
    assert audit(check, divided_by_n_k) == [] and audit(read(EXAMPLE).check, divided_by_n_k) == []
    shape = check_exercise(transposed, "cross_attention", folder=released)
    assert shape.mistake == "wrong_shape" and shape.smallest is not None
    assert shape.message == "expected shape (1, 2), got shape (2, 1)"  # one query, one value column: the cut input
    assert audit(check, transposed) == [] and audit(read(EXAMPLE).check, transposed) == []


def test_the_grader_s_check_has_hidden_inputs_redrawn_by_a_secret():
    from attention_course.grading.checks.engine.cases import Rngs
    import dataclasses

    mine = read(EXAMPLE).check
    hidden = [c for c in mine.cases if c.hidden]
    assert len(hidden) == 2 and len(mine.cases) == 5
    other = dataclasses.replace(mine, hidden_rngs=Rngs(12345))
    assert [c.label for c in other.cases] == [c.label for c in mine.cases]
    assert not np.array_equal(other.cases[3].args[0], mine.cases[3].args[0])


def test_identify_finds_the_exercise_by_its_check_file(released):
    nb = nbformat.read(released / "cross_attention.ipynb", as_version=4)
    found = identify(nb.metadata, released / "cross_attention.ipynb", "")
    assert found is not None and found.id == "cross_attention" and found.max_score >= 3


# ---- a class graded -------------------------------------------------------------------------------------------

def _student_notebook(released: Path, fn_source: str) -> nbformat.NotebookNode:
    nb = nbformat.read(released / "cross_attention.ipynb", as_version=4)
    for cell in nb.cells:
        if "raise NotImplementedError()" in cell.source:
            cell.source = "import math\nimport numpy as np\nfrom attention_course import softmax\n\n" + fn_source
    return nb


@pytest.mark.sandbox
def test_a_class_is_graded_with_it(released, tmp_path, capsys):
    import inspect

    works = {"ada": right, "ben": padding_ignored, "chloe": divided_by_n_k, "dev": None}
    for student, fn in works.items():
        (tmp_path / "class" / student).mkdir(parents=True)
        if fn is None:
            nb = nbformat.read(released / "cross_attention.ipynb", as_version=4)  # the stub, untouched
        else:
            nb = _student_notebook(released, inspect.getsource(fn).replace(f"def {fn.__name__}(", "def cross_attention("))
        nbformat.write(nb, tmp_path / "class" / student / "cross_attention.ipynb")
    shutil.copytree(SOURCE, tmp_path / "mine", ignore=shutil.ignore_patterns("released"))
    (tmp_path / "a.toml").write_text('title = "Cross-attention"\nauthored = "mine"\nexercises = ["cross_attention"]\n'
                                     '[hidden]\nseed = 4242\n')
    out = tmp_path / "out"
    assert main(["grade", str(tmp_path / "class"), "--assignment", str(tmp_path / "a.toml"), "--out-dir", str(out),
                 *FAST]) == 0
    rows = {r["student_id"] or r["name"]: r for r in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    marks = {name: float(r["cross_attention"]) for name, r in rows.items()}
    assert marks["ada"] == 10 and marks["dev"] == 0 and 0 <= marks["ben"] < 10 and marks["chloe"] < 10
    assert all(r["max_total"] == "10" for r in rows.values())  # the points the check cell declares
    report = json.loads((out / "gradebook.json").read_text())
    assert report["exercises"]["cross_attention"]["checks"]["cross_attention"] == {"points": 10, "inputs": 5,
                                                                                   "hidden_inputs": 2}
    ben = next(r for r in report["submissions"] if r["name"] == "ben")
    assert ben["notebooks"][0]["checks"][0]["mistake"] == "padding_ignored"
    hint = read(EXAMPLE).declaration.mistakes["padding_ignored"][0]
    assert hint in " ".join((out / "feedback" / "ben.txt").read_text().split())
    # a mistake no hint knows, followed up in the sandbox from the check file's data: shown on a cut input
    assert "cut down to the smallest input that still fails" in (out / "feedback" / "chloe.txt").read_text()


@pytest.mark.sandbox
def test_a_student_s_attention_course_check_reads_the_check_file_beside_the_notebook(released, tmp_path, capsys):
    import inspect

    folder = tmp_path / "mine"
    folder.mkdir()
    shutil.copy(released / "cross_attention.check.json", folder)
    source = inspect.getsource(scaled_by_d_v).replace("def scaled_by_d_v(", "def cross_attention(")
    nbformat.write(_student_notebook(released, source), folder / "cross_attention.ipynb")
    assert main(["check", str(folder / "cross_attention.ipynb"), *FAST[:4]]) == 1
    printed = " ".join(capsys.readouterr().out.split())
    assert "cross_attention failed" in printed
    assert " ".join(read(EXAMPLE).declaration.mistakes["scaled_by_d_v"][0].split()) in printed


# ---- exercises that cannot work, refused ------------------------------------------------------------------------

def _source_with(tmp_path: Path, old: str, new: str) -> Path:
    nb = nbformat.read(EXAMPLE, as_version=4)
    changed = False
    for cell in nb.cells:
        if old in cell.source:
            cell.source, changed = cell.source.replace(old, new, 1), True
    assert changed, old
    path = tmp_path / "cross_attention.ipynb"
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize("old, new, said", [
    ('reference = cross_attention', 'reference = lambda Q, K, V, key_padding: Q @ V',
     "the reference fails on its own input"),
    ('"a longer encoder, half of it padding": dict(\n            Q=rng.standard_normal((4, 3)), K=rng.standard_normal((8, 3)), '
     'V=rng.standard_normal((8, 5)),\n            key_padding=np.arange(8) < 4),',
     '"the first again": dict(Q=np.array([[1.0, 0.0], [0.5, -1.0]]), K=np.array([[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]]), '
     'V=np.array([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [5.0, 5.0, 5.0]]), key_padding=np.array([True, True, False])),',
     "equals the visible input"),
    ('    # BEGIN SOLUTION', '    return softmax(np.where(key_padding, Q @ K.T / math.sqrt(Q.shape[-1]), -np.inf), '
     'axis=-1) @ V\n    # BEGIN SOLUTION', "the stub the student gets already passes"),
    ('"padding_ignored": (', '"same_as_reference": ("a hint", cross_attention),\n    "padding_ignored": (',
     "returns the reference's result on every input"),
    ('Q=np.array([[2.0, -1.0, 0.5]]),', 'Q=np.ones((17, 3)),', "more than the 48 a check prints"),
    ('key_padding=np.array([True, False, False, False])),', 'key_padding=[True, False, False, False]),',
     "is a list"),
])
def test_an_exercise_that_cannot_work_is_refused_naming_the_cell(tmp_path, old, new, said):
    path = _source_with(tmp_path, old, new)
    with pytest.raises(SourceError) as err:
        release_folder(tmp_path, tmp_path / "out")
    assert said in str(err.value) and str(path) in str(err.value) and ", cell " in str(err.value)
    assert not (tmp_path / "out").exists()


def test_the_release_command_writes_the_folder_and_checks_it_is_up_to_date(tmp_path, capsys):
    shutil.copy(EXAMPLE, tmp_path)
    assert main(["release", str(tmp_path), "--check"]) == 1
    assert main(["release", str(tmp_path)]) == 0
    assert (tmp_path / "released" / "cross_attention.check.json").is_file()
    assert main(["release", str(tmp_path), "--check"]) == 0


def test_the_release_command_reports_an_exercise_that_cannot_work(tmp_path, capsys):
    _source_with(tmp_path, 'reference = cross_attention', 'reference = 3')
    assert main(["release", str(tmp_path)]) == 2
    assert "`reference` must be a function" in capsys.readouterr().err


# ---- the For instructors page shows the example as it is ---------------------------------------------------------

INSTRUCTORS = (ROOT / "book" / "for_instructors.md").read_text()


def _fenced_after(marker: str) -> str:
    rest = INSTRUCTORS[INSTRUCTORS.index(marker):]
    body = rest.split("\n", 1)[1]
    return body[: body.index("```")].rstrip("\n")


def test_the_page_shows_the_example_s_cells_and_the_feedback_the_check_prints(released):
    nb = nbformat.read(EXAMPLE, as_version=4)
    section = INSTRUCTORS[INSTRUCTORS.index("## Your own exercise"):]
    assert nb.cells[1].source in section and nb.cells[3].source in section
    assert _fenced_after(":name: authored-mistake-sample") == str(
        check_exercise(padding_ignored, "cross_attention", folder=released))
    assert _fenced_after(":name: authored-unknown-sample") == str(
        check_exercise(divided_by_n_k, "cross_attention", folder=released))


def test_another_exercise_written_by_the_page_s_rules_works_too(tmp_path):
    """A size as a parameter (`axes = {"n": "n"}`), a course function as the reference, the markers around the whole
    function: the causal mask, as an instructor would write it from the page."""
    nb = nbformat.v4.new_notebook()
    solution = ('import numpy as np\n\n\n# BEGIN SOLUTION\ndef lower_triangle(n):\n'
                '    """Boolean (n, n), True where key j <= query i."""\n    return np.tri(n, dtype=bool)\n'
                '# END SOLUTION\n')
    check = ('from attention_course.core.masks import causal_mask\n\nreference = causal_mask\naxes = {"n": "n"}\n'
             'visible = {"four tokens": dict(n=4), "one token": dict(n=1)}\n'
             'def hidden(rng):\n    return {"a longer sequence": dict(n=int(rng.integers(5, 9)))}\n'
             'mistakes = {"upper": ("Token i sees the tokens before it, not after.", lambda n: np.tri(n, dtype=bool).T)}\n')
    cell = nbformat.v4.new_code_cell(check)
    cell.metadata["tags"] = ["check"]
    nb.cells = [nbformat.v4.new_markdown_cell("# The causal mask"), nbformat.v4.new_code_cell(solution), cell]
    (tmp_path / "src").mkdir()
    nbformat.write(nb, tmp_path / "src" / "lower_triangle.ipynb")
    release_folder(tmp_path / "src", tmp_path / "out")
    released_nb = nbformat.read(tmp_path / "out" / "lower_triangle.ipynb", as_version=4)
    assert "def lower_triangle(n):\n    \"\"\"Boolean (n, n)" in released_nb.cells[1].source
    assert "np.tri" not in released_nb.cells[1].source
    assert check_exercise(lambda n: np.tril(np.ones((n, n), dtype=bool)), "lower_triangle", folder=tmp_path / "out").passed
    upper = check_exercise(lambda n: np.triu(np.ones((n, n), dtype=bool)), "lower_triangle", folder=tmp_path / "out")
    assert upper.mistake == "upper" and upper.hint == "Token i sees the tokens before it, not after."
    shifted = check_exercise(lambda n: np.tri(n, k=1, dtype=bool), "lower_triangle", folder=tmp_path / "out")
    assert not shifted.passed and shifted.smallest is not None and shifted.smallest_input.args == (2,)
