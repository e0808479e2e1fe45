"""Time a student's `attention-course check NOTEBOOK` stage by stage, and the batch grader per notebook.

Run from the repository root:

    .venv/bin/python benchmarks/bench_check.py                        # this checkout's code alone
    .venv/bin/python benchmarks/bench_check.py --before main          # ... and main's, side by side, in turn
    .venv/bin/python benchmarks/bench_check.py --before HEAD~3 --rounds 9 --copies 40
    .venv/bin/python benchmarks/bench_check.py --help

Each `check` runs in a fresh interpreter, as a student's command does, on a
copy of a solution notebook (exercise 3, one check, and exercise 8), in its
bubblewrap sandbox where this machine can make one. A small driver wraps a
few of the grader's functions to note when each stage ends, so one run gives:

- import: the interpreter's start and every import up to the command's handler;
- before the sandbox: what the grader does before it starts the worker (a grader
  that starts it when the notebook is ready: finding the notebook, bubblewrap's
  one-off check, reading and validating the notebook, the exercise's inputs and
  expected results; one that starts it ahead: bubblewrap's check alone);
- sandbox start: bwrap, the interpreter and its imports inside, the IPython shell,
  until the grader reads that the worker is ready (started ahead, the worker gets
  ready while the grader imports the rest of itself, reads and prepares);
- notebook run: its cells, then the grader's calls (the result channel included);
- sandbox end: what the notebook left behind, the kill and the last reads;
- judging: the verdicts, the report printed, the interpreter's exit.

`import attention_course` is timed alone, in its own fresh interpreters.
The batch grader grades `--copies` copies of exercise 8 on every core (as
`attention-course grade` does) in a fresh interpreter per batch; its time per
notebook is the batch's time over the copies. `--follow-up-timeout SECONDS`
grades them with that time for the follow-up of a failed check, as
`attention-course grade --follow-up-timeout` does (0: none), in every code
tree that has the follow-up.

With `--before REV` the same runs are made with the package as it is at git
revision REV (extracted into a temporary folder), the two alternating run by
run, so that the machine's load falls on both alike; each tree's bytecode is
compiled first, as a wheel's install does. Times are medians. Other work on
the machine slows everything down: these are measurements, not tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ("03_softmax", "08_flash_attention")
STAGES = ("import", "before the sandbox", "sandbox start", "notebook run", "sandbox end", "judging")
CHECK_TARGET = 1.0
"""Seconds: the median `check` of a one-exercise notebook (exercise 3)."""
IMPORT_TARGET = 0.25
"""Seconds: `import attention_course`."""
BATCH_TARGET = 2 / 3
"""The batch grader's time per notebook, after over before."""

# Runs `attention-course check NOTEBOOK` in this fresh interpreter, noting (time.monotonic, the same clock in every
# process) when each stage ends; prints them as JSON on stderr's last line. The wrapped functions exist in every
# version of the grader since its two rooms; a stage whose function is missing is left out.
CHECK_DRIVER = r"""
import json, sys, time

marks = {}

def noting(owner, name, before=None, after=None):
    original = getattr(owner, name, None)
    if original is None:
        return
    def wrapper(*args, **kwargs):
        if before:
            marks.setdefault(before, time.monotonic())
        try:
            return original(*args, **kwargs)
        finally:
            if after:
                marks.setdefault(after, time.monotonic())
    setattr(owner, name, wrapper)

from attention_course.grading import cli as grading_cli
from attention_course.grading.run.sandbox import channel, process
noting(grading_cli, "run_check", before="import")
noting(process.WorkerProcess, "_start", before="before the sandbox")  # the worker started when it is run
noting(process, "start_worker", before="before the sandbox")  # or ahead, while the grader reads and prepares
noting(channel.Reports, "_ready", after="sandbox start")
noting(channel.Reports, "_done", before="notebook run")
noting(process.WorkerProcess, "run", after="sandbox end")
from attention_course.cli import main

code = main(["check", sys.argv[1]])
sys.stdout.flush()
marks["judging"] = time.monotonic()
print(json.dumps({"code": code, "marks": marks}), file=sys.stderr)
"""

IMPORT_DRIVER = r"""
import time
start = time.perf_counter()
import attention_course
print(time.perf_counter() - start)
"""

