"""Tests for attention_course/grading/checks/exercises/by_hand.py and grading/handout.py: exercise 0, worked by hand.

Each student's example is drawn from their id and the assignment's secret;
without an id it is the introduction's bank-bot example. The check names the
step that went wrong, carries a right later step forward from a wrong earlier
one, and recognises a mistake only when its prediction reproduces the sheet.
The batch grader draws each student's example again from the roster.
"""

import csv
import dataclasses
import html
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from attention_course.chapters.worked_example import BANK_BOT, ROOTS_OF_D_K, fair_by_hand
from attention_course.cli import main
from attention_course.grading import check_worked_example
from attention_course.grading.checks.engine import results
from support.audit import audit
from attention_course.grading.checks.engine.run import check_in_process
from attention_course.grading.checks.exercises import EXERCISES, by_hand
from attention_course.grading.checks.exercises.by_hand import (
    ENTRIES, LABELS, WORKED_EXAMPLE, checks_for, distinguishable, example_dict, example_for, largest, questions,
    rounded_answers, same_example, worked_example_check, written,
)
from attention_course.grading.handout import DRAWN, example_cells, personal_notebook, printable_page, printed_answers

from by_hand_sheets import carried_forward, sheet_with

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "grading_corpus"
SECRET = 4242
STUDENTS = ("s1001", "s1002", "ada.lovelace", "B-17")


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"corpus_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def failing(result: results.CheckResult) -> list[str]:
    return [c.label for c in result.cases if not c.passed]


def test_without_an_id_the_exercise_is_the_introductions_example():
    assert example_for(None) is BANK_BOT and example_for(None, SECRET) is BANK_BOT
    key = rounded_answers(BANK_BOT)
    assert BANK_BOT.d_k == 4 and key["dot_products"] == [1.0, 6.0, 0.4, 2.0]
    assert key["scaled_scores"] == [0.5, 3.0, 0.2, 1.0]
    assert key["exponentials"] == [1.65, 20.09, 1.22, 2.72] and key["exp_sum"] == 25.67
    assert key["weights"] == [0.064, 0.782, 0.048, 0.106] and key["output"] == [0.19, 0.91]
    printed = printed_answers(BANK_BOT, None)
    for line in ("1  my       1.0     0.5   1.65   0.064", "2  card     6.0     3.0  20.09   0.782",
                 "sum                   25.67", "output = [0.19, 0.91]"):
        assert line in printed, printed
    assert check_worked_example(key).passed


def test_neighbours_get_different_examples_and_each_always_the_same():
    examples = [example_for(s, SECRET) for s in STUDENTS]
    assert not any(same_example(a, b) for i, a in enumerate(examples) for b in examples[i + 1:])
    assert same_example(example_for(" S1001 ", SECRET), examples[0])  # spaces and case do not make another student
    assert not same_example(example_for("s1001", SECRET + 1), examples[0])  # another assignment's secret
    assert not same_example(example_for("s1001"), examples[0])  # no secret
    with pytest.raises(ValueError, match="student"):
        example_for("  ")


def test_the_draw_does_not_depend_on_pythons_salted_hash():
    code = ("import json; from attention_course.grading.checks.exercises.by_hand import example_dict, example_for; "
            "print(json.dumps(example_dict(example_for('s1001', 4242))))")
    drawn = {subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONHASHSEED": seed}, check=True,
                            capture_output=True, text=True).stdout for seed in ("1", "2")}
    assert drawn == {json.dumps(example_dict(example_for("s1001", SECRET))) + "\n"}


def test_every_drawn_example_is_fair_to_work_by_hand():
    for i in range(40):
        example = example_for(f"student-{i}", SECRET)
        n = len(example.tokens)
        assert 3 <= n <= 5 and example.d_k in {r * r for r in ROOTS_OF_D_K} and example.query_token == example.tokens[-1]
        for arr in (example.query, example.keys, example.values):
            assert np.all(np.abs(arr) <= 2) and np.allclose(arr * 10, np.round(arr * 10))  # small, one decimal at most
        weights = np.round(example.trace().weights, 3)
        assert len(set(weights.tolist())) == n  # no two weights tie to 3 decimals
        assert fair_by_hand(example) and distinguishable(example)


