"""Build hook: the wheel carries the exercise notebooks (never the solutions) and the rendered book.

Everything else about the package is in pyproject.toml. `attention-course exercises DIR`
writes these notebooks for a student who installed the wheel with pip alone, and
`attention-course book` opens the rendered book the wheel carries: `make dist` puts a copy of
`_build/html` beside this file as `book_html/`, and it goes into the package as
attention_course/book_html/ (a wheel built without it has no book; `make dist` checks).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithExercises(build_py):
    """Copy exercises/*.ipynb into attention_course/grading/exercise_notebooks/ of the build, and book_html/
    (the rendered book, when `make dist` put it here) into attention_course/book_html/."""

    def run(self):
        super().run()
        book = Path(__file__).resolve().parent / "book_html"
        if (book / "index.html").is_file():
            shutil.copytree(book, Path(self.build_lib) / "attention_course" / "book_html", dirs_exist_ok=True)
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