# Grades the copies in one folder as `attention-course grade` does (every core), prints seconds and the grades' scores.
BATCH_DRIVER = r"""
import json, sys, time
from attention_course.grading.classroom.batch import grade_submissions
from attention_course.grading.classroom.intake import collect

submissions = collect([sys.argv[1]])
limits = {}
if len(sys.argv) > 2:  # the follow-up's time, in a tree that has the follow-up
    import dataclasses
    from attention_course.grading.run.sandbox.runner import Limits
    if "follow_seconds" in {f.name for f in dataclasses.fields(Limits)}:
        limits = {"limits": Limits(follow_seconds=float(sys.argv[2]))}
start = time.monotonic()
grades = grade_submissions(submissions, progress=False, **limits)
seconds = time.monotonic() - start
notebooks = [nb for g in grades for nb in g.notebooks]
print(json.dumps({"seconds": seconds, "full": sum(nb.score == nb.max_score for nb in notebooks),
                  "notebooks": len(notebooks)}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", metavar="REV", help="also time the package as it is at this git revision, in turn")
    parser.add_argument("--rounds", type=int, default=7, help="checks of each notebook per code tree (default: 7)")
    parser.add_argument("--copies", type=int, default=40, help="notebooks in the batch (default: 40; 0: no batch)")
    parser.add_argument("--batch-rounds", type=int, default=2, help="batches per code tree (default: 2)")
    parser.add_argument("--follow-up-timeout", type=float, default=None, metavar="SECONDS",
                        help="the batch's time for the follow-up of a failed check, in the trees that have one "
                             "(default: the grader's own; 0: no follow-up)")
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.copies < 0 or args.batch_rounds < 1:
        parser.error(f"--rounds and --batch-rounds must be at least 1 and --copies at least 0; got {args.rounds}, "
                     f"{args.batch_rounds} and {args.copies}")
    if args.follow_up_timeout is not None and not args.follow_up_timeout >= 0:
        parser.error(f"--follow-up-timeout must be a number of seconds, 0 or more; got {args.follow_up_timeout}")
    with tempfile.TemporaryDirectory(prefix="bench-check-") as tmp:
        tmp = Path(tmp)
        trees = {"after": ROOT}
        if args.before:
            trees = {"before": _extract(args.before, tmp / "before"), "after": ROOT}
        for tree in trees.values():
            _compile(tree)
        work = tmp / "student"
        work.mkdir()
        for name in NOTEBOOKS:
            shutil.copy(ROOT / "solutions" / f"{name}.ipynb", work)
        load = [os.getloadavg()[0]]
        print(f"code: {', '.join(f'{k} = {_describe(k, args.before)}' for k in trees)}; {os.cpu_count()} cores; "
              f"sandbox: {'bubblewrap' if _sandboxed() else 'none (plain processes)'}\n")
        imports = _time_imports(trees, args.rounds)
        checks = {name: _time_checks(trees, work / f"{name}.ipynb", args.rounds) for name in NOTEBOOKS}
        load.append(os.getloadavg()[0])
        batches = _time_batches(trees, tmp, args.copies, args.batch_rounds, args.follow_up_timeout) if args.copies else {}
        load.append(os.getloadavg()[0])
    _report(trees, imports, checks, batches, args, load)
    return 0


def _extract(revision: str, folder: Path) -> Path:
    """The package as it is at `revision`, in `folder` (attention_course/ only)."""
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision, "attention_course"], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def _describe(label: str, before: str | None) -> str:
    if label == "before":
        return before
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "attention_course"], capture_output=True,
                           text=True).stdout.strip()
    return f"this checkout ({head.stdout.strip()}{', with changes' if dirty else ''})"


def _compile(tree: Path) -> None:
    """Bytecode for the package, as pip writes it on install (the sandbox cannot write it)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "attention_course")], check=True,
                   stdout=subprocess.DEVNULL)


def _sandboxed() -> bool:
    from attention_course.grading.run.sandbox import bubblewrap

    return bubblewrap.available() is not None


def _env(tree: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree)}


