"""The student's grading subcommands of `attention-course`: check, exercises, answers, release.

    attention-course check 03_softmax.ipynb          a student grades their notebook
    attention-course exercises my-exercises/          a student writes the exercise notebooks from the package
    attention-course exercises alice/ --student s123 --assignment a.toml   ... with exercise 0 drawn for s123
    attention-course answers --student s123 --assignment a.toml           exercise 0's answers for s123
    attention-course release                          exercises/ from solutions/
    attention-course release my_exercises/            an instructor's own exercises: my_exercises/released/

The instructor's (grade, gradebook, assignment) are `classroom.cli`'s, whose
parsers `attention_course.cli` builds only for them (or `--help`): this module
imports nothing of the classroom to build its own. Heavy modules are imported
inside the handlers, so `--help` stays fast.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .run.options import add_limits, fail, read_limits


def register(subparsers) -> None:
    """Add the check, release, exercises and answers subcommands."""
    check = subparsers.add_parser(
        "check", help="grade your own exercise notebook and see what to fix",
        description="Run your exercise notebook(s) the way the instructor's grader does (in a separate process, "
                    "with time and memory limits, in the same bubblewrap sandbox where it is installed, with extra "
                    "inputs the notebook's check cells do not show) and print a table per exercise with what went "
                    "wrong and a hint. Exit status 0 when everything passes, 1 otherwise.",
    )
    check.add_argument("notebooks", nargs="+", metavar="NOTEBOOK", help="exercise notebook(s), or folders of them")
    add_limits(check)
    check.set_defaults(run=run_check)

    release = subparsers.add_parser(
        "release", help="write the students' notebooks: the course's (solutions/), or your own exercises'",
        description="Write the student notebooks from the solution notebooks: code between '### BEGIN SOLUTION' "
                    "and '### END SOLUTION' becomes '# YOUR CODE HERE' and 'raise NotImplementedError()'; outputs "
                    "are removed. An exercise notebook edited since its release (a student's work) is never replaced "
                    "without --force. With --check, only report whether exercises/ is up to date (exit 1 if not).",
    )
    release.add_argument(
        "source", nargs="?", type=Path, metavar="SOURCE",
        help="a folder of your own exercises' source notebooks (the task, the solution between '# BEGIN SOLUTION' "
             "and '# END SOLUTION', a cell tagged 'check'): each becomes a student notebook and its check file "
             "(<id>.check.json, no solution), written over the files of --exercises (default for a SOURCE: "
             "SOURCE/released); with --check, exit 1 if those are out of date")
    release.add_argument("--solutions", type=Path, default=Path("solutions"), help="folder of solution notebooks (default: solutions)")
    release.add_argument("--exercises", type=Path, default=None,
                         help="folder to write (default: exercises, or SOURCE/released for a SOURCE)")
    release.add_argument("--check", action="store_true", help="change nothing; exit 1 if exercises/ is out of date")
    release.add_argument(
        "--force", action="store_true",
        help="also replace exercise notebooks edited since their release (a .bak copy of each is kept)",
    )
    release.set_defaults(run=run_release)

    exercises = subparsers.add_parser(
        "exercises", help="write the exercise notebooks into a folder",
        description="Write the exercise notebooks (the stubs, no solutions) shipped inside the installed package "
                    "into DIR. A notebook already there that you edited is never replaced without --force (a .bak "
                    "copy is kept).",
    )
    exercises.add_argument("folder", type=Path, metavar="DIR")
    exercises.add_argument("--force", action="store_true", help="also replace notebooks you edited (a .bak copy is kept)")
    _add_student(exercises, "exercise 0's notebook is this student's own (their example, drawn from the id), with a "
                            "page to print beside it, 00_worked_example.html")
    exercises.set_defaults(run=run_exercises)

    answers = subparsers.add_parser(
        "answers", help="print exercise 0's example for a student, and its answers (for the instructor)",
        description="Print the example exercise 0 (a worked example of your own) gives a student, every step's "
                    "right numbers and the answers cell filled in. The example is drawn from the student's id and "
                    "the assignment's secret (hidden.seed), as `exercises --student` and the grader draw it; "
                    "without --student, the bank-bot example of the book's introduction.",
    )
    _add_student(answers, "the student whose example to print (default: the bank-bot example)")
    answers.set_defaults(run=run_answers)


def _add_student(parser, student_help: str) -> None:
    parser.add_argument("--student", metavar="ID", help=student_help)
    parser.add_argument("--assignment", type=Path, metavar="TOML",
                        help="the assignment file, whose secret (hidden.seed) the example is drawn with; give the "
                             "same file as to `grade` (default: no secret: anyone with the package can draw the "
                             "example from the id)")


def _secret(args) -> int | None:
    """The assignment's secret, or None; AssignmentError (a ValueError) naming what is wrong with the file."""
    if args.assignment is None:
        return None
    from .classroom.assignment import load

    return load(args.assignment).hidden_seed



