"""The class summary: one offline HTML page of what the class got right and wrong.

Rendered from a report (`score.build_report`) with `templates/summary.html`:
the distribution of each exercise's points over the students who submitted
(an inline SVG bar chart, no script, nothing loaded), the recognised mistakes
ranked by how many students made them, each with its hint and the chapter it
points to, and the notebooks whose run had incidents. What to explain again
on day two.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ...checks.exercises import BY_ID, sections
from .html import render

BINS = 10
"""Bars per exercise's chart (fewer when the exercise has fewer points)."""


def mistake_counts(report: dict) -> list[tuple[str, str, str, int]]:
    """(exercise, check, mistake id, students) for every recognised mistake, most frequent first.

    A student counts once per mistake: in the notebook that counted for the exercise.
    """
    counts: Counter = Counter()
    for row in report["submissions"]:
        counted = set(row.get("counted", {}).values())
        for nb in row["notebooks"]:
            if nb["path"] not in counted:
                continue
            for check in nb["checks"]:
                ids = {c["mistake"] for c in check["cases"] if c.get("mistake")}
                for mistake in ids:
                    counts[(nb["exercise"], check["check"], mistake)] += 1
    return [(*key, n) for key, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]


def _mistake_info(exercise: str, check: str, mistake: str) -> tuple[str, str]:
    """The hint of a mistake and the chapter (and section, where the mistake names one) it points to."""
    ex = BY_ID.get(exercise)
    hint = ""
    if ex is None:
        return hint, ""
    for c in ex.checks:
        for m in c.mistakes if c.name == check else ():
            if m.id == mistake:
                hint = m.hint
    heading = sections.section(ex.chapter, check, mistake)
    chapter = f"book/{ex.chapter}.ipynb"
    return hint, f"{chapter}, section “{sections.plain(heading)}”" if heading else chapter


def _histogram(values: list[float], maximum: float) -> dict:
    """The bars of a chart of points from 0 to `maximum` (drawn as inline SVG by the template)."""
    bins = max(1, min(BINS, int(maximum) if maximum >= 1 else 1))
    counts = [0] * bins
    for v in values:
        i = min(bins - 1, int(bins * v / maximum)) if maximum else 0
        counts[i] += 1
    width, height, bar = 320, 120, 320 / bins
    top = max(counts) or 1
    bars = []
    for i, n in enumerate(counts):
        h = (height - 32) * n / top  # room above the tallest bar for its count
        bars.append({"x": f"{i * bar + 1:.1f}", "y": f"{height - 15 - h:.1f}", "width": f"{bar - 2:.1f}",
                     "height": f"{h:.1f}", "low": f"{maximum * i / bins:g}", "high": f"{maximum * (i + 1) / bins:g}",
                     "count": n, "label_x": f"{i * bar + bar / 2:.1f}", "label_y": f"{height - 18 - h:.1f}"})
    return {"width": width, "height": height, "maximum": f"{maximum:g}", "bars": bars}


def page(report: dict) -> str:
    """The class summary page (`templates/summary.html`)."""
    rows = report["submissions"]
    submitted = [r for r in rows if r["notebooks"]]
    totals = [r["total"] for r in submitted]
    exercises = []
    for ex, info in report["exercises"].items():
        values = [r.get(ex, 0) for r in submitted]
        exercises.append({"id": ex, "title": info["title"], "points": info["points"], "students": len(values),
                          "mean": sum(values) / len(values) if values else 0,
                          "full": sum(v == info["points"] for v in values), "chart": _histogram(values, info["points"])})
    mistakes = []
    for ex, check, mistake, n in mistake_counts(report):
        hint, where = _mistake_info(ex, check, mistake)
        mistakes.append({"students": n, "exercise": ex, "check": check, "mistake": mistake, "hint": hint,
                         "where": where})
    incidents = [{"student": r["name"], "notebook": Path(nb["path"]).name, "status": nb["status"],
                  "what": [i["text"] for i in nb["incidents"]]} for r in rows for nb in r["notebooks"] if nb["incidents"]]
    found = report["intake"]
    listed = [("No submission", found["no_submission"]), ("Not on the roster", found["not_on_roster"]),
              ("Duplicates", found["duplicates"]), ("Ignored files", found["ignored_files"]),
              ("In the download: refused or belonging to no student", found["notes"])]
    return render("summary.html", title=report["assignment"]["title"], students=len(rows), submitted=len(submitted),
                  mean=(sum(totals) / len(totals)) if totals else 0, max_total=report["assignment"]["max_total"],
                  exercises=exercises, mistakes=mistakes, incidents=incidents,
                  intake=[(title, items) for title, items in listed if items])
