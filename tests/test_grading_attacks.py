"""The batch grader against attacks: one notebook each, graded in one batch between honest notebooks.

Each notebook of tests/grading_corpus/attacks/ tries to break one promise of
the sandbox (signal the grader, leave processes behind, start 150 of them,
reach a server the test starts, read and write files outside its folder,
change the installed package, read solutions/, patch the grading internals,
flood the output from a child, exhaust memory with several processes, fork
until the process limit). The
test grades them together with honest notebooks before and after them and
checks that every row is there with its expected status and marks, that the
honest marks are intact, that nothing outside changed, that no process is
left and that the batch did not wait for what the notebooks left running.

These tests run only once a probe notebook has shown that the sandbox is
active (it sees itself as process 1 or 2, and no network but loopback).
"""

import hashlib
import json
import os
import random
import shutil
import socket
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from attention_course.cli import main
from attention_course.grading.classroom.batch import grade_submissions
from attention_course.grading.classroom.intake import collect
from attention_course.grading.run.sandbox import bubblewrap
from attention_course.grading.run.sandbox.runner import Limits, run_notebook

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[1]
ATTACKS = ROOT / "tests" / "grading_corpus" / "attacks"
CONTROL = ROOT / "tests" / "grading_corpus" / "hostile" / "control_05_causal_mask.ipynb"
# Short limits keep the batch quick. A cell gets 10 s: the memory attack forks five processes that
# each fill 300 MB, and on a busy machine that took more than 5 s, so the cell's time limit, not the
# memory watch, stopped it.
FAST = Limits(cell_seconds=10, call_seconds=3, grace_seconds=1, notebook_seconds=40, memory_bytes=1 << 30)
HONEST = {"aa_honest_05_causal_mask.ipynb": CONTROL, "ab_honest_03_softmax.ipynb": ROOT / "solutions" / "03_softmax.ipynb",
          "zy_honest_04_attention.ipynb": ROOT / "solutions" / "04_attention.ipynb",
          "zz_honest_05_causal_mask.ipynb": CONTROL}
PROBE = "import json, os, socket\nprint(json.dumps({'pid': os.getpid(), 'net': [n for _, n in socket.if_nameindex()]}))"


