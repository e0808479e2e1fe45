"""Grade 40 copies of a solution notebook, as an instructor would, and print the total time.

Run from the repository root:

    .venv/bin/python benchmarks/bench_grading.py                        # 40 copies of exercise 8
    .venv/bin/python benchmarks/bench_grading.py --exercise 05_causal_mask --copies 10
    .venv/bin/python benchmarks/bench_grading.py --help

Each copy is its own submission, run in its own sandboxed worker process,
`--jobs` at a time (default: one per core), through the same code path as
`attention-course grade` (the gradebook is written to a temporary folder).
The target on the course machines (2 cores) is under 60 s for 40 notebooks.
The load average is printed too: other work on the machine slows grading
down, so this is a measurement, not a test.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_course.grading.batch import collect, default_jobs, grade_submissions  # noqa: E402
from attention_course.grading.exercises import BY_ID  # noqa: E402
from attention_course.grading.gradebook import write_gradebook  # noqa: E402

TARGET_SECONDS = 60.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", default="08_flash_attention", choices=sorted(BY_ID),
                        help="which solution to copy (default: 08_flash_attention, the slowest to grade)")
    parser.add_argument("--copies", type=int, default=40, help="number of submissions (default: 40)")
    parser.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: one per core)")
    args = parser.parse_args(argv)

    source = ROOT / "solutions" / f"{args.exercise}.ipynb"
    jobs = args.jobs or default_jobs()
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        folder = Path(tmp) / "submitted"
        folder.mkdir()
        for i in range(1, args.copies + 1):
            shutil.copy(source, folder / f"student_{i:02d}.ipynb")
        load_before = os.getloadavg()[0]
        start = time.perf_counter()
        grades = grade_submissions(collect([folder]), jobs=jobs, progress=True)
        write_gradebook(grades, Path(tmp) / "gradebook.csv")
        seconds = time.perf_counter() - start
        load_after = os.getloadavg()[0]

    notebooks = [nb for g in grades for nb in g.notebooks]
    full = sum(nb.score == nb.max_score for nb in notebooks)
    per = sorted(nb.seconds for nb in notebooks)
    print(f"exercise:        {args.exercise} ({BY_ID[args.exercise].max_score} inputs per notebook)")
    print(f"submissions:     {len(grades)}, graded {jobs} at a time on {os.cpu_count()} cores")
    print(f"full marks:      {full}/{len(notebooks)}")
    print(f"per notebook:    median {per[len(per) // 2]:.2f} s, slowest {per[-1]:.2f} s (run and judge)")
    print(f"load average:    {load_before:.1f} before, {load_after:.1f} after")
    verdict = "within" if seconds < TARGET_SECONDS else "OVER"
    print(f"total time:      {seconds:.1f} s for {len(grades)} notebooks ({verdict} the {TARGET_SECONDS:.0f} s target)")
    return 0 if full == len(notebooks) else 1


if __name__ == "__main__":
    sys.exit(main())
