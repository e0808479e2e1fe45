"""Exercise 0's handouts: each student's own notebook and printable page, and the instructor's answer key.

The notebook `00_worked_example.ipynb` is released from its solution like
every exercise; three of its cells show the example (marked in their
metadata, `attention_course.drawn`): the table of the numbers, the
`example = {...}` cell and the two questions. `personal_notebook` writes
them again for a student's own example, and records in the notebook's
metadata the id it was made for and the numbers (never the secret they were
drawn with). `printable_page` is the same example on one page to work on
paper; `printed_answers` is what `attention-course answers` prints.

Without a student id, all three give the bank-bot example of the book's
introduction.
"""

from __future__ import annotations

import copy
import html

import nbformat
import numpy as np

from .._tables import text_table
from ..chapters.worked_example import WorkedExample
from .checks.exercises import METADATA_KEY
from .checks.exercises.by_hand import (
    DECIMALS,
    ENTRIES,
    EXERCISE,
    LABELS,
    example_code,
    example_dict,
    questions,
    rounded_answers,
    statement_texts,
    token_name,
    written,
)

DRAWN = "drawn"
"""Key, in a cell's `attention_course` metadata, of the part of the example the cell shows."""

PARTS = ("table", "code", "questions")
"""The cells written for each example: its numbers as a table, as `example = {...}`, and the two questions."""


def _vector(row) -> str:
    return written(np.asarray(row, dtype=np.float64))  # as a person writes it: [1, -0.5, 2]


def _short(x: float, decimals: int) -> str:
    """A number to `decimals` decimals as a student writes it: 3.0, 0.5, 20.09, 0.064."""
    text = f"{float(x):.{decimals}f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def _sentence(example: WorkedExample) -> str:
    return " ".join(example.tokens)


def table_markdown(example: WorkedExample, student: str | None) -> str:
    """The notebook's "Your example" cell: the sentence and a table of every token's key and value."""
    n, root = len(example.tokens), int(round(np.sqrt(example.d_k)))
    rows = "\n".join(f"| {i + 1} | {tok} | ${_vector(k)}$ | ${_vector(v)}$ |"
                     for i, (tok, k, v) in enumerate(zip(example.tokens, example.keys, example.values)))
    whose = (f"These numbers were drawn for the student id `{student}`: your neighbour's are different."
             if student is not None else
             "This is the bank-bot example of the book's introduction, which works it through: check yourself "
             "against the chapter. The notebook your instructor makes for you has numbers of your own.")
    return (f"## Your example\n\n"
            f"The sentence *\"{_sentence(example)}\"* has {n} tokens. We follow the query of the last one, "
            f"{token_name(example, n)}, as it attends to all {n} tokens (itself too). Every token's key and value:\n\n"
            f"| # | token | key $k$ | value $v$ |\n|---|---|---|---|\n{rows}\n\n"
            f"and the query of {token_name(example, n)} is $q = {_vector(example.query)}$: $d_k = {example.d_k}$, "
            f"so $\\sqrt{{d_k}} = {root}$.\n\n{whose}")


def questions_markdown(example: WorkedExample) -> str:
    """The notebook's two questions: the causal mask for an earlier token, and what the largest weight means."""
    asked = questions(example)
    options = "\n".join(f"{i}. {html.escape(text, quote=False)}" for i, text in
                        enumerate(statement_texts(example, asked), start=1))
    return (f"## Two questions\n\n"
            f"**6.** Suppose a causal mask, and follow instead the query of token {asked.masked_query}, "
            f"{token_name(example, asked.masked_query)}. The weights of which tokens become 0? Give their positions, "
            f"as the table numbers them, in a list (`\"masked\"`).\n\n"
            f"**7.** Back to the query of {token_name(example, len(example.tokens))}, with no mask. Which statement "
            f"says what its largest weight means? Give its number (`\"meaning\"`).\n\n{options}")


def example_cells(example: WorkedExample, student: str | None) -> dict[str, str]:
    """The source of each cell that shows the example (`PARTS`)."""
    return {"table": table_markdown(example, student), "code": example_code(example),
            "questions": questions_markdown(example)}


