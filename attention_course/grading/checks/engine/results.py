"""What a check reports: one result per input tried, one summary per check.

A `CheckResult` is what `check_softmax(softmax)` returns in a notebook. Its
text and HTML forms show the first input that went wrong, what was expected,
what came back and, when the grader recognises it, the likely mistake. A check
whose inputs are questions of their own (the steps of an answer sheet) shows
every failing one that way, each with its own hint (`every_failure`).
"""

from __future__ import annotations

import dataclasses
import html
import textwrap
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .cases import Case


class CheckStatus(StrEnum):
    """The status of one input (`CaseResult.status`) or of one check (`CheckResult.status`); its value is the word
    a student reads ("softmax passed")."""

    PASSED = "passed"
    FAILED = "failed"
    NOT_ATTEMPTED = "not attempted"
    """The stub still raises NotImplementedError (a check: on every input)."""
    MISSING = "missing"
    """The notebook defines no function of that name."""
    SKIPPED = "skipped"
    """Not tried (an earlier input ran out of time), or a check that did not run."""
    TIMEOUT = "timeout"
    """An input that ran out of time (a check that has one has failed)."""
    ERROR = "error"
    """The grader itself failed on the check."""


_ICONS = {CheckStatus.PASSED: "✓", CheckStatus.NOT_ATTEMPTED: "…", CheckStatus.SKIPPED: "–", CheckStatus.MISSING: "?"}
_COLOURS = {CheckStatus.PASSED: "#1a7f37", CheckStatus.NOT_ATTEMPTED: "#6e7781", CheckStatus.SKIPPED: "#6e7781",
            CheckStatus.MISSING: "#9a6700"}
_FAILED_COLOUR = "#cf222e"


@dataclass(frozen=True)
class Verdict:
    """What a check concluded on one input: its status, the sentence that says why, and the mistake it names."""

    status: CheckStatus
    """passed, failed, not attempted, ..."""
    message: str
    """One sentence saying what differs ("" for a right answer without a note)."""
    hint: str = ""
    """The likely mistake, named without giving the code away."""
    mistake: str | None = None
    """Identifier of the recognised mistake (e.g. "no_max_subtraction"), if any."""
    leads: tuple[str, ...] = ()
    """Ids of the possibilities the hint offers (each one that can apply to this input and this code)."""
    facts: tuple = ()
    """What the hint says it observed on this input, as (name, value) pairs, for `audit` to check."""


@dataclass(frozen=True)
class CaseResult:
    """How the student's function did on one input."""

    label: str
    """A short name for the input, e.g. "large scores"."""
    inputs: str
    """The arguments, formatted as `name = value` lines (large arrays abbreviated)."""
    expected: str
    """What the reference implementation returns, formatted."""
    got: str
    """What the student's function returned or raised, formatted."""
    status: CheckStatus
    """passed, failed, not attempted, missing, timeout or skipped."""
    message: str
    """One sentence saying what differs (empty when passed)."""
    hint: str = ""
    """The likely mistake, named without giving the code away."""
    mistake: str | None = None
    """Identifier of the recognised mistake (e.g. "no_max_subtraction"), if any."""
    hidden: bool = False
    """True for inputs that only the batch grader tries, not the notebook's check."""
    matches: tuple[str, ...] = ()
    """Every recognised mistake whose prediction equals what came back (the check names the one most inputs share)."""
    unpredicted: Verdict | None = None
    """The verdict of the diagnosis without predictions, used if every matching prediction is contradicted (its
    message "": the message stands; None: no diagnosis, the message stands alone, without a mistake or a hint)."""
    leads: tuple[str, ...] = ()
    """Ids of the possibilities the hint offers (each one that can apply to this input and this code)."""
    facts: tuple = ()
    """What the hint says it observed on this input, as (name, value) pairs, for `audit` to check."""
    ambiguous: bool = False
    """True when another recognised mistake explains this result as well: an input where the named one alone
    does is shown first."""

    @property
    def passed(self) -> bool:
        """True if the function gave the expected result on this input."""
        return self.status == CheckStatus.PASSED

    @property
    def verdict(self) -> Verdict:
        """What the check concluded on this input, without how the input and the results are shown."""
        return Verdict(self.status, self.message, self.hint, self.mistake, self.leads, self.facts)

    def judged(self, verdict: Verdict, **changes) -> CaseResult:
        """This input's result with another verdict (and `changes` to its other fields)."""
        return dataclasses.replace(self, status=verdict.status, message=verdict.message, hint=verdict.hint,
                                   mistake=verdict.mistake, leads=verdict.leads, facts=verdict.facts, **changes)