@pytest.fixture(scope="module")
def sandbox():
    box = bubblewrap.available()
    if box is None:
        pytest.skip("bubblewrap cannot run a sandbox here (install it: apt-get install bubblewrap)")
    run = run_notebook([PROBE], [], FAST, sandbox=box)
    seen = json.loads(run.output.strip().splitlines()[-1])
    if seen["pid"] not in (1, 2) or seen["net"] != ["lo"]:
        pytest.skip(f"the sandbox is not active (the probe saw {seen}): no attack is run")
    return box


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")) if path.is_dir() else [path]:
        if "__pycache__" in p.parts:
            continue
        h.update(str(p.relative_to(path) if path.is_dir() else p.name).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def _running(marker: str) -> list[int]:
    """Pids of the processes whose command line holds `marker`."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                if marker.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                    found.append(int(name))
            except OSError:
                pass
    return found


@pytest.fixture(scope="module")
def batch(sandbox, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("attacks")
    submitted, outside, canary = tmp / "submitted", tmp / "outside", tmp / "canary.txt"
    submitted.mkdir()
    outside.mkdir()
    canary.write_text("the grader's secret: 4f1c9e\n")
    listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    sleep = f"900.{random.randrange(10**6):06d}"  # a sleeper's command line says which test started it
    values = {"@SLEEP@": sleep, "@PORT@": str(listener.getsockname()[1]), "@CANARY@": str(canary),
              "@SUBMISSIONS@": str(submitted), "@OUTSIDE@": str(outside)}
    for source in sorted(ATTACKS.glob("*.ipynb")):
        text = source.read_text()
        for key, value in values.items():
            text = text.replace(key, value)
        (submitted / source.name).write_text(text)
    for name, source in HONEST.items():
        shutil.copy(source, submitted / name)
    watched = {"package": bubblewrap.package_dir(), "solutions": ROOT / "solutions", "canary": canary,
               "submitted": submitted, "outside": outside}
    before = {k: _digest(p) for k, p in watched.items()}
    planted_in_tmp = Path("/tmp/planted.txt").exists()
    start = time.monotonic()
    grades = grade_submissions(collect([submitted]), FAST, jobs=2, progress=False, sandbox=True)
    seconds = time.monotonic() - start
    left = _running(sleep)
    try:
        heard = [listener.accept()]
    except BlockingIOError:
        heard = []
    listener.close()
    return SimpleNamespace(
        grades={Path(g.submission.path).name: g for g in grades}, seconds=seconds, left=left, heard=heard,
        changed=[k for k, p in watched.items() if _digest(p) != before[k]], canary=canary, outside=outside,
        planted_in_tmp=not planted_in_tmp and Path("/tmp/planted.txt").exists(), values=values,
        expected=json.loads((ATTACKS / "expected.json").read_text()))


def test_every_attack_gets_its_row_its_status_and_its_marks(batch):
    assert set(batch.grades) == set(batch.expected) | set(HONEST), "every submission gets a row"
    for name, want in batch.expected.items():
        grade = batch.grades[name]
        nb = grade.notebooks[0]
        assert nb.status.split(", ") == want["status"], (name, nb.status, nb.incidents)
        for check in nb.checks:
            verdict = want["checks"][check.check]
            full, score = check.max_score, check.score
            assert {"full": score == full, "zero": score == 0, "lost": 0 <= score < full}[verdict], (name, str(check))


def test_honest_notebooks_before_and_after_keep_full_marks(batch):
    for name in HONEST:
        grade = batch.grades[name]
        nb = grade.notebooks[0]
        assert grade.status == "ok" and nb.incidents == [], (name, nb.incidents)
        assert nb.score == nb.max_score > 0, name


def test_nothing_outside_the_sandboxes_changed(batch):
    assert batch.changed == [], "the package, solutions/, the canary, the submissions and the folder beside them"
    assert list(batch.outside.iterdir()) == [] and not batch.planted_in_tmp
    assert batch.heard == [], "no notebook reached the test's server"


def test_no_process_is_left_and_the_batch_did_not_wait_for_them(batch):
    assert batch.left == [], f"processes of the notebooks still running: {batch.left}"
    notebooks = len(batch.grades)
    assert batch.seconds < notebooks * FAST.notebook_seconds / 2 < float(batch.values["@SLEEP@"])


def test_each_incident_names_the_cell_and_what_it_was(batch):
    def incidents(name):
        return "\n".join(batch.grades[f"{name}_05_causal_mask.ipynb"].notebooks[0].incidents)

    port, sleep, canary = batch.values["@PORT@"], batch.values["@SLEEP@"], batch.values["@CANARY@"]
    assert "code cell 2" in incidents("signal_parent") and "SIGKILL to process 1 (its parent)" in incidents("signal_parent")
    assert f"connect to 127.0.0.1:{port}" in incidents("network") and "pypi.org" in incidents("network")
    assert f"`sleep {sleep}`" in incidents("detached_sleeper") and "detached" in incidents("detached_sleeper")
    assert f"read {canary}" in incidents("read_outside") and "/etc/shadow" in incidents("read_outside")
    assert f"aa_honest_05_causal_mask.ipynb" in incidents("read_outside")
    assert f"write {canary}" in incidents("write_outside")
    assert "attention_course/__init__.py" in incidents("modify_package")
    assert "solutions/05_causal_mask.ipynb" in incidents("read_solutions")
    assert "attention_course.grading.checks.engine.calls.observe_call" in incidents("patch_grading")
    assert "150" in incidents("many_processes") or "more processes than" in incidents("many_processes")
    assert "of memory (its processes together)" in incidents("memory_children")
    # a fork bomb: what it started, the limit it hit and what it left running, said once
    bomb = batch.grades["fork_bomb_05_causal_mask.ipynb"].notebooks[0].incidents
    assert len(bomb) == 1 and bomb[0].startswith("code cell 4 (`import os`) started processes (`os.fork()`)"), bomb
    assert f"tried to run more processes than the {FAST.processes} it may run at once" in bomb[0]
    assert " in all" not in bomb[0]  # how many forks were refused depends on the machine's speed
    secret = batch.canary.read_text().strip()
    for grade in batch.grades.values():
        nb = grade.notebooks[0]
        assert secret not in nb.output and not any(secret in i for i in nb.incidents), grade.submission.name


def test_the_grade_command_names_the_submissions_that_tried_something(sandbox, tmp_path, capsys):
    shutil.copy(ATTACKS / "signal_parent_05_causal_mask.ipynb", tmp_path / "mallory.ipynb")
    shutil.copy(CONTROL, tmp_path / "ann.ipynb")
    out = tmp_path / "gradebook.csv"
    assert main(["grade", str(tmp_path / "mallory.ipynb"), str(tmp_path / "ann.ipynb"), "--out", str(out),
                 "--no-progress", "--cell-timeout", "5", "--check-timeout", "5"]) == 0
    printed = capsys.readouterr().out
    assert "1 submission(s) tried something" in printed and "mallory (signal)" in printed
    settings = json.loads(out.with_suffix(".json").read_text())["settings"]
    assert settings["sandbox"].startswith("bubblewrap (") and "warning" not in settings
