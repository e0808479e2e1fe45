"""The class summary: one offline HTML page of what the class got right and wrong.

Rendered from a report (`gradebook.build_report`): the distribution of each
exercise's points over the students who submitted (an inline SVG bar chart,
no script, nothing loaded), the recognised mistakes ranked by how many
students made them, each with its hint and the chapter it points to, and
the notebooks whose run had incidents. What to explain again on day two.
"""

from __future__ import annotations

import html
from collections import Counter
from pathlib import Path

from ...checks.exercises import BY_ID, sections

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


def _histogram(values: list[float], maximum: float) -> str:
    """An inline SVG bar chart of points from 0 to `maximum`."""
    bins = max(1, min(BINS, int(maximum) if maximum >= 1 else 1))
    counts = [0] * bins
    for v in values:
        i = min(bins - 1, int(bins * v / maximum)) if maximum else 0
        counts[i] += 1
    width, height, bar = 320, 120, 320 / bins
    top = max(counts) or 1
    rects = []
    for i, n in enumerate(counts):
        h = (height - 32) * n / top  # room above the tallest bar for its count
        lo, hi = maximum * i / bins, maximum * (i + 1) / bins
        rects.append(f"<rect x='{i * bar + 1:.1f}' y='{height - 15 - h:.1f}' width='{bar - 2:.1f}' height='{h:.1f}' "
                     f"fill='#0969da'><title>{lo:g} to {hi:g} points: {n} student(s)</title></rect>")
        if n:
            rects.append(f"<text x='{i * bar + bar / 2:.1f}' y='{height - 18 - h:.1f}' font-size='10' "
                         f"text-anchor='middle'>{n}</text>")
    axis = (f"<text x='0' y='{height - 2}' font-size='10'>0</text>"
            f"<text x='{width}' y='{height - 2}' font-size='10' text-anchor='end'>{maximum:g}</text>")
    return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' role='img' "
            f"aria-label='points from 0 to {maximum:g}'>{''.join(rects)}{axis}</svg>")


_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#1f2328}
table{border-collapse:collapse;margin:.5em 0}td,th{border-bottom:1px solid #d0d7de;padding:.25em .7em;text-align:left;vertical-align:top;overflow-wrap:anywhere}
.charts{display:flex;flex-wrap:wrap;gap:1.5em}.chart{border:1px solid #d0d7de;padding:.5em;border-radius:6px}
"""


def page(report: dict) -> str:
    """The class summary page."""
    esc = html.escape
    a = report["assignment"]
    rows = report["submissions"]
    submitted = [r for r in rows if r["notebooks"]]
    totals = [r["total"] for r in submitted]
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{esc(a['title'])}: class summary</title>",
             f"<style>{_STYLE}</style></head><body><h1>{esc(a['title'])}: class summary</h1>",
             f"<p>{len(rows)} student(s), {len(submitted)} with a submission; mean total "
             f"{(sum(totals) / len(totals)) if totals else 0:.1f}/{a['max_total']}.</p>",
             "<h2>Points per exercise</h2><div class='charts'>"]
    for ex, info in report["exercises"].items():
        values = [r.get(ex, 0) for r in submitted]
        mean = sum(values) / len(values) if values else 0
        full = sum(v == info["points"] for v in values)
        parts.append(f"<div class='chart'><strong>{esc(ex)}</strong> {esc(info['title'])}<br>"
                     f"mean {mean:.1f}/{info['points']}, full marks {full}/{len(values)}<br>"
                     f"{_histogram(values, info['points'])}</div>")
    parts.append("</div><h2>The most common recognised mistakes</h2>")
    mistakes = mistake_counts(report)
    if mistakes:
        parts.append("<table><tr><th>students</th><th>exercise</th><th>check</th><th>mistake</th><th>hint</th>"
                     "<th>read again</th></tr>")
        for ex, check, mistake, n in mistakes:
            hint, where = _mistake_info(ex, check, mistake)
            parts.append(f"<tr><td>{n}</td><td>{esc(ex)}</td><td>{esc(check)}</td><td><code>{esc(mistake)}</code></td>"
                         f"<td>{esc(hint)}</td><td>{esc(where)}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>No recognised mistake.</p>")
    parts.append("<h2>Notebooks with incidents</h2>")
    incidents = [(r, nb) for r in rows for nb in r["notebooks"] if nb["incidents"]]
    if incidents:
        parts.append("<table><tr><th>student</th><th>notebook</th><th>status</th><th>what happened</th></tr>")
        for r, nb in incidents:
            parts.append(f"<tr><td>{esc(r['name'])}</td><td>{esc(Path(nb['path']).name)}</td><td>{esc(nb['status'])}</td>"
                         f"<td>{'<br>'.join(esc(i['text']) for i in nb['incidents'])}</td></tr>")
        parts.append("</table>")
    else:
        parts.append("<p>None.</p>")
    intake = report["intake"]
    listed = [("No submission", intake["no_submission"]), ("Not on the roster", intake["not_on_roster"]),
              ("Duplicates", intake["duplicates"]), ("Ignored files", intake["ignored_files"]),
              ("In the download: refused or belonging to no student", intake["notes"])]
    if any(items for _, items in listed):
        parts.append("<h2>What intake found</h2>")
        for title, items in listed:
            if items:
                listed = "".join(f"<li>{esc(i)}</li>" for i in items)
                parts.append(f"<h3>{esc(title)} ({len(items)})</h3><ul>{listed}</ul>")
    parts.append("</body></html>\n")
    return "".join(parts)