def test_the_answer_key_agrees_with_torch():
    torch = pytest.importorskip("torch")
    for student in (None, *STUDENTS):
        example = example_for(student, SECRET)
        key, asked, n = by_hand.answer_key(example), questions(example), len(example.tokens)
        q = torch.tensor(example.query)[None, None, :]  # (1, 1, d_k): one query, B = 1
        K, V = torch.tensor(example.keys)[None], torch.tensor(example.values)[None]  # (1, n_k, d_k), (1, n_k, d_v)
        scores = (q @ K.transpose(-1, -2))[0, 0]  # (1, 1, d_k) x (1, d_k, n_k) -> (1, 1, n_k)
        weights = torch.softmax(scores / example.d_k**0.5, dim=-1)
        output = torch.nn.functional.scaled_dot_product_attention(q, K, V)[0, 0]  # (1, 1, d_v)
        assert np.allclose(key["dot_products"], scores.numpy()) and np.allclose(key["weights"], weights.numpy())
        assert np.allclose(key["output"], output.numpy())
        causal = torch.ones(n, n, dtype=torch.bool).tril()  # True: may attend; row i: the query of token i + 1
        every = (K @ K.transpose(-1, -2))[0]  # (1, n_k, d_k) x (1, d_k, n_k) -> (1, n_k, n_k); each key as a query
        masked_weights = torch.softmax(every.masked_fill(~causal, float("-inf")), dim=-1)
        zero = np.flatnonzero(masked_weights[asked.masked_query - 1].numpy() == 0) + 1  # positions counted from 1
        assert key["masked"].tolist() == zero.tolist()
        assert largest(example) == int(torch.argmax(weights)) + 1


@pytest.mark.parametrize("student", (None, *STUDENTS[:3]))
def test_each_mistake_is_named_at_its_step_and_costs_only_that_step(student):
    example = example_for(student, SECRET)
    check = worked_example_check(example)
    named = set()
    for mistake in check.mistakes:
        sheet = sheet_with(example, mistake)  # every later step computed right from the wrong one
        if sheet is None:
            continue
        result = check_in_process(check, sheet)
        assert failing(result) == [LABELS[mistake.step]], (mistake.id, str(result))
        assert result.mistake == mistake.id and result.hint == mistake.hint and result.score == 7, str(result)
        assert audit(check, sheet) == []
        named.add(mistake.id)
    assert named == {m.id for m in check.mistakes}


def test_a_slip_with_no_mistake_behind_it_is_located_not_explained():
    sheet = rounded_answers(BANK_BOT)
    sheet["dot_products"] = [1, 5, 0.4, 2]  # 6 for "card" miscounted
    sheet = carried_forward(BANK_BOT, sheet, "dot_products")
    result = check_worked_example(sheet)
    assert failing(result) == [LABELS["dot_products"]] and result.score == 7
    assert result.hint == "" and result.mistake is None and 'those of "card"' in result.message
    (wrong,) = [c for c in result.cases if not c.passed]
    assert wrong.got.startswith("your answers, as the check read them:\n  dot_products = [1, 5, 0.4, 2]\n"), wrong.got
    assert audit(WORKED_EXAMPLE, sheet) == []


def test_a_hint_that_says_an_earlier_step_is_right_needs_it_right():
    sheet = rounded_answers(BANK_BOT)
    sheet["weights"] = np.round(np.exp([1, 6, 0.4, 2]) / np.exp([1, 6, 0.4, 2]).sum(), 3).tolist()  # unscaled softmax
    assert check_worked_example(sheet).mistake == "softmax_of_unscaled_scores"
    sheet["scaled_scores"] = [0.5, 3.0, 0.2, 1.1]  # now the scaled scores are wrong too: "they are right" is untrue
    result = check_worked_example(sheet)
    assert failing(result) == [LABELS["scaled_scores"], LABELS["weights"]]
    assert all(c.mistake != "softmax_of_unscaled_scores" for c in result.cases)


