"""Tests for attention_course/grading/checks/exercises/sections.py: every section a mistake points to exists."""

from pathlib import Path

import nbformat

from attention_course.grading.kit.write import summary
from attention_course.grading.checks.exercises import EXERCISES, sections

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


def test_the_summary_names_the_section_in_plain_text():
    hint, where = summary._mistake_info("05_causal_mask", "masked_attention", "mask_filled_with_large_negative")
    assert hint and where == "book/masks.ipynb, section “Why −∞ and not −10^9”"
    _, where = summary._mistake_info("03_softmax", "softmax", "global_max")
    assert where == "book/stable_softmax.ipynb, section “3. Subtract the maximum: same weights, no overflow”"
    assert sections.plain(r"4. Why $\sqrt{d_k}$, and not $d_k$") == "4. Why √d_k, and not d_k"
