"""The instructor's subcommands of `attention-course`: grade, gradebook, assignment.

    attention-course assignment init assignment.toml  the assignment file: points, hidden inputs, deadline
    attention-course grade canvas.zip --roster roster.csv --assignment assignment.toml --out-dir week1/
                                                      a class's submissions into gradebooks, feedback, a summary
    attention-course gradebook merge a.json b.json --out gb.csv    shards or a regrade into one gradebook
    attention-course gradebook approve week1/gradebook.csv S1003 --note "..."   marks held for review, approved
    attention-course gradebook adjust week1/gradebook.csv adjustments.csv      manual adjustments, applied

Every path a command is given is made absolute once, here, before anything
uses it. Heavy modules are imported inside the handlers, so `--help` stays
fast.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..run.options import add_limits, fail, read_limits

if TYPE_CHECKING:  # the handlers import what they use when they run, so that --help stays fast
    from .report import IntakeFound, Report


def absolute_path(text: str) -> Path:
    """An argument that names a file or folder, made absolute and resolved as the command line is read (argparse's
    `type`), so that what the classroom derives from it (unpacked folders, reports beside gradebooks) agrees whatever the
    working folder, and no handler rewrites what it was given."""
    return Path(text).resolve()


def register(subparsers) -> None:
    """Add the grade, gradebook and assignment subcommands."""
    _register_grade(subparsers)
    _register_gradebook(subparsers)
    _register_assignment(subparsers)


def _register_grade(subparsers) -> None:
    grade = subparsers.add_parser(
        "grade", help="grade a class's submissions into gradebooks, feedback files and a summary",
        description="Grade every submission, each notebook in a bubblewrap sandbox of its own (no network, a "
                    "read-only view of only Python and the course package, its own processes, limits enforced from "
                    "outside), using every core, or on a Dask cluster (--dask). A SUBMISSION is a notebook; a folder "
                    "of student folders (each subfolder one student; each notebook directly inside one submission); "
                    "one student's folder of exercise notebooks; or a Canvas or Moodle 'download all submissions' "
                    "zip (or its unpacked folder), unpacked safely. With --roster (the course's CSV, Canvas's "
                    "gradebook export or Moodle's grading worksheet), each submission is matched to a student; "
                    "duplicates, unmatched submissions, students with no submission, exercises missing and ignored "
                    "files are reported, never resolved silently. Marks follow the assignment file (--assignment; "
                    "default: one point per input on every exercise), with each student's extension and the manual "
                    "--adjustments. A notebook that tried something beyond running its own code (signals, the "
                    "network, files outside its folder, the grader's code, too many processes) is held for review: "
                    "its marks show in the gradebook and its feedback, and no file for the LMS carries them until "
                    "`attention-course gradebook approve` names the student. Writes the CSV gradebook and its JSON "
                    "report; with --out-dir also Canvas's and Moodle's import files, a feedback file per student, "
                    "the feedback zips each LMS takes back in bulk and the class summary. An existing gradebook is "
                    "never replaced without --force (--update merges into it, keeping a backup, and refreshes every "
                    "file written from it).",
    )
    grade.add_argument("submissions", nargs="+", type=absolute_path, metavar="SUBMISSION",
                       help="notebooks, folders or LMS zips")
    grade.add_argument("--assignment", type=absolute_path, metavar="TOML",
                       help="the assignment file (see `attention-course assignment init`)")
    grade.add_argument("--roster", type=absolute_path, metavar="CSV",
                       help="the class: the course's CSV (student_id,name[,email,submission,canvas_id,sis_user_id,"
                            "sis_login_id,section,moodle_id]), Canvas's gradebook export or Moodle's grading worksheet")
    grade.add_argument("--adjustments", type=absolute_path, metavar="CSV",
                       help="manual adjustments, applied after grading: student,exercise,points,reason (the student by "
                            "any key of the roster: id, LMS id, SIS id or login, e-mail, \"Last, First\" or \"First "
                            "Last\"; the reason is shown to the student); with --update, they replace the gradebook's. "
                            "A line naming no one, or several, stops the command before anything is graded")
    grade.add_argument("--submission-times", type=absolute_path, metavar="CSV",
                       help="when each student submitted (a column naming the student, and submitted, ISO 8601), for "
                            "a download that carries no times: Canvas's says only late or not, Moodle's nothing")
    grade.add_argument("--out", type=absolute_path, default=None,
                       help="the CSV to write (default: gradebook.csv, or OUT_DIR/gradebook.csv); the report goes to "
                            "the same name with .json")
    grade.add_argument("--out-dir", type=absolute_path, default=None, metavar="DIR",
                       help="also write canvas.csv, moodle.csv, feedback/<student>.html and .txt, and summary.html here")
    grade.add_argument("--force", action="store_true", help="replace an existing gradebook and report")
    grade.add_argument("--dry-run", action="store_true",
                       help="say who each submission was matched to and which gradebook rows would be graded or "
                            "replaced, then stop: nothing is graded or written")
    grade.add_argument("--update", type=absolute_path, default=None, metavar="GRADEBOOK",
                       help="regrade: merge these submissions into this existing gradebook (a backup of it is kept): a "
                            "submission (a folder named by the student's id, name, e-mail or the grader's own unpacked "
                            "folder, or an LMS download) replaces that student's row; their exercises given no "
                            "notebook now, and when they submitted (unless the new submission says so itself: "
                            "--submission-times, an LMS download, Moodle's worksheet), keep their earlier grading; a "
                            "submission that names no one in the gradebook or the roster stops the command; every file "
                            "written from the gradebook is written again")
    grade.add_argument("--shard", type=_shard, default=None, metavar="K/N",
                       help="grade only the K-th of N equal parts of the class (merge the N reports with "
                            "`attention-course gradebook merge`)")
    grade.add_argument("--dask", default=None, metavar="ADDRESS",
                       help="send each submission to the Dask scheduler at ADDRESS (the [cluster] extra; every worker "
                            "needs this course and bubblewrap installed)")
    grade.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: one per core)")
    grade.add_argument("--no-progress", action="store_true", help="no progress bar")
    grade.add_argument("--no-sandbox", action="store_true",
                       help="run the notebooks without bubblewrap, as your own user, with full access to your files "
                            "and the network: only for notebooks you trust")
    add_limits(grade)
    grade.set_defaults(run=run_grade)


def _register_gradebook(subparsers) -> None:
    book = subparsers.add_parser(
        "gradebook", help="merge gradebooks, approve held marks, apply adjustments, or write the files for the LMS",
        description="merge: one gradebook from the JSON reports of shards (grade --shard) or of a regrade; a later "
                    "report's row replaces an earlier one's for the same student. approve: the marks of students "
                    "held for review count (their LMS files carry them), recorded in the gradebook with your note. "
                    "adjust: apply a file of manual adjustments (it replaces the gradebook's). export: the Canvas and "
                    "Moodle import files, the feedback files, their zips and the class summary from a report. "
                    "approve and adjust keep a backup of the gradebook and write again every file written from it. "
                    "release: the former name of approve.",
    )
    actions = book.add_subparsers(dest="action", metavar="ACTION", required=True)
    merge = actions.add_parser("merge", help="merge reports into one gradebook")
    merge.add_argument("reports", nargs="+", type=absolute_path, metavar="REPORT",
                       help="JSON reports (or the CSVs beside them)")
    merge.add_argument("--out", type=absolute_path, required=True,
                       help="the merged CSV gradebook (its report beside it)")
    merge.add_argument("--out-dir", type=absolute_path, default=None, metavar="DIR",
                       help="also write the LMS files, feedback and summary here")
    merge.add_argument("--force", action="store_true", help="replace an existing gradebook (a backup is kept)")
    merge.set_defaults(run=run_gradebook_merge)
    approve = actions.add_parser("approve", help="approve the marks of students held for review: they count")
    _approve_arguments(approve)
    approve.set_defaults(run=run_gradebook_approve)
    former = actions.add_parser("release", help="the former name of approve (scripts that use it still work)")
    _approve_arguments(former)
    former.set_defaults(run=run_gradebook_release)
    adjust = actions.add_parser("adjust", help="apply manual adjustments to a gradebook")
    adjust.add_argument("gradebook", type=absolute_path, metavar="GRADEBOOK",
                        help="the CSV gradebook (its JSON report beside it)")
    adjust.add_argument("adjustments", type=absolute_path, metavar="CSV",
                        help="student,exercise,points,reason: points added (negative: taken) to an exercise, kept "
                             "within 0 and its points, before the late rule; the student by any key the gradebook's "
                             "roster carries; the reason is shown to the student")
    adjust.add_argument("--out-dir", type=absolute_path, default=None, metavar="DIR",
                        help="write the LMS files, feedback and summary here (default: where they were last written)")
    adjust.add_argument("--dry-run", action="store_true", help="say which totals would change; write nothing")
    adjust.set_defaults(run=run_gradebook_adjust)
    export = actions.add_parser("export", help="write the LMS files, feedback and summary of a report")
    export.add_argument("report", type=absolute_path, metavar="REPORT",
                        help="a JSON report (or the CSV beside it)")
    export.add_argument("--out-dir", type=absolute_path, required=True, metavar="DIR")
    export.set_defaults(run=run_gradebook_export)


def _approve_arguments(parser) -> None:
    """The arguments of `gradebook approve` (and of its former name, `gradebook release`)."""
    parser.add_argument("gradebook", type=absolute_path, metavar="GRADEBOOK",
                        help="the CSV gradebook (its JSON report beside it)")
    parser.add_argument("students", nargs="+", metavar="STUDENT",
                        help="a student id, an LMS id, an SIS id or login, an e-mail or a name (\"First Last\" or "
                             "\"Last, First\"); a name that fits several students is refused")
    parser.add_argument("--note", required=True, help="what you found when you looked (kept in the gradebook)")
    parser.add_argument("--dry-run", action="store_true", help="say what would be approved; write nothing")
    parser.add_argument("--out-dir", type=absolute_path, default=None, metavar="DIR",
                        help="write the LMS files, feedback and summary here (default: where they were last written)")


def _register_assignment(subparsers) -> None:
    assignment = subparsers.add_parser(
        "assignment", help="write or read an assignment file (points, hidden inputs, limits, deadline)",
        description="init: write a commented assignment file with a fresh secret seed for the hidden inputs. "
                    "show: read one and print its exercises, points and rules (exit 2 if it is invalid).",
    )
    a_actions = assignment.add_subparsers(dest="action", metavar="ACTION", required=True)
    init = a_actions.add_parser("init", help="write a commented assignment file")
    init.add_argument("file", type=absolute_path, nargs="?", default="assignment.toml")
    init.add_argument("--force", action="store_true", help="replace an existing file")
    init.set_defaults(run=run_assignment_init)
    show = a_actions.add_parser("show", help="check an assignment file and print what it grades")
    show.add_argument("file", type=absolute_path)
    show.set_defaults(run=run_assignment_show)


def _shard(text: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match or not 1 <= int(match.group(1)) <= int(match.group(2)):
        raise argparse.ArgumentTypeError(f"expected K/N with 1 <= K <= N, such as 2/4, got {text!r}")
    return int(match.group(1)), int(match.group(2))


class _Refused(Exception):
    """A grade run that cannot go on: the message is printed and the command exits with status 2."""


def run_grade(args) -> int:
    """Handler of `attention-course grade`: intake, the names resolved, then run and judge every notebook, then score
    and write."""
    from .batch import grade_submissions
    from .intake import OWN_TIME
    from .names import NamesRefused, resolve_names
    from .adjustments import AdjustmentError
    from .score import build_report, carry_over

    try:
        assignment, old, out, decisions, records = _grade_target(args)
        with _unpack_folder(args, out) as unpacked:
            taken, submissions = _grade_intake(args, unpacked, records, old)
            assignment, decisions = resolve_names(assignment, old, taken, submissions, decisions,
                                                  adjustments=args.adjustments, update=args.update)
            if args.dry_run:
                _print_plan(taken, submissions, old)
                return 0
            sandbox = _sandbox_settings(args)
            jobs, runner, client = _grade_runner(args)
            limits = read_limits(args)
            start = time.monotonic()
            try:
                grades = grade_submissions(submissions, limits, progress=not args.no_progress,
                                           sandbox=not args.no_sandbox, setting=assignment.setting(), runner=runner)
            finally:
                if client is not None:
                    client.close()
            seconds = time.monotonic() - start
    except (_Refused, NamesRefused, AdjustmentError) as err:
        return fail("grade", err)
    marking = assignment.marking()
    if old is not None:  # a regrade: the exercises it was given nothing for keep their earlier grading
        earlier = {r.key: r for r in old.rows}
        grades = [carry_over(g, earlier.get(g.submission.key), marking) for g in grades]
    settings = {"limits": vars(limits), "jobs": f"dask {args.dask}" if args.dask else jobs, "seconds": round(seconds, 2),
                **sandbox}
    if args.shard:
        settings["shard"] = f"{args.shard[0]}/{args.shard[1]}"
    lateness = taken.lateness
    if old is not None and not any(s.timing in OWN_TIME for s in submissions):
        lateness = ""  # every row regraded keeps the first run's time: so does what the summary says of lateness
    report = build_report(grades, marking, settings=settings, notes=taken.notes, decisions=decisions,
                          intake={"roster": taken.roster, "lateness": lateness, "left_out": taken.left_out})
    where = f"on the Dask cluster at {args.dask}" if args.dask else f"with {jobs} worker(s)"
    _print_graded(grades, seconds, where)
    try:
        _save(report, old, out, args.force, args.out_dir, "grade")
    except _Refused as err:
        return fail("grade", err)
    if args.no_sandbox:
        print(f"attention-course grade: warning: {NO_SANDBOX_WARNING}", file=sys.stderr)
    return 0


def _grade_target(args):
    """(the assignment, the gradebook report to update or None, the CSV to write, the decisions with the
    adjustments as the file writes them, the class's records: `roster.read_class`, read once, in the deadline's time
    zone); _Refused if any is wrong."""
    import datetime as dt

    from .assignment import Assignment, AssignmentError, load as load_assignment
    from .report import Decisions
    from .roster import IntakeError, read_class
    from .adjustments import AdjustmentError, read_adjustments
    from .write.gradebook import GradebookExists, MergeError, ensure_writable, read_report

    out = args.update or args.out or (args.out_dir / "gradebook.csv" if args.out_dir else Path("gradebook.csv").resolve())
    try:
        assignment = load_assignment(args.assignment) if args.assignment else Assignment.default()
        old = None
        if args.update:
            old = read_report(args.update)
        elif not args.dry_run:
            ensure_writable(out, args.force)
        decisions = old.decisions if old else Decisions()
        if args.adjustments:
            decisions = dataclasses.replace(decisions, adjustments=tuple(read_adjustments(args.adjustments,
                                                                                           assignment.ids)))
    except (GradebookExists, AssignmentError, MergeError, AdjustmentError) as err:
        raise _Refused(err) from None
    zone = assignment.deadline.tzinfo if assignment.deadline else dt.timezone.utc
    try:
        records = read_class(args.roster, args.submission_times, zone)
    except (FileNotFoundError, IntakeError) as err:
        raise _Refused(err) from None
    return assignment, old, out, decisions, records


def _unpack_folder(args, out: Path):
    """Where zips are unpacked: beside the gradebook (OUT_DIR/unpacked), a shard's own copy, or for --dry-run a
    temporary folder removed afterwards (a context manager giving the folder)."""
    import contextlib
    import tempfile

    if args.dry_run:
        return tempfile.TemporaryDirectory(prefix="attention-course-dry-run-")
    unpacked = (args.out_dir / "unpacked") if args.out_dir else out.with_name(f"{out.stem}-unpacked")
    if args.shard:  # shards may run at once, side by side: each unpacks its own copy
        unpacked = unpacked.with_name(f"{unpacked.name}-{args.shard[0]}-of-{args.shard[1]}")
    return contextlib.nullcontext(unpacked)


def _grade_intake(args, unpacked, records, old: Report | None):
    """(what intake found, the submissions this run grades: a regrade's, a shard's); _Refused if none."""
    from .intake import IntakeError, intake
    from .people import from_rows

    others = from_rows(old.rows).people if old is not None else ()
    try:
        taken = intake(args.submissions, Path(unpacked), records, others=others)
    except (FileNotFoundError, IntakeError) as err:
        raise _Refused(err) from None
    submissions = taken.submissions
    if args.update:  # a regrade: only the students whose work was given
        submissions = [s for s in submissions if s.path or not s.student]
    if args.shard:
        k, n = args.shard
        submissions = [s for s in submissions if s.order % n == k - 1]
    if not submissions:
        raise _Refused("no submissions found" + (": " + "; ".join(taken.notes) if taken.notes else ""))
    if args.jobs is not None and args.jobs < 1:
        raise _Refused("--jobs must be at least 1")
    return taken, submissions


def _print_plan(taken, submissions, old: Report | None) -> None:
    """What a --dry-run found: who each submission is, and which rows grading would write or replace."""
    from .report import IntakeFound

    _print_intake(IntakeFound(notes=tuple(taken.notes), left_out=tuple(taken.left_out), lateness=taken.lateness))
    keys = {r.key for r in old.rows} if old else set()
    for sub in submissions:
        if not sub.path and sub.student:
            continue
        action = "would replace" if sub.key in keys else "would grade"
        who = f"{sub.name} ({sub.key})" if sub.key != sub.name else sub.name
        print(f"{action} {who}: {sub.path} ({len(sub.notebooks)} notebook(s); time from {sub.timing})")
    print("dry run: nothing was graded or written")


def _sandbox_settings(args) -> dict:
    """What the report says of the sandbox; _Refused (with how to go on) if bubblewrap cannot be used here."""
    from ..run.sandbox import bubblewrap

    if args.no_sandbox:
        print(f"attention-course grade: warning: {NO_SANDBOX_WARNING}", file=sys.stderr)
        return {"sandbox": "none (--no-sandbox)", "warning": NO_SANDBOX_WARNING}
    if args.dask:
        return {"sandbox": "bubblewrap, on each Dask worker"}
    try:
        box = bubblewrap.find()
    except bubblewrap.SandboxUnavailable as err:
        raise _Refused(f"{err}.\nThe grader runs each notebook in a bubblewrap sandbox; to grade notebooks you trust "
                       "without one, pass --no-sandbox.") from None
    how = "in a user namespace" if box.user_namespace else "as root, each worker under an unused uid"
    return {"sandbox": f"bubblewrap ({box.executable}, {how})"}


def _grade_runner(args):
    """(jobs, the runner that grades the notebooks, the Dask client to close or None): here, or on --dask's cluster."""
    from .batch import Threads, default_jobs

    jobs = args.jobs or default_jobs()
    if not args.dask:
        return jobs, Threads(jobs), None
    from .cluster import Cluster, ClusterUnavailable, check_workers, connect

    try:
        client = connect(args.dask)
        problems = check_workers(client, sandbox=not args.no_sandbox)
    except ClusterUnavailable as err:
        raise _Refused(err) from None
    if problems:
        client.close()
        raise _Refused("some Dask workers cannot grade: " + "; ".join(problems))
    return jobs, Cluster(client), client