def _three_mistakes(example):
    """A sheet with three mistakes at three steps: the scale left out (the later steps carried forward from it), the
    causal mask hiding the past, and the wrong statement; and those mistakes."""
    mistakes = {m.id: m for m in worked_example_check(example).mistakes}
    chosen = [mistakes["missing_scale"], mistakes["mask_hides_the_past"], mistakes["meaning_most_important_word"]]
    sheet = sheet_with(example, chosen[0])
    for m in chosen[1:]:
        sheet[m.step] = sheet_with(example, m)[m.step]
    return sheet, chosen


def _flat(text: str) -> str:
    return " ".join(text.split())  # the text form wraps hints at 80 columns


@pytest.mark.parametrize("student", (None, STUDENTS[0]))
def test_every_wrong_step_is_shown_with_its_own_hint(student):
    example = example_for(student, SECRET)
    check = worked_example_check(example)
    sheet, mistakes = _three_mistakes(example)
    result = check_in_process(check, sheet)
    assert failing(result) == [LABELS[m.step] for m in mistakes] and result.score == 5, str(result)
    wrong = {c.label: c for c in result.cases if not c.passed}
    for m in mistakes:  # each step names its own mistake, and the audit finds every hint backed
        assert (wrong[LABELS[m.step]].mistake, wrong[LABELS[m.step]].hint) == (m.id, m.hint)
    assert audit(check, sheet) == []
    text, page = _flat(str(result)), result._repr_html_()
    for c in wrong.values():
        assert c.label in text and _flat(c.hint) in text and _flat(c.message) in text, text
        assert html.escape(c.hint) in page and html.escape(c.label) in page
    assert text.count("hint: ") == 3 and "also failing (2):" in text
    # computed right from the wrong scaled scores: they keep their marks, and say so
    carried = {c.label: c for c in result.cases if c.passed and c.message}
    assert list(carried) == [LABELS[e] for e in ("exponentials", "exp_sum", "weights", "output")], text
    assert all(c.message.endswith("carried forward from the wrong step 3 (the scaled scores), this step keeps its mark")
               for c in carried.values())
    assert carried[LABELS["exp_sum"]].message.startswith("right from your own exponentials:")
    assert "passed, with a note (4):" in text and all(_flat(c.message) in text for c in carried.values())


def test_a_step_says_it_was_carried_forward_only_when_it_was():
    example = example_for(STUDENTS[2], SECRET)
    key = by_hand.answer_key(example)
    right = carried_forward(example, rounded_answers(example), "dot_products")  # each step from the rounded last
    result = check_worked_example(right, example_dict(example))
    assert result.passed and not any(c.message for c in result.cases), str(result)
    slip = dict(right, dot_products=[x + 1 for x in right["dot_products"][:1]] + right["dot_products"][1:])
    slip = carried_forward(example, slip, "dot_products")
    result = check_worked_example(slip, example_dict(example))
    assert failing(result) == [LABELS["dot_products"]] and result.score == 7
    for c in result.cases[1:6]:  # the scaled scores to the output: each computed from the slip
        entry = ENTRIES[result.cases.index(c)]
        assert c.passed and "carried forward from the wrong step 2 (the dot products q·k)" in c.message, c
        assert not np.allclose(slip[entry], key[entry], atol=10.0 ** -by_hand.DECIMALS[entry])  # not the example's
    assert audit(worked_example_check(example), slip) == []


def test_the_audit_says_a_carried_forward_note_again():
    from support.audit import _unsupported_note
    from attention_course.grading.checks.engine.calls import observe_call

    sheet, _ = _three_mistakes(BANK_BOT)
    i = ENTRIES.index("exponentials")
    note = check_in_process(WORKED_EXAMPLE, sheet).cases[i]
    obs = observe_call(sheet, WORKED_EXAMPLE.cases[i].args, {}, seconds=10)
    assert note.passed and "carried forward" in note.message and _unsupported_note(WORKED_EXAMPLE, i, note, obs) is None
    told = dataclasses.replace(note, message=note.message.replace("step 3", "step 2"))  # a note that is not true
    assert "does not read" in _unsupported_note(WORKED_EXAMPLE, i, told, obs)
    unstated = dataclasses.replace(WORKED_EXAMPLE, pass_note=None)
    assert "nothing states" in _unsupported_note(unstated, i, note, obs)


