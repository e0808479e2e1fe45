"""The grading subcommands of `attention-course`: check, release, grade.

    attention-course check 03_softmax.ipynb          a student grades their notebook
    attention-course release                          exercises/ from solutions/
    attention-course grade submitted/ --out gb.csv    a class's notebooks into a gradebook

Heavy modules are imported inside the handlers, so `--help` stays fast.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path


def register(subparsers) -> None:
    """Add the check, release and grade subcommands."""
    check = subparsers.add_parser(
        "check", help="grade your own exercise notebook and see what to fix",
        description="Run your exercise notebook(s) the way the instructor's grader does (in a separate process, "
                    "with time and memory limits, in the same bubblewrap sandbox where it is installed, with extra "
                    "inputs the notebook's check cells do not show) and print a table per exercise with what went "
                    "wrong and a hint. Exit status 0 when everything passes, 1 otherwise.",
    )
    check.add_argument("notebooks", nargs="+", metavar="NOTEBOOK", help="exercise notebook(s), or folders of them")
    _add_limits(check)
    check.set_defaults(run=run_check)

    release = subparsers.add_parser(
        "release", help="regenerate exercises/ from solutions/",
        description="Write the student notebooks from the solution notebooks: code between '### BEGIN SOLUTION' "
                    "and '### END SOLUTION' becomes '# YOUR CODE HERE' and 'raise NotImplementedError()'; outputs "
                    "are removed. An exercise notebook edited since its release (a student's work) is never replaced "
                    "without --force. With --check, only report whether exercises/ is up to date (exit 1 if not).",
    )
    release.add_argument("--solutions", type=Path, default=Path("solutions"), help="folder of solution notebooks (default: solutions)")
    release.add_argument("--exercises", type=Path, default=Path("exercises"), help="folder to write (default: exercises)")
    release.add_argument("--check", action="store_true", help="change nothing; exit 1 if exercises/ is out of date")
    release.add_argument(
        "--force", action="store_true",
        help="also replace exercise notebooks edited since their release (a .bak copy of each is kept)",
    )
    release.set_defaults(run=run_release)

    grade = subparsers.add_parser(
        "grade", help="grade many submissions into a gradebook (CSV + JSON)",
        description="Grade every submission, each notebook in a bubblewrap sandbox of its own (no network, a "
                    "read-only view of only Python and the course package, its own processes, limits enforced from "
                    "outside), using every core. A SUBMISSION is a notebook, or a folder: each notebook directly "
                    "inside it is one submission and each subfolder is one (a student's folder of notebooks). "
                    "Writes the CSV gradebook (one row per submission, a column per exercise, total, status, "
                    "feedback) and a JSON report beside it. An existing gradebook is never replaced without --force.",
    )
    grade.add_argument("submissions", nargs="+", metavar="SUBMISSION", help="notebooks or folders")
    grade.add_argument("--out", type=Path, default=Path("gradebook.csv"), help="the CSV to write (default: gradebook.csv); the report goes to the same name with .json")
    grade.add_argument("--force", action="store_true", help="replace an existing gradebook and report")
    grade.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: one per core)")
    grade.add_argument("--no-progress", action="store_true", help="no progress bar")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="run the notebooks without bubblewrap, as your own user, with full access to your files "
                            "and the network: only for notebooks you trust")
    _add_limits(grade)
    grade.set_defaults(run=run_grade)


def _add_limits(parser: argparse.ArgumentParser) -> None:
    from .sandbox.runner import Limits

    d = Limits()
    group = parser.add_argument_group("limits for each notebook")
    group.add_argument("--cell-timeout", type=_seconds, default=d.cell_seconds, metavar="SECONDS",
                       help=f"time limit per code cell (default: {d.cell_seconds:g})")
    group.add_argument("--check-timeout", type=_seconds, default=d.call_seconds, metavar="SECONDS",
                       help=f"time limit per call of a student's function (default: {d.call_seconds:g})")
    group.add_argument("--notebook-timeout", type=_seconds, default=d.notebook_seconds, metavar="SECONDS",
                       help=f"time budget for a whole notebook (default: {d.notebook_seconds:g})")
    group.add_argument("--memory-limit", type=_bytes, default=d.memory_bytes, metavar="SIZE",
                       help="memory (address space) per notebook process, e.g. 2G or 1500M (default: 2G)")


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, got {text}")
    return value


def _bytes(text: str) -> int:
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMG]?)B?\s*", text, flags=re.IGNORECASE)
    if not match:
        raise argparse.ArgumentTypeError(f"expected a size such as 2G or 1500M, got {text!r}")
    factor = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[match.group(2).upper()]
    value = int(float(match.group(1)) * factor)
    if value < 256 << 20:
        raise argparse.ArgumentTypeError("the memory limit must be at least 256M (Python and numpy need about that)")
    return value


def _limits(args):
    from .sandbox.runner import Limits

    return Limits(cell_seconds=args.cell_timeout, call_seconds=args.check_timeout,
                  notebook_seconds=args.notebook_timeout, memory_bytes=args.memory_limit)


def run_check(args) -> int:
    """Handler of `attention-course check`."""
    from .batch import collect, grade_submissions
    from .gradebook import format_report

    try:
        submissions = collect(args.notebooks)
    except FileNotFoundError as err:
        print(f"attention-course check: {err}", file=sys.stderr)
        return 2
    if not any(s.notebooks for s in submissions):
        print("attention-course check: no notebooks (*.ipynb) found", file=sys.stderr)
        return 2
    from .sandbox import bubblewrap

    # A student's own notebook: the same sandbox as the grader's where bubblewrap works, else a plain process.
    sandbox = bubblewrap.available() is not None
    grades = grade_submissions(submissions, _limits(args), progress=False, sandbox=sandbox)
    notebooks = [nb for g in grades for nb in g.notebooks]
    print(format_report(notebooks), end="")
    return 0 if all(nb.checks and all(c.passed for c in nb.checks) for nb in notebooks) else 1


def run_release(args) -> int:
    """Handler of `attention-course release`."""
    from .release import ReleaseError, release

    try:
        report = release(args.solutions, args.exercises, check=args.check, force=args.force)
    except (FileNotFoundError, ReleaseError) as err:
        print(f"attention-course release: {err}", file=sys.stderr)
        return 2
    verb = "out of date" if args.check else "written"
    for path in report.written:
        print(f"{verb}: {path}")
    for path in report.removed:
        print(f"{'stale' if args.check else 'removed'}: {path}")
    for path in report.backups:
        print(f"kept a copy of your edits: {path}")
    for path in report.kept:
        print(f"not replaced, edited since its release: {path} (your work? use --force to replace it; "
              "a .bak copy is kept)", file=sys.stderr)
    print(f"{len(report.unchanged)} up to date, {len(report.written)} {verb}, {len(report.removed)} "
          f"{'stale' if args.check else 'removed'}" + (f", {len(report.kept)} edited and left alone" if report.kept else ""))
    return 1 if (args.check and not report.up_to_date) or report.kept else 0


def run_grade(args) -> int:
    """Handler of `attention-course grade`."""
    from .batch import ATTEMPTS, collect, default_jobs, grade_submissions
    from .gradebook import GradebookExists, ensure_writable, free_path, write_gradebook
    from .sandbox import bubblewrap

    try:
        ensure_writable(args.out, args.force)
        submissions = collect(args.submissions)
    except (GradebookExists, FileNotFoundError) as err:
        print(f"attention-course grade: {err}", file=sys.stderr)
        return 2
    if not submissions:
        print("attention-course grade: no submissions found", file=sys.stderr)
        return 2
    if args.jobs is not None and args.jobs < 1:
        print("attention-course grade: --jobs must be at least 1", file=sys.stderr)
        return 2
    if args.no_sandbox:
        print(f"attention-course grade: warning: {NO_SANDBOX_WARNING}", file=sys.stderr)
        sandbox = {"sandbox": "none (--no-sandbox)", "warning": NO_SANDBOX_WARNING}
    else:
        try:
            box = bubblewrap.find()
        except bubblewrap.SandboxUnavailable as err:
            print(f"attention-course grade: {err}.\nThe grader runs each notebook in a bubblewrap sandbox; "
                  "to grade notebooks you trust without one, pass --no-sandbox.", file=sys.stderr)
            return 2
        sandbox = {"sandbox": f"bubblewrap ({box.executable}, "
                              + ("in a user namespace" if box.user_namespace else "as root, each worker under an unused uid")
                              + ")"}
    limits = _limits(args)
    jobs = args.jobs or default_jobs()
    start = time.monotonic()
    grades = grade_submissions(submissions, limits, jobs=jobs, progress=not args.no_progress,
                               sandbox=not args.no_sandbox)
    seconds = time.monotonic() - start
    settings = {"limits": vars(limits), "jobs": jobs, "seconds": round(seconds, 2), **sandbox}
    out = args.out
    try:
        csv_path, json_path = write_gradebook(grades, out, force=args.force, settings=settings)
    except GradebookExists:
        out = free_path(args.out)
        print(f"attention-course grade: {args.out} appeared while grading; writing {out} instead", file=sys.stderr)
        csv_path, json_path = write_gradebook(grades, out, settings=settings)
    clean = sum(g.status in ("ok", "not attempted") for g in grades)
    print(f"graded {len(grades)} submission(s) in {seconds:.1f} s with {jobs} worker(s): "
          f"{clean} ran cleanly, {len(grades) - clean} with incidents (see the status column)")
    flagged = [g for g in grades if any(f in g.status for f in ATTEMPTS)]
    if flagged:
        print(f"{len(flagged)} submission(s) tried something the sandbox stopped or the grader noticed: "
              + ", ".join(f"{g.submission.name} ({g.status})" for g in flagged[:10])
              + (", ..." if len(flagged) > 10 else "") + "; the report says what and in which cell")
    print(f"gradebook: {csv_path}\nreport:    {json_path}")
    if args.no_sandbox:
        print(f"attention-course grade: warning: {NO_SANDBOX_WARNING}", file=sys.stderr)
    return 0


NO_SANDBOX_WARNING = ("no sandbox (--no-sandbox): the notebooks run as your user, can read and write your files, "
                      "reach the network and leave processes running; grade untrusted notebooks without --no-sandbox")