def _save(report: Report, old: Report | None, out: Path, force: bool, out_dir: Path | None, command: str) -> None:
    """Write the gradebook (merged into `old` for a regrade, keeping a backup), then every file written from it:
    into `out_dir`, else where the files of `old` were last written."""
    from .write.gradebook import (
        GradebookExists,
        exports_entry,
        exports_folder,
        free_path,
        merge_reports,
        write_report,
    )

    folder = out_dir or (exports_folder(old, out) if old is not None else None)
    if old is not None:
        _print_replaced(old, report)
        report = merge_reports([old, report])
    try:
        report = dataclasses.replace(report, exports=exports_entry(folder, out) if folder is not None else None)
        csv_path, json_path = write_report(report, out, force=force, backup=old is not None)
    except GradebookExists:
        out = free_path(out)
        print(f"attention-course {command}: the gradebook appeared while grading; writing {out} instead", file=sys.stderr)
        report = dataclasses.replace(report, exports=exports_entry(folder, out) if folder is not None else None)
        csv_path, json_path = write_report(report, out)
    _print_intake(report.intake)
    print(f"gradebook: {csv_path}\nreport:    {json_path}")
    if folder is not None:
        _export(report, folder)


def _print_replaced(old: Report, new: Report) -> None:
    """Which rows of the gradebook a regrade replaces (their totals before and after) and which it adds."""
    from ..run.status import Status

    before = {r.key: r for r in old.rows}
    rows = [r for r in new.rows if Status.NO_SUBMISSION not in r.statuses or r.key not in before]
    replaced = [f"{r.name} ({r.key}): {before[r.key].total} -> {r.total}" for r in rows if r.key in before]
    added = [f"{r.name} ({r.key})" for r in rows if r.key not in before]
    print(f"replaced {len(replaced)} row(s)" + (": " + "; ".join(replaced) if replaced else ""))
    if added:
        print(f"added {len(added)} row(s): " + "; ".join(added))