def test_the_batch_feedback_shows_every_wrong_step_too():
    from attention_course.grading.classroom.report import check_from_json
    from attention_course.grading.classroom.write.feedback import check_result

    sheet, mistakes = _three_mistakes(BANK_BOT)
    result = check_worked_example(sheet)
    saved = json.loads(json.dumps(dataclasses.asdict(result)))  # as the report keeps it
    assert check_from_json(saved).every_failure
    shown = check_result(check_from_json(saved))
    text, page = _flat(str(shown)), shown._repr_html_()
    for m in mistakes:
        assert _flat(m.hint) in text and html.escape(m.hint) in page
    from attention_course.grading.run.judge import NotebookGrade
    from attention_course.grading.classroom.score import _check_feedback

    (cell,) = _check_feedback(NotebookGrade("ada/00_worked_example.ipynb", "00_worked_example", checks=[result]))
    assert cell.endswith(f"Also wrong: {LABELS['masked']}; {LABELS['meaning']}.")  # the gradebook's feedback cell


def test_the_coded_exercises_still_show_one_failing_input():
    from attention_course.grading import check_softmax

    def softmax(x, axis=-1):
        e = np.exp(x)  # no max subtracted: overflows on large scores
        return e / e.sum(axis=axis, keepdims=True)

    result = check_softmax(softmax)
    others = [c for c in result.cases if not c.passed and c is not result.first_failure]
    assert not result.every_failure and others, str(result)
    assert str(result).count("hint: ") == 1 and "also failing (" in str(result)
    assert "also failing: <em>" not in result._repr_html_()


def test_a_sheet_is_shown_as_it_was_written_and_reads_back_the_same():
    rng = np.random.default_rng(7)
    for x in (1.0, 0.5, -0.0, 3.9, 1.36, 0.1 + 0.2, 1e-7, 4.3e15, float(np.exp(2.8)), *rng.normal(size=20) * 100):
        assert float(eval(written(x))) == x and not written(x).endswith(".")
    assert (written([1.0, 2.0]), written(0.5), written(np.array([[1, 2.5], [3, 4]]))) == ("[1, 2]", "0.5", "[[1, 2.5], [3, 4]]")
    for student in (None, *STUDENTS):
        example = example_for(student, SECRET)
        sheet, _ = _three_mistakes(example)
        sheet["output"] = np.asarray(sheet["output"], dtype=np.float32)  # float32 too: read as the float64 it is
        sheet["exp_sum"] = float(np.exp(1.234))  # all its digits
        result = check_worked_example(sheet, example_dict(example))
        got = result.first_failure.got
        assert got.startswith("your answers, as the check read them:\n"), got
        assert not re.search(r"\d\.(?!\d)", got), got  # no NumPy "1." nor "2.]"
        shown = dict(line.strip().split(" = ") for line in got.splitlines()[1:])
        assert list(shown) == list(ENTRIES)
        for entry in ENTRIES:
            read = np.asarray(sheet[entry], dtype=np.float64)  # what the check compares
            assert np.array_equal(np.asarray(eval(shown[entry]), dtype=np.float64), read), (entry, shown[entry])
    half = check_worked_example({"dot_products": [1, 6, 0.4, 2], "masked": [1.5]})
    assert "got [1.5]" in str(half) and "scaled_scores = (not answered)" in half.first_failure.got


def test_the_handouts_numbers_read_back_as_the_example_and_its_answers():
    for student in (None, *STUDENTS):
        example = example_for(student, SECRET)
        drawn = [example.query, *example.keys, *example.values]
        for shown in (example_cells(example, student)["table"], printable_page(example, student)):
            texts = re.findall(r"\[[-0-9., ]+\]", shown)
            assert not any(re.search(r"\d\.(?!\d)", t) for t in texts), texts  # no "1." nor "2.]"
            vectors = [np.array(eval(t), dtype=np.float64) for t in texts]
            assert all(any(v.shape == d.shape and np.array_equal(v, d) for v in vectors) for d in drawn), shown
        printed = printed_answers(example, student)
        namespace: dict = {}
        exec(printed[printed.index("answers = {"):], namespace)
        sheet = namespace["answers"]
        assert sheet == rounded_answers(example) and "., " not in printed and ".]" not in printed
        assert check_worked_example(sheet, example_dict(example)).passed


