"""A feedback file per student: an offline HTML page and its plain-text twin for e-mail.

Rendered from a report row (`gradebook.build_report`): the points per
exercise and per check, the same per-check tables `attention-course check`
shows, what went wrong while running the notebooks, the late penalty and what
intake found (duplicates, ignored files). An input only the grader tries is
described by its label and never shown: its values, the expected result and
what came back are left out, so the feedback cannot be used to learn them.
The HTML page has no script and loads nothing.
"""

from __future__ import annotations

import dataclasses
import html
import re
from pathlib import Path

from ...checks.engine import results
from ..score import check_mark, student_message
from ..status import Status

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


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#1f2328;line-height:1.45}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}table.points{border-collapse:collapse;margin:.5em 0}
table.points td,table.points th{border-bottom:1px solid #d0d7de;padding:.2em .8em;text-align:left;overflow-wrap:anywhere}
table.points td:nth-child(2),table.points th:nth-child(2){white-space:nowrap}
.late{color:#9a6700;font-weight:bold}.incident{color:#cf222e}.note{color:#57606a}pre{white-space:pre-wrap}
"""


def page(report: dict, row: dict) -> str:
    """The offline HTML feedback page for one student."""
    esc = html.escape
    a = report["assignment"]
    who = esc(row["name"]) + (f" ({esc(row['student_id'])})" if row["student_id"] else "")
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{esc(a['title'])}: {who}</title>",
             f"<style>{_STYLE}</style></head><body>",
             f"<h1>{esc(a['title'])}: feedback for {who}</h1>",
             f"<p><strong>Total: {row['total']}/{row['max_total']}</strong> &middot; status: {esc(row['status'])}</p>"]
    if row["late"]:
        parts.append(f"<p class='late'>Late by {esc(row['late'])}: {row['penalty']} points taken under the late rule.</p>")
    if Status.NO_SUBMISSION in row["statuses"]:
        return "".join(parts + [f"<p>{esc(NOTHING_RECEIVED)}</p></body></html>\n"])
    best = _best_notebooks(row)
    parts.append("<table class='points'><tr><th>exercise</th><th>points</th><th>notebook</th></tr>")
    for ex, info in report["exercises"].items():
        nb = best.get(ex)
        parts.append(f"<tr><td>{esc(ex)} &middot; {esc(info['title'])}</td><td>{row.get(ex, 0)}/{info['points']}</td>"
                     f"<td>{esc(Path(nb['path']).name) + ', ' + esc(nb['status']) if nb else 'no notebook received'}</td></tr>")
    parts.append("</table>")
    for ex, info in report["exercises"].items():
        nb = best.get(ex)
        if nb is None:
            continue
        parts.append(f"<h2>{esc(ex)}: {esc(info['title'])} ({row.get(ex, 0)}/{info['points']} points)</h2>")
        for c in nb["checks"]:
            result = check_result(c)
            points = info["checks"].get(result.check, {}).get("points", 0)
            parts.append(f"<p class='note'>{esc(result.function)}: {_points(report, ex, result)}/{points} points</p>")
            parts.append(result._repr_html_())
        parts += [f"<p class='incident'>{esc(i['text'])}</p>" for i in nb["incidents"]]
        note = _hidden_note(report, ex)
        if note:
            parts.append(f"<p class='note'>{esc(note)}</p>")
    for nb in [nb for nb in row["notebooks"] if nb not in best.values()]:
        parts.append(f"<h2>{esc(Path(nb['path']).name)}: not counted</h2><p>{esc(nb['status'])}</p>")
        parts += [f"<p class='incident'>{esc(i['text'])}</p>" for i in nb["incidents"]]
    if row["issues"]:
        parts.append("<h2>About your submission</h2><ul>" + "".join(f"<li>{esc(i['text'])}</li>" for i in row["issues"]) + "</ul>")
    parts.append("</body></html>\n")
    return "".join(parts)


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