def run_check(args) -> int:
    """Handler of `attention-course check`: the notebooks found, each graded as the instructor's grader grades it, in
    the same sandbox where bubblewrap works (else a plain process), and a table printed."""
    from .run.sandbox import bubblewrap, process

    box = bubblewrap.available()
    limits = read_limits(args)
    one = _one_notebook(args.notebooks)
    # One notebook (the usual check): its worker starts now, and gets ready while the rest of the grader is imported
    # and the notebook read and its checks prepared; `grade_notebook` ends it, whatever happens.
    started = process.start_worker(limits, sandbox=box, notebook=one) if one is not None else None
    from .run.notebook import find_notebooks, grade_notebooks
    from .run.table import format_report

    try:
        paths = [one] if one is not None else find_notebooks(args.notebooks)
    except FileNotFoundError as err:
        return fail("check", err)
    if not paths:
        return fail("check", "no notebooks (*.ipynb) found")
    notebooks = grade_notebooks(paths, limits, sandbox=box is not None, started=started)
    print(format_report(notebooks), end="")
    return 0 if all(nb.checks and all(c.passed for c in nb.checks) for nb in notebooks) else 1


def _one_notebook(paths: list) -> Path | None:
    """The notebook, when the command names a single file the grader will read (not a link, not too large)."""
    from .run.plan import MAX_NOTEBOOK_BYTES

    if len(paths) != 1:
        return None
    path = Path(paths[0])
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return None
    except OSError:
        return None
    return path


def run_release(args) -> int:
    """Handler of `attention-course release`."""
    from .release import ReleaseError, release

    if args.source is not None:
        return _release_authored(args)
    try:
        report = release(args.solutions, args.exercises or Path("exercises"), check=args.check, force=args.force)
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


def _release_authored(args) -> int:
    """`attention-course release SOURCE`: an instructor's own exercises, each checked, then written."""
    from .authored import release_folder

    import tempfile

    out = args.exercises or args.source / "released"
    try:
        if not args.check:
            for path in release_folder(args.source, out).written:
                print(f"written: {path}")
            return 0
        with tempfile.TemporaryDirectory() as scratch:  # --check: written aside, compared, nothing changed
            stale = [out / p.name for p in release_folder(args.source, scratch).written
                     if not (out / p.name).is_file() or (out / p.name).read_bytes() != p.read_bytes()]
    except (FileNotFoundError, ValueError) as err:
        print(f"attention-course release: {err}", file=sys.stderr)
        return 2
    for path in stale:
        print(f"out of date: {path}")
    return 1 if stale else 0


def run_exercises(args) -> int:
    """Handler of `attention-course exercises`."""
    from .release import write_exercises

    try:
        secret = _secret(args)
        report = write_exercises(args.folder, force=args.force, student=args.student, secret=secret)
    except (FileNotFoundError, ValueError) as err:
        return fail("exercises", err)
    if args.student is not None and secret is None:
        print(f"note: exercise 0 was drawn for {args.student!r} without a secret (no --assignment, or one with no "
              "hidden.seed): grade it with the same, or its numbers will not be the student's", file=sys.stderr)
    for path in report.backups:
        print(f"kept a copy of your edits: {path}")
    for path in report.kept:
        print(f"not replaced, edited since its release: {path} (your work? use --force to replace it; "
              "a .bak copy is kept)", file=sys.stderr)
    print(f"{len(report.written)} written, {len(report.unchanged)} up to date in {args.folder}"
          + (f", {len(report.kept)} edited and left alone" if report.kept else ""))
    return 1 if report.kept else 0


def run_answers(args) -> int:
    """Handler of `attention-course answers`."""
    from .checks.exercises.by_hand import example_for
    from .handout import printed_answers

    try:
        secret = _secret(args)
        example = example_for(args.student, secret)
    except (FileNotFoundError, ValueError) as err:
        return fail("answers", err)
    print(printed_answers(example, args.student, secret=secret is not None), end="")
    return 0