def test_the_corpus_names_the_step_of_each_mistake():
    entries = sorted((CORPUS / "mistakes").glob("00_*.py")) + sorted((CORPUS / "assumptions").glob("00_*.py"))
    covered = set()
    for path in entries:
        wrong = load(path)
        result = check_in_process(WORKED_EXAMPLE, wrong.answers)
        step = getattr(wrong, "STEP", None) or wrong.MESSAGE[0]
        assert failing(result) == [step], (path.name, str(result))
        covered.add(result.mistake)
    # every recognised mistake has its wrong sheet (a sheet caught but not named, None, checks what is not said)
    assert covered - {None} == {m.id for m in WORKED_EXAMPLE.mistakes}


def test_right_answers_pass_as_ints_floats_lists_or_arrays():
    example = example_for(STUDENTS[1], SECRET)
    right = rounded_answers(example)
    as_arrays = {k: np.asarray(v, dtype=np.float32 if k in by_hand.DECIMALS else np.int64) for k, v in right.items()}
    for sheet in (right, as_arrays):
        result = check_worked_example(sheet, example_dict(example))
        assert result.passed and result.score == len(ENTRIES), str(result)
    assert not check_worked_example(rounded_answers(BANK_BOT), example_dict(example)).passed


def test_an_untouched_or_missing_sheet_says_so():
    result = check_worked_example({entry: ... for entry in ENTRIES})
    assert result.status == results.CheckStatus.NOT_ATTEMPTED and "still `...`" in result.message
    partial = check_worked_example({"dot_products": [1, 6, 0.4, 2]})
    assert partial.score == 1 and "not answered yet" in partial.message
    missing = check_in_process(WORKED_EXAMPLE, {}).cases[0]
    assert missing.status == results.CheckStatus.NOT_ATTEMPTED
    with pytest.raises(ValueError, match="example"):
        check_worked_example({}, {"tokens": ["a", "b"], "query": [1, 2], "keys": [[1, 2]], "values": [[1]]})


def test_the_grader_draws_the_roster_students_example_and_says_when_the_notebook_disagrees():
    mine = example_for("s1001", SECRET)
    made = {"attention_course": {"exercise": "00_worked_example", "student": "s1001", "example": example_dict(mine)}}
    (check,), notes = checks_for(made, "s1001", SECRET)
    assert notes == () and check.cases[0].code == by_hand.example_code(mine)
    (check,), notes = checks_for(made, "s1002", SECRET)  # the roster says this is another student's submission
    assert check.cases[0].code == by_hand.example_code(example_for("s1002", SECRET))
    assert len(notes) == 1 and "'s1001', not 's1002'" in notes[0]
    (check,), notes = checks_for(made, "S1001", None)  # made with a secret, graded without one
    assert "not those drawn for 'S1001'" in notes[0]
    (check,), notes = checks_for({}, "s1001", SECRET)
    assert "records no student id" in notes[0]
    (check,), notes = checks_for(made, None, None)  # a student's own check: the numbers the notebook shows
    assert notes == () and check.cases[0].code == by_hand.example_code(mine)
    broken = {"attention_course": {"example": {"tokens": "no"}}}
    (check,), notes = checks_for(broken, None, None)
    assert check is WORKED_EXAMPLE and "bank-bot" in notes[0]


def test_the_solution_shows_the_bank_bot_and_its_answers():
    nb = nbformat.read(ROOT / "solutions" / "00_worked_example.ipynb", as_version=4)
    shown = {c.metadata["attention_course"][DRAWN]: c.source for c in nb.cells if DRAWN in c.metadata.get(
        "attention_course", {})}
    assert shown == example_cells(BANK_BOT, None)  # the cells the handout code writes, for no student
    assert nb.metadata["attention_course"]["example"] == example_dict(BANK_BOT)
    namespace: dict = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and "check_worked_example(" not in cell.source:
            exec(cell.source, namespace)
    assert namespace["answers"] == rounded_answers(BANK_BOT)


