"""Grade 40 copies of a solution notebook, as an instructor would, and print the total time.

Run from the repository root:

    .venv/bin/python benchmarks/bench_grading.py                        # 40 copies of exercise 8, sandboxed
    .venv/bin/python benchmarks/bench_grading.py --exercise 05_causal_mask --copies 10
    .venv/bin/python benchmarks/bench_grading.py --overhead 3           # the sandbox's cost per notebook
    .venv/bin/python benchmarks/bench_grading.py --sleeper              # 40 copies, with and without a detached sleeper
    .venv/bin/python benchmarks/bench_grading.py --failing 2            # 40 one-bug notebooks, with and without follow-ups
    .venv/bin/python benchmarks/bench_grading.py --help

Each copy is its own submission, run in its own bubblewrap sandbox (or,
with `--no-sandbox`, its own plain process), `--jobs` at a time (default: one
per core), through the same code path as `attention-course grade` (the
gradebook is written to a temporary folder). The target on the course
machines (2 cores) is under 60 s for 40 notebooks.

`--overhead ROUNDS` grades every solution notebook ROUNDS times with and
without the sandbox, one notebook at a time, the two alternating, and prints
the median time per notebook of each, the median of their per-notebook
differences, and the CPU time the grader's own process spends per notebook
(starting the worker, watching it, judging what it returned). `--sleeper` grades the copies three ways, in turn: in the
sandbox, in the sandbox with one more notebook that leaves a detached
`sleep` behind, and without the sandbox; the sleeper must not make the batch
slower by more than the notebook budget. `--failing ROUNDS` grades a class
of failing notebooks (`--copies` of them: each a solution with one function
done wrong, from the mistakes corpus: every one whose notebook check
follows up its failure, with a helper at fault or a smaller input, then
others evenly spread) with the worker's follow-up of failed checks and
without it (`Limits(follow_seconds=0)`), ROUNDS times each in turn (A B B
A ...), and prints the median time of each and their ratio. The load average is printed too:
other work on the machine slows grading down, so these are measurements, not
tests.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_course.grading.checks.exercises import BY_ID  # noqa: E402
from attention_course.grading.run.notebook import grade_notebook
from attention_course.grading.classroom.batch import default_jobs, grade_submissions  # noqa: E402
from attention_course.grading.classroom.intake import collect  # noqa: E402
from attention_course.grading.run.sandbox import bubblewrap  # noqa: E402
from attention_course.grading.run.sandbox.runner import Limits  # noqa: E402
from attention_course.grading.classroom.assignment import Assignment  # noqa: E402
from attention_course.grading.classroom.score import build_report  # noqa: E402
from attention_course.grading.classroom.write.gradebook import write_report  # noqa: E402

TARGET_SECONDS = 60.0
SLEEPER = ROOT / "tests" / "grading_corpus" / "attacks" / "detached_sleeper_05_causal_mask.ipynb"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exercise", default="08_flash_attention", choices=sorted(BY_ID),
                        help="which solution to copy (default: 08_flash_attention, the slowest to grade)")
    parser.add_argument("--copies", type=int, default=40, help="number of submissions (default: 40)")
    parser.add_argument("--jobs", type=int, default=None, help="notebooks graded at once (default: one per core)")
    parser.add_argument("--no-sandbox", action="store_true", help="grade without bubblewrap")
    parser.add_argument("--overhead", type=int, default=0, metavar="ROUNDS",
                        help="instead: every solution ROUNDS times with and without the sandbox, one at a time")
    parser.add_argument("--sleeper", action="store_true",
                        help="instead: the copies in the sandbox, with one detached sleeper more, and without the sandbox")
    parser.add_argument("--failing", type=int, default=0, metavar="ROUNDS",
                        help="instead: --copies one-bug notebooks, with and without the follow-up of failed checks")
    args = parser.parse_args(argv)
    jobs = args.jobs or default_jobs()
    if args.overhead:
        return overhead(args.overhead)
    if args.failing:
        return failing(args, jobs)
    if args.sleeper:
        return sleeper(args, jobs)

    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        folder = _copies(Path(tmp) / "submissions", args.exercise, args.copies)
        load_before = os.getloadavg()[0]
        seconds, grades = _grade(folder, jobs, sandbox=not args.no_sandbox, gradebook=Path(tmp) / "gradebook.csv")
        load_after = os.getloadavg()[0]

    notebooks = [nb for g in grades for nb in g.notebooks]
    full = sum(nb.score == nb.max_score for nb in notebooks)
    per = sorted(nb.seconds for nb in notebooks)
    print(f"exercise:        {args.exercise} ({BY_ID[args.exercise].max_score} inputs per notebook)")
    print(f"submissions:     {len(grades)}, graded {jobs} at a time on {os.cpu_count()} cores, "
          f"{'without a sandbox' if args.no_sandbox else 'each in a bubblewrap sandbox'}")
    print(f"full marks:      {full}/{len(notebooks)}")
    print(f"per notebook:    median {per[len(per) // 2]:.2f} s, slowest {per[-1]:.2f} s (run and judge)")
    print(f"load average:    {load_before:.1f} before, {load_after:.1f} after")
    verdict = "within" if seconds < TARGET_SECONDS else "OVER"
    print(f"total time:      {seconds:.1f} s for {len(grades)} notebooks ({verdict} the {TARGET_SECONDS:.0f} s target)")
    return 0 if full == len(notebooks) else 1


def overhead(rounds: int) -> int:
    """Every solution, `rounds` times with and without the sandbox, alternating; medians per notebook."""
    solutions = sorted((ROOT / "solutions").glob("*.ipynb"))
    bubblewrap.find()  # checked once per process: not part of any notebook's time
    for exercise in BY_ID.values():  # the expected results too, computed once per process (grade_notebook does)
        for check in exercise.checks:
            check.prepare()
    grade_notebook(solutions[0], Limits(), sandbox=False)  # imports nbformat and IPython's transformers, once
    times: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[bool, list[float]] = {True: [], False: []}  # the grader's own CPU time, its children's aside
    differences = []
    load_before = os.getloadavg()[0]
    for r in range(rounds):
        for path in solutions:
            pair = {}
            for sandbox in ((True, False) if r % 2 == 0 else (False, True)):  # alternate which goes first
                start, used = time.perf_counter(), _cpu_seconds()
                grade = grade_notebook(path, Limits(), sandbox=sandbox)
                pair[sandbox] = time.perf_counter() - start
                cpu[sandbox].append(_cpu_seconds() - used)
                if grade.status != "ok" or grade.score != grade.max_score:
                    print(f"{path.name}: {grade.status}, {grade.score}/{grade.max_score}", file=sys.stderr)
                    return 1
            times[True].append(pair[True])
            times[False].append(pair[False])
            differences.append(pair[True] - pair[False])
    bare = _bare_starts(5 * rounds)
    with_box, without = statistics.median(times[True]), statistics.median(times[False])
    print(f"notebooks:       the {len(solutions)} solutions, {rounds} round(s), one at a time, "
          f"sandbox and plain process in turn")
    print(f"per notebook:    median {with_box:.2f} s in the sandbox, {without:.2f} s without "
          f"(ratio {with_box / without:.2f})")
    print(f"sandbox's cost:  median {statistics.median(differences) * 1000:+.0f} ms per notebook "
          f"(per-notebook differences from {min(differences) * 1000:+.0f} to {max(differences) * 1000:+.0f} ms)")
    print(f"grader's CPU:    median {statistics.median(cpu[True]) * 1000:.0f} ms per notebook in the sandbox, "
          f"{statistics.median(cpu[False]) * 1000:.0f} ms without (starting, watching, judging; the notebook's own aside)")
    print(f"bare start:      `python -c pass` {bare[True] * 1000:.0f} ms in the sandbox, {bare[False] * 1000:.0f} ms "
          f"without (medians of {5 * rounds} each, in turn)")
    print(f"load average:    {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    return 0


def _cpu_seconds() -> float:
    """CPU time (user and system) of this process so far: the grader's own, not its workers'."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _bare_starts(count: int) -> dict[bool, float]:
    """Median seconds to start and end `python -c pass` in a sandbox as the worker's (limits, view, uid) and plainly."""
    box = bubblewrap.find()
    limits = Limits()
    argv = [sys.executable, "-s", "-B", "-c", "pass"]
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(count):
        for sandboxed in (True, False):
            read, write = os.pipe()
            command = argv if not sandboxed else box.command(
                argv, memory_bytes=limits.memory_bytes, file_bytes=limits.file_bytes, processes=limits.processes,
                scratch_bytes=limits.scratch_bytes, info_fd=write,
                uid=None if box.user_namespace else bubblewrap.new_uid())
            start = time.perf_counter()
            subprocess.run(command, check=True, pass_fds=(write,), stdout=subprocess.DEVNULL)
            times[sandboxed].append(time.perf_counter() - start)
            os.close(read)
            os.close(write)
    return {k: statistics.median(v) for k, v in times.items()}