def _print_graded(grades, seconds: float, where: str) -> None:
    """How many submissions ran cleanly, and which tried something the sandbox stopped or the grader noticed."""
    from ..run.status import ATTEMPTS
    from .score import notebooks_text

    graded = [g for g in grades if g.submission.notebooks]
    clean = sum(g.clean for g in graded)
    print(f"graded {len(graded)} submission(s) in {seconds:.1f} s {where}: "
          f"{clean} ran cleanly, {len(graded) - clean} with incidents (see the status column)")
    flagged = [g for g in grades if g.statuses & set(ATTEMPTS)]
    if flagged:
        print(f"{len(flagged)} submission(s) tried something the sandbox stopped or the grader noticed: "
              + ", ".join(f"{g.submission.name} ({notebooks_text(g.notebooks)})" for g in flagged[:10])
              + (", ..." if len(flagged) > 10 else "") + "; the report says what and in which cell")


def _print_intake(intake: IntakeFound) -> None:
    """What intake found and left to the instructor (a report's `IntakeFound`), on the terminal."""
    for title, items in (("left out", intake.left_out), ("in the download", intake.notes),
                         ("held for review", intake.held),
                         ("no submission", intake.no_submission), ("not on the roster", intake.not_on_roster),
                         ("exercises missing", intake.exercise_missing),
                         ("duplicates", intake.duplicates), ("ignored files", intake.ignored_files),
                         ("adjustments for no one here", intake.adjustments_unused)):
        if items:
            print(f"{title} ({len(items)}): " + "; ".join(items[:10]) + ("; ..." if len(items) > 10 else ""))
    if intake.held:
        print("held marks are in the gradebook and the feedback, not in the LMS files: look at each notebook, then "
              "`attention-course gradebook approve GRADEBOOK STUDENT --note ...`")
    if intake.lateness:
        print(f"lateness: {intake.lateness}")


