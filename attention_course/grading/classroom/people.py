"""One way to find a person of the class from any name an instructor or a download gives them.

Every place that names a student (a submission's folder or LMS name, a
regrade's folder, a line of the adjustments file or of the submission-times
file, an extension of the assignment file, `gradebook approve`) finds them
with `Matcher.find`, by any key the roster carries, in this order:

1. an exact key, case aside: the roster's student id, Canvas's user id, the
   SIS user id and login, the e-mail, Moodle's participant id (or
   "Participant 123"), or the gradebook row's own key;
2. a folder name the grader itself wrote (`lovelaceada_50`, `Ada
   Lovelace_880017`): a name of theirs, an underscore and one of their LMS
   ids;
3. a name, case, accents and punctuation aside, in any of the forms rosters
   and downloads write it: "First Last", "Last, First", Canvas's
   `lastfirst`, or the roster's `submission` column.

Whatever step finds someone decides: one person is found (`Outcome.FOUND`);
two or more are refused by name (`Outcome.SEVERAL`, naming the candidates);
nobody at every step is `Outcome.NO_ONE`. The outcome is data; the sentence
(`Found.why`) is for people.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Iterable, Mapping

if TYPE_CHECKING:
    from .report import Row

ID_COLUMNS = ("student_id", "canvas_id", "sis_user_id", "sis_login_id", "email", "moodle_id")
"""The roster's columns that name one person exactly."""
NUMBER_COLUMNS = ("canvas_id", "moodle_id")
"""The LMS ids that end a folder name the grader writes for a submission (`<name>_<id>`)."""
GRADER_FOLDER = re.compile(r"^(?P<name>.+?)_(?P<number>\d+)$")
"""A folder the grader unpacked a submission into: `lovelaceada_50`, `Ada Lovelace_880017`."""
PARTICIPANT = re.compile(r"^participant\s*(\d+)$", re.IGNORECASE)
"""Moodle's name for a participant: "Participant 123"."""


def plain(text: str) -> str:
    """A name reduced to lower-case letters and digits, accents removed: "Müller, Anna" -> "mulleranna"."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]", "", ascii_text.lower())


TEST_STUDENT = frozenset({"teststudent", "studenttest"})
"""Canvas's Test Student (its student view), its name in `plain` form ("Test Student", "Student, Test",
`studenttest`)."""


def is_test_student(name: str) -> bool:
    """Whether a roster's or a download's name is Canvas's Test Student."""
    return plain(name) in TEST_STUDENT


def name_forms(name: str) -> frozenset[str]:
    """The forms one name takes in rosters, folders and LMS downloads, each `plain`: "Anna Müller" and
    "Müller, Anna" both give "annamuller" and "mulleranna" (last name first, as Canvas writes it)."""
    forms = {plain(name)}
    words = [w for w in re.split(r"[\s,]+", name.strip()) if w]
    if len(words) > 1:
        forms.add(plain("".join(words[-1:] + words[:-1])))  # the last word first
        forms.add(plain("".join(words[1:] + words[:1])))  # the first word last ("Last First" read back)
    for cut in {name.find(","), name.rfind(",")} - {-1}:  # "Last, First": the part after the comma first
        forms.add(plain(name[cut + 1:] + name[:cut]))
    return frozenset(forms - {""})