def sleeper(args, jobs: int) -> int:
    """The copies in the sandbox, the same with a detached sleeper, and without the sandbox, in turn."""
    budget = Limits().notebook_seconds
    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as tmp:
        for name, sandbox, with_sleeper in (("sandbox", True, False), ("sandbox + sleeper", True, True),
                                            ("no sandbox", False, False)):
            folder = _copies(Path(tmp) / name.replace(" ", "_").replace("+", "and"), args.exercise, args.copies)
            if with_sleeper:
                text = SLEEPER.read_text().replace("@SLEEP@", f"{10 * budget:g}")
                (folder / "zz_detached_sleeper_05_causal_mask.ipynb").write_text(text)
            seconds, grades = _grade(folder, jobs, sandbox=sandbox)
            statuses = sorted({g.status for g in grades})
            results[name] = seconds
            print(f"{name + ':':<19}{seconds:6.1f} s for {len(grades)} notebooks ({', '.join(statuses)})")
    extra = results["sandbox + sleeper"] - results["sandbox"]
    verdict = "within" if extra <= budget else "OVER"
    print(f"the sleeper cost {extra:+.1f} s ({verdict} the notebook budget, {budget:g} s); the sandbox "
          f"{results['sandbox'] / results['no sandbox']:.2f} times the time without it")
    return 0 if extra <= budget else 1