def _export(report: Report, folder: Path) -> None:
    from .write.exports import write_exports

    done = write_exports(report, folder)

    def left(name: str) -> str:
        rows = done.left_out[name]
        if not rows:
            return ""
        reasons = {}
        for _, why in rows:
            reasons[why] = reasons.get(why, 0) + 1
        return f" ({len(rows)} left out: " + ", ".join(f"{n} {why}" for why, n in reasons.items()) + ")"

    print(f"canvas:    {done.canvas}{left('canvas.csv')}")
    print(f"moodle:    {done.moodle}{left('moodle.csv')}")
    print(f"feedback:  {len(done.feedback)} file(s) in {folder / 'feedback'}")
    print(f"           {done.canvas_feedback}{left(done.canvas_feedback.name)}")
    print(f"           {done.moodle_feedback}{left(done.moodle_feedback.name)}")
    print(f"summary:   {done.summary}")


def run_gradebook_merge(args) -> int:
    """Handler of `attention-course gradebook merge`."""
    from .write.gradebook import GradebookExists, MergeError, exports_entry, merge_reports, read_report, write_report

    try:
        report = merge_reports([read_report(p) for p in args.reports])
        report = dataclasses.replace(report, exports=exports_entry(args.out_dir, args.out) if args.out_dir else None)
        csv_path, json_path = write_report(report, args.out, backup=args.force)
    except (MergeError, GradebookExists) as err:
        return fail("gradebook merge", err)
    print(f"merged {len(args.reports)} report(s): {len(report.rows)} row(s)")
    _print_intake(report.intake)
    print(f"gradebook: {csv_path}\nreport:    {json_path}")
    if args.out_dir:
        _export(report, args.out_dir)
    return 0


