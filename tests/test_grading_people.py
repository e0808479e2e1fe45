"""Tests for attention_course/grading/classroom/people.py: one matcher finds a student by any key the roster carries and
refuses a name two students share; and its use by the extensions and the adjustments (classroom/score.py)."""

import dataclasses
import datetime as dt

import pytest

from attention_course.grading.classroom.assignment import from_dict
from attention_course.grading.classroom.intake import Intake, Submission
from attention_course.grading.classroom.names import NamesRefused, resolve_names
from attention_course.grading.classroom.people import Matcher, Outcome, Person, from_rows, name_forms
from attention_course.grading.classroom.report import Adjustment, Decisions, Row
from attention_course.grading.classroom.adjustments import AdjustmentError, resolve_adjustments
from attention_course.grading.classroom.score import days_late


def test_a_name_has_the_forms_rosters_and_downloads_write_it_in():
    assert name_forms("Anna Müller") == name_forms("Müller, Anna") == {"annamuller", "mulleranna"}
    assert "luisgarciajr" in name_forms("García, Jr., Luis") and "garciajrluis" in name_forms("García, Jr., Luis")


def test_a_gradebook_s_rows_are_found_by_their_key_and_the_ids_the_download_gave():
    rows = [Row("S1", "Ada Lovelace", student={"student_id": "S1"}, lms={"canvas_id": "50"}),
            Row("strayquentin", "strayquentin", lms={"canvas_id": "4999"})]
    matcher = from_rows(rows)
    assert matcher.find("lovelaceada_50").person.key == "S1"
    assert matcher.find("strayquentin").person.key == "strayquentin" and matcher.find("4999").person.key == "strayquentin"
    assert "names no one" in matcher.find("S2").why and matcher.find("S2").outcome == Outcome.NO_ONE


def test_extensions_and_adjustments_name_students_by_any_key_and_refuse_names_of_no_one_or_two():
    roster = [{"student_id": "S1", "name": "Björn Åström", "email": "bjorn@example.edu", "canvas_id": "1407103",
               "sis_user_id": "SIS-1", "sis_login_id": "bjorn", "moodle_id": "880017"},
              {"student_id": "S2", "name": "Anna Müller"}, {"student_id": "S3", "name": "Müller, Anna"}]
    matcher = Matcher(Person.of(r["student_id"], r["name"], r) for r in roster)
    for key in ("S1", "s1", "1407103", "SIS-1", "bjorn", "bjorn@example.edu", "Participant 880017", "Björn Åström",
                "Åström, Björn", "astrom bjorn", "åströmbjörn_1407103", "Björn Åström_880017"):
        found = matcher.find(key)
        assert (found.outcome, found.person.key if found.person else None) == (Outcome.FOUND, "S1"), key
    assert matcher.find("Anna Müller").outcome == Outcome.SEVERAL and matcher.find("S2").person.key == "S2"
    assert matcher.find("åströmbjörn_999").outcome == Outcome.NO_ONE  # a folder of the grader's: name and id both
    assignment = from_dict({"deadline": dt.datetime(2026, 3, 1, tzinfo=dt.timezone.utc),
                            "extensions": {"bjorn@example.edu": dt.datetime(2026, 3, 4, tzinfo=dt.timezone.utc),
                                           "S9": dt.datetime(2026, 3, 4, tzinfo=dt.timezone.utc)}})
    taken = Intake([Submission(r["name"], "", [], student=r) for r in roster])
    with pytest.raises(NamesRefused, match="1 name.*\n  extension 'S9'"):
        resolve_names(assignment, None, taken, taken.submissions, Decisions())
    assignment = dataclasses.replace(assignment, extensions=tuple(e for e in assignment.extensions if e[0] != "S9"))
    resolved, _ = resolve_names(assignment, None, taken, taken.submissions, Decisions())
    assert [k for k, _ in resolved.extensions] == ["S1"]
    assert days_late(resolved.marking(), dt.datetime(2026, 3, 3, tzinfo=dt.timezone.utc), student_id="S1") == 0
    adjustments = [Adjustment(s, "03_softmax", 1, "x") for s in ("Åström, Björn", "Anna Müller", "nobody")]
    kept, refused = resolve_adjustments(adjustments, matcher)
    assert [(a.student, a.given) for a in kept] == [("S1", "Åström, Björn")]
    assert [(f.text, f.outcome) for f in refused] == [("Anna Müller", Outcome.SEVERAL), ("nobody", Outcome.NO_ONE)]
    with pytest.raises(AdjustmentError, match="twice"):
        resolve_adjustments([adjustments[0], dataclasses.replace(adjustments[0], student="S1")], matcher)
