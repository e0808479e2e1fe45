"""The assignment file: which exercises are graded, for how many points, with which inputs and limits.

An instructor keeps one TOML file per assignment (`attention-course assignment
init assignment.toml` writes a commented one). Without a file, `Assignment.default()`
grades every exercise of the registry with one point per input tried, the
hidden inputs on, drawn as the package draws them: the marks of a plain
`attention-course grade`.

    title = "Attention, week 1"
    exercises = ["03_softmax", "04_attention"]  # default: every exercise
    deadline = 2026-03-01T23:59:00Z             # optional; a TOML date-time
    canvas_assignment_id = 123456               # optional: names the Canvas gradebook column
    points = 10                                 # optional: every exercise is worth 10
    authored = "my_exercises"                   # optional: a folder of the instructor's own source notebooks,
                                                # relative to this file, whose ids `exercises` may list

    [hidden]
    enabled = true       # also try the inputs the notebook's check cells do not show
    seed = 81273         # redraw their random values from this number (absent: the package's own)

    [late]
    grace_minutes = 15   # later than the deadline by at most this is on time
    penalty_per_day = 0.1  # fraction of the marks taken per started day late
    max_days = 3         # later than this scores 0 (0: no limit)

    [exercise.03_softmax]
    points = 20          # the exercise's points, shared among its checks by their inputs

    [exercise.04_attention.check.attention]
    points = 12          # one check's points
    seconds = 5          # time limit for one call of the student's function in this check

    [extensions]
    S1003 = 2026-03-04T23:59:00Z   # a student's own deadline, in place of `deadline`: by any key of the roster
    "ada@example.edu" = 2026-03-05T12:00:00Z   # (student id, LMS id, SIS id or login, e-mail, name)

    [integrity]
    handout_mismatch = "hold"  # exercise 0 worked on another student's handout: "hold" their marks for review
                               # (the default), "grade" them (the status still shows it) or give the exercise "zero"

An extension that names no student of the class stops `grade` before
anything is graded (`names.resolve_names`).

A check's mark is its points times the share of the inputs tried that pass.
Hidden inputs are redrawn by handing the check's own input builder the
generators `Rngs(seed)` (each `rngs(n)` seeded by `(seed, n)`) instead of the
package's, so the installed package (which students have) does not reveal
them; the visible inputs stay the ones the notebook shows.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import secrets
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..checks.engine.check import Check
from ..checks.exercises import BY_ID, EXERCISES, Exercise
from ..run.plan import Setting, exercise_checks
from .report import CheckWorth, ExerciseInfo
from .score import LateRule, Marking, round_marks


class AssignmentError(ValueError):
    """An assignment file that cannot be used; the message names the key and what was wrong."""


@dataclass(frozen=True)
class CheckRule:
    """How one check of an exercise counts."""

    check: str
    """Name of the check, e.g. "softmax"."""
    points: float
    """What the check is worth when every input it tries passes."""
    seconds: float | None = None
    """Time limit for one call of the student's function (None: the grader's --check-timeout)."""


@dataclass(frozen=True)
class ExerciseRule:
    """One exercise of the assignment."""

    id: str
    """The exercise id, e.g. "03_softmax"."""
    checks: tuple[CheckRule, ...]
    """One rule per check of the exercise, in the registry's order."""

    @property
    def points(self) -> float:
        """The exercise's points: its checks' points together."""
        return sum(c.points for c in self.checks)


HANDOUT_POLICIES = ("hold", "grade", "zero")
"""What an exercise 0 worked on another student's handout gets: held for review, graded, or 0 points."""