def test_a_notebook_made_for_a_student_shows_and_records_their_example():
    released = nbformat.read(ROOT / "exercises" / "00_worked_example.ipynb", as_version=4)
    example = example_for("s1001", SECRET)
    own = personal_notebook(released, example, "s1001")
    assert own.metadata["attention_course"]["student"] == "s1001"
    assert own.metadata["attention_course"]["example"] == example_dict(example)
    assert "released_sources" not in own.metadata["attention_course"]
    code = next(c.source for c in own.cells if c.metadata.get("attention_course", {}).get(DRAWN) == "code")
    namespace: dict = {}
    exec(code, namespace)
    assert same_example(by_hand.example_from_dict(namespace["example"]), example)
    assert released.cells[3].source != code  # the released notebook itself is left as it was
    with pytest.raises(ValueError, match="table"):
        personal_notebook(nbformat.v4.new_notebook(), example, "s1001")


def test_the_printable_page_is_the_example_on_paper():
    example = example_for("s1002", SECRET)
    page = printable_page(example, "s1002")
    assert "<script" not in page and "http" not in page and "@page" in page
    assert "s1002" in page and all(token in page for token in example.tokens)
    asked = questions(example)
    assert f"query of token {asked.masked_query}" in page
    assert "0.782" not in printable_page(BANK_BOT, None)  # the answers are for the student to find


def test_the_cli_writes_a_students_notebook_and_prints_the_answers(tmp_path, capsys):
    assignment = tmp_path / "assignment.toml"
    assignment.write_text(f"[hidden]\nseed = {SECRET}\n")
    for student in ("s1001", "s1002"):
        assert main(["exercises", str(tmp_path / student), "--student", student, "--assignment", str(assignment)]) == 0
    capsys.readouterr()
    notebooks = {s: nbformat.read(tmp_path / s / "00_worked_example.ipynb", as_version=4) for s in ("s1001", "s1002")}
    assert (tmp_path / "s1001" / "00_worked_example.html").is_file()
    assert len(list((tmp_path / "s1001").glob("*.ipynb"))) == len(EXERCISES)
    recorded = {s: nb.metadata["attention_course"]["example"] for s, nb in notebooks.items()}
    assert recorded["s1001"] != recorded["s1002"] and recorded["s1001"] == example_dict(example_for("s1001", SECRET))
    assert main(["exercises", str(tmp_path / "s1001"), "--student", "s1001", "--assignment", str(assignment)]) == 0
    assert "0 written" in capsys.readouterr().out  # the same student again: nothing changes
    assert main(["answers", "--student", "s1001", "--assignment", str(assignment)]) == 0
    printed = capsys.readouterr().out
    sheet = printed[printed.index("answers = {"):]
    namespace: dict = {}
    exec(sheet, namespace)
    assert check_worked_example(namespace["answers"], recorded["s1001"]).passed
    assert main(["exercises", str(tmp_path / "other"), "--student", "s9"]) == 0
    assert "without a secret" in capsys.readouterr().err
    assert main(["answers", "--assignment", str(tmp_path / "none.toml")]) == 2


def _answered(notebook: Path, answers: dict) -> None:
    """The student's notebook with its answers cell filled in."""
    nb = nbformat.read(notebook, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.lstrip().startswith("# Your answers"))
    cell.source = "answers = " + json.dumps(answers, indent=4)
    nbformat.write(nb, notebook)