def run_gradebook_release(args) -> int:
    """Handler of `attention-course gradebook release`, the former name of `gradebook approve`: a note, then the same."""
    print("attention-course gradebook release: now called `gradebook approve` (the same arguments); "
          "`release` still works", file=sys.stderr)
    return run_gradebook_approve(args)


def run_gradebook_approve(args) -> int:
    """Handler of `attention-course gradebook approve`: the decision recorded, the gradebook and its files rewritten.
    Every student named is found first (`people`: any key of theirs); a name that finds no one, or several, or
    someone with nothing held, stops it before anything is written, all of them listed."""
    from .people import from_rows
    from .score import approval
    from .write.gradebook import MergeError, read_report, with_decisions

    try:
        report = read_report(args.gradebook)
    except MergeError as err:
        return fail("gradebook approve", err)
    rows = {r.key: r for r in report.rows}
    found, refused = from_rows(report.rows).find_all(args.students)
    problems = [f.why for f in refused]
    problems += [f"{p.shown}: nothing of theirs is held for review" for p in found.values() if not rows[p.key].held]
    if problems:
        return fail("gradebook approve", "nothing was approved or written:\n  " + "\n  ".join(problems))
    approvals = []
    for person in dict.fromkeys(found.values()):
        row = rows[person.key]
        approvals.append(approval(row.key, row.held, args.note))
        verb = "would approve" if args.dry_run else "approved"
        print(f"{verb} {row.name} ({row.key}): {', '.join(row.held)}; total {row.total}")
    if args.dry_run:
        print("dry run: nothing was written")
        return 0
    _rewrite(with_decisions(report, approvals=approvals), args.gradebook, args.out_dir, "gradebook approve")
    return 0