@dataclass(frozen=True)
class Assignment:
    """What is graded and how; `max_total` comes from here, never from the submissions."""

    title: str
    """Shown in the gradebooks, the feedback files and the summary page (the LMS column name)."""
    exercises: tuple[ExerciseRule, ...]
    """The exercises graded, in course order."""
    hidden: bool = True
    """Whether the hidden inputs are tried too."""
    hidden_seed: int | None = None
    """Redraws the hidden inputs' random values (None: the package's own values)."""
    deadline: dt.datetime | None = None
    """When submissions are due (timezone-aware), or None."""
    late: LateRule = field(default_factory=LateRule)
    """The late rule."""
    canvas_assignment_id: str = ""
    """The assignment's id in Canvas, which names the column of the Canvas gradebook file ("" if unknown)."""
    extensions: tuple[tuple[str, dt.datetime], ...] = ()
    """(a key of the student, that student's own deadline), for the students given an extension: as the file names
    them, until `names.resolve_names` keys each by the student's gradebook row."""
    source: str = "the default assignment"
    """Where it was read from (for messages)."""
    set_by_instructor: bool = False
    """Read from an assignment file, so every exercise in it was set: a student with no notebook for one is told it
    is missing. The default (every exercise of the course, no file) names none missing: a notebook of one exercise
    is then a whole submission."""
    handout_mismatch: str = "hold"
    """The policy for exercise 0 worked on another student's handout (one of `HANDOUT_POLICIES`)."""

    @classmethod
    def default(cls) -> Assignment:
        """Every exercise, one point per input tried, hidden inputs on, as the package draws them."""
        return cls("attention-course exercises", tuple(_rule(e, None, {}) for e in EXERCISES))

    @property
    def ids(self) -> tuple[str, ...]:
        """The exercise ids, in order."""
        return tuple(e.id for e in self.exercises)

    @property
    def max_total(self) -> float:
        """The most a submission can score."""
        return round_marks(sum(e.points for e in self.exercises))

    def deadline_for(self, student_id: str) -> dt.datetime | None:
        """The deadline of one student: their extension if they have one, else the assignment's."""
        return dict(self.extensions).get(student_id, self.deadline) if student_id else self.deadline

    def rule(self, exercise_id: str) -> ExerciseRule | None:
        """The rule of one exercise, or None if the exercise is not part of this assignment."""
        return next((e for e in self.exercises if e.id == exercise_id), None)

    def checks(self, exercise_id: str) -> tuple[Check, ...]:
        """The checks that grade an exercise here: time limits applied, hidden inputs redrawn from `hidden_seed`."""
        return _checks(self, exercise_id)

    def setting(self) -> Setting:
        """What `grade_notebook` grades with under this assignment: its exercises and their checks' own time limits,
        its hidden inputs and their secret."""
        return Setting({e.id: _own_seconds(e) for e in self.exercises}, self.hidden, self.hidden_seed, self.title)

    def marking(self) -> Marking:
        """What scoring needs of this assignment, resolved once (after `names.resolve_names`): each exercise's
        title, points and checks' worth, the late rule, the deadlines, the policies, the description and the
        fingerprint."""
        return Marking(self._exercise_info(), self.late, self.deadline, dict(self.extensions), self.set_by_instructor,
                       self.handout_mismatch, self.to_dict(), self.fingerprint())

    def _exercise_info(self) -> dict[str, ExerciseInfo]:
        """Exercise id -> its title, chapter, points, inputs, and each check's points and inputs (hidden among them)."""
        out = {}
        for rule in self.exercises:
            ex = BY_ID[rule.id]
            checks = {c.name: c for c in self.checks(rule.id)}
            out[rule.id] = ExerciseInfo(ex.title, ex.chapter, round_marks(rule.points), ex.max_score,
                                        {r.check: CheckWorth(r.points, len(checks[r.check].cases),
                                                             sum(c.hidden for c in checks[r.check].cases))
                                         for r in rule.checks})
        return out

    def redrawn(self, exercise_id: str) -> tuple[int, int]:
        """(hidden inputs whose values differ from the package's, hidden inputs) for one exercise."""
        pairs = [(mine, theirs) for check, packaged in zip(self.checks(exercise_id), BY_ID[exercise_id].checks)
                 for mine, theirs in zip(check.cases, packaged.cases) if theirs.hidden]
        return sum(not _same_case(a, b) for a, b in pairs), len(pairs)

    def fingerprint(self) -> str:
        """Changes whenever anything that affects the marks changes (two gradebooks merge only if equal)."""
        return hashlib.sha256(json.dumps(self.to_dict(secret=True), sort_keys=True).encode()).hexdigest()[:16]

    def to_dict(self, *, secret: bool = False) -> dict:
        """A JSON-ready description, `hidden_seed` left out unless `secret` (reports say only whether there is one)."""
        out = {
            "title": self.title, "max_total": self.max_total, "hidden": self.hidden,
            "hidden_seed": self.hidden_seed if secret else ("set" if self.hidden_seed is not None else None),
            "deadline": self.deadline.isoformat() if self.deadline else None,
            "canvas_assignment_id": self.canvas_assignment_id,
            "late": dataclasses.asdict(self.late),
            "extensions": {key: when.isoformat() for key, when in self.extensions},
            "exercises": {e.id: {"points": round_marks(e.points), "checks": {c.check: {"points": c.points, "seconds": c.seconds}
                                                                        for c in e.checks}} for e in self.exercises},
        }
        if self.handout_mismatch != "hold":  # the default left out, so that earlier reports keep their fingerprint
            out["integrity"] = {"handout_mismatch": self.handout_mismatch}
        return out