@dataclass(frozen=True)
class Person:
    """One person a name may find: a roster student, or a gradebook row."""

    key: str
    """What the gradebook keys their row by (the roster's student id; else the anonymous id or the name)."""
    name: str
    """Their name, as the roster or the row shows it."""
    ids: frozenset[str] = frozenset()
    """Their exact keys, case-folded: student id, LMS ids, SIS id and login, e-mail, "participant <id>", the key."""
    numbers: frozenset[str] = frozenset()
    """Their LMS ids that end a folder name the grader wrote (Canvas's user id, Moodle's participant id)."""
    names: frozenset[str] = frozenset()
    """Their name's forms (`name_forms`), and the roster's `submission` name and the download's names, `plain`."""

    @classmethod
    def of(cls, key: str, name: str, student: Mapping[str, str] | None = None,
           lms: Mapping[str, str] | None = None) -> Person:
        """A person from a roster entry (`student`: roster.ROSTER_COLUMNS) and what a download said of them."""
        student, lms = student or {}, lms or {}
        values = {c: (student.get(c) or lms.get(c) or "").strip() for c in ID_COLUMNS}
        ids = {v.casefold() for v in values.values() if v} | {key.casefold()}
        if values["moodle_id"]:
            ids.add(f"participant {values['moodle_id']}")
        names = set(name_forms(name))
        for extra in (student.get("submission", ""), lms.get("canvas_name", ""), lms.get("moodle_name", "")):
            names |= {plain(extra)} - {""}
        return cls(key, name, frozenset(ids - {""}), frozenset(values[c] for c in NUMBER_COLUMNS if values[c]),
                   frozenset(names))

    @property
    def shown(self) -> str:
        """"Name (key)", as messages name them."""
        return self.name if self.name == self.key else f"{self.name} ({self.key})"


class Outcome(StrEnum):
    """What looking a name up came to."""

    FOUND = "found"
    NO_ONE = "no one"
    SEVERAL = "several"


@dataclass(frozen=True)
class Found:
    """The answer for one name: the outcome, the person found, the candidates when several."""

    text: str
    """The name as given."""
    outcome: Outcome
    """Found, no one, or several (refused)."""
    person: Person | None = None
    """The person, when found."""
    candidates: tuple[Person, ...] = ()
    """Everyone it could name, when several."""

    @property
    def why(self) -> str:
        """The sentence for people: who it named, or why no one."""
        if self.outcome == Outcome.FOUND:
            return f"{self.text!r} is {self.person.shown}"
        if self.outcome == Outcome.SEVERAL:
            return (f"{self.text!r} names {len(self.candidates)} students ("
                    + ", ".join(p.shown for p in self.candidates) + "): give a student id or an e-mail")
        return f"{self.text!r} names no one in the class (by id, LMS id, e-mail, login, folder or name)"


class Matcher:
    """Finds people by any of their keys (see the module docstring), each step a look-up in an index built once, so
    that matching a class of thousands stays quick."""

    def __init__(self, people: Iterable[Person]):
        self.people = tuple(people)
        self._ids = _index((i, p) for p in self.people for i in p.ids)
        self._folders = _index(((n, name), p) for p in self.people for n in p.numbers for name in p.names)
        self._names = _index((name, p) for p in self.people for name in p.names)

    def find(self, text: str) -> Found:
        """The person `text` names, no one, or several (refused)."""
        wanted = text.strip()
        participant = PARTICIPANT.match(wanted)
        steps = [(self._ids, f"participant {participant.group(1)}" if participant else wanted.casefold())]
        folder = GRADER_FOLDER.match(wanted)
        if folder:
            steps.append((self._folders, (folder["number"], plain(folder["name"]))))
        steps.append((self._names, plain(wanted)))
        for index, key in steps:
            hits = index.get(key, ())
            if len(hits) == 1:
                return Found(text, Outcome.FOUND, hits[0])
            if hits:
                return Found(text, Outcome.SEVERAL, candidates=hits)
        return Found(text, Outcome.NO_ONE)

    def find_all(self, texts: Iterable[str]) -> tuple[dict[str, Person], list[Found]]:
        """(name -> person for each name found, the answers for the names that found no one or several)."""
        found, refused = {}, []
        for text in dict.fromkeys(texts):
            answer = self.find(text)
            if answer.outcome == Outcome.FOUND:
                found[text] = answer.person
            else:
                refused.append(answer)
        return found, refused


def _index(pairs) -> dict:
    """key -> the distinct people (by their row key, first seen first) that a (key, person) pair names."""
    index: dict = {}
    for key, person in pairs:
        if key:
            found = index.setdefault(key, {})
            found.setdefault(person.key, person)
    return {key: tuple(found.values()) for key, found in index.items()}


def from_rows(rows: Iterable[Row]) -> Matcher:
    """The people of a gradebook report's rows."""
    return Matcher(Person.of(r.key, r.name, r.student, r.lms) for r in rows)
