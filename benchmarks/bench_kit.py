"""Time the instructor's kit on a generated class: one command from a Canvas download to every file.

Run from the repository root:

    .venv/bin/python benchmarks/bench_kit.py                 # 40 students, exercises 1 and 3, sandboxed
    .venv/bin/python benchmarks/bench_kit.py --students 100
    .venv/bin/python benchmarks/bench_kit.py --all-exercises   # every exercise, the default assignment
    .venv/bin/python benchmarks/bench_kit.py --dask            # on a local Dask cluster: one worker process, 2 threads

The class is the tests' (tests/grading_class.py): full, wrong, untouched and
partial submissions and some students with none, a roster, a Canvas "Download
Submissions" zip and an assignment file (exercises 1 and 3; with
`--all-exercises`, every exercise under the default assignment). It runs `attention-course grade
canvas.zip --roster roster.csv --assignment assignment.toml --out-dir ...` in
a temporary folder and prints the time of the grading and of the whole
command (unpacking, matching, gradebooks, feedback files, summary), and the
load average: other work on the machine slows grading down, so this is a
measurement, not a test.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import grading_class  # noqa: E402

from attention_course.cli import main as cli  # noqa: E402
from attention_course.grading.checks.exercises import EXERCISES  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=40, help="students in the class (default: 40)")
    parser.add_argument("--all-exercises", action="store_true", help="every exercise, not only 1 and 3")
    parser.add_argument("--dask", action="store_true",
                        help="grade on a dask.distributed.LocalCluster (one worker process, one thread per core)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-kit-") as tmp:
        root = Path(tmp)
        people = grading_class.students(args.students)
        roster = grading_class.write_roster(root / "roster.csv", people)
        exercises = tuple(e.id for e in EXERCISES) if args.all_exercises else grading_class.EXERCISES
        archive = grading_class.canvas_zip(root / "canvas.zip", people, exercises=exercises)
        assignment = root / "assignment.toml"
        assignment.write_text("" if args.all_exercises else grading_class.ASSIGNMENT)
        notebooks = sum(len(grading_class.files_of(p, exercises)) for p in people)
        load_before = os.getloadavg()[0]
        printed = io.StringIO()
        with contextlib.ExitStack() as stack:
            extra = []
            if args.dask:
                from distributed import LocalCluster

                cluster = stack.enter_context(LocalCluster(n_workers=1, threads_per_worker=os.cpu_count(),
                                                           processes=True, dashboard_address=None))
                extra = ["--dask", cluster.scheduler_address]
            start = time.perf_counter()
            with contextlib.redirect_stdout(printed):
                status = cli(["grade", str(archive), "--roster", str(roster), "--assignment", str(assignment),
                              "--out-dir", str(root / "out"), "--no-progress", *extra])
            seconds = time.perf_counter() - start
        feedback = len(list((root / "out" / "feedback").glob("*.html")))
    graded = next((line for line in printed.getvalue().splitlines() if line.startswith("graded")), "")
    print(f"class:           {args.students} students, {notebooks} notebooks in a Canvas zip")
    print(f"grading:         {graded}")
    print(f"whole command:   {seconds:.1f} s (unpack, match, grade, gradebooks, {feedback} feedback files, summary)")
    print(f"load average:    {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    return status


if __name__ == "__main__":
    sys.exit(main())
