"""Tests for attention_course/grading/checks/exercises/sections.py: every section a mistake points to exists."""

from pathlib import Path

import nbformat
import pytest

from attention_course.grading.checks.engine import results
from attention_course.grading.checks.exercises import BY_ID, EXERCISES, sections
from attention_course.grading.classroom.report import Decisions, IntakeFound, NotebookRecord, Report, Row
from attention_course.grading.classroom.write import summary
from attention_course.grading.run.status import Status

ROOT = Path(__file__).resolve().parents[1]


def headings(chapter: str) -> set[str]:
    nb = nbformat.read(ROOT / "book" / f"{chapter}.ipynb", as_version=4)
    return {line[3:].strip() for c in nb.cells if c.cell_type == "markdown"
            for line in c.source.splitlines() if line.startswith("## ")}


def test_every_check_and_mistake_points_to_a_heading_of_its_chapter():
    for exercise in EXERCISES:
        there = headings(exercise.chapter)
        for check in exercise.checks:
            assert check.name in sections.CHECK_SECTIONS, check.name
            for mistake in ("", *(m.id for m in check.mistakes)):
                heading = sections.section(exercise.chapter, check.name, mistake)
                assert heading in there, (exercise.id, check.name, mistake, heading)


def test_every_named_mistake_section_belongs_to_its_chapter():
    for chapter, table in sections.MISTAKE_SECTIONS.items():
        assert set(table.values()) <= headings(chapter), chapter


def test_the_summary_names_the_section_in_plain_text_and_links_the_rendered_page(monkeypatch):
    monkeypatch.setenv("ATTENTION_COURSE_BOOK", "https://course.example.org/attention/")
    where = summary.read_again("05_causal_mask", "masked_attention", "mask_filled_with_large_negative")
    assert where["hint"] and (where["chapter"], where["section"]) == ("Masks: who may attend to whom", "Why −∞ and not −10^9")
    assert where["url"] == "https://course.example.org/attention/book/masks.html#why-infty-and-not-10-9"
    where = summary.read_again("03_softmax", "softmax", "global_max")
    assert where["section"] == "3. Subtract the maximum: same weights, no overflow"
    assert where["url"].endswith("book/stable_softmax.html#subtract-the-maximum-same-weights-no-overflow")
    assert sections.plain(r"4. Why $\sqrt{d_k}$, and not $d_k$") == "4. Why √d_k, and not d_k"


def test_the_summary_s_anchors_are_the_ones_sphinx_gives_the_sections():
    docutils = pytest.importorskip("docutils.nodes", reason="docutils comes with the [book] extra")
    for exercise in EXERCISES:
        for heading in headings(exercise.chapter):
            assert summary.anchor(heading) == docutils.make_id(" ".join(heading.replace("$", "").split())), heading


def _case(mistake, hint, matches=()) -> results.CaseResult:
    return results.CaseResult("in", "", "", "", results.CheckStatus.FAILED, "", hint, mistake, matches=tuple(matches))


def _check(name, mistake, hint, cases) -> results.CheckResult:
    return results.CheckResult(name, name, False, 0, 1, results.CheckStatus.FAILED, "", hint, mistake, tuple(cases))


def _row(path: str, exercise: str, check: results.CheckResult, *others: str) -> Row:
    """A row whose notebook at `path` counted for `exercise` (the notebooks at `others` did not), with `check`."""
    notebooks = tuple(NotebookRecord(p, p, exercise, "ok", "", (Status.OK,), 0, 0, 0.0, (), "", (check,))
                      for p in (path, *others))
    return Row(path, path, counted={exercise: path}, notebooks=notebooks)


def _report(rows: list[Row]) -> Report:
    return Report("", "", {}, {}, "", {}, Decisions(), IntakeFound(), tuple(rows))


def test_the_summary_counts_a_helper_at_fault_like_the_mistakes_of_the_inputs():
    hint = "`masked_attention` gives the expected result ... your `softmax`"
    check = _check("masked_attention", "helper_at_fault", hint,
                   [_case("no_max_subtraction", "exp overflows", ["no_max_subtraction"]), _case(None, "")])
    other = _check("masked_attention", "no_max_subtraction", "exp overflows",
                   [_case("no_max_subtraction", "exp overflows", ["no_max_subtraction"])])
    report = _report([_row("a.ipynb", "05_causal_mask", check, "not counted"),
                      _row("b.ipynb", "05_causal_mask", other, "not counted")])
    counts = {m: n for _, _, m, n in summary.mistake_counts(report)}
    assert counts == {"no_max_subtraction": 2, "helper_at_fault": 1}
    assert summary._hints(report)[("05_causal_mask", "masked_attention", "helper_at_fault")] == hint


def test_the_summary_groups_students_by_the_mistake_recognised_never_a_symptom_under_its_hint():
    """An unnormalised softmax is recognised (its prediction came back); all-zero and uniform weights only show the
    symptom "does not sum to 1": they are counted apart, with what they were told, never under the hint of the
    mistake that shares the symptom's id."""
    def softmax_row(path: str, case: results.CaseResult) -> Row:
        return _row(path, "03_softmax", _check("softmax", case.mistake, case.hint, [case]))

    divide = next(m.hint for c in BY_ID["03_softmax"].checks for m in c.mistakes if m.id == "does_not_sum_to_1")
    unnormalised = _case("does_not_sum_to_1", divide, ["does_not_sum_to_1"])
    zeros = _case("does_not_sum_to_1", "The weights do not sum to 1 along the softmax axis: slice 0 sums to 0.")
    uniform = _case("does_not_sum_to_1", "The weights do not sum to 1 along the softmax axis: slice 1 sums to 0.75.")
    rows = [softmax_row("a.ipynb", unnormalised), softmax_row("b.ipynb", zeros), softmax_row("c.ipynb", uniform)]
    report = _report(rows)
    assert summary.mistake_counts(report) == [("03_softmax", "softmax", "does_not_sum_to_1", 1)]
    assert summary.symptom_counts(report) == [("03_softmax", "softmax", "does_not_sum_to_1", 2, zeros.hint)]
    # a mistake the engine itself recognises, its statement and a lead told: recognised, not a symptom
    from attention_course.grading.checks.engine.mistakes import DTYPE_CHANGED

    dtype = _case("dtype_changed", f"{DTYPE_CHANGED.hint} {DTYPE_CHANGED.leads[0].text}")
    report = _report([*rows, softmax_row("d.ipynb", dtype)])
    assert ("03_softmax", "softmax", "dtype_changed", 1) in summary.mistake_counts(report)
