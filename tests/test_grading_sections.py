"""Tests for attention_course/grading/checks/exercises/sections.py: every section a mistake points to exists."""

from pathlib import Path

import nbformat
import pytest

from attention_course.grading.classroom.write import summary
from attention_course.grading.checks.exercises import BY_ID, EXERCISES, sections

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


def test_the_summary_counts_a_helper_at_fault_like_the_mistakes_of_the_inputs():
    hint = "`masked_attention` gives the expected result ... your `softmax`"
    check = {"check": "masked_attention", "mistake": "helper_at_fault", "hint": hint,
             "cases": [{"mistake": "no_max_subtraction", "hint": "exp overflows", "matches": ["no_max_subtraction"]},
                       {"mistake": None, "hint": ""}]}
    other = {"check": "masked_attention", "mistake": "no_max_subtraction", "hint": "exp overflows",
             "cases": [{"mistake": "no_max_subtraction", "hint": "exp overflows", "matches": ["no_max_subtraction"]}]}
    row = lambda path, check: {"counted": {"05_causal_mask": path}, "notebooks": [  # noqa: E731
        {"path": path, "exercise": "05_causal_mask", "checks": [check]},
        {"path": "not counted", "exercise": "05_causal_mask", "checks": [check]}]}
    report = {"submissions": [row("a.ipynb", check), row("b.ipynb", other)]}
    counts = {m: n for _, _, m, n in summary.mistake_counts(report)}
    assert counts == {"no_max_subtraction": 2, "helper_at_fault": 1}
    assert summary._hints(report)[("05_causal_mask", "masked_attention", "helper_at_fault")] == hint


def test_the_summary_groups_students_by_the_mistake_recognised_never_a_symptom_under_its_hint():
    """An unnormalised softmax is recognised (its prediction came back); all-zero and uniform weights only show the
    symptom "does not sum to 1": they are counted apart, with what they were told, never under the hint of the
    mistake that shares the symptom's id."""
    def softmax_row(path: str, case: dict) -> dict:
        check = {"check": "softmax", "mistake": case["mistake"], "hint": case["hint"], "cases": [case]}
        return {"counted": {"03_softmax": path}, "notebooks": [{"path": path, "exercise": "03_softmax",
                                                                 "checks": [check]}]}

    divide = next(m.hint for c in BY_ID["03_softmax"].checks for m in c.mistakes if m.id == "does_not_sum_to_1")
    unnormalised = {"mistake": "does_not_sum_to_1", "hint": divide, "matches": ["does_not_sum_to_1"]}
    zeros = {"mistake": "does_not_sum_to_1", "hint": "The weights do not sum to 1 along the softmax axis: slice 0 "
             "sums to 0.", "matches": []}
    uniform = {"mistake": "does_not_sum_to_1", "hint": "The weights do not sum to 1 along the softmax axis: slice 1 "
               "sums to 0.75.", "matches": []}
    report = {"submissions": [softmax_row("a.ipynb", unnormalised), softmax_row("b.ipynb", zeros),
                              softmax_row("c.ipynb", uniform)]}
    assert summary.mistake_counts(report) == [("03_softmax", "softmax", "does_not_sum_to_1", 1)]
    assert summary.symptom_counts(report) == [("03_softmax", "softmax", "does_not_sum_to_1", 2, zeros["hint"])]
    # a mistake the engine itself recognises, its statement and a lead told: recognised, not a symptom
    from attention_course.grading.checks.engine.mistakes import DTYPE_CHANGED

    dtype = {"mistake": "dtype_changed", "hint": f"{DTYPE_CHANGED.hint} {DTYPE_CHANGED.leads[0].text}", "matches": []}
    report["submissions"].append(softmax_row("d.ipynb", dtype))
    assert ("03_softmax", "softmax", "dtype_changed", 1) in summary.mistake_counts(report)