@dataclass(frozen=True)
class CheckResult:
    """The verdict of one check (e.g. `check_softmax`) on one student function."""

    check: str
    """Name of the check, e.g. "softmax"."""
    function: str
    """Name of the student's function that was checked."""
    passed: bool
    """True if every input gave the expected result."""
    score: int
    """Number of inputs that gave the expected result."""
    max_score: int
    """Number of inputs tried."""
    status: CheckStatus
    """passed, failed, not attempted, missing, skipped or error."""
    message: str
    """One sentence for the student: what went right or the first thing that went wrong."""
    hint: str
    """The likely mistake behind the first failure ("" if none was recognised)."""
    mistake: str | None
    """Identifier of the first recognised mistake, if any."""
    cases: tuple[CaseResult, ...]
    """One result per input, in the order they were tried."""
    smallest: CaseResult | None = None
    """A smaller input that fails in the same way, found after the check and shown first (it earns no marks)."""
    smallest_input: Case | None = None
    """The arguments of `smallest`, so that what its feedback claims can be verified on them."""
    every_failure: bool = False
    """Each input is a question of its own (the steps of an answer sheet): every failing one is shown with its
    message, what was expected and its hint, not only the first (`Check.every_failure_shown`)."""

    @classmethod
    def from_cases(cls, check: str, function: str, cases: list[CaseResult] | tuple[CaseResult, ...],
                   every_failure: bool = False) -> CheckResult:
        """Summarise the per-input results of one check (`every_failure`: show each failing input in full)."""
        cases = tuple(cases)
        score = sum(c.passed for c in cases)
        failures = [c for c in cases if not c.passed and c.status != CheckStatus.SKIPPED]
        shown = _shown(failures)
        statuses = {c.status for c in cases}
        if cases and statuses == {CheckStatus.NOT_ATTEMPTED}:
            status = CheckStatus.NOT_ATTEMPTED
            message = f"not attempted yet: `{function}` still raises NotImplementedError. Replace that line with your code."
        elif cases and statuses == {CheckStatus.MISSING}:
            status = CheckStatus.MISSING
            message = cases[0].message
        elif not failures and score == len(cases):
            status = CheckStatus.PASSED
            notes = sorted({c.message for c in cases if c.message})  # e.g. a dtype widened on a right answer
            message = f"all {len(cases)} inputs give the expected result." + "".join(f" ({n})" for n in notes)
        else:
            status = CheckStatus.FAILED
            message = shown.message if shown else "some inputs were not tried."
        # Message, hint and mistake all come from the one input shown: a hint is evidence about that input.
        return cls(
            check=check, function=function, passed=status == CheckStatus.PASSED, score=score,
            max_score=len(cases), status=status, message=message, hint=shown.hint if shown else "",
            mistake=shown.mistake if shown else None, cases=cases, every_failure=every_failure,
        )

    @classmethod
    def skipped(cls, check: str, function: str, reason: str) -> CheckResult:
        """A check that did not run (e.g. inside the batch grader, which checks on its own)."""
        return cls(check, function, False, 0, 0, CheckStatus.SKIPPED, reason, "", None, ())

    @property
    def first_failure(self) -> CaseResult | None:
        """The failing input shown (skipped ones aside): see `_shown`."""
        return _shown([c for c in self.cases if not c.passed and c.status != CheckStatus.SKIPPED])

    def headline(self) -> str:
        """One line: icon, function, its status, then the score, e.g. "✗ softmax failed; 8/13 inputs passed"."""
        icon = _ICONS.get(self.status, "✗")
        return f"{icon} {self.function} {self.status}; {self.score}/{self.max_score} inputs passed"

    def __str__(self) -> str:
        lines = [self.headline(), f"  {self.message}"]
        if self.status == CheckStatus.PASSED and self.cases and all(_short(c.got) for c in self.cases):
            lines += [f"  {c.label}: got {c.got}" for c in self.cases]
        case = self.smallest or self.first_failure
        if case is not None and self.status == CheckStatus.FAILED:
            where = " (an input only the batch grader tries)" if case.hidden else ""
            lines.append(f"  first failing input: {case.label}{where}")
            lines += _labelled("input", case.inputs)
            lines += _labelled("expected", case.expected)
            lines += _labelled("got", case.got)
        if self.hint and self.status == CheckStatus.FAILED:
            lines += _labelled("hint", textwrap.fill(self.hint, width=80))  # prose: wrapped for terminals
        others = self._others(case)
        if others and self.status == CheckStatus.FAILED and self.every_failure:
            lines.append(f"  also failing ({len(others)}):")
            for c in others:
                lines += _indented(textwrap.fill(f"- {c.label}: {c.message}", width=80, subsequent_indent="  "))
                lines += ["  " + line for line in _labelled("expected", c.expected)]
                if c.hint:
                    lines += ["  " + line for line in _labelled("hint", textwrap.fill(c.hint, width=78))]
        noted = [c for c in self.cases if c.passed and c.message]
        if noted and self.status == CheckStatus.FAILED and self.every_failure:
            lines.append(f"  passed, with a note ({len(noted)}):")
            lines += [line for c in noted
                      for line in _indented(textwrap.fill(f"- {c.label}: {c.message}", width=80, subsequent_indent="  "))]
        if others and self.status == CheckStatus.FAILED and not self.every_failure:
            others_text = textwrap.fill("; ".join(c.label for c in others), width=72)  # a phone's or a page's width
            lines += _labelled(f"also failing ({len(others)})", others_text)
        return "\n".join(lines)

    def _others(self, shown: CaseResult | None) -> list[CaseResult]:
        """The failing inputs besides the one shown first (skipped ones aside), in the order they were tried."""
        return [c for c in self.cases if c is not shown and not c.passed and c.status != CheckStatus.SKIPPED]

    def __repr__(self) -> str:
        return f"CheckResult(\n{self}\n)"

    def _repr_html_(self) -> str:
        colour = _COLOURS.get(self.status, _FAILED_COLOUR)
        esc = html.escape
        parts = [
            f'<div class="ac-check" style="border-left:4px solid {colour};padding:0.3em 0.8em;margin:0.5em 0">',
            f'<div style="color:{colour};font-weight:bold">{esc(self.headline())}</div>',
            f"<div>{esc(self.message)}</div>",
        ]
        case = self.smallest or self.first_failure
        if case is not None and self.status == CheckStatus.FAILED:
            rows = [("input", case.inputs), ("expected", case.expected), ("got", case.got)]
            th = '<th style="text-align:left;vertical-align:top;padding-right:1em">'
            body = "".join(
                f'<tr>{th}{esc(k)}</th><td style="text-align:left">'
                f'<pre style="margin:0;white-space:pre-wrap">{esc(v)}</pre></td></tr>'
                for k, v in rows
            )
            if self.hint:  # prose, not code
                body += f'<tr>{th}hint</th><td style="text-align:left">{esc(self.hint)}</td></tr>'

            hidden = " (an input only the batch grader tries)" if case.hidden else ""
            parts.append(f"<div>first failing input: <em>{esc(case.label)}</em>{esc(hidden)}</div>")
            parts.append(f"<table>{body}</table>")
            if self.every_failure:
                parts += [_failure_html(c, th) for c in self._others(case)]
                parts += [f"<div>passed, with a note: <em>{esc(c.label)}</em> — {esc(c.message)}</div>"
                          for c in self.cases if c.passed and c.message]
        if self.cases and self.status not in (CheckStatus.NOT_ATTEMPTED, CheckStatus.MISSING):
            items = "".join(
                f"<li>{esc(_ICONS.get(c.status, '✗'))} {esc(c.label)}"
                + (f": got <code>{esc(c.got)}</code>" if _short(c.got) else "")
                + (f" — {esc(c.message)}" if c.message else "")
                + "</li>"
                for c in self.cases
            )
            opened = " open" if all(_short(c.got) for c in self.cases) else ""
            parts.append(f"<details{opened}><summary>all {len(self.cases)} inputs</summary><ul>{items}</ul></details>")
        parts.append("</div>")
        return "".join(parts)