def personal_notebook(nb: nbformat.NotebookNode, example: WorkedExample, student: str | None) -> nbformat.NotebookNode:
    """Exercise 0's notebook `nb` (released, or its solution) for `example`, made for `student` (not modified).

    The cells marked with a part of `PARTS` are written for the example; the
    notebook's metadata records the student id and the numbers, so that the
    grader can tell a notebook made for someone else, or with other numbers
    (and drops the release's fingerprint of the old cells).
    """
    out = copy.deepcopy(nb)
    cells = example_cells(example, student)
    marked = set()
    for cell in out.cells:
        part = cell.metadata.get(METADATA_KEY, {}).get(DRAWN)
        if part in cells:
            cell.source = cells[part]
            marked.add(part)
    if marked != set(PARTS):
        raise ValueError(f"nb: expected exercise {EXERCISE}'s notebook, with a cell for each of {', '.join(PARTS)}; "
                         f"found {', '.join(sorted(marked)) or 'none'}")
    entry = out.metadata.setdefault(METADATA_KEY, {})
    entry["example"] = example_dict(example)
    if student is None:
        entry.pop("student", None)
    else:
        entry["student"] = student
    entry.pop("released_sources", None)  # its cells changed: `release` fingerprints it again as it writes it
    return out


_PAGE_STYLE = """
  @page { size: A4; margin: 15mm; }
  body { font-family: Georgia, "Times New Roman", serif; color: #000; background: #fff; max-width: 180mm;
         margin: 1em auto; line-height: 1.35; font-size: 11pt; }
  h1 { font-size: 16pt; margin: 0 0 0.2em; } h2 { font-size: 12.5pt; margin: 1em 0 0.3em; }
  table { border-collapse: collapse; margin: 0.4em 0; }
  th, td { border: 1px solid #000; padding: 0.25em 0.55em; text-align: center; vertical-align: middle; }
  td.left, th.left { text-align: left; }
  td.blank { min-width: 19mm; height: 8.5mm; }
  td.none { background: #e8e8e8; }
  code, .vector { font-family: "DejaVu Sans Mono", Consolas, monospace; font-size: 9.5pt; }
  .answer { display: inline-block; min-width: 45mm; border-bottom: 1px solid #000; height: 1.2em; }
  section { break-inside: avoid; page-break-inside: avoid; }
  ol li { margin: 0.2em 0; }
  .note { font-size: 9.5pt; }
"""


def printable_page(example: WorkedExample, student: str | None) -> str:
    """The example on one page to work on paper: an HTML file that prints on A4 (no script, nothing loaded)."""
    esc = html.escape
    n, root = len(example.tokens), int(round(np.sqrt(example.d_k)))
    asked = questions(example)
    whose = f"drawn for the student id <b>{esc(student)}</b>" if student is not None else "the bank-bot example"
    numbers = "".join(
        f"<tr><td>{i + 1}</td><td class=\"left\">{esc(tok)}</td><td class=\"vector\">{esc(_vector(k))}</td>"
        f"<td class=\"vector\">{esc(_vector(v))}</td></tr>"
        for i, (tok, k, v) in enumerate(zip(example.tokens, example.keys, example.values)))
    blanks = "".join(f"<tr><td>{i + 1}</td><td class=\"left\">{esc(tok)}</td>" + "<td class=\"blank\"></td>" * 4 + "</tr>"
                     for i, tok in enumerate(example.tokens))
    options = "".join(f"<li>{esc(text)}</li>" for text in statement_texts(example, asked))
    output = ", ".join(["<span class=\"answer\" style=\"min-width:20mm\"></span>"] * example.values.shape[1])
    decimals = ", ".join(f"{LABELS[e].split(': ', 1)[1]} to {DECIMALS[e]}" for e in ENTRIES if e in DECIMALS)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>A worked example of your own{esc(f": {student}") if student is not None else ""}</title>
