"""Build hook: the wheel carries the exercise notebooks (never the solutions) as package data.

Everything else about the package is in pyproject.toml. `attention-course exercises DIR`
writes these notebooks for a student who installed the wheel with pip alone.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithExercises(build_py):
    """Copy exercises/*.ipynb into attention_course/grading/exercise_notebooks/ of the build."""

    def run(self):
        super().run()
        source = Path(__file__).resolve().parent / "exercises"
        target = Path(self.build_lib) / "attention_course" / "grading" / "exercise_notebooks"
        notebooks = sorted(source.glob("*.ipynb"))
        if not notebooks:
            raise SystemExit("no exercise notebooks in exercises/: run `attention-course release` first")
        target.mkdir(parents=True, exist_ok=True)
        for notebook in notebooks:
            text = notebook.read_text(encoding="utf-8")
            if "### BEGIN SOLUTION" in text:
                raise SystemExit(f"{notebook} holds a solution: it must not be shipped")
            shutil.copyfile(notebook, target / notebook.name)


setup(cmdclass={"build_py": BuildWithExercises})