def run_gradebook_adjust(args) -> int:
    """Handler of `attention-course gradebook adjust`: the adjustments replace the gradebook's, files rewritten.
    Each line's student is found by any key of theirs (`people`); lines that name no one, or several, stop it before
    anything is written, all of them listed."""
    from .people import from_rows
    from .adjustments import AdjustmentError, read_adjustments, resolve_adjustments
    from .write.gradebook import MergeError, read_report, with_decisions

    try:
        report = read_report(args.gradebook)
        adjustments = read_adjustments(args.adjustments, tuple(report.exercises))
        adjustments, refused = resolve_adjustments(adjustments, from_rows(report.rows))
    except (MergeError, AdjustmentError) as err:
        return fail("gradebook adjust", err)
    if refused:
        return fail("gradebook adjust", f"{len(refused)} line(s) of {args.adjustments.name} name no one in the "
                     "gradebook, or several; nothing was written:\n  " + "\n  ".join(f.why for f in refused))
    print(f"{len(adjustments)} adjustment(s) from {args.adjustments}")
    adjusted = with_decisions(report, adjustments=adjustments)
    if args.dry_run:
        before = {r.key: r for r in report.rows}
        for row in adjusted.rows:
            if row.total != before[row.key].total:
                print(f"would change {row.name} ({row.key}): {before[row.key].total} -> {row.total}")
        print("dry run: nothing was written")
        return 0
    _rewrite(adjusted, args.gradebook, args.out_dir, "gradebook adjust")
    return 0