def _rule(exercise: Exercise, points: float | None, table: dict, where: str = "") -> ExerciseRule:
    """An exercise's rule from its [exercise.ID] table; points shared by the checks' inputs unless given per check."""
    checks_table = table.get("check", {})
    if not isinstance(checks_table, dict):
        raise AssignmentError(f"{where}exercise.{exercise.id}.check must be a table of checks")
    unknown = set(checks_table) - {c.name for c in exercise.checks}
    if unknown:
        raise AssignmentError(f"{where}exercise.{exercise.id}.check.{sorted(unknown)[0]}: no such check; the checks of "
                              f"{exercise.id} are {', '.join(c.name for c in exercise.checks)}")
    _known_keys(table, {"points", "check"}, f"{where}exercise.{exercise.id}")
    points = table.get("points", points)
    inputs = sum(len(c.cases) for c in exercise.checks)
    rules = []
    for check in exercise.checks:
        entry = checks_table.get(check.name, {})
        name = f"{where}exercise.{exercise.id}.check.{check.name}"
        _known_keys(entry, {"points", "seconds"}, name)
        if points is None:
            share = len(check.cases)  # one point per input: the grader's own marks
        else:
            share = _number(points, f"{where}exercise.{exercise.id}.points") * len(check.cases) / inputs
        check_points = _number(entry.get("points", share), f"{name}.points")
        seconds = entry.get("seconds")
        if seconds is not None and not _number(seconds, f"{name}.seconds") > 0:
            raise AssignmentError(f"{name}.seconds must be more than 0, got {seconds}")
        rules.append(CheckRule(check.name, round_marks(check_points), seconds))
    return ExerciseRule(exercise.id, tuple(rules))


