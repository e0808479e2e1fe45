"""The grading subcommands of `attention-course`: check, exercises, release, and the instructor's (`kit.cli`).

    attention-course check 03_softmax.ipynb          a student grades their notebook
    attention-course exercises my-exercises/          a student writes the exercise notebooks from the package
    attention-course release                          exercises/ from solutions/

`kit.cli` adds grade, gradebook and assignment. Heavy modules are imported
inside the handlers, so `--help` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .kit import cli as instructor
from .kit.cli import _add_limits, _fail, _limits


def register(subparsers) -> None:
    """Add the check, release and exercises subcommands, and the instructor's between them."""
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

    instructor.register(subparsers)

    exercises = subparsers.add_parser(
        "exercises", help="write the exercise notebooks into a folder",
        description="Write the exercise notebooks (the stubs, no solutions) shipped inside the installed package "
                    "into DIR. A notebook already there that you edited is never replaced without --force (a .bak "
                    "copy is kept).",
    )
    exercises.add_argument("folder", type=Path, metavar="DIR")
    exercises.add_argument("--force", action="store_true", help="also replace notebooks you edited (a .bak copy is kept)")
    exercises.set_defaults(run=run_exercises)



def run_check(args) -> int:
    """Handler of `attention-course check`."""
    from .kit.batch import grade_submissions
    from .kit.intake import collect
    from .kit.write.table import format_report

    try:
        submissions = collect(args.notebooks)
    except FileNotFoundError as err:
        print(f"attention-course check: {err}", file=sys.stderr)
        return 2
    if not any(s.notebooks for s in submissions):
        print("attention-course check: no notebooks (*.ipynb) found", file=sys.stderr)
        return 2
    from .kit.sandbox import bubblewrap

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


def run_exercises(args) -> int:
    """Handler of `attention-course exercises`."""
    from .release import write_exercises

    try:
        report = write_exercises(args.folder, force=args.force)
    except FileNotFoundError as err:
        return _fail("exercises", err)
    for path in report.backups:
        print(f"kept a copy of your edits: {path}")
    for path in report.kept:
        print(f"not replaced, edited since its release: {path} (your work? use --force to replace it; "
              "a .bak copy is kept)", file=sys.stderr)
    print(f"{len(report.written)} written, {len(report.unchanged)} up to date in {args.folder}"
          + (f", {len(report.kept)} edited and left alone" if report.kept else ""))
    return 1 if report.kept else 0