def _rewrite(report: Report, gradebook: Path, out_dir: Path | None, command: str) -> None:
    """A gradebook written again after a decision (a backup kept), and every file written from it."""
    from .write.gradebook import exports_entry, exports_folder, write_report

    gradebook = gradebook.with_suffix(".csv")  # it may have been named by its report
    folder = out_dir or exports_folder(report, gradebook)
    report = dataclasses.replace(report, exports=exports_entry(folder, gradebook) if folder is not None else None)
    csv_path, json_path = write_report(report, gradebook, backup=True)
    _print_intake(report.intake)
    print(f"gradebook: {csv_path}\nreport:    {json_path}")
    if folder is not None:
        _export(report, folder)
    else:
        print(f"attention-course {command}: no LMS files were written from this gradebook yet; "
              "`attention-course gradebook export` writes them")


def run_gradebook_export(args) -> int:
    """Handler of `attention-course gradebook export`."""
    from .write.gradebook import MergeError, read_report

    try:
        report = read_report(args.report)
    except MergeError as err:
        return fail("gradebook export", err)
    _export(report, args.out_dir)
    return 0


def run_assignment_init(args) -> int:
    """Handler of `attention-course assignment init`."""
    from .assignment import template

    if args.file.exists() and not args.force:
        return fail("assignment init", f"{args.file} already exists; pass --force to replace it")
    args.file.write_text(template(args.file.name), encoding="utf-8")
    print(f"wrote {args.file}: every exercise, one point per input, hidden inputs redrawn from a new secret seed; "
          "edit it, then `attention-course assignment show` checks it")
    return 0


