"""A feedback file per student: an offline HTML page and its plain-text twin for e-mail.

Rendered from a report row (`score.build_report`): the points per
exercise and per check, the same per-check tables `attention-course check`
shows, what went wrong while running the notebooks, the late penalty and what
intake found (duplicates, ignored files). An input only the grader tries is
described by its label and never shown: its values, the expected result and
what came back are left out, so the feedback cannot be used to learn them.
The HTML page (`templates/feedback.html`) has no script and loads nothing.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from ...checks.engine import results
from ..score import check_mark, student_message
from ..status import Status
from .html import Markup, render

HIDDEN_TEXT = "(not shown: an input only the grader tries)"
NOTHING_RECEIVED = ("Nothing of yours was in the submissions downloaded for this assignment. If you did hand "
                    "something in, tell your instructor where and when.")


def _case(data: dict) -> results.CaseResult:
    names = {f.name for f in dataclasses.fields(results.CaseResult)}
    case = results.CaseResult(**{k: v for k, v in data.items() if k in names})
    if case.hidden:
        message = "" if case.passed else "wrong on this input (its values are not shown)"
        case = dataclasses.replace(case, inputs=HIDDEN_TEXT, expected="(not shown)", got="(not shown)", message=message)
    return case


def check_result(data: dict) -> results.CheckResult:
    """A check's result from the report, its hidden inputs' values removed."""
    names = {f.name for f in dataclasses.fields(results.CheckResult)}
    fields = {k: v for k, v in data.items() if k in names}
    fields["cases"] = tuple(_case(c) for c in data.get("cases", ()))
    if isinstance(fields.get("smallest"), dict):  # a smaller failing input, shown first
        fields["smallest"] = _case(fields["smallest"])
    fields.pop("smallest_input", None)  # its arguments are not kept in a report
    result = results.CheckResult(**fields)
    return dataclasses.replace(result, message=student_message(result))  # the message may quote hidden values


def file_stem(row: dict) -> str:
    """The feedback file's name (without extension): the student id, else the name, made safe for any file system."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", str(row.get("student_id") or row["key"])).strip("._")
    return stem or "student"


def _best_notebooks(row: dict) -> dict[str, dict]:
    """Exercise -> the notebook that counted for it."""
    by_path = {nb["path"]: nb for nb in row["notebooks"]}
    return {ex: by_path[path] for ex, path in row["counted"].items() if path in by_path}


def _points(report: dict, ex: str, check: results.CheckResult) -> float:
    return check_mark(report["exercises"][ex]["checks"].get(check.check, {}).get("points", 0), check.score, check.max_score)


def _hidden_note(report: dict, ex: str) -> str:
    hidden = sum(c["hidden_inputs"] for c in report["exercises"][ex]["checks"].values())
    if not report["assignment"]["hidden"] or not hidden:
        return ""
    return (f"{hidden} of the inputs are tried only by the grader: each is named by what it tests, "
            "its values are not shown.")


def text(report: dict, row: dict) -> str:
    """The plain-text feedback for one student."""
    a = report["assignment"]
    lines = [f"{a['title']}: feedback for {row['name']}" + (f" ({row['student_id']})" if row["student_id"] else ""),
             "", f"Total: {row['total']}/{row['max_total']}    status: {row['status']}"]
    if row["late"]:
        lines.append(f"Late by {row['late']}: {row['penalty']} points taken under the late rule.")
    if Status.NO_SUBMISSION in row["statuses"]:
        return "\n".join(lines + ["", NOTHING_RECEIVED]) + "\n"
    lines.append("")
    best = _best_notebooks(row)
    details = []
    for ex, info in report["exercises"].items():
        nb = best.get(ex)
        lines.append(f"{ex} ({info['title']}): {row.get(ex, 0)}/{info['points']}"
                     + (f"  [{Path(nb['path']).name}, {nb['status']}]" if nb else "  no notebook received"))
        if nb is None:
            continue
        checks = [check_result(c) for c in nb["checks"]]
        width = max((len(c.function) for c in checks), default=0)
        for c in checks:
            mark = {"passed": "✓", "not attempted": "…"}.get(c.status, "✗")
            available = info["checks"].get(c.check, {}).get("points", 0)
            lines.append(f"  {mark} {c.function:<{width}}  {_points(report, ex, c):>5}/{available:<5} "
                         f"{c.score}/{c.max_score} inputs, {c.status}")
            if c.status not in (results.PASSED, results.NOT_ATTEMPTED):
                details.append(str(c))
        lines += [f"  ! {i['text']}" for i in nb["incidents"]]
        note = _hidden_note(report, ex)
        if note:
            lines.append(f"  ({note})")
    others = [nb for nb in row["notebooks"] if nb not in best.values()]
    for nb in others:
        lines.append(f"{Path(nb['path']).name}: not counted ({nb['status']})" + "".join(f"\n  ! {i['text']}" for i in nb["incidents"]))
    if details:
        lines += ["", "What went wrong", "---------------"]
        for d in details:
            lines += [d, ""]
    if row["issues"]:
        lines += ["", "About your submission"] + [f"- {i['text']}" for i in row["issues"]]
    return "\n".join(lines).rstrip() + "\n"


def page(report: dict, row: dict) -> str:
    """The offline HTML feedback page for one student (`templates/feedback.html`)."""
    a = report["assignment"]
    who = row["name"] + (f" ({row['student_id']})" if row["student_id"] else "")
    nothing = NOTHING_RECEIVED if Status.NO_SUBMISSION in row["statuses"] else ""
    best = _best_notebooks(row)
    exercises = []
    for ex, info in report["exercises"].items():
        nb = best.get(ex)
        entry = {"id": ex, "title": info["title"], "points": row.get(ex, 0), "available": info["points"],
                 "notebook": f"{Path(nb['path']).name}, {nb['status']}" if nb else "", "checks": None}
        if nb is not None:
            verdicts = [check_result(c) for c in nb["checks"]]
            entry.update(checks=[{"function": r.function, "points": _points(report, ex, r),
                                  "available": info["checks"].get(r.check, {}).get("points", 0),
                                  "html": Markup(r._repr_html_())} for r in verdicts],
                         incidents=[i["text"] for i in nb["incidents"]], note=_hidden_note(report, ex))
        exercises.append(entry)
    others = [{"name": Path(nb["path"]).name, "status": nb["status"], "incidents": [i["text"] for i in nb["incidents"]]}
              for nb in row["notebooks"] if nb not in best.values()]
    return render("feedback.html", title=a["title"], who=who, row=row, nothing=nothing, exercises=exercises,
                  others=others, issues=[i["text"] for i in row["issues"]])


def write_all(report: dict, folder: Path | str) -> list[Path]:
    """Write `<student>.html` and `<student>.txt` for every row (a student with nothing submitted is told so)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written, used = [], set()
    for row in report["submissions"]:
        stem = base = file_stem(row)
        n = 1
        while stem in used:
            n += 1
            stem = f"{base}-{n}"
        used.add(stem)
        (folder / f"{stem}.html").write_text(page(report, row), encoding="utf-8")
        (folder / f"{stem}.txt").write_text(text(report, row), encoding="utf-8")
        written.append(folder / f"{stem}.html")
    return written