def _time_imports(trees: dict[str, Path], rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {label: [] for label in trees}
    for r in range(3 * rounds):
        for label in _in_turn(trees, r):
            done = subprocess.run([sys.executable, "-c", IMPORT_DRIVER], env=_env(trees[label]), cwd="/",
                                  capture_output=True, text=True, check=True)
            times[label].append(float(done.stdout))
    return times


def _time_checks(trees: dict[str, Path], notebook: Path, rounds: int) -> dict[str, list[dict[str, float]]]:
    """Per tree, one dict per run: stage -> seconds, and "total"."""
    runs: dict[str, list[dict[str, float]]] = {label: [] for label in trees}
    for r in range(rounds):
        for label in _in_turn(trees, r):
            start = time.monotonic()
            done = subprocess.run([sys.executable, "-c", CHECK_DRIVER, notebook.name], env=_env(trees[label]),
                                  cwd=notebook.parent, capture_output=True, text=True)
            end = time.monotonic()
            try:
                result = json.loads(done.stderr.strip().splitlines()[-1])
            except (ValueError, IndexError):
                raise SystemExit(f"the check of {notebook.name} ({label}) failed:\n{done.stdout}\n{done.stderr}")
            if result["code"] != 0:
                raise SystemExit(f"the check of {notebook.name} ({label}) did not pass:\n{done.stdout}")
            runs[label].append(_stages(start, result["marks"], end))
    return runs


def _stages(start: float, marks: dict[str, float], end: float) -> dict[str, float]:
    """Seconds of each stage from the times its end was noted (a stage not noted is merged into the next)."""
    stages, last = {}, start
    for stage in STAGES:
        t = end if stage == "judging" else marks.get(stage)
        if t is not None:
            stages[stage], last = t - last, t
    stages["total"] = end - start
    return stages


def _time_batches(trees: dict[str, Path], tmp: Path, copies: int, rounds: int,
                  follow_seconds: float | None = None) -> dict[str, list[dict]]:
    folder = tmp / "class"
    folder.mkdir()
    source = ROOT / "solutions" / "08_flash_attention.ipynb"
    for i in range(copies):
        student = folder / f"student_{i:03d}"
        student.mkdir()
        shutil.copy(source, student / source.name)
    runs: dict[str, list[dict]] = {label: [] for label in trees}
    for r in range(rounds):
        for label in _in_turn(trees, r):
            follow = [] if follow_seconds is None else [str(follow_seconds)]
            done = subprocess.run([sys.executable, "-c", BATCH_DRIVER, str(folder), *follow], env=_env(trees[label]),
                                  cwd=tmp, capture_output=True, text=True)
            try:
                result = json.loads(done.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                raise SystemExit(f"the batch ({label}) failed:\n{done.stdout}\n{done.stderr}")
            if result["full"] != copies:
                raise SystemExit(f"the batch ({label}) gave full marks to {result['full']} of {copies} copies")
            runs[label].append(result)
    return runs


def _in_turn(trees: dict, r: int) -> list[str]:
    """The trees' labels, the first one first in even rounds and last in odd ones."""
    labels = list(trees)
    return labels if r % 2 == 0 else labels[::-1]


def _report(trees, imports, checks, batches, args, load) -> None:
    labels = list(trees)
    both = len(labels) == 2

    def cells(values: dict[str, float], unit: float = 1.0, digits: int = 2) -> str:
        shown = " | ".join(f"{values[label] * unit:.{digits}f}" for label in labels)
        return shown + (f" | {values['after'] / values['before']:.2f}" if both and values["before"] else "")

    header = " | ".join(labels) + (" | after / before" if both else "")
    print(f"`import attention_course`, seconds (median of {3 * args.rounds} fresh interpreters): "
          f"{cells({k: statistics.median(v) for k, v in imports.items()}, digits=3)}")
    for name, runs in checks.items():
        print(f"\n`attention-course check {name}.ipynb`, seconds (medians of {args.rounds} runs each)\n")
        print(f"| stage | {header} |")
        print("| --- |" + " --- |" * (len(labels) + both))
        for stage in (*STAGES, "total"):
            values = {label: statistics.median(run.get(stage, 0.0) for run in runs[label]) for label in labels}
            print(f"| {stage} | {cells(values)} |")
        spread = {label: (min(r["total"] for r in runs[label]), max(r["total"] for r in runs[label])) for label in labels}
        print("\ntotal's range: " + ", ".join(f"{k} {lo:.2f}-{hi:.2f} s" for k, (lo, hi) in spread.items()))
    if batches:
        per = {label: statistics.median(r["seconds"] / r["notebooks"] for r in runs) for label, runs in batches.items()}
        totals = ", ".join(f"{label} " + " ".join(f"{r['seconds']:.1f}" for r in runs) for label, runs in batches.items())
        follow = "" if args.follow_up_timeout is None else f", --follow-up-timeout {args.follow_up_timeout:g}"
        print(f"\nbatch grader, {args.copies} copies of exercise 8 on every core{follow}, seconds per notebook "
              f"(median of {args.batch_rounds} batches each): {cells(per)}   (batch totals, s: {totals})")
    print(f"\nload average: {load[0]:.1f} at the start, {load[1]:.1f} after the checks, {load[2]:.1f} at the end")
    after = {
        "check of exercise 3": (statistics.median(r["total"] for r in checks["03_softmax"]["after"]), CHECK_TARGET, "s"),
        "import attention_course": (statistics.median(imports["after"]), IMPORT_TARGET, "s"),
    }
    if batches and both:
        after["batch per notebook, after / before"] = (per["after"] / per["before"], BATCH_TARGET, "")
    print("targets: " + "; ".join(f"{what} {value:.2f}{unit} ({'met' if value <= target else 'NOT met'}: at most "
                                  f"{target:.2f}{unit})" for what, (value, target, unit) in after.items()))


if __name__ == "__main__":
    sys.exit(main())
