"""The instructor's pages (the class summary, a student's feedback) in a browser, at 400 and 1280 px wide.

At 400 px nothing is wider than the screen (a long file name wraps, the
tables stack); at 1280 px no cell of the mistakes table breaks a word to fit.
Screenshots go to test-results/screenshots/ (`grading-summary.png`, ...).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from attention_course.grading.checks.engine import results
from attention_course.grading.checks.exercises import BY_ID
from attention_course.grading.classroom.assignment import from_dict
from attention_course.grading.classroom.batch import SubmissionGrade
from attention_course.grading.classroom.intake import Submission
from attention_course.grading.run.judge import NotebookGrade
from attention_course.grading.classroom.score import build_report
from attention_course.grading.run.status import Incident, Status
from attention_course.grading.classroom.write import feedback, summary

pytestmark = pytest.mark.browser

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-results" / "screenshots"
LONG_NAME = "03_softmax_final_version_really_final_handed_in_after_the_deadline_extension_copy_(2).ipynb"


def _report() -> dict:
    """Three students who made the course's softmax mistake, one of them with a long file name and an incident."""
    check = BY_ID["03_softmax"].checks[0]
    mistake = check.mistakes[0]
    case = results.CaseResult("large scores", "x = np.array([1000.0, 0.0])", "[1.0, 0.0]", "[nan, 0.0]",
                              results.CheckStatus.FAILED, "got nan", mistake.hint, mistake.id)
    result = results.CheckResult(check.name, check.name, False, 3, 15, results.CheckStatus.FAILED, "got nan", mistake.hint,
                                 mistake.id, (case,))
    grades = []
    for name in ("Ada Lovelace", "Ben Okafor", "Chloé Martin"):
        path = f"class/{name}/{LONG_NAME if name == 'Ada Lovelace' else '03_softmax.ipynb'}"
        incidents = [Incident(f"code cell 2 (`import os`) tried to send a signal to another process (SIGKILL to "
                              f"process 1 (its parent)); the sandbox let it reach nothing outside", Status.SIGNAL)]
        nb = NotebookGrade(path, "03_softmax", [result], (Status.SIGNAL,) if name == "Ada Lovelace" else (Status.OK,),
                           incidents if name == "Ada Lovelace" else [])
        grades.append(SubmissionGrade(Submission(name, f"class/{name}", [Path(path)], is_folder=True,
                                                 student={"student_id": f"S{len(grades)}", "name": name}), [nb]))
    return build_report(grades, from_dict({"title": "Attention, week 1", "exercises": ["03_softmax"]}).marking())


def _open(offline, tmp_path: Path, name: str, html: str, width: int):
    path = tmp_path / f"{name}.html"
    path.write_text(html, encoding="utf-8")
    new_page, _ = offline
    page = new_page()
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(path.as_uri())
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"grading-{name}{'' if width == 1280 else f'-{width}px'}.png"),
                    full_page=True)
    return page


def _wider_than_the_screen(page) -> int:
    return page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")


def test_the_summary_fits_a_phone_and_breaks_no_word_at_1280_px(offline, tmp_path):
    report = _report()
    page = _open(offline, tmp_path, "summary", summary.page(report), 400)
    assert _wider_than_the_screen(page) <= 0
    page = _open(offline, tmp_path, "summary", summary.page(report), 1280)
    assert _wider_than_the_screen(page) <= 0
    broken = page.evaluate("""() => Array.from(document.querySelectorAll("table.mistakes td")).filter((td) => {
        const width = td.clientWidth;
        td.style.overflowWrap = "normal"; td.style.wordBreak = "normal";  // would a whole word stick out?
        const sticksOut = td.scrollWidth > width + 1;
        td.style.overflowWrap = ""; td.style.wordBreak = "";
        return sticksOut;
    }).map((td) => td.textContent.slice(0, 40))""")
    assert broken == []


def test_a_feedback_page_with_a_long_file_name_fits_a_phone(offline, tmp_path):
    report = _report()
    row = report.rows[0]
    assert LONG_NAME in feedback.page(report, row)
    page = _open(offline, tmp_path, "feedback", feedback.page(report, row), 400)
    assert _wider_than_the_screen(page) <= 0