def failing(args, jobs: int) -> int:
    """A class of one-bug notebooks graded with and without the worker's follow-up of failed checks, in turn."""
    with tempfile.TemporaryDirectory(prefix="bench-failing-") as tmp:
        folder, followed = _one_bug_notebooks(Path(tmp) / "submissions", args.copies)
        sandbox = not args.no_sandbox
        totals: dict[bool, list[float]] = {True: [], False: []}
        per: dict[bool, list[float]] = {True: [], False: []}
        shown: dict[bool, int] = {}
        load_before = os.getloadavg()[0]
        for r in range(args.failing):
            for follow in ((True, False) if r % 2 == 0 else (False, True)):
                limits = Limits() if follow else Limits(follow_seconds=0)
                start = time.perf_counter()
                grades = grade_submissions(collect([folder]), limits, jobs=jobs, progress=False, sandbox=sandbox)
                totals[follow].append(time.perf_counter() - start)
                per[follow] += [nb.seconds for g in grades for nb in g.notebooks]
                shown[follow] = sum(c.smallest is not None or c.mistake == "helper_at_fault"
                                    for g in grades for nb in g.notebooks for c in nb.checks)
        work = _follow_up_work(folder)
    after, before = statistics.median(totals[True]), statistics.median(totals[False])
    print(f"notebooks:       {args.copies} with one function done wrong ({followed} whose notebook check follows up "
          f"its failure), {jobs} at a time, {'sandboxed' if sandbox else 'without a sandbox'}, {args.failing} round(s)")
    print(f"follow-ups:      {shown[True]} checks show a helper at fault or a smaller input with them, "
          f"{shown[False]} without")
    print(f"class, total:    median {after:.1f} s with follow-ups, {before:.1f} s without (ratio {after / before:.2f})")
    print(f"per notebook:    median {statistics.median(per[True]):.2f} s with, {statistics.median(per[False]):.2f} s "
          f"without (ratio {statistics.median(per[True]) / statistics.median(per[False]):.2f}); slowest "
          f"{max(per[True]):.2f} s with, {max(per[False]):.2f} s without")
    print(f"the work itself: median {statistics.median(work) * 1000:.0f} ms per notebook, mean "
          f"{statistics.mean(work) * 1000:.0f} ms, most {max(work) * 1000:.0f} ms (the worker's judging and search, "
          "run here one notebook at a time)")
    print(f"load average:    {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    return 0


def _follow_up_work(folder: Path) -> list[float]:
    """Seconds of what the worker adds per notebook (its verdict on each check the grader found failed, the search
    after it), measured in this process: the notebook's cells run here, unsandboxed (they are the course's own). A
    check that passes costs the worker nothing: the grader tells it so before it would begin."""
    import dataclasses

    import nbformat

    from attention_course.grading.checks.engine import calls
    from attention_course.grading.checks.engine.cases import Rngs
    from attention_course.grading.checks.engine.check import check_verdict
    from attention_course.grading.checks.engine.code import code_of
    from attention_course.grading.checks.engine.run import checks_left_to_the_grader, search

    seconds = []
    for path in sorted(folder.glob("*.ipynb")):
        exercise = BY_ID[path.name.split("-")[0]]
        namespace: dict = {}
        with checks_left_to_the_grader():
            for cell in nbformat.read(path, as_version=4).cells:
                if cell.cell_type == "code":
                    exec(cell.source, namespace)
        spent = 0.0
        for check in exercise.checks:
            if not (check.helpers or check.sizes is not None):
                continue
            fn, cases = namespace.get(check.function), list(check.cases)
            observations = {i: calls.observe_call(fn, c.args, c.kwargs, seconds=check.seconds) for i, c in enumerate(cases)}
            mine = dataclasses.replace(check, make_cases=lambda rngs, cases=cases: cases, hidden_rngs=Rngs(),
                                       mistakes=(), refine=None)
            if check_verdict(mine, observations, code_of(fn)).passed:  # the grader's verdict, outside the sandbox
                continue
            start = time.perf_counter()  # as the worker does it (`worker._FollowUps`)
            result = check_verdict(mine, observations, code_of(fn))
            search(mine, fn, result, observations, deadline=time.perf_counter() + Limits().follow_seconds)
            spent += time.perf_counter() - start
        seconds.append(spent)
    return seconds


def _one_bug_notebooks(folder: Path, count: int) -> tuple[Path, int]:
    """`count` notebooks, each a solution with one function replaced by a mistake of the corpus: first those whose
    notebook check follows up its failure, then others evenly spread; (folder, how many of the first kind)."""
    from attention_course.grading.checks.engine.run import check_in_process

    import nbformat

    checks = {c.name: (e, c) for e in BY_ID.values() if e.drawn is None for c in e.checks}
    followed, others = [], []
    for path in sorted((ROOT / "tests" / "grading_corpus" / "mistakes").glob("*.py")):
        namespace: dict = {}
        exec(compile(path.read_text(), str(path), "exec"), namespace)
        if namespace["CHECK"] not in checks:
            continue
        exercise, check = checks[namespace["CHECK"]]
        result = check_in_process(check, namespace[check.function], hidden=True)
        kind = followed if result.smallest is not None or result.mistake == "helper_at_fault" else others
        kind.append((path, exercise, check))
    step = max(1, len(others) // max(1, count - len(followed)))
    chosen = (followed + others[::step])[:count]
    folder.mkdir(parents=True)
    for path, exercise, check in chosen:
        nb = nbformat.read(ROOT / "solutions" / f"{exercise.id}.ipynb", as_version=4)
        cell = next(c for c in nb.cells if c.cell_type == "code" and f"def {check.function}(" in c.source)
        cell.source = path.read_text()
        nbformat.write(nb, folder / f"{exercise.id}-{path.stem}.ipynb")
    return folder, min(len(followed), count)


def _copies(folder: Path, exercise: str, copies: int) -> Path:
    folder.mkdir(parents=True)
    source = ROOT / "solutions" / f"{exercise}.ipynb"
    for i in range(1, copies + 1):
        shutil.copy(source, folder / f"student_{i:02d}.ipynb")
    return folder


def _grade(folder: Path, jobs: int, *, sandbox: bool, gradebook: Path | None = None):
    start = time.perf_counter()
    grades = grade_submissions(collect([folder]), jobs=jobs, progress=gradebook is not None, sandbox=sandbox)
    if gradebook is not None:
        write_report(build_report(grades, Assignment.default().marking()), gradebook)  # as `grade` writes it
    return time.perf_counter() - start, grades


if __name__ == "__main__":
    sys.exit(main())