def run_assignment_show(args) -> int:
    """Handler of `attention-course assignment show`."""
    from .assignment import AssignmentError, load

    try:
        a = load(args.file)
    except AssignmentError as err:
        return fail("assignment show", err)
    print(f"{a.title}: {len(a.exercises)} exercise(s), {a.max_total} points")
    for rule in a.exercises:
        checks = ", ".join(f"{c.check} {c.points}" + (f" ({c.seconds:g} s a call)" if c.seconds else "") for c in rule.checks)
        print(f"  {rule.id}: {rule.points:g} ({checks})")
    if not a.hidden:
        print("hidden inputs: off")
    elif a.hidden_seed is None:
        print("hidden inputs: on, the package's own values (students who read the package can see them)")
    else:
        counts = [a.redrawn(rule.id) for rule in a.exercises]
        print(f"hidden inputs: on, redrawn from the file's seed ({sum(c[0] for c in counts)} of "
              f"{sum(c[1] for c in counts)} differ from the package's; the others are fixed cases, such as a single key)")
    if a.deadline:
        late = a.late
        print(f"deadline: {a.deadline.isoformat()}; grace {late.grace_minutes:g} min, {100 * late.penalty_per_day:g} % a day late"
              + (f", 0 after {late.max_days:g} days" if late.max_days else ""))
    for student, when in a.extensions:
        print(f"extension: {student} until {when.isoformat()}")
    print(f"exercise 0 on another student's handout: {a.handout_mismatch}")
    return 0


NO_SANDBOX_WARNING = ("no sandbox (--no-sandbox): the notebooks run as your user, can read and write your files, "
                      "reach the network and leave processes running; grade untrusted notebooks without --no-sandbox")