<style>{_PAGE_STYLE}</style>
</head>
<body>
<h1>A worked example of your own</h1>
<p>Exercise {EXERCISE}, {whose}. Work each step on paper, then write your numbers into the
notebook's <code>answers</code> cell. Decimals: {esc(decimals)}.</p>
<section>
<h2>The example</h2>
<p>The sentence <i>&ldquo;{esc(_sentence(example))}&rdquo;</i>. We follow the query of its last token,
{esc(token_name(example, n))}: <span class="vector">q = {esc(_vector(example.query))}</span>,
d<sub>k</sub> = {example.d_k}, &radic;d<sub>k</sub> = {root}.</p>
<table>
<thead><tr><th>#</th><th class="left">token</th><th>key k</th><th>value v</th></tr></thead>
<tbody>{numbers}</tbody>
</table>
</section>
<section>
<h2>Steps 2 to 4: scores and weights</h2>
<table>
<thead><tr><th>#</th><th class="left">token</th><th>q&middot;k</th><th>q&middot;k / {root}</th><th>exp</th>
<th>weight</th></tr></thead>
<tbody>{blanks}
<tr><td></td><td class="left">sum</td><td class="none"></td><td class="none"></td><td class="blank"></td>
<td class="none"></td></tr></tbody>
</table>
</section>
<section>
<h2>Step 5: the output</h2>
<p>the sum of weight &times; value over the tokens = [ {output} ]</p>
</section>
<section>
<h2>Question 6</h2>
<p>Suppose a causal mask, and follow instead the query of token {asked.masked_query},
{esc(token_name(example, asked.masked_query))}. The weights of which tokens become 0? Their positions:
<span class="answer"></span></p>
</section>
<section>
<h2>Question 7</h2>
<p>Back to the query of {esc(token_name(example, n))}, with no mask. Which statement says what its largest weight
means? Its number: <span class="answer" style="min-width:15mm"></span></p>
<ol>{options}</ol>
</section>
<p class="note">attention-course: <i>The worked example: &ldquo;my card was blocked&rdquo;</i> shows every step on
the bank-bot example.</p>
</body>
</html>
"""


def printed_answers(example: WorkedExample, student: str | None, *, secret: bool = False) -> str:
    """What `attention-course answers` prints: the example, every step's right numbers, and the answers cell."""
    trace = example.trace()
    asked = questions(example)
    n = len(example.tokens)
    whose = (f"student id \"{student}\"" + (", drawn with the assignment's secret" if secret else ", drawn without a secret")
             if student is not None else "no student id: the bank-bot example of the book's introduction")
    rows = [(str(i + 1), tok, _short(s, 2), _short(z, 2), _short(e, 2), _short(w, 3))
            for i, (tok, s, z, e, w) in enumerate(zip(example.tokens, trace.scores, trace.scaled_scores,
                                                      trace.exponentials, trace.weights))]
    rows.append(("", "sum", "", "", _short(trace.exp_sum, 2), ""))
    masked = list(range(asked.masked_query + 1, n + 1))
    answers = rounded_answers(example)
    lines = [
        f"{EXERCISE}, {whose}",
        f"\"{_sentence(example)}\": the query of {token_name(example, n)}, d_k = {example.d_k}, "
        f"sqrt(d_k) = {np.sqrt(example.d_k):g}",
        f"q = {_vector(example.query)}",
        text_table(("#", "token", "key", "value"), [(str(i + 1), tok, _vector(k), _vector(v)) for i, (tok, k, v) in
                                                    enumerate(zip(example.tokens, example.keys, example.values))],
                   left_columns=4),
        "",
        text_table(("#", "token", "q·k", "scaled", "exp", "weight"), rows, left_columns=2),
        f"output = [{', '.join(_short(x, 2) for x in trace.output)}]",
        f"question 6, the query of token {asked.masked_query} ({token_name(example, asked.masked_query)}) under a "
        f"causal mask: the weights of {', '.join(map(str, masked))} become 0",
        f"question 7: statement {asked.right_statement}, \"{statement_texts(example, asked)[asked.right_statement - 1]}\"",
        "",
        "answers = {",
        *(f"    \"{entry}\": {written(answers[entry])}," for entry in ENTRIES),
        "}",
    ]
    return "\n".join(lines) + "\n"