def _number(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise AssignmentError(f"{name} must be a number of at least 0, got {value!r}")
    return float(value)


def _known_keys(table: dict, known: set[str], name: str) -> None:
    unknown = set(table) - known
    if unknown:
        raise AssignmentError(f"{name}: unknown key {sorted(unknown)[0]!r}; the keys here are {', '.join(sorted(known))}")


def load(path: Path | str) -> Assignment:
    """Read an assignment file; AssignmentError naming the key if anything in it is wrong."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AssignmentError(f"no assignment file {path}") from None
    except tomllib.TOMLDecodeError as err:
        raise AssignmentError(f"{path} is not valid TOML: {err}") from None
    return from_dict(data, source=str(path))


def from_dict(data: dict, source: str = "the assignment") -> Assignment:
    """An assignment from the parsed TOML (see the module docstring for the keys)."""
    where = f"{source}: "
    _known_keys(data, {"title", "exercises", "deadline", "points", "hidden", "late", "exercise", "canvas_assignment_id",
                       "extensions", "integrity", "authored"}, f"{source} (top level)")
    authored = _authored(data, source, where)
    ids = data.get("exercises", [e.id for e in EXERCISES])
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
        raise AssignmentError(f"{where}exercises must be a non-empty list of exercise ids")
    for i in ids:
        if i not in BY_ID:
            raise AssignmentError(f"{where}exercises: unknown exercise {i!r}; the exercises are {', '.join(BY_ID)}")
    if len(set(ids)) != len(ids):
        raise AssignmentError(f"{where}exercises lists an exercise twice")
    tables = data.get("exercise", {})
    stray = set(tables) - set(ids)
    if stray:
        raise AssignmentError(f"{where}[exercise.{sorted(stray)[0]}] is not in the exercises list")
    points = data.get("points")
    rules = tuple(_rule(BY_ID[i], points if i not in authored else points or authored[i], tables.get(i, {}), where)
                  for i in sorted(ids, key=list(BY_ID).index))
    hidden = data.get("hidden", {})
    _known_keys(hidden, {"enabled", "seed"}, f"{where}[hidden]")
    enabled = hidden.get("enabled", True)
    if not isinstance(enabled, bool):
        raise AssignmentError(f"{where}hidden.enabled must be true or false, got {enabled!r}")
    seed = hidden.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise AssignmentError(f"{where}hidden.seed must be a whole number of at least 0, got {seed!r}")
    deadline = data.get("deadline")
    if deadline is not None:
        _date_time(deadline, f"{where}deadline")
    extensions = data.get("extensions", {})
    if not isinstance(extensions, dict):
        raise AssignmentError(f"{where}[extensions] must be a table of student_id = date-time")
    for key, when in extensions.items():
        _date_time(when, f"{where}extensions.{key}")
    late = data.get("late", {})
    _known_keys(late, {"grace_minutes", "penalty_per_day", "max_days"}, f"{where}[late]")
    late_rule = LateRule(**{k: _number(v, f"{where}late.{k}") for k, v in late.items()})
    if late_rule.penalty_per_day > 1:
        raise AssignmentError(f"{where}late.penalty_per_day is a fraction of the marks (0.1 = 10 %), "
                              f"got {late_rule.penalty_per_day}")
    title = data.get("title", "attention-course exercises")
    if not isinstance(title, str) or not title.strip():
        raise AssignmentError(f"{where}title must be a non-empty string")
    canvas_id = data.get("canvas_assignment_id", "")
    if not isinstance(canvas_id, (int, str)) or isinstance(canvas_id, bool):
        raise AssignmentError(f"{where}canvas_assignment_id must be the number in the assignment's Canvas address")
    integrity = data.get("integrity", {})
    if not isinstance(integrity, dict):
        raise AssignmentError(f"{where}[integrity] must be a table")
    _known_keys(integrity, {"handout_mismatch"}, f"{where}[integrity]")
    handout = integrity.get("handout_mismatch", "hold")
    if handout not in HANDOUT_POLICIES:
        raise AssignmentError(f"{where}integrity.handout_mismatch must be one of {', '.join(map(repr, HANDOUT_POLICIES))}, "
                              f"got {handout!r}")
    return Assignment(title, rules, enabled, seed, deadline, late_rule, str(canvas_id),
                      tuple(sorted((str(k), v) for k, v in extensions.items())), source, set_by_instructor=True,
                      handout_mismatch=handout)


def _authored(data: dict, source: str, where: str) -> dict[str, float | None]:
    """The instructor's own exercises of the `authored` folder (relative to the assignment file), made known to the
    grader: id -> the points their check cell declares (None: one per input)."""
    folder = data.get("authored")
    if folder is None:
        return {}
    if not isinstance(folder, str):
        raise AssignmentError(f"{where}authored must be the path of a folder of source notebooks, got {folder!r}")
    from ..authored import load_folder, read
    from ..authored.publish import sources

    path = Path(folder) if Path(folder).is_absolute() else Path(source).parent / folder
    try:
        exercises = load_folder(path)
    except FileNotFoundError as err:
        raise AssignmentError(f"{where}authored: {err}") from None
    except ValueError as err:  # a source notebook that cannot make an exercise: its own message says where
        raise AssignmentError(f"{where}authored: {err}") from None
    points = {read(p).declaration.source.id: read(p).declaration.points for p in sources(path)}
    return {e.id: points.get(e.id) for e in exercises}


def _date_time(value, name: str) -> None:
    if not isinstance(value, dt.datetime):
        raise AssignmentError(f"{name} must be a TOML date-time such as 2026-03-01T23:59:00Z, got {value!r}")
    if value.tzinfo is None:
        raise AssignmentError(f"{name} {value} needs a time zone (Z, or an offset such as +01:00)")


TEMPLATE = '''\
# The assignment: what `attention-course grade --assignment {name}` grades, and how.
# Every key is optional; without this file (or with every key removed) the grader gives
# one point per input tried on every exercise, the hidden inputs on: its default marks.

title = "attention-course exercises"   # the column name in the LMS gradebooks

# The exercises graded (default: all of them, {count} in this version of the course).
exercises = [{exercises}]

# deadline = 2026-03-01T23:59:00Z      # when submissions are due; a TOML date-time with a time zone
# canvas_assignment_id = 123456        # .../courses/<course>/assignments/<this number>: names the Canvas column
# points = 10                          # every exercise worth 10 points (default: one per input tried)
# authored = "my_exercises"            # your own exercises: a folder of source notebooks (relative to this file,
#                                      # released with `attention-course release my_exercises`); list their ids
#                                      # (the notebooks' names) in `exercises`

[hidden]
enabled = true   # also try the inputs that the notebook's check cells do not show
# Their random values are redrawn from this number, kept only here, so that reading the installed
# package does not reveal them. Remove the line to use the package's own values.
seed = {seed}

[late]
grace_minutes = 0      # this much past the deadline still counts as on time
penalty_per_day = 0.0  # fraction of the marks taken per started day late (0.1 = 10 % a day)
max_days = 0           # later than this many days scores 0 (0 = no limit)

# [extensions]                         # a student's own deadline, by any key of the roster
# S1003 = 2026-03-04T23:59:00Z         # (student id, LMS id, SIS id or login, e-mail, name)
# "ada@example.edu" = 2026-03-05T12:00:00Z

# [integrity]
# handout_mismatch = "hold"            # exercise 0 on another student's handout: "hold", "grade" or "zero"

# Per exercise and per check (names as in `attention-course check`):
# [exercise.03_softmax]
# points = 20                # shared among the exercise's checks in proportion to their inputs
# [exercise.03_softmax.check.softmax]
# points = 20                # one check's points
# seconds = 5                # time limit for one call of the student's function in this check
'''


def template(name: str = "assignment.toml", seed: int | None = None) -> str:
    """The commented assignment file `attention-course assignment init` writes, with a fresh secret seed."""
    seed = secrets.randbelow(2**31) if seed is None else seed
    return TEMPLATE.format(name=name, count=len(EXERCISES), seed=seed,
                           exercises=", ".join(f'"{e.id}"' for e in EXERCISES))


def _checks(assignment: Assignment, exercise_id: str) -> tuple[Check, ...]:
    rule = assignment.rule(exercise_id)
    if rule is None:
        raise KeyError(f"{exercise_id} is not part of {assignment.title!r}")
    seconds = _own_seconds(rule)
    try:
        return exercise_checks(BY_ID[exercise_id], assignment.hidden_seed, seconds)
    except ValueError as err:  # a seed that cannot redraw a check's hidden inputs
        raise AssignmentError(str(err)) from None


def _own_seconds(rule: ExerciseRule) -> dict[str, float]:
    """Check name -> its time limit per call, for the checks of an exercise that have one of their own."""
    return {c.check: c.seconds for c in rule.checks if c.seconds is not None}


def _same_case(a, b) -> bool:
    """Whether two cases have the same arguments."""
    if len(a.args) != len(b.args) or a.kwargs.keys() != b.kwargs.keys():
        return False
    pairs = list(zip(a.args, b.args)) + [(a.kwargs[k], b.kwargs[k]) for k in a.kwargs]
    return all(np.array_equal(np.asarray(x), np.asarray(y), equal_nan=np.asarray(x).dtype.kind == "f") for x, y in pairs)
