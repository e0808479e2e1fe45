"""The students' wheel (`make dist`): the package and the exercise notebooks, never the solutions.

Built from a copy of the sources, as `make dist` builds it, installed with pip
alone into a folder of its own, and asked for the exercise notebooks.
"""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from attention_course.grading.checks.exercises import EXERCISES

pytestmark = pytest.mark.sandbox

ROOT = Path(__file__).resolve().parents[1]


def test_the_wheel_ships_the_exercises_and_no_solution(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, src / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "exercise_notebooks")
    shutil.copytree(ROOT / "attention_course", src / "attention_course", ignore=ignore)
    shutil.copytree(ROOT / "exercises", src / "exercises")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                    "--wheel-dir", str(tmp_path / "dist"), str(src)], check=True, cwd=tmp_path)
    (wheel,) = (tmp_path / "dist").glob("attention_course-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        notebooks = sorted(n for n in names if n.endswith(".ipynb"))
        assert [Path(n).stem for n in notebooks] == [e.id for e in EXERCISES]
        assert all(n.startswith("attention_course/grading/exercise_notebooks/") for n in notebooks)
        assert not any("solutions" in n for n in names)
        templates = {f"attention_course/grading/classroom/write/templates/{n}.html" for n in ("feedback", "summary")}
        assert templates <= set(names)  # the instructor's pages render from the installed wheel too
        marked = {n for n in names if b"### BEGIN SOLUTION" in z.read(n)}
        assert marked == {"attention_course/grading/release.py", "attention_course/grading/cli.py"}  # the release tool
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                    "--target", str(site), str(wheel)], check=True)
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run([sys.executable, "-c", "import sys; from attention_course.cli import main; "
                           "import attention_course; print(attention_course.__file__); sys.exit(main(['exercises', 'mine']))"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(str(site))  # the installed wheel, not the clone
    written = sorted(p.name for p in (tmp_path / "mine").glob("*.ipynb"))
    assert written == [f"{e.id}.ipynb" for e in EXERCISES]
    for name in written:
        assert (tmp_path / "mine" / name).read_text() == (ROOT / "exercises" / name).read_text()


def test_exercises_never_replaces_a_student_s_work(tmp_path, capsys):
    from attention_course.cli import main

    assert main(["exercises", str(tmp_path)]) == 0
    mine = tmp_path / "03_softmax.ipynb"
    mine.write_text(mine.read_text().replace("raise NotImplementedError()", "return x"))
    assert main(["exercises", str(tmp_path)]) == 1
    assert "edited since its release" in capsys.readouterr().err and "return x" in mine.read_text()
    assert main(["exercises", str(tmp_path), "--force"]) == 0
    assert "return x" not in mine.read_text() and len(list(tmp_path.glob("03_softmax.ipynb.bak-*"))) == 1