WIDENED = "dtype_changed"
RIGHT_VALUES = (WIDENED, "exp_overflowed")
"""Failures of results right in value (a dtype widened, an overflow the task forbids): shown after wrong values."""
"""The mistake of a result whose right values came back in a wider (or another) dtype."""


def _shown(failures: list[CaseResult]) -> CaseResult | None:
    """The failure to show: a visible one before a hidden one (the student can rebuild it), and among those the
    first with a hint (a recognised mistake, or an error's own hint) that no other mistake explains as well (its
    hint is evidence), else the first.

    A result right in value but widened (float32 in, float64 out), or computed with an overflow the task forbids,
    comes last: wrong values or an error elsewhere matter more, and "right values" said first would hide them.
    """
    if not failures:
        return None
    wrong = [c for c in failures if c.mistake not in RIGHT_VALUES] or failures
    return min(wrong, key=lambda c: (c.hidden, not (c.mistake or c.hint), c.ambiguous, wrong.index(c)))


def _failure_html(case: CaseResult, th: str) -> str:
    """Another failing input of a check that shows every one: its label and message, what was expected, its hint."""
    esc = html.escape
    rows = (f'<tr>{th}expected</th><td style="text-align:left"><pre style="margin:0;white-space:pre-wrap">'
            f"{esc(case.expected)}</pre></td></tr>")
    if case.hint:
        rows += f'<tr>{th}hint</th><td style="text-align:left">{esc(case.hint)}</td></tr>'
    return (f"<div>also failing: <em>{esc(case.label)}</em>" + (f" — {esc(case.message)}" if case.message else "")
            + f"</div><table>{rows}</table>")


def _indented(text: str) -> list[str]:
    """Each line of `text`, indented as the lines under a headline are."""
    return ["  " + line for line in text.splitlines()]


def _short(text: str) -> bool:
    """True for a result that fits on a line, like a measured number."""
    return bool(text) and "\n" not in text and len(text) <= 40


def _labelled(label: str, text: str) -> list[str]:
    """`label: first line` then the other lines indented under it."""
    pad = " " * (len(label) + 4)
    first, *rest = (text or "").splitlines() or [""]
    return [f"  {label}: {first}", *(pad + line for line in rest)]