def test_a_class_is_graded_from_the_roster_each_against_their_own_example(tmp_path, capsys):
    assignment = tmp_path / "assignment.toml"
    assignment.write_text(f'title = "Exercise 0"\nexercises = ["00_worked_example"]\n[hidden]\nseed = {SECRET}\n')
    people = {"s1": "Ada Lovelace", "s2": "Ben Okafor", "s3": "Chloe Martin", "s4": "Dev Patel"}
    with (tmp_path / "roster.csv").open("w", newline="") as f:
        csv.writer(f).writerows([("student_id", "name"), *people.items()])
    submissions = tmp_path / "submissions"
    for student, name in people.items():
        made_for = "s1" if student == "s4" else student  # Dev hands in Ada's notebook
        assert main(["exercises", str(tmp_path / "made" / student), "--student", made_for,
                     "--assignment", str(assignment)]) == 0
        (submissions / name).mkdir(parents=True)
        notebook = submissions / name / "00_worked_example.ipynb"
        notebook.write_bytes((tmp_path / "made" / student / "00_worked_example.ipynb").read_bytes())
        example = example_for(made_for, SECRET)
        wrong = next(m for m in worked_example_check(example).mistakes if m.id == "weights_reversed")
        _answered(notebook, sheet_with(example, wrong) if student == "s2" else rounded_answers(example))
    out = tmp_path / "out"
    assert main(["grade", str(submissions), "--roster", str(tmp_path / "roster.csv"), "--assignment", str(assignment),
                 "--out-dir", str(out), "--no-progress", "--cell-timeout", "10"]) == 0
    capsys.readouterr()
    rows = {r["student_id"]: r for r in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    assert {s: rows[s]["total"] for s in ("s1", "s2", "s3")} == {"s1": "8", "s2": "7", "s3": "8"}
    assert float(rows["s4"]["total"]) < 8  # graded against the example drawn for Dev, not the one he worked
    # worked on Ada's handout: a status of its own, held for review like the other integrity findings
    assert rows["s4"]["status"] == ("held for review (exercise 0 from another student's handout); "
                                    "exercise 0 from another student's handout: s1")
    assert all(rows[s]["status"] != rows["s4"]["status"] for s in ("s1", "s2", "s3"))
    feedback = (out / "feedback" / "s2.txt").read_text()
    assert LABELS["weights"] in feedback and "keys' order reversed" in feedback
    dev = (out / "feedback" / "s4.txt").read_text()
    assert "made for the student id 's1', not 's4'" in dev
    summary = (out / "summary.html").read_text()
    assert "<code>weights_reversed</code>" in summary and "Step 4: softmax" in summary


def test_a_dask_workers_task_draws_the_roster_students_example_too(tmp_path, capsys):
    from attention_course.grading.classroom.assignment import from_dict
    from attention_course.grading.classroom.batch import Grading
    from attention_course.grading.classroom.cluster import grade_files

    assert main(["exercises", str(tmp_path / "made"), "--student", "s1001"]) == 0  # no secret: the id alone
    capsys.readouterr()
    notebook = tmp_path / "made" / "00_worked_example.ipynb"
    _answered(notebook, rounded_answers(example_for("s1001")))
    grading = Grading(sandbox=False, setting=from_dict({"exercises": ["00_worked_example"]}).setting())
    files = [("submissions/ada/00_worked_example.ipynb", notebook.read_bytes())]
    (own,) = grade_files(files, grading, "s1001")
    (other,) = grade_files(files, grading, "s1002")  # the roster says the notebook is another student's
    assert own.path == files[0][0] and [c.score for c in own.checks] == [len(ENTRIES)], own
    assert other.checks[0].score < len(ENTRIES) and any("'s1001', not 's1002'" in str(i) for i in other.incidents)


@pytest.mark.parametrize("student", [f"s{n}" for n in range(4)])
def test_one_wrong_dot_product_costs_one_step_whether_carried_rounded_or_not(student):
    """A dot product's sign wrong, every later step computed from it: from the numbers as written (rounded to their
    decimals) or unrounded (e^(5/3) = 5.29, not e^1.67 = 5.31), only the dot products' step is lost."""
    example = example_for(student)
    check = worked_example_check(example)
    right = by_hand.answer_key(example)["dot_products"]
    for i in np.flatnonzero(right):
        dot = right.copy()
        dot[i] = -dot[i]
        scaled = dot / np.sqrt(example.d_k)
        for carried in (scaled, np.round(scaled, 2)):  # unrounded, then as written
            e = np.exp(carried)
            w = e / e.sum()
            sheet = dict(rounded_answers(example), dot_products=[float(x) for x in dot],
                         scaled_scores=[float(x) for x in np.round(scaled, 2)],
                         exponentials=[float(x) for x in np.round(e, 2)], exp_sum=float(np.round(e.sum(), 2)),
                         weights=[float(x) for x in np.round(w, 3)],
                         output=[float(x) for x in np.round(w @ example.values, 2)])
            result = check_in_process(check, sheet, hidden=True)
            lost = [c.label for c in result.cases if not c.passed]
            assert lost == [LABELS["dot_products"]], (student, i, sheet, lost)
